#!/usr/bin/env bash
# Planned restarts (zcfsctl volume restart): while a probe (4 KiB write +
# fdatasync + read back every 10 ms) and two fio writers with
# --verify=crc32c --verify_backlog (O_DIRECT and buffered) work on a
# volume, its server is replaced PLANNED_RESTARTS times (default 10, one
# every 0.5-1 s after the last one was seen). The old server hands over (zcfs-serve: SIGUSR2; on
# io_uring every ring entry ends up holding a request, so none is idle
# when it exits) and its successor serves what it held. Required: no
# client error at all (ECANCELED included: a planned restart has no
# kernel-limit excuse), no verify failure, no commit refused, every
# restart planned (no kill after the hand-over deadline), restarts ==
# count. Printed: the probe's longest round per restart, p50/p99/max.
# Runtime: 29-33 s per transport with the 10 restarts CI runs (load 8;
# about 2 s per restart plus ~15 s of set-up and teardown).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/zcfsd_lib.sh"
zcfsd_require fio python3
PROBE=$ZCFS_TESTBIN/probe
[ -x "$PROBE" ] || fail "probe not built ($PROBE): run make"
: "${PLANNED_RESTARTS:=10}"

zcfsd_env 256M true
zcfsd_start
id=v1 mnt=$TGT/v1
create_publish_or_fail "$id" "$mnt"
: >"$W/restarts"; : >"$W/stalls"
"$PROBE" "$mnt/probe" 10 "$W/stalls" >"$W/probe.out" 2>&1 &
probe_pid=$!
fio --output-format=json --output="$W/fio.json" \
	--name=direct --directory="$mnt" --filename=direct.dat --rw=write --bs=64k --size=32M \
	--direct=1 --ioengine=psync --verify=crc32c --verify_backlog=64 --verify_fatal=1 \
	--time_based --runtime=$((PLANNED_RESTARTS * 3 + 30)) --rate=8m \
	--name=buffered --directory="$mnt" --filename=buffered.dat --rw=write --bs=16k --size=32M \
	--direct=0 --ioengine=psync --fdatasync=16 --verify=crc32c --verify_backlog=256 --verify_fatal=1 \
	--time_based --runtime=$((PLANNED_RESTARTS * 3 + 30)) --rate=4m \
	>"$W/fio.out" 2>&1 &
fio_pid=$!
sleep 1
# restarted COUNT PID: a new server after more than COUNT restarts
restarted() {
	local p
	p=$(vol_field "$id" pid)
	[ "$(vol_field "$id" restarts)" -gt "$1" ] && [ "$p" != "$2" ] && [ "$p" != 0 ] && [ "$p" != null ]
}
ctl_fail=0
for i in $(seq "$PLANNED_RESTARTS"); do
	before=$(vol_field "$id" restarts)
	pid=$(server_pid "$id")
	date +%s%6N >>"$W/restarts"
	ctl volume restart "$id" >/dev/null || ctl_fail=$((ctl_fail + 1))
	wait_for "planned restart $i" 15 restarted "$before" "$pid" || { show_zcfsd_log; break; }
	sleep "0.$(( 5 + RANDOM % 5 ))"
done
kill -TERM "$probe_pid"; wait "$probe_pid"; rc_probe=$?
kill -INT "$fio_pid" 2>/dev/null; wait "$fio_pid"
sed -n '/^{/,$p' "$W/fio.json" >"$W/fio.json.clean" && mv "$W/fio.json.clean" "$W/fio.json"
sed "s/^/# probe: /" "$W/probe.out" | tail -n 4
restarts=$(vol_field "$id" restarts)
probe_err=$(grep -cE 'probe: round [0-9]+:' "$W/probe.out")
fio_err=$(grep -ciE 'io_u error|verify|bad magic|crc|error=' "$W/fio.out")
jobs_err=$(jq '[.jobs[] | select(.error != 0)] | length' "$W/fio.json" 2>/dev/null || echo unparseable)
check "zcfsctl volume restart answered OK every time ($ctl_fail failed)" test "$ctl_fail" = 0
check "restarts ($restarts) == planned restarts ($PLANNED_RESTARTS)" test "$restarts" = "$PLANNED_RESTARTS"
check "probe: no client error or mismatch" \
	test "$probe_err" -eq 0 -a "$rc_probe" -le 1 -a "$(grep -c 'probe: rounds=' "$W/probe.out")" = 1
check "fio: no I/O or verify error ($fio_err lines, $jobs_err jobs)" test "$fio_err" = 0 -a "$jobs_err" = 0
check "fio wrote and verified through the restarts" \
	test "$(jq '[.jobs[] | select(.write.io_bytes > 0 and .read.io_bytes > 0)] | length' "$W/fio.json" 2>/dev/null)" = 2
check "every restart was a hand-over (none killed at the deadline)" \
	test "$(grep -c 'planned=yes' "$W/zcfsd.log")" = "$PLANNED_RESTARTS" -a "$(grep -c 'no-exit-after-handover' "$W/zcfsd.log")" = 0
check "no io_uring commit refused ($(refused_commits "$STATE/logs/$id.log"))" \
	test "$(refused_commits "$STATE/logs/$id.log")" = 0
log "hand-overs: $(grep -o 'hand-over: [0-9]* ring entries' "$STATE/logs/$id.log" | awk '{ s += $2 } END { print NR " logged, " s+0 " requests held" }')"
log "hand-overs that timed out with idle entries: $(grep -c 'some entries stayed idle' "$STATE/logs/$id.log")"
grep -E 'hand-over|idle|kick' "$STATE/logs/$id.log" | sort | uniq -c | sort -rn | head -n 8 | sed 's/^/# server log: /'
log "planned restart: client stall per restart: $(/usr/bin/python3 - "$W/restarts" "$W/stalls" <<-'PY'
	import sys
	ks = [int(l) for l in open(sys.argv[1]) if l.strip()]
	st = [tuple(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
	per = []
	for i, k in enumerate(ks):
	    end = ks[i + 1] if i + 1 < len(ks) else float("inf")
	    per.append(max([d for s, d in st if k - 1000000 <= s < end and s + d > k] or [0]) / 1000)
	per.sort()
	pct = lambda p: per[min(len(per) - 1, int(p * len(per)))] if per else 0
	print(f"p50={pct(0.50):.0f}ms p99={pct(0.99):.0f}ms max={per[-1] if per else 0:.0f}ms")
	PY
)"
/usr/bin/python3 "$(dirname "$0")/restart_timing.py" "$W/restarts" "$W/stalls" "$W/zcfsd.log" \
	"$STATE/logs/$id.log" "$id" | sed "s/^/# planned restart step: /"
jq -r '.jobs[] | "\(.jobname): error=\(.error) written=\(.write.io_bytes) verified(read)=\(.read.io_bytes)"' \
	"$W/fio.json" 2>/dev/null | sed "s/^/# fio: /"
[ "$fio_err" = 0 ] || tail -n 20 "$W/fio.out" | sed "s/^/# fio: /"
ctl volume unpublish "$id" "$mnt" >/dev/null
ctl volume delete "$id" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
