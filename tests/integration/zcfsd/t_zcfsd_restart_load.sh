#!/usr/bin/env bash
# Restarts under load: while a probe (4 KiB write + fdatasync + read back
# every 10 ms) and two fio writers with --verify=crc32c --verify_backlog
# (O_DIRECT and buffered; time-based jobs never run a final verify, so
# they verify during the run) work on one volume, its server is killed
# with SIGKILL every 2-3 s (kill to kill), RESTART_KILLS times (default 20). zcfsd
# restarts it on the same connection. Required: no client error, no
# verify failure, restarts == kills (and no kernel report: the runner's
# kmsg check). Printed: the client stall per kill (the probe's longest
# round in flight from a kill until 50 ms after its restart, the widest
# round up to the next kill, and the slowest round away from kills; see
# restart_stall.py), p50/p99/max.
# Volumes: [devfuse] one /dev/fuse volume; [uring] one io_uring volume and
# one io_uring volume of a passthrough tenant (when the kernel has it),
# both at once. Runtime: about 2.5 s per kill (20 kills: ~60 s per
# transport; it was ~4.5 s per kill and volume, the uring volumes one
# after the other: ~110 s devfuse, ~200 s uring). Longer: RESTART_KILLS=100
# TEST_TIMEOUT=1500 ONLY=t_zcfsd_restart_load make check-integration.
# The first kill comes 0.3 s after fio starts, while it opens its files:
# until 2026-12-02 a successor reused its predecessor's fh numbers and
# writes through the probe's older fd landed in fio's newly opened file
# (crc32c verify failure of direct.dat at a probe offset, or zeros in
# buffered.dat: 4 of 13 runs with 4 kills on that code, 2 of 5 of them
# under stress-ng --cpu 2; 0 of 17 after, 0 of 5 stressed; t_zcfsd_restart_fh is the
# deterministic check).
# (A fio job ended by a lost-to-kernel ECANCELED stops there: continue_on_error
# does not cover it; it is not required to have verified then.)
# Known kernel limit (bench/notes/supervision.md, "What 6.18 loses"): on io_uring a
# request the kernel hands to an idle ring entry of the killed server while
# that server exits is ended with ECANCELED by the kernel before any
# process can see it. Those are counted and printed as lost-to-kernel and
# do not fail the test; any other error does. RESTART_STRICT=1 fails on
# them too.
# Where the kernel has buffer pools (Linux >= 7.3, the guest's
# kernel-guest-test case restart-holder) the ring-holder volume keeps an
# unregistered pool: every server of it says bufpool=unregistered, and so
# do status (pinned_layouts.server_bufpool) and metrics
# (zcfs_volume_server_pinned_bytes{bufpool="unregistered"}); the last
# server served requests through the pool.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require fio python3
PROBE=$ZCFS_TESTBIN/probe
[ -x "$PROBE" ] || fail "probe not built ($PROBE): run make"
: "${RESTART_KILLS:=20}"

zcfsd_env 256M true
restart_policy
kpool=$("$ZCFS_BIN/zcfsctl" kernel --json 2>/dev/null | jq -r '.paths.buffer_pool.status')
if [ "$kpool" = supported ] && command -v curl >/dev/null; then
	MSOCK=$W/metrics.sock
	jq --arg s "$MSOCK" '. + {metrics: {listen: $s}}' "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
fi
zcfsd_start

variants=("$ZCFS_TRANSPORT:t1")
if [ "$ZCFS_TRANSPORT" = uring ]; then
	if [ "$pt" = supported ]; then variants+=("uring:tp"); else log "no uring+passthrough variant: passthrough $pt"; fi
	# A volume whose rings a holder process owns (ring_holder): a kill
	# must lose nothing, ECANCELED included.
	variants+=("uring+holder:t1")
fi
# RESTART_VARIANTS="uring+holder:t1 uring:t1": only those
[ -n "${RESTART_VARIANTS:-}" ] && read -r -a variants <<<"$RESTART_VARIANTS"

# restarted COUNT PID ID: ID runs a new server after more than COUNT restarts
restarted() {
	local p
	p=$(vol_field "$3" pid)
	[ "$(vol_field "$3" restarts)" -gt "$1" ] && [ "$p" != "$2" ] && [ "$p" != 0 ] && [ "$p" != null ]
}

