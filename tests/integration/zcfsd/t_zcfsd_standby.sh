#!/usr/bin/env bash
# The standby of a planned restart when things go wrong (server/standby.c,
# docs/supervision.md "Planned restart"). zcfsd starts a wrapper as the
# server that execs zcfs-serve, or, for a standby (--standby-fd) in the
# mode of $W/mode, misbehaves. A probe (write + fdatasync + read back
# every 10 ms) runs throughout; each case ends with the volume served by
# a new server and the probe without error:
#  1. a standby that exits at once: given up, the restart goes on without
#     one (hand-over, then an ordinary restart), planned;
#  2. a standby that writes garbage into its ready pipe: killed, the same;
#  3. the old server killed -9 while its standby waits (the old one was
#     SIGSTOPped, so its hand-over never comes): the standby takes over as
#     after a crash;
#  4. an unpublish while a standby is still starting (it sleeps; the probe
#     stopped before): the standby is killed, the old server stops as in
#     any unpublish, nothing is left running and no zombie stays.
# Runtime: about 4 s (devfuse only: zcfsd's side is transport-independent;
# t_zcfsd_volume_restart covers the standby on every transport).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require
PROBE=$ZCFS_TESTBIN/probe
[ -x "$PROBE" ] || fail "probe not built ($PROBE): run make"

zcfsd_env 64M true
cat >"$W/serve" <<EOF
#!/bin/sh
case " \$* " in
*" --standby-fd="*)
	case \$(cat "$W/mode") in
	exit) exit 3;;
	garbage) printf X >/proc/self/fd/10; exec sleep 5;;
	sleep) exec sleep 30;;
	esac;;
esac
exec "$ZCFS_BIN/zcfs-serve" "\$@"
EOF
chmod 0755 "$W/serve"
echo ok >"$W/mode" && chmod 0644 "$W/mode"
zcfsd_start --serve "$W/serve"
id=v1 mnt=$TGT/v1
create_publish_or_fail "$id" "$mnt"
: >"$W/stalls"
"$PROBE" "$mnt/probe" 10 "$W/stalls" >"$W/probe.out" 2>&1 &
probe_pid=$!
sleep 0.5
restarted() {	# COUNT PID: a new server after more than COUNT restarts
	local p
	p=$(vol_field "$id" pid)
	[ "$(vol_field "$id" restarts)" -gt "$1" ] && [ "$p" != "$2" ] && [ "$p" != 0 ] && [ "$p" != null ]
}
logged() { [ "$(grep -c -- "$1" "$W/zcfsd.log")" -ge "$2" ]; }
children() { ps -o pid= --ppid "$ZCFSD_PID" | wc -l; }	# the server alone, once reaped

# 1. and 2.
n=0
for mode in exit garbage; do
	n=$((n + 1))
	echo "$mode" >"$W/mode"
	before=$(vol_field "$id" restarts) pid=$(server_pid "$id")
	ctlq volume restart "$id"
	wait_for "restart with a standby that does '$mode'" 10 restarted "$before" "$pid" || show_zcfsd_log
	check "$n. standby '$mode': given up, restarted without it, planned" \
		test "$(grep -c 'event=standby-given-up' "$W/zcfsd.log")" = "$n" \
		-a "$(grep -c "event=server-exit volume=$id .*planned=yes" "$W/zcfsd.log")" = "$n" \
		-a "$(grep -c 'standby=yes wall_us' "$W/zcfsd.log")" = 0 -a "$(vol_field "$id" restarts)" = "$n"
	wait_for "the standby gone" 5 test "$(children)" = 1
	check "$n. ... killed and reaped: zcfsd's only child is the server ($(children))" test "$(children)" = 1
done
echo ok >"$W/mode"

# 3.
pid=$(server_pid "$id") before=$(vol_field "$id" restarts)
kill -STOP "$pid"
ctlq volume restart "$id"
wait_for "a ready standby" 10 logged event=server-standby-ready 1 || show_zcfsd_log
kill -KILL "$pid"
wait_for "the standby taking over" 10 restarted "$before" "$pid" || show_zcfsd_log
check "3. old server killed while its standby waited: the standby took over" \
	test "$(grep -c "event=server-restart volume=$id .*standby=yes" "$W/zcfsd.log")" = 1 \
	-a "$(vol_field "$id" restarts)" = $((before + 1))
sleep 0.3
check "3. ... and serves" bash -c "echo x >'$mnt/after-3' && test \"\$(cat '$mnt/after-3')\" = x"

# 4. A standby that is still starting (it sleeps) when the volume is
# unpublished.
echo sleep >"$W/mode"
kill -TERM "$probe_pid"; wait "$probe_pid"; rc_probe=$?
ctlq volume restart "$id"
wait_for "a standby" 10 logged "event=server-standby volume" 4 || show_zcfsd_log
ctlq volume unpublish "$id" "$mnt"
check "4. unpublish during a standby: it was given up" logged 'reason=volume-stopping' 1
wait_for "no server left" 5 test "$(pgrep -fc -- "[z]cfs-serve .*$STORE/")" = 0
check "4. ... no server or standby left running" test "$(pgrep -fc -- "[z]cfs-serve .*$STORE/")" = 0
zombies=$(ps -o stat= --ppid "$ZCFSD_PID" | grep -c '^Z')
check "4. ... no zombie child of zcfsd ($zombies)" test "$zombies" = 0
check "probe: no client error through all of it ($(tail -n 1 "$W/probe.out"))" \
	test "$(grep -cE 'probe: round [0-9]+:' "$W/probe.out")" = 0 -a "$rc_probe" -le 1
ctlq volume delete "$id"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
