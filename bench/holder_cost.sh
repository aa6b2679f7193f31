#!/usr/bin/env bash
# What a ring holder (volume option ring_holder, docs/supervision.md "Ring
# holder") costs: two io_uring volumes of one tenant through one zcfsd, the
# same geometry, one with --ring-holder, fio on both in turns (A B, then B
# A, HOLDER_REPS rounds), direct I/O: 4 KiB randread / randwrite, 1 MiB
# read / write, HOLDER_JOBS jobs of psync each, HOLDER_RUNTIME s per run.
# Prints every run and per row the median of holder/own. Root; cleans up
# (tests/lib.sh). Usage: bench/holder_cost.sh
here=$(cd "$(dirname "$0")/.." && pwd)
export ZCFS_TRANSPORT=uring
. "$here/tests/lib.sh"
. "$here/tests/integration/helpers/zcfsd_lib.sh"
zcfsd_require fio jq
: "${HOLDER_REPS:=3}" "${HOLDER_RUNTIME:=8}" "${HOLDER_JOBS:=2}" "${HOLDER_DEPTH:=8}" "${HOLDER_MAX_WRITE:=128K}"

zcfsd_env 256M true
restart_policy
zcfsd_start
for v in own held; do
	extra=(); [ "$v" = held ] && extra=(--ring-holder)
	create_publish "$v" "$TGT/$v" --tenant t1 --queue-depth "$HOLDER_DEPTH" \
		--max-write "$HOLDER_MAX_WRITE" "${extra[@]}" || { show_zcfsd_log; fail "publish $v"; }
	# the files every job reads, written once
	fio --name=fill --directory="$TGT/$v" --rw=write --bs=1M --size=256M --numjobs="$HOLDER_JOBS" \
		--direct=1 --ioengine=psync >/dev/null || fail "fill $v"
done
log "holder pid $(vol_field held holder_pid); uptime: $(uptime)"
rows=("randread 4k" "randwrite 4k" "read 1M" "write 1M")
out=$W/runs
: >"$out"
for rep in $(seq "$HOLDER_REPS"); do
	for row in "${rows[@]}"; do
		set -- $row
		order=(own held); [ $((rep % 2)) = 0 ] && order=(held own)
		for v in "${order[@]}"; do
			r=$(fio --name=fill --directory="$TGT/$v" --rw="$1" --bs="$2" --size=256M \
				--numjobs="$HOLDER_JOBS" --direct=1 --ioengine=psync --time_based \
				--runtime="$HOLDER_RUNTIME" --group_reporting --output-format=json |
				jq -r '.jobs[0] | (.read.iops + .write.iops), (.read.bw + .write.bw)' | paste -sd' ')
			echo "$rep $1-$2 $v $r" | tee -a "$out" | sed 's/^/# run: /'
		done
	done
done
log "uptime after: $(uptime)"
# per row: median over the rounds of held/own (IOPS), and the medians
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    rep, row, vol, iops, bw = line.split()
    runs.setdefault(row, {}).setdefault(rep, {})[vol] = float(iops)
for row, reps in runs.items():
    own = [r['own'] for r in reps.values()]
    held = [r['held'] for r in reps.values()]
    ratio = [r['held'] / r['own'] for r in reps.values()]
    print('# %-13s own %9.0f IOPS  holder %9.0f IOPS  holder/own %.2f (%s)' % (
        row, statistics.median(own), statistics.median(held), statistics.median(ratio),
        ' '.join('%.2f' % x for x in ratio)))
PY
check "both volumes served every run" test "$(wc -l <"$out")" = $((HOLDER_REPS * ${#rows[@]} * 2))
finish
