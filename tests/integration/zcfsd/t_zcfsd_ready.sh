#!/usr/bin/env bash
# A publish returns once its new server says it serves (zcfs-serve
# --ready-fd: one 'R' after INIT, zcfsd server/ready.c), and a server that lies
# about it cannot mislead or stall zcfsd. zcfsd runs its servers through a
# wrapper that, per $W/mode, is the real server or a hostile one: it
# writes garbage, exits 3, dies of SIGSYS, closes the pipe unwritten and
# serves anyway, or holds the pipe and never writes. Each hostile publish
# fails with INTERNAL naming the cause (or, for silence, is published
# after the bounded wait and serves), leaves nothing behind (mounts,
# processes, files) and zcfsd answers at once afterwards and during the
# wait (the wait is an event of its loop). Each mode runs
# ROUNDS times. About 25 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require
ROUNDS=${ROUNDS:-3}

zcfsd_env 64M true
zcfsd_start_hostile
grep -q 'ready-fd' <("$ZCFS_BIN/zcfs-serve" --help) || fail "zcfs-serve has no --ready-fd"

ctl volume create v1 --transport "$ZCFS_TRANSPORT" >/dev/null || fail "create v1"
pub() { ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$TGT/a\"}"; }
# one good round first: the tenant's storage root exists from then on
pub | jq -e .result >/dev/null && ctlq volume unpublish v1 "$TGT/a" || fail "first publish"
before=$(snapshot)

# hostile MODE WANT_CODE MESSAGE_PART
hostile() {
	local mode=$1 want=$2 part=$3 i out t0 ms bad=0 slow=0 alive=0
	echo "$mode" >"$W/mode"
	for ((i = 0; i < ROUNDS; i++)); do
		t0=$(date +%s%N)
		out=$(pub 2>/dev/null)
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ "$(jq -r '.error.code // "OK"' <<<"$out")" = "$want" ] &&
			grep -qF "$part" <<<"$out" || { bad=$((bad + 1)); echo "# $mode: $out" >&2; }
		[ "$ms" -lt 8000 ] || slow=$((slow + 1))
		ctl status >/dev/null && alive=$((alive + 1))
		[ "$(snapshot)" = "$before" ] || { bad=$((bad + 1)); echo "# $mode left something behind:" >&2; diff <(echo "$before") <(snapshot) >&2; }
	done
	check "$mode: $ROUNDS publishes failed with $want ($part)" test "$bad" -eq 0
	check "$mode: no publish held zcfsd 8 s or more" test "$slow" -eq 0
	check "$mode: zcfsd answered after each" test "$alive" -eq "$ROUNDS"
}
hostile garbage INTERNAL "did not signal readiness properly"
hostile exit3 INTERNAL "exited before serving (exit status 3)"
hostile sigsys INTERNAL "exited before serving (killed by signal 31"
hostile close INTERNAL "did not signal readiness properly"
check "the volume is not published after the hostile servers" test "$(vol_field v1 targets | jq length)" -eq 0
# Servers that failed their start are killed, not waited for, and
# reaped by the loop within its 250 ms look: no zombie stays.
sleep 0.6
zombies=$(ps --ppid "$ZCFSD_PID" -o stat= | grep -c '^Z' || true)
check "no zombie child of zcfsd after the hostile servers ($zombies)" test "$zombies" -eq 0

# Silence: published after the bounded wait, served by the real server.
# The wait is the loop's, not zcfsd's: a status asked 200 ms into it is
# answered before the publish is, and the same volume's second publish
# is told UNAVAILABLE at once.
echo silent >"$W/mode"
t0=$(date +%s%N)
( pub >"$W/silent.out"; date +%s%N >"$W/silent.done" ) &
pubpid=$!
sleep 0.2
ctl status >/dev/null || fail "status during the silent publish"
status_ms=$((($(date +%s%N) - t0) / 1000000))
waiting_state=$(vol_field v1 state)
again=$(pub 2>/dev/null)
wait "$pubpid"
out=$(cat "$W/silent.out")
pub_ms=$((($(cat "$W/silent.done") - t0) / 1000000))
rm -f "$W/silent.out" "$W/silent.done"	# not part of what a publish leaves
echo "# silent publish answered after $pub_ms ms; status during it after $status_ms ms"
check "silent server: a status during the wait answered before the publish ($status_ms < $pub_ms ms)" \
	test "$status_ms" -lt "$pub_ms"
check "silent server: the volume's state during the wait is publishing ($waiting_state)" \
	test "$waiting_state" = publishing
check "silent server: a second publish during the wait is UNAVAILABLE ($again)" \
	test "$(jq -r '.error.code' <<<"$again")" = UNAVAILABLE
check "silent server: published ($(jq -c . <<<"$out"))" jq -e '.result.volume.state == "published"' <<<"$out"
check "silent server: the target serves" stat -f "$TGT/a"
check "silent server: zcfsd logged that it did not say ready" grep -q 'event=server-not-ready volume=v1' "$W/zcfsd.log"
ctlq volume unpublish v1 "$TGT/a" || fail "unpublish after silent"
check "unpublish after silent left nothing" test "$(snapshot)" = "$before"

# The real server: ready, logged, and the mount serves as the tenant.
echo good >"$W/mode"
ok=0
for ((i = 0; i < ROUNDS; i++)); do
	pub | jq -e '.result' >/dev/null && stat -f "$TGT/a" >/dev/null &&
		ctlq volume unpublish v1 "$TGT/a" && ok=$((ok + 1))
done
check "good server: $ROUNDS publish/unpublish rounds" test "$ok" -eq "$ROUNDS"
check "good server: zcfsd logged it ready" grep -q 'event=server-ready volume=v1 pid=[0-9]* ms=' "$W/zcfsd.log"
check "good rounds left nothing" test "$(snapshot)" = "$before"
finish
