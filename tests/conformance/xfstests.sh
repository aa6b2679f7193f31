#!/usr/bin/env bash
# xfstests.sh PATH OUTDIR [check args...]: runs xfstests (`./check -fuse`,
# default `-g quick`) on one data path and writes OUTDIR/summary (lines
# "passed N" "failed N" "notrun N" and "fail generic/NNN") plus the
# suite's own results under OUTDIR/results.
# PATH: devfuse | uring | passthrough | exclusive (uring with
# cache=exclusive: zcfs-serve) | peer (libfuse
# passthrough_hp --nopassthrough -o io_uring, the reference server for
# devfuse and uring) | peerpt (passthrough_hp with its kernel passthrough
# on /dev/fuse, the reference for passthrough).
# zcfsd: TEST and SCRATCH are two volumes of a real zcfsd (started for the
# run: tenant server, --ownership=xattr, exclusive cache, io_uring when the
# kernel has it); every mount is a volume.publish and every umount a
# volume.unpublish (zcfsd_helpers below; docs/conformance.md).
# Mounting goes through mount(8) and a mount.fuse.<subtype> helper in /sbin
# (xfstests' FUSE recipe), made for the run and removed afterwards.
# Needs XFSTESTS_DIR (built tree), ZCFS_BIN; PEER_BIN for peer. Exit 77
# (reason on the last line) when something is missing.
set -u
path=${1:?usage: xfstests.sh PATH OUTDIR [check args]}
out=${2:?usage: xfstests.sh PATH OUTDIR [check args]}
shift 2
[ $# -gt 0 ] || set -- -g quick
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
: "${XFSTESTS_DIR:?}" "${ZCFS_BIN:?}"
[ -x "$XFSTESTS_DIR/check" ] && [ -x "$XFSTESTS_DIR/ltp/fsstress" ] || skip "xfstests not built in $XFSTESTS_DIR"
for u in fsgqa fsgqa2 123456-fsgqa; do id "$u" >/dev/null 2>&1 || skip "xfstests needs user $u"; done
case $path in
devfuse|uring|passthrough|exclusive) sub=zcfsconf-$path;;
peer|peerpt) sub=zcfs$path; [ -x "${PEER_BIN:-}" ] || skip "no passthrough_hp (PEER_BIN)";;
zcfsd) sub=zcfs;;	# zcfsd mounts its volumes as type fuse.zcfs
*) echo "xfstests.sh: unknown path $path" >&2; exit 2;;
esac
p=/sys/module/fuse/parameters/enable_uring
if [ "$path" = uring ] || [ "$path" = exclusive ] || [ "$path" = peer ]; then
	[ -e $p ] || skip "kernel without FUSE-over-io_uring"
	echo Y >$p
fi
helper=/sbin/mount.fuse.$sub
[ -e "$helper" ] && [ ! -e "$helper.conformance" ] && skip "$helper exists and is not ours"
# zcfsd: umount(8) runs /sbin/umount.fuse.zcfs for a fuse.zcfs mount
uhelper=
[ "$path" = zcfsd ] && uhelper=/sbin/umount.fuse.zcfs
[ -n "$uhelper" ] && [ -e "$uhelper" ] && [ ! -e "$uhelper.conformance" ] && skip "$uhelper exists and is not ours"
mkdir -p "$out"; out=$(cd "$out" && pwd)
if [ "$path" = zcfsd ]; then
	# shellcheck source=../lib.sh
	. "$here/../lib.sh"
	# shellcheck source=../integration/helpers/zcfsd_lib.sh
	. "$here/../integration/helpers/zcfsd_lib.sh"
	if [ -e $p ] && echo Y >$p; then ZCFS_TRANSPORT=uring; else ZCFS_TRANSPORT=devfuse; fi
	zcfsd_require
	zcfsd_env 256M "$([ $ZCFS_TRANSPORT = uring ] && echo true || echo false)"
	zcfsd_start
	# the suite's users (fsgqa...) must reach TEST_DIR and SCRATCH_MNT
	chmod 755 "$TGT"
	XW=$W test_dir=$TGT/test scratch_dir=$TGT/scratch
	test_dev=zcfs:xtest scratch_dev=zcfs:xscratch
	mkdir -p "$test_dir" "$scratch_dir"
	# root-owned 0755 roots, as a fresh file system's (pjdfstest.sh too)
	for v in xtest xscratch; do
		ctlq call volume.create "{\"id\": \"$v\", \"transport\": \"$ZCFS_TRANSPORT\", \"uid\": 0, \"gid\": 0, \"mode\": \"0755\", \"size\": \"8G\"}" ||
			{ show_zcfsd_log; fail "volume.create $v"; }
	done
