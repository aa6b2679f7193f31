#!/usr/bin/env bash
# zcfsd upgrades in place (zcfsctl upgrade and SIGUSR2, alternating,
# UPGRADES times, default 6): zcfsd runs from a copy of its binary that
# is replaced (a new file) before every upgrade; it re-execs that file
# with the same pid, re-adopts the volume's running server and takes the
# control socket across the exec. Meanwhile a probe (write + fdatasync +
# read back every 10 ms) and fio (crc32c verify_backlog, direct and
# buffered) run on the volume and `zcfsctl status` is called every 50 ms.
# Required: no client error, the server never restarted (same pid), every
# status call answered (the longest printed), zcfsd's pid the same and
# its binary the new file, no fd of the server's kept but what zcfsd
# takes back (one epoll, its own), and after the upgrades a killed server
# is restarted by the new image and reaped (no zombie).
# Runtime: ~40 s per transport.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require fio python3
PROBE=$ZCFS_TESTBIN/probe
[ -x "$PROBE" ] || fail "probe not built ($PROBE): run make"
: "${UPGRADES:=6}"

zcfsd_env 256M true
mkdir -p "$W/bin"
install_zcfsd() { cp "$ZCFS_BIN/zcfsd" "$W/bin/zcfsd.new" && mv -f "$W/bin/zcfsd.new" "$W/bin/zcfsd"; }
install_zcfsd
ZCFSD_BIN=$W/bin/zcfsd zcfsd_start
pid0=$ZCFSD_PID
id=v1 mnt=$TGT/v1
create_publish_or_fail "$id" "$mnt"
srv0=$(server_pid "$id")
# [uring] beside it a ring holder volume (docs/supervision.md "Ring holder"):
# its holder, like its server, runs on through every upgrade.
if [ "$ZCFS_TRANSPORT" = uring ]; then
	create_publish_or_fail v2 "$TGT/v2" --ring-holder
	h2=$(vol_field v2 holder_pid); s2=$(server_pid v2)
fi
: >"$W/stalls"
"$PROBE" "$mnt/probe" 10 "$W/stalls" >"$W/probe.out" 2>&1 &
probe_pid=$!
fio --output-format=json --output="$W/fio.json" \
	--name=direct --directory="$mnt" --filename=direct.dat --rw=write --bs=64k --size=16M \
	--direct=1 --ioengine=psync --verify=crc32c --verify_backlog=64 --verify_fatal=1 \
	--time_based --runtime=$((UPGRADES * 4 + 30)) --rate=4m \
	--name=buffered --directory="$mnt" --filename=buffered.dat --rw=write --bs=16k --size=16M \
	--direct=0 --ioengine=psync --fdatasync=16 --verify=crc32c --verify_backlog=256 --verify_fatal=1 \
	--time_based --runtime=$((UPGRADES * 4 + 30)) --rate=2m \
	>"$W/fio.out" 2>&1 &
fio_pid=$!
# status every 50 ms: one line per call, "rc ms"
(
	while [ ! -e "$W/stop-status" ]; do
		t0=$(date +%s%N)
		"$ZCFS_BIN/zcfsctl" --socket "$SOCK" status >/dev/null 2>&1
		echo "$? $((($(date +%s%N) - t0) / 1000000))"
		sleep 0.05
	done >"$W/status.calls"
) &
status_pid=$!
sleep 1
readies() { grep -c 'event=ready ' "$W/zcfsd.log"; }
upgraded() { [ "$(readies)" -ge "$1" ]; }
ctl_fail=0
for i in $(seq "$UPGRADES"); do
	install_zcfsd
	if [ $((i % 2)) = 1 ]; then ctl upgrade >/dev/null || ctl_fail=$((ctl_fail + 1)); else kill -USR2 "$ZCFSD_PID"; fi
	wait_for "upgrade $i" 15 upgraded $((i + 1)) || { show_zcfsd_log; break; }
	sleep 2
