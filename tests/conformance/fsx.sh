#!/usr/bin/env bash
# fsx.sh PATH OUTDIR: xfstests' fsx (random reads, writes, mmap, truncate,
# fallocate, hole punch... checked against a model of the file) on one
# data path of mount_path.sh, twice: buffered (mmap reads and writes too),
# then O_DIRECT with page-aligned offsets and lengths (-Z -R -W, 4096
# boundaries). Writes OUTDIR/summary ("passed N", "failed N", "fail MODE:
# fsx's last line") and OUTDIR/fsx-MODE.out.
# Needs XFSTESTS_DIR (built tree: ltp/fsx) or FSX_BIN, ZCFS_BIN.
# FSX_OPS: operations per mode (default 20000); FSX_SEED (default 42).
# Exit 0 iff both modes passed, 77 naming what is missing.
here=$(cd "$(dirname "$0")" && pwd)
path=${1:?usage: fsx.sh PATH OUTDIR}
out=${2:?usage: fsx.sh PATH OUTDIR}
# shellcheck source=../lib.sh
. "$here/../lib.sh"
require_root
require_fuse
fsx=${FSX_BIN:-${XFSTESTS_DIR:-}/ltp/fsx}
[ -x "$fsx" ] || skip "fsx not built (XFSTESTS_DIR/ltp/fsx or FSX_BIN)"
mkdir -p "$out"; out=$(cd "$out" && pwd)
# shellcheck source=mount_path.sh
. "$here/mount_path.sh"
conformance_mount "$path" fsx
pass=0 failed=0 fails=()
for mode in buffered direct; do
	opts=()
	[ $mode = direct ] && opts=(-Z -R -W -r 4096 -t 4096 -w 4096)
	start=$(date +%s)
	(cd "$M" && "$fsx" -q -N "${FSX_OPS:-20000}" -l 4194304 -S "${FSX_SEED:-42}" "${opts[@]}" \
		"fsx-$mode") >"$out/fsx-$mode.out" 2>&1
	rc=$?
	last=$(tail -n 1 "$out/fsx-$mode.out")
	echo "# fsx $path $mode: exit $rc in $(( $(date +%s) - start ))s: $last"
	if [ $rc = 0 ]; then pass=$((pass + 1)); else failed=$((failed + 1)); fails+=("fail $mode: $last"); fi
	rm -f "$M/fsx-$mode"*
done
{
	echo "# fsx $path: ${FSX_OPS:-20000} operations per mode, seed ${FSX_SEED:-42}"
	[ -z "${vol:-}" ] || echo "# volume: $vol"
	echo "passed $pass"
	echo "failed $failed"
	[ ${#fails[@]} = 0 ] || printf "%s\n" "${fails[@]}"
} >"$out/summary"
cat "$out/summary"
[ "$failed" = 0 ]