else
	XW=$(mktemp -d /tmp/zcfs-xfstests.XXXXXX)
	chmod 755 "$XW"	# the suite's users (fsgqa...) must reach TEST_DIR and SCRATCH_MNT
	test_dir=$XW/test scratch_dir=$XW/scratch
	test_dev=source:$XW/src/test scratch_dev=source:$XW/src/scratch
fi
# zcfsd_helpers MOUNT_HELPER UMOUNT_HELPER: mount(8)'s and umount(8)'s
# helpers for type fuse.zcfs during the run. A mount of one of the run's
# two volumes is `zcfsctl volume publish` (its first target: a new
# connection and a new server, zcfsd's mount flags), an unmount of it
# `zcfsctl volume unpublish` (syncfs, unmount, abort, server stopped). The
# mount helper takes only what a publish can do: ro (publish --read-only),
# rw, and the flags zcfsd mounts with anyway (nodev, nosuid, exec,
# relatime, defaults); any other option fails the mount, since zcfsd decides
# a volume's mount flags (policy: nodev,nosuid) and takes no atime options.
# remount is mount(2)'s own on the live mount, as for every FUSE file
# system. Other fuse.zcfs mounts and unmounts on the machine go on as
# without the helpers (mount -i / umount -i).
zcfsd_helpers() {
	cat >"$1" <<EOS
#!/bin/bash
ctl=("$ZCFS_BIN/zcfsctl" --socket "$SOCK")
spec=\$1 mnt=\$2; shift 2
opts=
while [ \$# -gt 0 ]; do
	case \$1 in
	-o) opts=\${opts:+\$opts,}\$2; shift 2;;
	-o*) opts=\${opts:+\$opts,}\${1#-o}; shift;;
	-r) opts=\${opts:+\$opts,}ro; shift;;
	-w) opts=\${opts:+\$opts,}rw; shift;;
	-t) shift 2;;
	-f) exit 0;;
	*) shift;;
	esac
done
case \$spec in
zcfs:xtest|zcfs:xscratch) ;;
*) exec mount -i -t fuse.zcfs \${opts:+-o "\$opts"} "\$spec" "\$mnt";;
esac
case ,\$opts, in *,remount,*) exec mount -i -o "\$opts" "\$spec" "\$mnt";; esac
ro=
IFS=,; for o in \$opts; do
	case \$o in
	ro) ro=--read-only;;
	rw) ro=;;
	''|defaults|nodev|nosuid|exec|relatime) ;;
	*) echo "mount.fuse.zcfs: -o \$o: a zcfsd volume takes read-only alone (zcfsd mounts it nodev,nosuid,relatime)" >&2; exit 32;;
	esac
done; unset IFS
# A publish racing this volume's unpublish answers UNAVAILABLE "is being
# unpublished ... retry" (docs/supervision.md); mount(2) would wait for
# the umount (s_umount), so the helper waits too, by retrying that answer.
for _ in \$(seq 300); do
	err=\$("\${ctl[@]}" volume publish "\${spec#zcfs:}" "\$mnt" \$ro 2>&1 >/dev/null) && exit 0
	case \$err in *"is being unpublished"*) sleep 0.05;; *) break;; esac
done
echo "\$err" >&2
exit 32
EOS
	cat >"$2" <<EOS
