#!/usr/bin/env bash
# Paired before/after benchmark of two builds: bench/run.sh runs alternately
# with each build's bin/ (A B B A A B ..., so drift in the machine's speed
# falls on both), every run with its own native samples. Per target and
# workload it prints after/before of the ratios to native: median and range
# over the pairs. Machines here differ run to run; only these paired ratios
# say whether a change made a data path faster or slower.
#
#   bench/paired.sh BIN_BEFORE BIN_AFTER [PAIRS]
#   BENCH_TARGETS="native uring-qd8" BENCH_WORKLOADS="randread-direct" bench/paired.sh old/bin bin 3
#
# Every other bench/run.sh setting (BENCH_RUNTIME, BACKING, ...) passes through.
# Each run's results stay in $BENCH_PAIRED_OUT/{before,after}.N/ (default
# build/bench-paired, git-ignored); the summary goes to stdout and summary.txt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 2 ] || { echo "usage: bench/paired.sh BIN_BEFORE BIN_AFTER [PAIRS]" >&2; exit 2; }
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd) pairs=${3:-3}
for b in "$before" "$after"; do
	[ -x "$b/zcfs-serve" ] || { echo "bench/paired.sh: no zcfs-serve in $b" >&2; exit 2; }
done
: "${BENCH_PAIRED_OUT:=$root/build/bench-paired}"
: "${BENCH_TARGETS:=native devfuse uring-qd8 passthrough}"
: "${BENCH_WORKLOADS:=seqread-direct randread-direct seqwrite-direct randwrite-direct seqread-buffered seqwrite-buffered meta}"
export BENCH_TARGETS BENCH_WORKLOADS
rm -rf "$BENCH_PAIRED_OUT" && mkdir -p "$BENCH_PAIRED_OUT"

run_one() { # NAME BIN N
	local out="$BENCH_PAIRED_OUT/$1.$3"
	echo "[paired $(date +%T)] $1 run $3 ($2)" >&2
	ZCFS_BIN=$2 BENCH_RESULTS=$out "$here/run.sh" >"$out.log" 2>&1 ||
		{ echo "bench/paired.sh: bench/run.sh failed, see $out.log" >&2; exit 1; }
}
for n in $(seq 1 "$pairs"); do
	if [ $((n % 2)) = 1 ]; then run_one before "$before" "$n"; run_one after "$after" "$n"
	else run_one after "$after" "$n"; run_one before "$before" "$n"; fi
done

python3 - "$BENCH_PAIRED_OUT" "$pairs" <<'PY' | tee "$BENCH_PAIRED_OUT/summary.txt"
import json, statistics, sys
out, pairs = sys.argv[1], int(sys.argv[2])
def load(name, n):
    with open("%s/%s.%d/latest.json" % (out, name, n)) as f:
        return json.load(f)["targets"]
rows = {}
for n in range(1, pairs + 1):
    b, a = load("before", n), load("after", n)
    for t, info in a.items():
        for wl, r in info.get("workloads", {}).items():
            rb = b.get(t, {}).get("workloads", {}).get(wl, {}).get("ratio")
            ra = r.get("ratio")
            if t != "native" and ra and rb:
                rows.setdefault((t, wl), []).append((rb, ra, ra / rb))
print("%-12s %-18s %9s %9s %8s  %s" % ("target", "workload", "before", "after", "after/before", "range over pairs"))
for (t, wl), v in sorted(rows.items()):
    q = [x[2] for x in v]
    print("%-12s %-18s %9.3f %9.3f %8.2f      %.2f-%.2f" % (t, wl, statistics.median(x[0] for x in v),
          statistics.median(x[1] for x in v), statistics.median(q), min(q), max(q)))
PY