# holder_pool V ID: a ring-holder volume on a pool kernel: an unregistered
# pool in every server of it, in status and in metrics
holder_pool() {
	local v=$1 id=$2 n want srv m
	n=$(grep -c 'uring data path: bufpool=unregistered' "$STATE/logs/$id.log")
	want=$(( $(vol_field "$id" restarts) + 1 ))
	check "[$v] every server ran an unregistered pool ($n of $want: $(grep -o 'uring data path: .*' \
		"$STATE/logs/$id.log" | tail -n 1))" test "$n" = "$want"
	srv=$(vol_field "$id" pinned_layouts.server)
	check "[$v] status: server_bufpool=$(vol_field "$id" pinned_layouts.server_bufpool), server pinned $srv" \
		test "$(vol_field "$id" pinned_layouts.server_bufpool)" = unregistered -a "${srv:-0}" -gt 0
	[ -S "${MSOCK:-}" ] || return 0
	m=$(curl -sf --max-time 5 --unix-socket "$MSOCK" http://localhost/metrics |
		grep "^zcfs_volume_server_pinned_bytes{volume=\"$id\",.*bufpool=\"unregistered\"}")
	check "[$v] metrics: ${m:-no zcfs_volume_server_pinned_bytes with bufpool=unregistered}" test -n "$m"
}