#!/bin/bash
ctl=("$ZCFS_BIN/zcfsctl" --socket "$SOCK")
tgt=\$1; shift
src=\$(findmnt -rn -M "\$tgt" -o SOURCE | tail -n 1)
case \$tgt:\$src in
"$test_dir:zcfs:xtest"|"$scratch_dir:zcfs:xscratch")
	"\${ctl[@]}" volume unpublish "\${src#zcfs:}" "\$tgt" >/dev/null || exit 32
	exit 0;;
esac
exec umount -i "\$@" "\$tgt"
EOS
	chmod 755 "$2"
	# xfstests checks that TEST_DEV is mounted as type $FSTYP, "fuse", by
	# df -T's type column (_fs_type); a zcfsd volume is fuse.zcfs (the
	# standalone paths pass subtype= empty). _fs_type itself maps
	# fuse.glusterfs and fuse.ceph-fuse the same way; only that column of
	# the run's two volumes is renamed, for check's processes alone.
	mkdir -p "$XW/bin"
	cat >"$XW/bin/df" <<'EOS'
#!/bin/bash
set -o pipefail
/usr/bin/df "$@" | sed -E 's/^(zcfs:x(test|scratch) +)fuse\.zcfs /\1fuse /'
EOS
	chmod 755 "$XW/bin/df"
}
cleanup() {
	local rc=$? m
	for m in "$test_dir" "$scratch_dir"; do
		mountpoint -q "$m" && umount -i -l "$m"
	done
	rm -f "$helper" "$helper.conformance"
	[ -n "$uhelper" ] && rm -f "$uhelper" "$uhelper.conformance"
	if [ "$path" = zcfsd ]; then
		cp "$XW/zcfsd.log" "$out/zcfsd.log" 2>/dev/null
		(exit $rc); zcfsd_quiet_cleanup
	fi
	mountpoint -q "$XW/src" && umount -l "$XW/src"
	rm -rf --one-file-system "$XW"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ "$path" != zcfsd ]; then
	mkdir -p "$XW/src" "$XW/test" "$XW/scratch"
	mount -t tmpfs -o size=6G,mode=755 tmpfs "$XW/src"
	mkdir -p "$XW/src/test" "$XW/src/scratch"
fi
touch "$helper.conformance"
[ -n "$uhelper" ] && touch "$uhelper.conformance"
case $path in
devfuse) serve_opts="transport=devfuse";;
uring) serve_opts="transport=uring";;
exclusive) serve_opts="transport=uring,cache=exclusive";;
passthrough) serve_opts="transport=devfuse,passthrough";;
esac
if [ "$path" = peer ] || [ "$path" = peerpt ]; then
	peer_opts="--nopassthrough -o io_uring"
	[ "$path" = peerpt ] && peer_opts=""
	# libfuse's recipe: source:/dir, fsname and allow_other,dev from the helper
	cat >"$helper" <<EOS
#!/bin/bash
# as many fds as it may have (libfuse raises it to 1048576, which needs
# CAP_SYS_RESOURCE here, and its complaint would end up in test output)
ulimit -n "\$(ulimit -Hn)" 2>/dev/null
dev=\$1 mnt=\$2; shift 2; [ "\${1:-}" = -o ] && { opts=\$2; shift 2; }
case ,\${opts:-}, in *,remount,*) exec mount -i "\$dev" "\$mnt" -o "\$opts";; esac
# libfuse takes no relatime/strictatime ("fuse: unknown option"): they
# are the mount's own flags, set on it afterwards (generic/003 runs)
late= keep=
IFS=,; for o in \${opts:-}; do
	case \$o in relatime|norelatime|strictatime|nostrictatime) late=\$late,\$o;; *) keep=\$keep,\$o;; esac
done; unset IFS
"$PEER_BIN" $peer_opts -o fsname=\$dev,allow_other,dev "\${dev#source:}" "\$mnt" \${keep:+-o "\${keep#,}"} || exit
[ -z "\$late" ] || exec mount -i -o "remount,bind\$late" "\$mnt"
EOS
elif [ "$path" = zcfsd ]; then
	zcfsd_helpers "$helper" "$uhelper"
