#!/usr/bin/env bash
# volume.resize (zcfsctl volume resize): a published 8M volume grows to
# 32M while a writer appends direct 256K chunks; the writer passes 8M
# without an error, every chunk reads back as written, df shows 32M, and
# the server is the same process (no restart). Growing only: a shrink,
# a volume without a size and more than the tenant's capacity are
# OUT_OF_RANGE with nothing changed; the same size again succeeds. The
# new size is in state.json and survives a zcfsd restart (re-adopted
# server, df still 32M). About 15 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require
size_kib() { df --output=size -k "$1" | tail -n 1 | tr -d ' '; }

zcfsd_env 64M true
zcfsd_start
create_publish_or_fail r1 "$TGT/r1" --size 8M
chmod 0777 "$TGT/r1" 2>/dev/null
pid=$(server_pid r1)
check "df shows 8M" test "$(size_kib "$TGT/r1")" -eq 8192
# the writer: 80 chunks of 256K (20M), direct, each a distinct pattern
writer() {
	local i
	for i in $(seq 0 79); do
		head -c 262144 /dev/zero | tr '\0' "\\$(printf '%03o' $((i % 200 + 32)))" |
			dd of="$TGT/r1/f" bs=256K seek="$i" count=1 iflag=fullblock oflag=direct conv=notrunc status=none || return 1
		if [ "$i" -lt 20 ]; then sleep 0.05; fi
	done
	return 0
}
writer >"$W/writer.out" 2>&1 &
wpid=$!
# resize once the writer is under way, before it reaches 8M
for _ in $(seq 100); do [ "$(stat -c %s "$TGT/r1/f" 2>/dev/null || echo 0)" -ge $((2 << 20)) ] && break; sleep 0.02; done
log "resizing at $(stat -c %s "$TGT/r1/f") bytes written"
check "zcfsctl volume resize r1 32M" ctlq volume resize r1 32M
wait "$wpid"; wrc=$?
cat "$W/writer.out" | sed 's/^/# writer: /'
check "the writer wrote 20M past the old 8M without an error" test "$wrc" -eq 0 -a "$(stat -c %s "$TGT/r1/f")" -eq $((20 << 20))
bad=0
for i in $(seq 0 79); do
	c=$(dd if="$TGT/r1/f" bs=256K skip="$i" count=1 status=none | tr -d "\\$(printf '%03o' $((i % 200 + 32)))" | wc -c)
	[ "$c" -eq 0 ] || { bad=$((bad + 1)); [ "$bad" -gt 3 ] || log "chunk $i: $c bytes differ"; }
done
check "every chunk reads back as written (0 bad of 80)" test "$bad" -eq 0
check "df shows 32M" test "$(size_kib "$TGT/r1")" -eq 32768
check "volume get: size 32M" test "$(vol_field r1 size)" = $((32 << 20))
check "the same server serves (no restart)" test "$(server_pid r1)" = "$pid"
check "state.json records 32M" test "$(jq '.volumes[] | select(.id == "r1") | .size' "$STATE/state.json")" = $((32 << 20))
check "the same size again: OK (idempotent)" ctlq volume resize r1 32M
before=$(ctl volume get r1 | jq -c '.volume | {size, pid}')
check "shrinking: OUT_OF_RANGE" test "$(code_of ctl call volume.resize '{"id":"r1","size":16777216}')" = OUT_OF_RANGE
check "past the tenant's capacity: OUT_OF_RANGE" test "$(code_of ctl call volume.resize '{"id":"r1","size":"1000000G"}')" = OUT_OF_RANGE
check "... nothing changed" test "$(ctl volume get r1 | jq -c '.volume | {size, pid}')" = "$before"
ctlq volume create nolimit --size 0
check "a volume without a size: OUT_OF_RANGE" test "$(code_of ctl call volume.resize '{"id":"nolimit","size":16777216}')" = OUT_OF_RANGE
check "unknown volume: NOT_FOUND" test "$(code_of ctl call volume.resize '{"id":"nope","size":16777216}')" = NOT_FOUND
check "bad size: INVALID_ARGUMENT" test "$(code_of ctl call volume.resize '{"id":"r1","size":"lots"}')" = INVALID_ARGUMENT
check "tenant list: capacity_available and size_committed" \
	test "$(ctl tenant list | jq '.tenants[0] | (.capacity_available > 0) and .size_committed == 33554432')" = true

zcfsd_kill9
zcfsd_start
check "after a zcfsd restart: re-adopted, same server" test "$(server_pid r1)" = "$pid"
check "... size 32M" test "$(vol_field r1 size)" = $((32 << 20))
check "... df still 32M" test "$(size_kib "$TGT/r1")" -eq 32768
check "... and 4M more can be written" dd if=/dev/zero of="$TGT/r1/g" bs=1M count=4 oflag=direct status=none
ctlq volume unpublish r1 "$TGT/r1"
ctlq volume delete r1
ctlq volume delete nolimit
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
