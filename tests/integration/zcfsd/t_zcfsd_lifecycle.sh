#!/usr/bin/env bash
# zcfsd volume lifecycle through the real socket: create (idempotent,
# conflicting re-create refused), publish (storage dir owned by the tenant
# 0700, fuse mount, one server), publish to the same target again (no-op,
# same server), a second target (bind mount of the first: same data, same
# connection), unpublish one target (the other keeps serving), unpublish
# twice (no-op), unpublish the last (server exits, nothing mounted), delete
# (storage gone, idempotent), and state.json tracking all of it.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start

check "create answers a created volume" \
	test "$(ctl volume create v1 --transport "$ZCFS_TRANSPORT" | jq -r .volume.state)" = created
check "create again with the same parameters succeeds" \
	ctl volume create v1 --transport "$ZCFS_TRANSPORT"
check "create again with other parameters is ALREADY_EXISTS" \
	test "$(code_of ctl call volume.create '{"id":"v1","queue_depth":2}')" = ALREADY_EXISTS
check "publish v1 at T1" ctl volume publish v1 "$TGT/a" 
check "T1 is a fuse.zcfs mount" grep -q " $TGT/a fuse.zcfs " /proc/self/mounts
check "storage dir is the tenant's, 0700" \
	test "$(stat -c '%u:%g %a' "$STORE/t1/v1")" = "$TENANT_UID:$TENANT_UID 700"
PID1=$(server_pid v1)
check "a server runs" kill -0 "$PID1"
echo "payload-$$" >"$TGT/a/file"
check "a write through T1 lands in the storage dir" grep -q "payload-$$" "$STORE/t1/v1/file"
check "backing file belongs to the tenant" test "$(stat -c %u "$STORE/t1/v1/file")" = "$TENANT_UID"
check "the client still sees root as owner (xattr ownership)" test "$(stat -c %u "$TGT/a/file")" = 0

check "publish at T1 again succeeds" ctl volume publish v1 "$TGT/a"
check "... without a second mount" test "$(grep -c " $TGT/a fuse.zcfs " /proc/self/mounts)" = 1
check "... and with the same server" test "$(server_pid v1)" = "$PID1"

check "publish at T2" ctl volume publish v1 "$TGT/b"
check "T2 shows the same data" grep -q "payload-$$" "$TGT/b/file"
check "T1 and T2 are the same connection" \
	test "$(stat -c %d "$TGT/a")" = "$(stat -c %d "$TGT/b")"
check "still one server" test "$(pgrep -fc "[z]cfs-serve .*$STORE/t1/v1")" = 1
check "state.json lists both targets" \
	test "$(jq -r '.volumes[] | select(.id=="v1") | .targets | length' "$STATE/state.json")" = 2
check "T2 cannot be taken by another volume" \
	test "$(ctl volume create v2 --transport "$ZCFS_TRANSPORT" >/dev/null; code_of ctl call volume.publish "{\"id\":\"v2\",\"target\":\"$TGT/b\"}")" = ALREADY_EXISTS

check "unpublish T1" ctl volume unpublish v1 "$TGT/a"
check "T1 is unmounted" bash -c "! grep -q ' $TGT/a ' /proc/self/mounts"
check "T2 keeps serving" grep -q "payload-$$" "$TGT/b/file"
check "the server is still the same" test "$(server_pid v1)" = "$PID1"
check "unpublish T1 again succeeds" ctl volume unpublish v1 "$TGT/a"
check "delete of a published volume is FAILED_PRECONDITION" \
	test "$(code_of ctl call volume.delete '{"id":"v1"}')" = FAILED_PRECONDITION
check "unpublish T2 (the last)" ctl volume unpublish v1 "$TGT/b"
check "nothing of v1 is mounted" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
check "the server exited" wait_for "server exit" 5 bash -c "! kill -0 $PID1 2>/dev/null"
check "the volume is back to created" test "$(vol_field v1 state)" = created
check "the tenant's budget is free again" \
	test "$(ctl tenant list | jq -r '.tenants[0].memlock_used')" = 0
check "data survives unpublish" grep -q "payload-$$" "$STORE/t1/v1/file"
check "republish serves the same data" \
	bash -c "ctl() { \"$ZCFS_BIN/zcfsctl\" --socket $SOCK \"\$@\"; }; ctl volume publish v1 $TGT/c >/dev/null && grep -q payload-$$ $TGT/c/file && ctl volume unpublish v1 $TGT/c >/dev/null"
check "delete v1" test "$(ctl volume delete v1 | jq -r .deleted)" = true
check "storage dir is gone" test ! -e "$STORE/t1/v1"
check "delete again succeeds (deleted=false)" test "$(ctl volume delete v1 | jq -r .deleted)" = false
check "get is NOT_FOUND" test "$(code_of ctl call volume.get '{"id":"v1"}')" = NOT_FOUND
check "state.json no longer lists v1" \
	test -z "$(jq -r '.volumes[] | select(.id=="v1") | .id' "$STATE/state.json")"
check "zcfsd logged key=value events" grep -q 'event=publish volume=v1' "$W/zcfsd.log"
ctl volume delete v2 >/dev/null
check "no zcfs mounts left under W" bash -c "! grep -q ' $W' /proc/self/mounts"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