else
	sed -e "s|@BINDIR@|$ZCFS_BIN|" "$here/../../deploy/mount.fuse.zcfs" >"$helper"
fi
chmod 755 "$helper"
cat >"$XW/local.config" <<EOF2
export TEST_DEV=$test_dev
export TEST_DIR=$test_dir
export SCRATCH_DEV=$scratch_dev
export SCRATCH_MNT=$scratch_dir
export FSTYP=fuse
export FUSE_SUBTYP=.$sub
export MOUNT_OPTIONS="${serve_opts:+-o $serve_opts,dev,suid,subtype=}"
export TEST_FS_MOUNT_OPTS="${serve_opts:+-o $serve_opts,dev,suid,subtype=}"
export RESULT_BASE=$out/results
EOF2
cp "$XW/local.config" "$out/local.config"
cd "$XFSTESTS_DIR" || exit 1
start=$(date +%s)
# its own session, so that an interrupted run takes every test process along
[ "$path" = zcfsd ] && export PATH=$XW/bin:$PATH
HOST_OPTIONS=$XW/local.config setsid ./check -fuse "$@" >"$out/check.out" 2>&1 &
check_pid=$!
trap 'kill -KILL -- -$check_pid 2>/dev/null; exit 130' INT TERM
wait $check_pid
echo "# xfstests $path: ./check -fuse $* in $(( $(date +%s) - start ))s" >"$out/summary"
# the last "Ran:/Not run:/Failures:" block of check's output
awk '/^Ran:/ {ran=$0} /^Not run:/ {nr=$0} /^Failures:/ {fl=$0} END {
	n = split(ran, a, " "); printf "ran %d\n", n - 1
	n2 = split(nr, b, " "); printf "notrun %d\n", (n2 > 2 ? n2 - 2 : 0)
	n3 = split(fl, c, " "); printf "failed %d\n", (n3 > 1 ? n3 - 1 : 0)
	for (i = 2; i <= n3; i++) printf "fail %s\n", c[i]
	for (i = 3; i <= n2; i++) skipped[b[i]] = 1
	for (i = 2; i <= n; i++) if (!(a[i] in skipped)) printf "ran_test %s\n", a[i] }' "$out/check.out" >>"$out/summary"
# A test that failed only by _check_dmesg, on kernel reports that all name
# another uid than ours (root: the servers here and the test run as
# root), caught a report of someone else's process on a shared machine
# (other zcfs servers run as their tenants): counted as "foreign", not
# as a failure of this path, and listed.
foreign=()
for t in $(sed -n 's/^fail //p' "$out/summary"); do
	r=$out/results/$t
	[ -e "$r.out.bad" ] || [ ! -e "$r.dmesg" ] && continue
	uids=$(grep -oE 'CPU: [0-9]+ UID: [0-9]+ PID: [0-9]+ Comm: [^ ]+' "$r.dmesg" | awk '{print $4 ":" $8}' | sort -u)
	[ -n "$uids" ] && ! grep -q '^0:' <<<"$uids" || continue
	foreign+=("$t")
	echo "foreign $t kernel report by $(tr '\n' ' ' <<<"$uids")" >>"$out/summary"
done
if [ ${#foreign[@]} -gt 0 ]; then
	for t in "${foreign[@]}"; do sed -i "\|^fail $t\$|d" "$out/summary"; done
	sed -i "s/^failed .*/failed $(grep -c '^fail ' "$out/summary")/" "$out/summary"
fi
# "Ran:" lists every test tried, those that were not run included
ran=$(awk '$1 == "ran" {print $2}' "$out/summary")
notrun=$(awk '$1 == "notrun" {print $2}' "$out/summary")
failed=$(awk '$1 == "failed" {print $2}' "$out/summary")
echo "passed $((ran - notrun - failed))" >>"$out/summary"
[ "$ran" -gt 0 ] || echo "error check ran no test (see $out/check.out)" >>"$out/summary"
cat "$out/summary"