done
touch "$W/stop-status"; wait "$status_pid"
kill -TERM "$probe_pid"; wait "$probe_pid"; rc_probe=$?
kill -INT "$fio_pid" 2>/dev/null; wait "$fio_pid"
sed -n '/^{/,$p' "$W/fio.json" >"$W/fio.json.clean" && mv "$W/fio.json.clean" "$W/fio.json"
sed "s/^/# probe: /" "$W/probe.out" | tail -n 2
probe_err=$(grep -cE 'probe: round [0-9]+:' "$W/probe.out")
fio_err=$(grep -ciE 'io_u error|verify|bad magic|crc|error=' "$W/fio.out")
jobs_err=$(jq '[.jobs[] | select(.error != 0)] | length' "$W/fio.json" 2>/dev/null || echo unparseable)
calls=$(wc -l <"$W/status.calls")
status_fail=$(awk '$1 != 0' "$W/status.calls" | wc -l)
status_max=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$W/status.calls")
check "zcfsctl upgrade answered OK ($ctl_fail failed)" test "$ctl_fail" = 0
check "zcfsd re-executed $UPGRADES times ($(($(readies) - 1)))" test "$(readies)" = $((UPGRADES + 1))
check "... keeping its pid" test "$ZCFSD_PID" = "$pid0" -a -d "/proc/$pid0"
check "... running the new binary" bash -c "readlink /proc/$pid0/exe | grep -qx '$W/bin/zcfsd'"
check "... taking the control socket across every exec" test "$(grep -c 'event=listen-inherited' "$W/zcfsd.log")" = "$UPGRADES"
check "every status call answered ($calls calls, $status_fail failed, longest ${status_max} ms)" test "$status_fail" = 0
# Re-adoption takes fd 8 of a server as its ring memfd: on /dev/fuse that
# number is the server's own epoll, which zcfsd kept (and gave to its
# successors) before it took memfds only.
epolls() { find /proc/"$pid0"/fd -lname 'anon_inode:*eventpoll*' | wc -l; }
check "zcfsd holds one epoll fd, its own ($(epolls))" test "$(epolls)" = 1
check "the server ran on: same pid, no restart" test "$(server_pid "$id")" = "$srv0" -a "$(vol_field "$id" restarts)" = 0
check "probe: no client error or mismatch" \
	test "$probe_err" -eq 0 -a "$rc_probe" -le 1 -a "$(grep -c 'probe: rounds=' "$W/probe.out")" = 1
check "fio: no I/O or verify error ($fio_err lines, $jobs_err jobs)" test "$fio_err" = 0 -a "$jobs_err" = 0
check "fio wrote and verified through the upgrades" \
	test "$(jq '[.jobs[] | select(.write.io_bytes > 0 and .read.io_bytes > 0)] | length' "$W/fio.json" 2>/dev/null)" = 2
if [ "$ZCFS_TRANSPORT" = uring ]; then
	check "[holder] v2's holder and server ran on: same pids" \
		test "$(vol_field v2 holder_pid):$(server_pid v2)" = "$h2:$s2"
	check "[holder] v2 serves after the upgrades" bash -c "echo x >'$TGT/v2/f' && grep -q x '$TGT/v2/f'"
	kill -9 "$h2"
	check "[holder] a holder killed after the upgrades: new holder and server" \
		wait_for "v2 new holder" 10 bash -c "h=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v2 | jq -r .volume.holder_pid); [ \"\$h\" != $h2 ] && [ \"\$h\" != 0 ] && grep -q 'event=server-restart volume=v2' '$W/zcfsd.log'"
	ctl volume unpublish v2 "$TGT/v2" >/dev/null
fi
restarted() { local p; p=$(server_pid "$id"); [ "$p" != "$srv0" ] && [ "$p" != 0 ] && [ "$p" != null ]; }
kill -9 "$srv0"
check "the upgraded zcfsd restarts a killed server" wait_for restart 10 restarted
zombies() { ps --ppid "$pid0" -o stat= | grep -c '^Z'; }
check "... and reaps it: no zombie children ($(zombies))" test "$(zombies)" = 0
check "unpublish after the upgrades" bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish $id '$mnt' >/dev/null"
check "nothing mounted, no server" bash -c "! grep -q ' $TGT/' /proc/self/mounts && ! pgrep -f '[z]cfs-serve .*$STORE/t1/$id' >/dev/null"
[ "$fio_err" = 0 ] || tail -n 20 "$W/fio.out" | sed "s/^/# fio: /"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