run_variant() {
	local tenant=${1#*:} id=v-${1//[:+]/-} mnt i before pid rc_probe rc_fio errs holder=() n strict=${RESTART_STRICT:-0}
	mnt=$TGT/$id
	case $1 in *+holder:*) holder=(--ring-holder); strict=1 ;; esac
	create_publish_or_fail "$id" "$mnt" --tenant "$tenant" "${holder[@]}"
	if [ ${#holder[@]} -gt 0 ]; then
		check "[$1] a ring holder runs (holder_pid in volume.get)" test "$(vol_field "$id" holder_pid)" -gt 0
		[ "$kpool" = supported ] && holder_pool "$1" "$id"
	fi
	local d=$W/$id
	mkdir -p "$d"
	: >"$d/kills"; : >"$d/stalls"
	"$PROBE" "$mnt/probe" 10 "$d/stalls" >"$d/probe.out" 2>&1 &
	local probe_pid=$!
	# Longer than the kills take: stopped (SIGINT) once they are done.
	fio --output-format=json --output="$d/fio.json" \
		--name=direct --directory="$mnt" --filename=direct.dat --rw=write --bs=64k --size=32M \
		--direct=1 --ioengine=psync --verify=crc32c --verify_backlog=64 --verify_fatal=1 \
		--time_based --runtime=$((RESTART_KILLS * 5 + 30)) --rate=8m --continue_on_error=io \
		--name=buffered --directory="$mnt" --filename=buffered.dat --rw=write --bs=16k --size=32M \
		--direct=0 --ioengine=psync --fdatasync=16 --verify=crc32c --verify_backlog=256 --verify_fatal=1 \
		--time_based --runtime=$((RESTART_KILLS * 5 + 30)) --rate=4m --continue_on_error=io \
		>"$d/fio.out" 2>&1 &
	local fio_pid=$!
	# The first kill while fio opens its files (RESTART_FIRST_KILL_S):
	# files opened by a successor of the server that opened the probe's.
	sleep "${RESTART_FIRST_KILL_S:-0.3}"
	local t_kill left
	for i in $(seq "$RESTART_KILLS"); do
		before=$(vol_field "$id" restarts)
		pid=$(server_pid "$id")
		t_kill=$(date +%s%3N)
		echo "${t_kill}000" >>"$d/kills"
		kill -9 "$pid"
		wait_for "restart $i of $id" 15 restarted "$before" "$pid" "$id" || { show_zcfsd_log; break; }
		# The next kill 2-3 s after this one, however long the restart took.
		left=$((t_kill + 2000 + RANDOM % 1000 - $(date +%s%3N)))
		[ "$left" -gt 0 ] && sleep "$((left / 1000)).$(printf %03d $((left % 1000)))"
	done
	kill -TERM "$probe_pid"; wait "$probe_pid"; rc_probe=$?
	kill -INT "$fio_pid" 2>/dev/null; wait "$fio_pid"; rc_fio=$?
	local restarts
	restarts=$(vol_field "$id" restarts)
	sed "s/^/# $id probe: /" "$d/probe.out" | tail -n 6
	# Stopped by SIGINT, fio exits 128 (and notes the signal above its
	# JSON). Errors: each failed I/O (continue_on_error: one stderr line
	# each), any verify complaint, a job's fatal error.
	sed -n '/^{/,$p' "$d/fio.json" >"$d/fio.json.clean" && mv "$d/fio.json.clean" "$d/fio.json"
	local probe_cancel probe_other fio_cancel fio_other lost=0
	probe_cancel=$(grep -c 'probe: round [0-9]*:.*Operation canceled' "$d/probe.out")
	probe_other=$(grep -E 'probe: round [0-9]+:' "$d/probe.out" | grep -vc 'Operation canceled')
	fio_cancel=$(grep -c 'io_u error.*Operation canceled' "$d/fio.out")
	# A job ended by ECANCELED (error 125 in its JSON) is one too, however
	# fio worded it (a WRITE lost in writeback fails the next fdatasync).
	local jobs_cancel
	jobs_cancel=$(jq '[.jobs[] | select(.error == 125)] | length' "$d/fio.json" 2>/dev/null || echo 0)
	[ "$jobs_cancel" -gt "$fio_cancel" ] && fio_cancel=$jobs_cancel
	fio_other=$(grep -iE 'io_u error|verify|bad magic|crc|error' "$d/fio.out" | grep -vc 'Operation canceled')
	errs=$(jq '[.jobs[] | select(.error != 0 and .error != 125)] | length' "$d/fio.json" 2>/dev/null || echo unparseable)
	[ "$errs" = 0 ] && errs=$fio_other
	if [ "$ZCFS_TRANSPORT" = uring ] && [ "$strict" != 1 ]; then
		lost=$((probe_cancel + fio_cancel))
	else
		probe_other=$((probe_other + probe_cancel)); errs=$((errs + fio_cancel))
	fi
	[ "$lost" -gt 0 ] && log "[$1] LOST TO THE KERNEL: $lost requests ended with ECANCELED by 6.18 at a kill (probe $probe_cancel, fio $fio_cancel; docs/supervision.md)"
	check "[$1] probe: no client error or mismatch over $RESTART_KILLS restarts" \
		test "$probe_other" -eq 0 -a "$rc_probe" -le 1 -a "$(grep -c 'probe: rounds=' "$d/probe.out")" = 1
	check "[$1] fio (direct and buffered, crc32c verify_backlog): no error" test "$errs" = 0
	# A job ended by a lost-to-kernel ECANCELED may have been cut before
	# its first write completed (the first kill comes 0.3 s in).
	check "[$1] fio wrote and verified through the restarts" \
		test "$(jq --argjson lost "$lost" '[.jobs[] | select(($lost > 0 and .error == 125) or
			(.write.io_bytes > 0 and .read.io_bytes > 0))] | length' "$d/fio.json" 2>/dev/null)" = 2
	check "[$1] restarts ($restarts) == kill count ($RESTART_KILLS)" test "$restarts" = "$RESTART_KILLS"
	check "[$1] no io_uring commit refused (cross-wired ring entries: $(refused_commits "$STATE/logs/$id.log"))" \
		test "$(refused_commits "$STATE/logs/$id.log")" = 0
	# restart_stall.py: in flight during the restart, up to the next one,
	# and the slowest round away from restarts (printed, not required:
	# the issue's 500 ms is a p99 of what the machine allows as well)
	log "[$1] kill -9: $RESTART_KILLS restarts, client stall per restart: $(/usr/bin/python3 \
		"$(dirname "$0")/../helpers/restart_stall.py" "$d/kills" "$d/stalls" "$W/zcfsd.log" "$id" 500)"
	/usr/bin/python3 "$(dirname "$0")/../helpers/restart_timing.py" "$d/kills" "$d/stalls" "$W/zcfsd.log" \
		"$STATE/logs/$id.log" "$id" | sed "s/^/# [$1] restart step: /"
	# What each successor found in the holder's rings (uring_holder.h).
	[ ${#holder[@]} -gt 0 ] && awk '/holder rings epoch=/ { n++; for (i = 1; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] ~ /^(register|wait|resubmit|recommit|serve-saved|serve-header|dead|cq_ready)$/) s[kv[1]] += kv[2] } }
		END { printf "# [%s] holder take-overs (queues): %d:", v, n; for (k in s) printf " %s=%d", k, s[k]; print "" }' \
		v="$1" "$STATE/logs/$id.log"
	jq -r '.jobs[] | "\(.jobname): error=\(.error) written=\(.write.io_bytes) verified(read)=\(.read.io_bytes) short_reads=\(.read.short_ios // 0)"' \
		"$d/fio.json" 2>/dev/null | sed "s/^/# $id fio: /"
	if [ "$errs" != 0 ]; then
		log "fio exit status $rc_fio"
		tail -n 40 "$d/fio.out" | sed "s/^/# $id fio: /"
	fi
	[ ${#holder[@]} -gt 0 ] && [ "$kpool" = supported ] && holder_pool "$1" "$id"
	ctl volume unpublish "$id" "$mnt" >/dev/null
	if [ ${#holder[@]} -gt 0 ] && [ "$kpool" = supported ]; then
		wait_for "$id's last server to stop" 20 grep -q 'requests: zero_copy=' "$STATE/logs/$id.log"
		n=$(grep -o 'requests: .*' "$STATE/logs/$id.log" | grep -o ' pool=[0-9]*' | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }')
		check "[$1] the last server served requests through the pool ($n)" test "$n" -gt 0
	fi
	keep_server_log "$id" "$d/probe.out" "$d/fio.out"
	ctl volume delete "$id" >/dev/null
}

run_variants "${variants[@]}"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
