#!/usr/bin/env bash
# Fault: a volume's fuse connection is aborted from outside
# (/sys/fs/fuse/connections/N/abort) while a client reads from it. zcfsd
# notices when the server exits (its dup of the fuse fd polls as an
# error), reports it (event=connection-aborted; `volume get` shows state
# created and last_error), unmounts the dead targets and releases the
# budget instead of restarting servers on a dead connection forever; a
# new publish of the same volume serves the data written before.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
# zcfsd mounts fusectl when missing; the test needs it too.
[ -d /sys/fs/fuse/connections ] && ! mountpoint -q /sys/fs/fuse/connections &&
	mount -t fusectl fusectl /sys/fs/fuse/connections
create_publish_or_fail v1 "$TGT/a"
ctl volume publish v1 "$TGT/a2" >/dev/null || fail "bind v1 at a2"
create_publish v2 "$TGT/b" || fail "publish v2"
dd if=/dev/urandom of="$TGT/a/data" bs=64k count=16 conv=fsync status=none || fail "write v1 data"
sum=$(md5sum <"$TGT/a/data")
echo keep >"$TGT/b/f"
conn=$(vol_field v1 conn)
P1=$(server_pid v1)
used_before=$(ctl tenant list | jq -r '.tenants[0].memlock_used')
pinned_v1=$(vol_field v1 pinned)
[ -e "/sys/fs/fuse/connections/$conn/abort" ] || fail "no fusectl entry for connection $conn"

# A client in the middle of reading: it must be released, not hang.
( while cat "$TGT/a/data" >/dev/null 2>&1; do :; done ) &
READER=$!
sleep 0.3
echo 1 >"/sys/fs/fuse/connections/$conn/abort"
check "the reading client gets an error and stops (no hang)" \
	wait_for "reader exit" 10 bash -c "! kill -0 $READER 2>/dev/null"
kill -9 "$READER" 2>/dev/null
check "zcfsd logs the aborted connection" \
	wait_for "connection-aborted event" 10 grep -q "event=connection-aborted volume=v1 conn=$conn" "$W/zcfsd.log"
check "zcfsd did not restart a server on the dead connection" \
	bash -c "! grep -q 'event=server-restart volume=v1' '$W/zcfsd.log'"
check "status shows v1 unpublished with the reason" \
	bash -c "[ \"\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v1 | jq -r '.volume.state + \" \" + (.volume.targets|length|tostring)')\" = 'created 0' ] &&
		 '$ZCFS_BIN/zcfsctl' --socket '$SOCK' status --json | jq -e '.volumes[] | select(.id==\"v1\") | .last_error | test(\"aborted\")' >/dev/null"
check "the old server exited" bash -c "! kill -0 $P1 2>/dev/null"
check "both dead targets are unmounted" bash -c "! grep -qE ' $TGT/a2? ' /proc/self/mounts"
check "its budget was released" \
	test "$(ctl tenant list | jq -r '.tenants[0].memlock_used')" = "$((used_before - pinned_v1))"
check "no zcfs-serve of v1 left" bash -c "! pgrep -f '[z]cfs-serve .*$STORE/t1/v1\$' >/dev/null"
check "v2 keeps serving" grep -q keep "$TGT/b/f"
check "v2 keeps its server" test "$(vol_field v2 state)" = published
check "republishing v1 works" ctlq volume publish v1 "$TGT/a"
check "... on a new live connection with the data written before" \
	bash -c "[ \"\$(md5sum <'$TGT/a/data')\" = '$sum' ]"
check "... and last_error is cleared" test "$(vol_field v1 last_error)" = null
check "... and it accepts writes" bash -c "echo again >'$TGT/a/new' && grep -q again '$TGT/a/new'"
# The same once more with zcfsd down while the abort happens: the next
# zcfsd finds the server gone and cleans up at re-adoption.
conn=$(vol_field v1 conn)
zcfsd_kill9
echo 1 >"/sys/fs/fuse/connections/$conn/abort"
sleep 0.5
zcfsd_start
check "aborted while zcfsd was down: cleaned up at re-adoption" \
	bash -c "grep -q 'event=readopt-failed volume=v1' '$W/zcfsd.log' && ! grep -q ' $TGT/a ' /proc/self/mounts"
check "... and publishes again" ctlq volume publish v1 "$TGT/a"
check "... with the data" bash -c "[ \"\$(md5sum <'$TGT/a/data')\" = '$sum' ] && grep -q again '$TGT/a/new'"
ctl volume unpublish v1 "$TGT/a" >/dev/null
ctl volume unpublish v2 "$TGT/b" >/dev/null
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
