#!/usr/bin/env bash
# pjdfstest.sh PATH OUTDIR [test dirs...]: runs pjdfstest (`prove -r`, as
# root, cwd inside the mount; the suite switches uids, so allow_other) on
# one data path and writes OUTDIR/summary ("passed N", "failed N" and
# "fail FILE: TESTS" lines) and OUTDIR/prove.out.
# PATH: devfuse | uring | passthrough | exclusive (uring with
# --cache=exclusive) (zcfs-serve as root, native ownership) | zcfsd (a volume published by a real zcfsd: sandboxed server
# as the tenant, --ownership=xattr, exclusive cache, io_uring when the
# kernel has it) | zcfsd-xfs, zcfsd-ext4 (the same with the storage root
# on XFS / ext4 on a loop device, project quotas where the kernel has them) | peer (libfuse passthrough_hp --nopassthrough -o
# io_uring, PEER_BIN) | peerpt (passthrough_hp, kernel passthrough).
# Needs PJDFSTEST_DIR (built tree), ZCFS_BIN. Exit 77 naming what is missing.
# PROVE_ARGS: more prove options, e.g. "-j2" (test files in parallel; each
# works on its own generated names, so only the wall time changes).
here=$(cd "$(dirname "$0")" && pwd)
path=${1:?usage: pjdfstest.sh PATH OUTDIR [tests]}
out=${2:?usage: pjdfstest.sh PATH OUTDIR [tests]}
shift 2
# shellcheck source=../lib.sh
. "$here/../lib.sh"
require_root
require_fuse
require_cmd prove
: "${PJDFSTEST_DIR:?}"
[ -x "$PJDFSTEST_DIR/pjdfstest" ] || skip "pjdfstest not built in $PJDFSTEST_DIR"
mkdir -p "$out"; out=$(cd "$out" && pwd)
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=("$PJDFSTEST_DIR/tests")
uring_param=/sys/module/fuse/parameters/enable_uring
uring_on() { [ -e $uring_param ] && echo Y >$uring_param; }
S=$(make_tmpdir 4G)
M=$(make_tmpdir)
case $path in
devfuse) ZCFS_TRANSPORT=devfuse zcfs_mount "$S" "$M";;
uring) uring_on || skip "kernel without FUSE-over-io_uring"; ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M";;
exclusive) uring_on || skip "kernel without FUSE-over-io_uring"
	ZCFS_TRANSPORT=uring zcfs_mount "$S" "$M" --cache=exclusive;;
passthrough) ZCFS_TRANSPORT=devfuse zcfs_mount "$S" "$M" --passthrough;;
peer|peerpt)
	[ -x "${PEER_BIN:-}" ] || skip "no passthrough_hp (PEER_BIN)"
	peer_opts=(--nopassthrough -o io_uring)
	if [ "$path" = peerpt ]; then peer_opts=(); else uring_on || skip "kernel without FUSE-over-io_uring"; fi
	"$PEER_BIN" "${peer_opts[@]}" -o allow_other,default_permissions "$S" "$M" 2>"$M.log" &
	_zcfs_pids+=($!); _zcfs_mounts+=("$M")
	for _ in $(seq 100); do grep -q " $M fuse" /proc/self/mounts && break; sleep 0.05; done;;
zcfsd|zcfsd-xfs|zcfsd-ext4)
	# shellcheck source=../integration/helpers/zcfsd_lib.sh
	. "$here/../integration/helpers/zcfsd_lib.sh"
	# shellcheck source=../integration/helpers/backing_fs.sh
	. "$here/../integration/helpers/backing_fs.sh"
	trap zcfsd_quiet_cleanup EXIT
	if uring_on; then ZCFS_TRANSPORT=uring; else ZCFS_TRANSPORT=devfuse; fi
	zcfsd_require
	zcfsd_env 64M "$([ $ZCFS_TRANSPORT = uring ] && echo true || echo false)"
	# zcfsd-xfs, zcfsd-ext4: the storage root on that file system (a loop
	# device), with project quotas where the kernel has them; the volume
	# then has a size (the tenant's default_quota, 1G).
	if [ "$path" != zcfsd ]; then
		backing_fs_require "${path#zcfsd-}"
		backing_fs_mount "${path#zcfsd-}" "$STORE" 3G quota
		log "storage root on ${path#zcfsd-}, project quotas: $BACKING_QUOTA $BACKING_QUOTA_WHY"
	fi
	zcfsd_start
	M=$TGT/pjd
	mkdir -p "$M"
	# The suite runs as root with its cwd in the volume root and switches
	# to uids such as 65534 that must search it (rename/21.t renames names
	# right in the cwd). A volume root is the tenant's, 0700, unless
	# volume.create says otherwise: make it root's 0755, like the
	# standalone paths' source directories and a freshly made fs.
	ctlq call volume.create "{\"id\": \"pjd\", \"transport\": \"$ZCFS_TRANSPORT\", \"uid\": 0, \"gid\": 0, \"mode\": \"0755\"}" ||
		{ show_zcfsd_log; fail "volume.create pjd"; }
	ctlq volume publish pjd "$M" || { show_zcfsd_log; fail "publish pjd"; };;
*) echo "pjdfstest.sh: unknown path $path" >&2; exit 2;;
esac
grep -q " $M fuse" /proc/self/mounts || fail "$path: nothing mounted at $M"
start=$(date +%s)
(cd "$M" && prove ${PROVE_ARGS:-} -r "${tests[@]}") >"$out/prove.out" 2>&1
secs=$(( $(date +%s) - start ))
# prove's "Files=N, Tests=N" and its summary report of failed test numbers
total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$out/prove.out")
failed=$(awk '/Failed: [0-9]+\)/ {gsub(/\)/, "", $NF); n += $NF} END {print n + 0}' "$out/prove.out")
{
	echo "# pjdfstest $path: prove -r in ${secs}s"
	echo "passed $(( ${total:-0} - failed ))"
	echo "failed $failed"
	[ -n "$total" ] || echo "error prove did not finish (see prove.out)"
	awk '/^\/.*\.t +\(Wstat/ {f = $1; sub(/.*\/tests\//, "", f)} /^  Failed tests?:/ {sub(/^  Failed tests?: */, ""); print "fail " f ": " $0}' "$out/prove.out"
} >"$out/summary"
cat "$out/summary"
[ -n "$total" ]
