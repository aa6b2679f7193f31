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
*) echo "xfstests.sh: unknown path $path" >&2; exit 2;;
esac
if [ "$path" = uring ] || [ "$path" = exclusive ] || [ "$path" = peer ]; then
	p=/sys/module/fuse/parameters/enable_uring
	[ -e $p ] || skip "kernel without FUSE-over-io_uring"
	echo Y >$p
fi
helper=/sbin/mount.fuse.$sub
[ -e "$helper" ] && [ ! -e "$helper.conformance" ] && skip "$helper exists and is not ours"
mkdir -p "$out"; out=$(cd "$out" && pwd)
W=$(mktemp -d /tmp/zcfs-xfstests.XXXXXX)
chmod 755 "$W"	# the suite's users (fsgqa...) must reach TEST_DIR and SCRATCH_MNT
cleanup() {
	local m
	for m in "$W/test" "$W/scratch"; do
		mountpoint -q "$m" && umount -l "$m"
	done
	rm -f "$helper" "$helper.conformance"
	mountpoint -q "$W/src" && umount -l "$W/src"
	rm -rf --one-file-system "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/src" "$W/test" "$W/scratch"
mount -t tmpfs -o size=6G,mode=755 tmpfs "$W/src"
mkdir -p "$W/src/test" "$W/src/scratch"
touch "$helper.conformance"
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
else
	sed -e "s|@BINDIR@|$ZCFS_BIN|" "$here/../../deploy/mount.fuse.zcfs" >"$helper"
fi
chmod 755 "$helper"
cat >"$W/local.config" <<EOF2
export TEST_DEV=source:$W/src/test
export TEST_DIR=$W/test
export SCRATCH_DEV=source:$W/src/scratch
export SCRATCH_MNT=$W/scratch
export FSTYP=fuse
export FUSE_SUBTYP=.$sub
export MOUNT_OPTIONS="${serve_opts:+-o $serve_opts,dev,suid,subtype=}"
export TEST_FS_MOUNT_OPTS="${serve_opts:+-o $serve_opts,dev,suid,subtype=}"
export RESULT_BASE=$out/results
EOF2
cp "$W/local.config" "$out/local.config"
cd "$XFSTESTS_DIR" || exit 1
start=$(date +%s)
# its own session, so that an interrupted run takes every test process along
HOST_OPTIONS=$W/local.config setsid ./check -fuse "$@" >"$out/check.out" 2>&1 &
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
