#!/usr/bin/env bash
# A server killed by its seccomp filter is logged with its signal and
# counted (issue 27; before, a server killed while a ptrace tracer was
# attached was logged `signal=0`: zcfsd's waitid found nothing yet, the
# tracer reaps first). The server is made to call socket(2) (inject_syscall,
# as a compromised server would), then killed by a plain SIGSYS: both
# exits are logged `signal=31 reason=seccomp-kill` at error level,
# zcfs_volume_seccomp_kills_total counts 1 then 2, and the volume is
# restarted each time. About 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
zcfsd_require curl
[ "$(uname -m)" = x86_64 ] || skip "inject_syscall knows only x86-64"
INJ=$(need_testbin inject_syscall)

zcfsd_env 64M true
MSOCK=$W/metrics.sock
policy_jq --arg s "$MSOCK" '. + {metrics: {listen: $s}}'
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
kills() { curl -sf --max-time 5 --unix-socket "$MSOCK" http://localhost/metrics |
	awk '$1 == "zcfs_volume_seccomp_kills_total{volume=\"v1\",tenant=\"t1\"}" { print $2 }'; }
exit_line() { grep "event=server-exit volume=v1 pid=$1 " "$W/zcfsd.log"; }
new_pid() { local p; p=$(server_pid v1); [ -n "$p" ] && [ "$p" != null ] && [ "$p" != "$1" ] && [ "$p" -gt 0 ]; }

check "no seccomp kill counted yet" test "$(kills)" = 0
P=$(server_pid v1)
out=$("$INJ" "$P" socket:1,1,0 2>&1 | tr '\n' ' ')
log "inject socket(2) into $P: $out"
wait_for "the exit of $P" 10 exit_line "$P" >/dev/null
log "$(exit_line "$P")"
check "the traced server's exit is logged signal=31 reason=seccomp-kill" \
	bash -c "grep -q 'level=err.*event=server-exit volume=v1 pid=$P signal=31 reason=seccomp-kill' '$W/zcfsd.log'"
check "zcfs_volume_seccomp_kills_total is 1" test "$(kills)" = 1
check "the volume got a new server" wait_for "a new server" 10 new_pid "$P"
P2=$(server_pid v1)
wait_for "v1 published" 10 bash -c "[ \"\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v1 | jq -r .volume.state)\" = published ]"
kill -SYS "$P2"
wait_for "the exit of $P2" 10 exit_line "$P2" >/dev/null
log "$(exit_line "$P2")"
check "a plain SIGSYS is logged signal=31 reason=seccomp-kill" \
	bash -c "grep -q 'event=server-exit volume=v1 pid=$P2 signal=31 reason=seccomp-kill' '$W/zcfsd.log'"
check "zcfs_volume_seccomp_kills_total is 2" test "$(kills)" = 2
check "the volume got a new server again" wait_for "a new server" 10 new_pid "$P2"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
