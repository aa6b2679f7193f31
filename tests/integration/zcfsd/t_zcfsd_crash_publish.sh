#!/usr/bin/env bash
# kill -9 of zcfsd at a random point of a create/publish/unpublish/delete
# loop, 10 rounds (CRASH_ROUNDS): after each restart the fuse.zcfs mounts
# under the targets are exactly the targets state.json records, the
# running servers exactly the recorded ones, the tenant's memlock_used the
# sum of its published volumes' pins, and a publish of the volume caught
# in the middle works without stacking a second mount. (~40 s)
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require jq
# zcfsd's own bookkeeping, the same for every data path: run once (CI time).
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
: "${CRASH_ROUNDS:=10}"

zcfsd_env 256M true
mounts_now() { awk -v t="$TGT/" '$3 == "fuse.zcfs" && index($2, t) == 1 { print $2 }' /proc/self/mounts | sort; }
mounts_state() { jq -r '.volumes[].targets[]' "$STATE/state.json" 2>/dev/null | sort; }
servers_now() { pgrep -f "[z]cfs-serve .*$STORE/" | sort -n; }
servers_state() { jq -r '.volumes[] | select((.targets | length) > 0) | .server.pid' "$STATE/state.json" 2>/dev/null | sort -n; }
consistent() {
	[ "$(mounts_now)" = "$(mounts_state)" ] && [ "$(servers_now)" = "$(servers_state)" ]
}
budget_exact() {
	local used sum
	used=$(ctl call tenant.list | jq '.result.tenants[] | select(.name == "t1") | .memlock_used')
	sum=$(ctl call volume.list 2>/dev/null | jq '[.result.volumes[] | select((.targets | length) > 0) | .pinned] | add // 0')
	[ -n "$used" ] && [ "$used" = "$sum" ]
}
churn() {	# ROUND: create/publish/unpublish/delete until killed
	local i=0 id
	while :; do
		id=r$1-$i
		ctl volume create "$id" --transport "$ZCFS_TRANSPORT" >/dev/null 2>&1 &&
			ctl volume publish "$id" "$TGT/$id" >/dev/null 2>&1 &&
			ctl volume unpublish "$id" "$TGT/$id" >/dev/null 2>&1 &&
			ctl volume delete "$id" >/dev/null 2>&1
		i=$((i + 1))
	done
}
clean_all() {
	local id t
	for id in $(ctl call volume.list 2>/dev/null | jq -r '.result.volumes[].id'); do
		for t in $(vol_field "$id" 'targets[]'); do ctlq volume unpublish "$id" "$t"; done
		ctlq volume delete "$id"
	done
}

bad=0 orphans=0
zcfsd_start
for round in $(seq "$CRASH_ROUNDS"); do
	churn "$round" &
	CHURN=$!
	sleep "0.$(( RANDOM % 9 + 1 ))$(( RANDOM % 10 ))"
	zcfsd_kill9
	kill "$CHURN" 2>/dev/null; wait "$CHURN" 2>/dev/null
	# whatever the loop had started is now on its own
	zcfsd_start
	if ! wait_for "round $round consistent" 5 consistent; then
		bad=$((bad + 1))
		log "round $round: mounts [$(mounts_now | tr '\n' ' ')] state [$(mounts_state | tr '\n' ' ')] servers [$(servers_now | tr '\n' ' ')] state pids [$(servers_state | tr '\n' ' ')]"
	fi
	budget_exact || { bad=$((bad + 1)); log "round $round: memlock_used is not the sum of the published pins"; }
	# The volume the kill caught, if it still exists, publishes cleanly once.
	for id in $(ctl call volume.list 2>/dev/null | jq -r '.result.volumes[].id'); do
		[ "$(vol_field "$id" state)" = created ] || continue
		ctlq volume publish "$id" "$TGT/$id" || { bad=$((bad + 1)); log "round $round: publish $id after the crash failed"; }
		n=$(awk -v t="$TGT/$id" '$2 == t' /proc/self/mounts | wc -l)
		[ "$n" = 1 ] || { bad=$((bad + 1)); log "round $round: $n mounts stacked at $TGT/$id"; }
	done
	orphans=$((orphans + $(grep -c 'event=orphan-mount' "$W/zcfsd.log")))
	clean_all
	wait_for "round $round cleaned" 5 bash -c "[ -z \"\$(awk -v t='$TGT/' '\$3 == \"fuse.zcfs\" && index(\$2, t) == 1' /proc/self/mounts)\" ]" ||
		{ bad=$((bad + 1)); log "round $round: mounts left after cleaning"; }
	: >"$W/zcfsd.log"
done
log "$CRASH_ROUNDS rounds, orphan mounts found and undone at restart: $orphans"
check "after every crash: mounts == state.json == servers, budgets exact, no stacked mount ($bad problems)" test "$bad" -eq 0
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
