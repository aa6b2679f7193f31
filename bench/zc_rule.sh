#!/usr/bin/env bash
# The measurement behind zcfs-serve's per-open zero-copy rule (--zero-copy
# =auto, uring_zero_copy_wanted): on a buffer-pool kernel (Linux >= 7.3,
# root; bench/guest.sh runs it in the TCG guest with BENCH_GUEST_SCRIPT=
# bench/zc_rule.sh), one pool mount without zero-copy and one with
# zero-copy on every open, each over its own tmpfs, fio (sync, 2 jobs,
# direct unless the workload says buffered) alternately on one and the
# other (A B B A ...) ZC_PAIRS times per workload, ZC_RUNTIME seconds
# each. Prints per workload the median and range of zero-copy ÷ pool over
# the pairs: under TCG a single run's figure moves by 2x, a pair's
# quotient much less. Output in OUT (default build/zc-rule): summary.txt.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
: "${ZCFS_BIN:=$root/bin}" "${ZC_PAIRS:=5}" "${ZC_RUNTIME:=4}" "${ZC_SIZE:=64M}"
out=${1:-${BENCH_RESULTS:-$root/build/zc-rule}}
mkdir -p "$out"
work=$(mktemp -d /tmp/zc-rule.XXXXXX)
pids=() mnts=()
cleanup() {
	local m p
	for m in "${mnts[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	umount "$work"/*/src 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
echo Y >/sys/module/fuse/parameters/enable_uring 2>/dev/null

mount_one() { # NAME OPTS...
	local n=$1 i; shift
	mkdir -p "$work/$n/src" "$work/$n/mnt"
	mount -t tmpfs -o size=512M "zc-$n" "$work/$n/src" || exit 1
	"$ZCFS_BIN/zcfs-serve" --foreground --cache=exclusive "$@" "$work/$n/src" "$work/$n/mnt" \
		>"$out/$n.server.log" 2>&1 &
	pids+=($!)
	mnts+=("$work/$n/mnt")
	for i in $(seq 600); do grep -q 'serving .*transport=' "$out/$n.server.log" && break; sleep 0.1; done
	grep -q 'serving .*transport=' "$out/$n.server.log" || { echo "zc_rule: $n did not mount:" \
		"$(tail -n 2 "$out/$n.server.log")" >&2; exit 1; }
	(cd "$work" && fio --name=f --directory="$work/$n/mnt" --size="$ZC_SIZE" --numjobs=2 \
		--ioengine=sync --rw=write --bs=1M --fallocate=none >/dev/null) || exit 1
}
mount_one pool --transport=uring --buffer-pool=registered --zero-copy=off
mount_one zc --transport=uring --zero-copy=on

fig() { # NAME RW BS DIRECT -> MB/s or IOPS
	local f=$out/run.json extra=()
	[ "$4" = 0 ] && extra+=(--invalidate=1)
	[ "$4" = 0 ] && [[ $2 == *write ]] && extra+=(--end_fsync=1)
	(cd "$work" && fio --output-format=json --output="$f" --name=f --directory="$work/$1/mnt" \
		--size="$ZC_SIZE" --numjobs=2 --group_reporting --ioengine=sync --rw="$2" --bs="$3" \
		--direct="$4" --norandommap --randrepeat=0 --time_based --runtime="$ZC_RUNTIME" \
		--ramp_time=1 "${extra[@]}" >/dev/null 2>&1) || { echo 0; return; }
	python3 -c "
import json; j = json.load(open('$f'))['jobs'][0]; r = j['read'] if 'read' in '$2' else j['write']
print(r['bw'] / 1024 if '$3' == '1M' else r['iops'])"
}
: >"$out/summary.txt"
for wl in "randread 4k 1" "randwrite 4k 1" "read 1M 1" "write 1M 1" "randread 64k 1" "read 1M 0" \
	"write 1M 0"; do
	read -r rw bs direct <<<"$wl"
	qs=()
	for i in $(seq "$ZC_PAIRS"); do
		if [ $((i % 2)) = 1 ]; then a=$(fig pool "$rw" "$bs" "$direct"); b=$(fig zc "$rw" "$bs" "$direct")
		else b=$(fig zc "$rw" "$bs" "$direct"); a=$(fig pool "$rw" "$bs" "$direct"); fi
		qs+=("$(python3 -c "print('%.3f' % ($b / $a if $a else 0))")")
		echo "# $rw $bs direct=$direct pair $i: pool $a zero-copy $b" >>"$out/summary.txt"
	done
	python3 -c "
import statistics, sys
q = [float(x) for x in sys.argv[4:]]
print('%-9s %-4s direct=%s zero-copy/pool median %.2f (%.2f-%.2f) over %d pairs' % (
    sys.argv[1], sys.argv[2], sys.argv[3], statistics.median(q), min(q), max(q), len(q)))" \
		"$rw" "$bs" "$direct" "${qs[@]}" | tee -a "$out/summary.txt"
done
