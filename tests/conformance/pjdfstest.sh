#!/usr/bin/env bash
# pjdfstest.sh PATH OUTDIR [test dirs...]: runs pjdfstest (`prove -r`, as
# root, cwd inside the mount; the suite switches uids, so allow_other) on
# one data path and writes OUTDIR/summary ("passed N", "failed N" and
# "fail FILE: TESTS" lines) and OUTDIR/prove.out.
# PATH: a data path of mount_path.sh (devfuse, uring, passthrough,
# exclusive, zcfsd, zcfsd-xfs, zcfsd-ext4, zcfsd-xfs-pt, zcfsd-ext4-pt,
# peer, peerpt); a zcfsd path's summary names what the volume ran as.
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
# shellcheck source=mount_path.sh
. "$here/mount_path.sh"
conformance_mount "$path" pjd
start=$(date +%s)
(cd "$M" && prove ${PROVE_ARGS:-} -r "${tests[@]}") >"$out/prove.out" 2>&1
secs=$(( $(date +%s) - start ))
# prove's "Files=N, Tests=N" and its summary report of failed test numbers
total=$(sed -n 's/^Files=[0-9]*, Tests=\([0-9]*\),.*/\1/p' "$out/prove.out")
failed=$(awk '/Failed: [0-9]+\)/ {gsub(/\)/, "", $NF); n += $NF} END {print n + 0}' "$out/prove.out")
{
	echo "# pjdfstest $path: prove -r in ${secs}s"
	[ -z "${vol:-}" ] || echo "# volume: $vol"
	echo "passed $(( ${total:-0} - failed ))"
	echo "failed $failed"
	[ -n "$total" ] || echo "error prove did not finish (see prove.out)"
	awk '/^\/.*\.t +\(Wstat/ {f = $1; sub(/.*\/tests\//, "", f)} /^  Failed tests?:/ {sub(/^  Failed tests?: */, ""); print "fail " f ": " $0}' "$out/prove.out"
} >"$out/summary"
cat "$out/summary"
[ -n "$total" ]
