#!/usr/bin/env bash
# make bench KERNEL=FILE [KMODS=DIR]: the data paths of a buffer-pool kernel
# (Linux >= 7.3) measured inside a qemu guest booted from it
# (scripts/guest.sh: TCG, 2 vCPUs, the host's root read-only through
# virtiofs): native tmpfs, /dev/fuse, stock io_uring entries, buffer pools,
# zero-copy on every open, and the default (auto) choice, with the seed
# series' method: fio sync engine, 2 jobs, bs=1M and 4 KiB, direct, tmpfs
# backing, BENCH_REPEAT (3) interleaved rounds, ratios and their ranges.
# Results in bench/results/guest/ (latest.md, latest.png; the JSON beside
# them is git-ignored). Under TCG every instruction is emulated: absolute
# figures mean nothing, only ratios taken within one guest run do.
# BENCH_GUEST_SCRIPT=bench/zc_rule.sh runs that instead (the paired
# measurement behind the per-open zero-copy rule; its summary.txt lands in
# the results directory).
# Exit: bench/run.sh's status, 77 without a kernel or qemu (guest.sh).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
: "${KERNEL:?make bench KERNEL=FILE (e.g. KERNEL from build/kernel/current.env)}"
out=${BENCH_GUEST_OUT:-$root/build/bench-guest}
dest=${BENCH_GUEST_RESULTS:-$here/results/guest}
rm -rf "$out"
mkdir -p "$out/results" "$dest"
kmods=()
[ -n "${KMODS:-}" ] && kmods=(--kmods "$KMODS")
# 64 MiB per job: six targets' files live in the guest's RAM.
"$root/scripts/guest.sh" --kernel "$KERNEL" "${kmods[@]}" --out "$out" --quiet \
	--timeout "${BENCH_GUEST_TIMEOUT:-5400}" -- env \
	ZCFS_BIN="${ZCFS_BIN:-$root/bin}" ZCFS_BENCHBIN="${ZCFS_BENCHBIN:-$root/build/bench}" \
	BENCH_RESULTS="$out/results" BENCH_CSI=0 \
	BENCH_TARGETS="${BENCH_TARGETS:-native devfuse uring-stock bufpool zerocopy auto}" \
	BENCH_WORKLOADS="${BENCH_WORKLOADS:-direct}" BENCH_REPEAT="${BENCH_REPEAT:-3}" \
	BENCH_RUNTIME="${BENCH_RUNTIME:-5}" BENCH_SIZE="${BENCH_SIZE:-64M}" \
	BENCH_MOUNT_WAIT_S="${BENCH_MOUNT_WAIT_S:-60}" \
	BENCH_LABEL="TCG guest (qemu without KVM, 2 vCPUs): only ratios within this run mean anything" \
	"${BENCH_GUEST_SCRIPT:-$here/run.sh}"
rc=$?
for f in latest.md latest.png latest.json summary.txt; do
	[ -f "$out/results/$f" ] && cp "$out/results/$f" "$dest/$f"
done
[ -f "$dest/latest.md" ] && echo "bench: $dest/latest.md (guest: $(head -n 1 "$out/uname" 2>/dev/null))"
exit "$rc"
