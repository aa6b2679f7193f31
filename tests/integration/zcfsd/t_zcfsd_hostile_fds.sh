#!/usr/bin/env bash
# What a compromised server does with the fds zcfsd shares with it must not
# crash or stall zcfsd (docs/security.md "What zcfsd shares with a server").
# The server is made to issue the syscalls itself (inject_syscall, ptrace:
# its own seccomp filter and Landlock apply):
#  1. ftruncate/fallocate of its stats memfd (fd 5), which zcfsd maps:
#     refused (EPERM, sealed); a metrics scrape then works, zcfsd lives
#     (before: ftruncate to 0 made zcfsd die of SIGBUS at the scrape);
#  2. fd 9 (the log pipe's read end, the same open file as zcfsd's)
#     made blocking and a line written: zcfsd's drain does not block on
#     the empty pipe (before: zcfsd hung in read(2) for good);
#  3. fd 5 replaced by a backing file that looks like the counters, zcfsd
#     restarted: the re-adopting zcfsd does not map it (unsealed), so the
#     server truncating that file later cannot crash the scrape;
#  4. fd 3 (the fuse fd zcfsd takes back) replaced by a full pipe, zcfsd
#     restarted: the volume is not re-adopted on that fd (it is cleaned
#     up), zcfsd keeps answering.
# Runtime: about 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require curl
[ "$(uname -m)" = x86_64 ] || skip "inject_syscall knows only x86-64"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
INJ=$(need_testbin inject_syscall)

zcfsd_env 64M true
MSOCK=$W/run/metrics.sock
policy_jq --arg s "$MSOCK" '. + {metrics: {listen: $s}}'
zcfsd_start
wait_for "the metrics socket" 5 test -S "$MSOCK" || { show_zcfsd_log; fail "no metrics socket"; }
scrape() { curl -sf --max-time 5 --unix-socket "$MSOCK" http://localhost/metrics >/dev/null; }
alive() { kill -0 "$ZCFSD_PID" 2>/dev/null; }
create_publish_or_fail v1 "$TGT/a"
P=$(server_pid v1)
inj() { "$INJ" "$@" 2>&1 | tr '\n' ' '; }

# 1. the live memfd
out=$(inj "$P" ftruncate:5,0 ftruncate:5,1048576 fallocate:5,0,0,1048576)
check "server: ftruncate(5, 0), ftruncate(5, 1 MiB) and fallocate(5, 1 MiB) refused ($out)" \
	eval "[[ '$out' == 'ftruncate = -EPERM ftruncate = -EPERM fallocate = -EPERM ' ]]"
check "a metrics scrape works after it" scrape
check "zcfsd is alive" alive

# 2. fd 9, the log pipe's read end parked in it, is the same open file
# as zcfsd's: its O_NONBLOCK cleared there is cleared for zcfsd's read
# too; then a line on its stderr, read and the pipe found empty: zcfsd's
# drain must not block in read(2) for the next (before: it did, for good)
out=$(inj "$P" fcntl:9,3 fcntl:9,4,0 fcntl:9,3 write:2,@64,64)
check "server: fd 9 made blocking, 64 bytes on its stderr ($out)" \
	eval "[[ '$out' == *'fcntl = 0 fcntl = 0 write = 64 ' ]]"
sleep 0.3
check "zcfsd answers status after it" timeout 5 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" status
check "zcfsd is alive" alive

# 3. fd 5 forged to a backing file holding what the counters' header holds
{ printf 'sfcz\001\000\000\000'; head -c 4088 /dev/zero; } >"$TGT/a/fake-stats"
sync
F=$(find "$STORE" -name fake-stats | head -n 1)
check "the fake counters file is in the volume's storage ($F)" test -n "$F"
out=$(inj "$P" "openat:-100,s:$F,2,0" close:5 'fcntl:$0,1030,5' 'close:$0')
check "server: fd 5 is now its backing file ($out)" eval "[[ '$out' == *'fcntl = 5 '* ]]"
zcfsd_kill9
zcfsd_start
check "the restarted zcfsd re-adopted v1 (pid $P)" test "$(server_pid v1)" = "$P"
check "... and did not map the forged counters" grep -q "event=stats-not-adopted volume=v1" "$W/zcfsd.log"
out=$(inj "$P" ftruncate:5,0)
check "server: truncating that file works ($out)" eval "[[ '$out' == 'ftruncate = 0 ' ]]"
check "a metrics scrape still works" scrape
check "zcfsd is alive" alive

# 4. fd 3 forged to a full pipe
out=$(inj "$P" pipe2:@8,2048 'fcntl:$0,1031,4096' 'write:$0,@4096,4096' 'fcntl:$0,4,1' close:3 \
	'fcntl:$0,1030,3')
check "server: fd 3 is now a full, blocking pipe of its own ($out)" eval "[[ '$out' == *'write = 4096 '*'fcntl = 3 ' ]]"
zcfsd_kill9
zcfsd_start
check "the restarted zcfsd refused the forged fuse fd" \
	grep -q "event=readopt-failed volume=v1 .*reason=fuse-fd-not-dev-fuse" "$W/zcfsd.log"
kill -9 "$P" 2>/dev/null
sleep 0.5
t0=$(date +%s%N)
check "zcfsd answers status afterwards" timeout 5 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" status
log "status took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "zcfsd is alive" alive
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
