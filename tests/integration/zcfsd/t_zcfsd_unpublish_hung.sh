#!/usr/bin/env bash
# Unpublishing a volume whose server hangs (SIGSTOP, hung-server
# detection off) while the kernel holds dirty pages of it: zcfsd's syncfs
# child is given up on after 10 s and killed, the server killed after the
# abort, and the event loop reaps both (no zombie). Meanwhile zcfsd
# answers everything else: a status client (one connection, a call every
# 50 ms) is answered throughout, the slowest call under 100 ms (before
# the unpublish ran in the event loop: one call waited 10.5 s), and a
# second unpublish of the volume is refused UNAVAILABLE at once.
# Runtime: ~15 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require
[ "${ZCFS_TRANSPORT:-devfuse}" = devfuse ] || skip "transport-independent, runs on devfuse only"

zcfsd_env 64M true
policy_jq '.defaults.stall_timeout_ms = 0'
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
dd if=/dev/zero of="$TGT/a/f" bs=64k count=64 status=none	# dirty pages, no sync
srv=$(server_pid v1)
zcfsd_status_poller
kill -STOP "$srv"
t0=$(date +%s%N)
timeout 60 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" volume unpublish v1 "$TGT/a" >/dev/null &
unpub=$!
sleep 1
second=$(code_of timeout 10 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" call volume.unpublish "{\"id\": \"v1\", \"target\": \"$TGT/a\"}")
wait "$unpub"; rc_unpub=$?
unpub_ms=$((($(date +%s%N) - t0) / 1000000))
sleep 0.2
kill "$STATUS_LOOP" 2>/dev/null; wait "$STATUS_LOOP" 2>/dev/null
max=$(sort -n "$W/status.ms" | tail -n 1)
log "unpublish took ${unpub_ms} ms; status: $(wc -l <"$W/status.ms") calls meanwhile, slowest ${max} ms"
check "status was answered throughout ($(wc -l <"$W/status.ms") calls, $(cat "$W/status.err"))" \
	test ! -s "$W/status.err" -a "$(wc -l <"$W/status.ms")" -gt 50
check "the slowest status call took < 100 ms (${max} ms)" test "${max:-1000}" -lt 100
check "a second unpublish meanwhile: UNAVAILABLE at once ($second)" test "$second" = UNAVAILABLE
zombies() { ps --ppid "$ZCFSD_PID" -o stat= | grep -c '^Z'; }
check "unpublish of the hung volume succeeded (rc $rc_unpub)" test "$rc_unpub" = 0
check "zcfsd logged the syncfs it gave up on" grep -q 'event=sync-failed volume=v1' "$W/zcfsd.log"
check "no zombie child of zcfsd after it (reaped by the event loop)" wait_for "no zombie" 5 test "$(zombies)" = 0
check "the stopped server is gone" bash -c "! kill -0 $srv 2>/dev/null || grep -q '^State:.*Z' /proc/$srv/status"
check "nothing mounted" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
