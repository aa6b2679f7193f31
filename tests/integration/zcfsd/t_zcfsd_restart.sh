#!/usr/bin/env bash
# Supervision of a crashed server: after kill -9 zcfsd restarts it on the
# same fuse connection (the mount is never torn down: same connection id
# in mountinfo, same targets), writes FUSE_NOTIFY_RESEND, counts restarts,
# restarts a server that served at once and backs off only on a crash
# loop (servers that fail at their start). Whether the restarted server can
# serve the connection is zcfs-serve's part (--resume); that is checked
# when zcfs-serve offers it, and reported as missing otherwise.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
# zcfsd's zcfs-serve: a wrapper that can make it fail at start.
printf '#!/bin/sh\n[ -e %s/crash ] && exit 1\nexec %s/zcfs-serve "$@"\n' "$W" "$ZCFS_BIN" >"$W/serve"
chmod 755 "$W/serve"
ZCFSD_SERVE=$W/serve zcfsd_start
create_publish_or_fail v1 "$TGT/a"
ctl volume publish v1 "$TGT/b" >/dev/null || fail "publish v1 at b"
echo before-crash >"$TGT/a/f"
conn_at() { awk -v t="$1" '$5 == t { split($3, d, ":"); print d[2] }' /proc/self/mountinfo | tail -n 1; }
CONN=$(conn_at "$TGT/a")
P0=$(server_pid v1)
restarted() { local p; p=$(server_pid v1); [ "$p" != "$1" ] && [ "$p" != 0 ] && kill -0 "$p" 2>/dev/null; }

kill -9 "$P0"
check "the server is restarted" wait_for restart 5 restarted "$P0"
P1=$(server_pid v1)
check "restart count is 1" test "$(vol_field v1 restarts)" = 1
check "the mount was never torn down: same connection at T1 ($CONN)" test "$(conn_at "$TGT/a")" = "$CONN"
check "... and at T2" test "$(conn_at "$TGT/b")" = "$CONN"
check "the volume stays published at both targets" test "$(vol_field v1 'targets | length')" = 2
check "zcfsd wrote FUSE_NOTIFY_RESEND after the restart" \
	grep -q "event=server-restart volume=v1 pid=$P1 restarts=1 resend=ok" "$W/zcfsd.log"
check "the new server inherited the same connection (fd 3 is /dev/fuse)" \
	test "$(readlink /proc/$P1/fd/3)" = /dev/fuse
check "the new server runs as the tenant with CapEff 0" \
	bash -c "grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$P1/status && awk '/^Uid:/ { exit \$2 != $TENANT_UID }' /proc/$P1/status"
check "state.json records the restart" \
	test "$(jq -r '.volumes[] | select(.id=="v1") | .server.restarts' "$STATE/state.json")" = 1

check "a server that served is restarted at once" \
	bash -c "grep -o 'pid=$P0 signal=9 ran_s=[0-9]* restart_in_ms=[0-9]*' '$W/zcfsd.log' | grep -q 'restart_in_ms=0$'"
# Servers killed right after their start (the takeover of a takeover):
# each successor must still find every request.
P=$P1
for _ in 1 2 3 4; do kill -9 "$P"; wait_for restart 5 restarted "$P"; P=$(server_pid v1); done
check "restart count is 5" test "$(vol_field v1 restarts)" = 5
# Crash loop: servers that fail at their start (zcfsd runs the wrapper,
# which exits 1 while $W/crash exists): the first RESTART_FREE_TRIES (2)
# in a row come back at once, then 100, 200 ms... The last server served
# (ran > 1 s) before it is killed, so the count starts from 0.
sleep 1.2
touch "$W/crash"
kill -9 "$P"
crash_delays() { grep -o "event=server-exit volume=v1 pid=[0-9]* status=1 ran_s=[0-9]* restart_in_ms=[0-9]*" "$W/zcfsd.log" | sed 's/.*restart_in_ms=//' | head -n 4 | tr '\n' ' '; }
crashed4() { [ "$(crash_delays | wc -w)" -ge 4 ]; }
wait_for "4 crashes at start" 10 crashed4
rm -f "$W/crash"
check "a crash loop backs off only once established (delays: $(crash_delays))" test "$(crash_delays)" = "0 0 100 200 "
serving() { local p; p=$(server_pid v1); [ "$p" != 0 ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = zcfs-serve ]; }
check "a server runs again after the crash loop" wait_for "a serving server" 15 serving
if "$ZCFS_BIN/zcfs-serve" --help | grep -q -- --resume; then
	check "the restarted server serves the old data" timeout 10 grep -q before-crash "$TGT/b/f"
	check "... and takes writes" timeout 10 bash -c "echo after >>'$TGT/a/f' && grep -q after '$STORE/t1/v1/f'"
else
	echo "# zcfs-serve has no --resume: a restarted server cannot serve a connection whose INIT"
	echo "# an earlier server answered (it answers EIO/blocks); I/O after restart not checked"
fi
check "no io_uring commit refused over the restarts ($(refused_commits "$STATE/logs/v1.log"))" \
	test "$(refused_commits "$STATE/logs/v1.log")" = 0
check "no server was found stalled" bash -c "! grep -q 'event=server-stalled' '$W/zcfsd.log'"
check "unpublish after restarts works" \
	bash -c "timeout 20 '$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish v1 '$TGT/a' >/dev/null && timeout 20 '$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish v1 '$TGT/b' >/dev/null"
check "nothing mounted, no server" bash -c "! grep -q ' $TGT/' /proc/self/mounts && ! pgrep -f '[z]cfs-serve .*$STORE/t1/v1' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
