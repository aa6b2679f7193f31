#!/usr/bin/env bash
# Fault: state.json is truncated, corrupt or has wrong types when zcfsd
# starts. zcfsd refuses to guess: it exits non-zero with a message naming
# the file (and the volume and field), before it listens, re-adopts,
# unmounts or signals anything, and without rewriting the file. The
# volume published by the previous zcfsd keeps serving throughout, and
# once the file is restored a new zcfsd re-adopts it.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
ctlq volume create v2 --transport devfuse || fail "create v2"
echo precious >"$TGT/a/f"
P1=$(server_pid v1)
zcfsd_kill9
cp "$STATE/state.json" "$W/good.json"

# run_bad NAME: zcfsd on the current state.json must refuse to start.
run_bad() {
	local name=$1 sum rc
	sum=$(md5sum <"$STATE/state.json")
	rm -f "$SOCK"
	timeout 15 "$ZCFS_BIN/zcfsd" --policy "$POLICY" --state-dir "$STATE" --socket "$SOCK" \
		--serve "$ZCFS_BIN/zcfs-serve" --foreground 2>"$W/bad.log"
	rc=$?
	sed "s/^/# $name: /" "$W/bad.log" | grep -E 'state-|exit' | head -n 3
	check "$name: zcfsd exits non-zero (rc=$rc)" bash -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
	check "$name: the message names state.json" \
		grep -qE "event=state-(invalid|unreadable) path=$STATE/state.json" "$W/bad.log"
	check "$name: it never listened" test ! -S "$SOCK"
	check "$name: state.json was not rewritten" bash -c "[ \"\$(md5sum <'$STATE/state.json')\" = '$sum' ]"
	check "$name: v1's server still runs" kill -0 "$P1"
	check "$name: v1 still serves" grep -q precious "$TGT/a/f"
}
# bad_json NAME JQ: the good file transformed by a jq filter
bad_json() {
	jq "$2" "$W/good.json" >"$STATE/state.json" || fail "jq $2"
	run_bad "$1"
}

head -c "$(( $(stat -c %s "$W/good.json") / 2 ))" "$W/good.json" >"$STATE/state.json"
run_bad truncated
: >"$STATE/state.json"
run_bad empty
printf '\x00\xff garbage {' >"$STATE/state.json"
run_bad garbage
bad_json "top-level array" '[.]'
bad_json "version 2" '.version = 2'
bad_json "volumes not an array" '.volumes = {}'
bad_json "queue_depth as a string" '(.volumes[] | select(.id=="v1") | .queue_depth) |= tostring'
bad_json "max_write zero" '(.volumes[] | select(.id=="v1") | .max_write) = 0'
bad_json "unknown transport" '(.volumes[] | select(.id=="v2") | .transport) = "fast"'
bad_json "relative target" '(.volumes[] | select(.id=="v1") | .targets) = ["relative/a"]'
bad_json "pid as a string" '(.volumes[] | select(.id=="v1") | .server.pid) |= tostring'
bad_json "server missing" '(.volumes[] | select(.id=="v1")) |= del(.server)'
bad_json "duplicate id" '.volumes += [.volumes[0]]'
bad_json "invalid id" '(.volumes[] | select(.id=="v2") | .id) = "../v2"'

cp "$W/good.json" "$STATE/state.json"
zcfsd_start
check "restored: v1 re-adopted with the same server" \
	grep -q "event=readopt volume=v1 pid=$P1" "$W/zcfsd.log"
check "restored: v2 is known" test "$(vol_field v2 state)" = created
check "restored: v1 serves" grep -q precious "$TGT/a/f"
check "unpublish v1" ctlq volume unpublish v1 "$TGT/a"
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
check "no server left" wait_for "server exit" 5 bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
