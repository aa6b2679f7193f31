#!/usr/bin/env bash
# Unpublishing a volume whose server hangs (SIGSTOP, hung-server
# detection off) while the kernel holds dirty pages of it: zcfsd's
# bounded syncfs child times out (10 s) and is killed; the event loop
# reaps it afterwards, so no zombie stays. Printed: how long zcfsctl
# status waited meanwhile (unpublish still runs in zcfsd's event loop:
# docs/supervision.md). Runtime: ~20 s.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/zcfsd_lib.sh"
zcfsd_require
[ "${ZCFS_TRANSPORT:-devfuse}" = devfuse ] || skip "transport-independent, runs on devfuse only"

zcfsd_env 64M true
jq '.defaults.stall_timeout_ms = 0' "$POLICY" >"$POLICY.new" && mv "$POLICY.new" "$POLICY"
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
dd if=/dev/zero of="$TGT/a/f" bs=64k count=64 status=none	# dirty pages, no sync
srv=$(server_pid v1)
kill -STOP "$srv"
t0=$(date +%s%N)
timeout 60 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" volume unpublish v1 "$TGT/a" >/dev/null &
unpub=$!
sleep 1
s0=$(date +%s%N)
timeout 30 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" status >/dev/null; rc_status=$?
status_ms=$((($(date +%s%N) - s0) / 1000000))
wait "$unpub"; rc_unpub=$?
unpub_ms=$((($(date +%s%N) - t0) / 1000000))
log "unpublish took ${unpub_ms} ms; a status call during it waited ${status_ms} ms (rc $rc_status)"
zombies() { ps --ppid "$ZCFSD_PID" -o stat= | grep -c '^Z'; }
check "unpublish of the hung volume succeeded (rc $rc_unpub)" test "$rc_unpub" = 0
check "zcfsd logged the syncfs it gave up on" grep -q 'event=sync-failed volume=v1' "$W/zcfsd.log"
check "no zombie child of zcfsd after it (reaped by the event loop)" wait_for "no zombie" 5 test "$(zombies)" = 0
check "the stopped server is gone" bash -c "! kill -0 $srv 2>/dev/null || grep -q '^State:.*Z' /proc/$srv/status"
check "nothing mounted" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
