#!/usr/bin/env bash
# A restarted server finds requests the kernel queued while it was down
# and may read them before its main thread has taken over the connection
# (session_resume): they must wait for it, not fail with EIO. The window
# is widened from outside, nothing in zcfs-serve changes: zcfsd runs its
# servers through a wrapper that, for restarts (--resume), has strace
# delay the return of every thread creation of the new server by 300 ms,
# so its /dev/fuse reader runs while main is still starting. A probe
# (4 KiB write+fdatasync+read back every 10 ms) runs through 5 kills.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require strace
# The race is the /dev/fuse readers'; an io_uring server's takeover of its
# predecessor's ring is tested under load by t_zcfsd_restart_load.
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "the start-up race is /dev/fuse's (io_uring takeover: t_zcfsd_restart_load)"
PROBE=$ZCFS_TESTBIN/probe
[ -x "$PROBE" ] || fail "probe not built ($PROBE): run make"
KILLS=5

zcfsd_env 256M true
cat >"$W/serve-slow" <<SH
#!/usr/bin/env bash
# strace must not hold the server's descriptors (fuse fd, counters...).
case " \$* " in
*" --resume "*)
	closes=""
	for f in /proc/\$\$/fd/*; do n=\${f##*/}; [ "\$n" -gt 2 ] && closes+=" \$n>&-"; done
	eval "strace -qq -f -o /dev/null -e trace=clone,clone3 -e inject=clone3:delay_exit=300000 -e inject=clone:delay_exit=300000 -p \$\$ </dev/null >/dev/null 2>&1 \$closes &"
	for _ in \$(seq 200); do grep -q 'TracerPid:[[:space:]]*[1-9]' /proc/\$\$/status && break; sleep 0.01; done
	;;
esac
exec "$ZCFS_BIN/zcfs-serve" "\$@"
SH
chmod 755 "$W/serve-slow"
zcfsd_start --serve "$W/serve-slow"
create_publish_or_fail v1 "$TGT/a"

"$PROBE" "$TGT/a/probe" 10 >"$W/probe.out" 2>&1 &
PROBE_PID=$!
sleep 0.5
delayed=0
# restarted COUNT PID: a new server runs after COUNT restarts of PID's
restarted() {
	local p
	p=$(vol_field v1 pid)
	[ "$(vol_field v1 restarts)" -gt "$1" ] && [ "$p" != "$2" ] && [ "$p" != 0 ] && [ "$p" != null ]
}
for i in $(seq "$KILLS"); do
	before=$(vol_field v1 restarts)
	pid=$(server_pid v1)
	kill -9 "$pid"
	wait_for "restart $i" 10 restarted "$before" "$pid" ||
		{ show_zcfsd_log; break; }
	newpid=$(server_pid v1)
	grep -q 'TracerPid:[[:space:]]*[1-9]' "/proc/$newpid/status" 2>/dev/null && delayed=$((delayed + 1))
	sleep 1
done
kill -TERM "$PROBE_PID"
wait "$PROBE_PID"; prc=$?
sed 's/^/# /' "$W/probe.out" | tail -n 12
check "every restart ran under the widened window" test "$delayed" -eq "$KILLS"
check "the server was restarted $KILLS times" test "$(vol_field v1 restarts)" -eq "$KILLS"
check "the probe saw no error across $KILLS restarts" test "$prc" -eq 0
check "the probe kept going" bash -c "grep -q 'rounds=[1-9]' '$W/probe.out'"
ctl volume unpublish v1 "$TGT/a" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || { show_zcfsd_log; tail -n 20 "$STATE/logs/v1.log" | sed 's/^/# v1: /'; }
finish
