#!/usr/bin/env bash
# Memlock budgets. io_uring run: the tenant's budget holds one volume and
# a half; the second publish is RESOURCE_EXHAUSTED, names a queue depth
# that would fit and changes nothing (no storage dir, no target dir, no
# mount, no process, budget unchanged); a volume at that depth then fits;
# after unpublishing the first, the refused one publishes (recovery).
# /dev/fuse run: volumes pin nothing and publish under a zero budget.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

if [ "$ZCFS_TRANSPORT" != uring ]; then
	zcfsd_env 0 true
	zcfsd_start
	check "devfuse volume publishes with a zero budget" create_publish d1 "$TGT/d1"
	check "... and is charged 0" test "$(vol_field d1 pinned)" = 0
	check "io_uring volume is refused under a zero budget" \
		test "$(ctl volume create u1 --transport uring >/dev/null; code_of ctl call volume.publish "{\"id\":\"u1\",\"target\":\"$TGT/u1\"}")" = RESOURCE_EXHAUSTED
	ctl volume unpublish d1 "$TGT/d1" >/dev/null
	[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
	finish
	exit
fi

one=$("$ZCFS_BIN/zcfs-serve" --print-pinned --transport=uring --queue-depth=4 --max-write=128K / / 2>/dev/null) ||
	skip "zcfs-serve has no --print-pinned"
zcfsd_env $((one + one / 2)) true
zcfsd_start
check "v1 publishes" create_publish v1 "$TGT/v1"
check "v1 is charged $one bytes" test "$(vol_field v1 pinned)" = "$one"
# with and without a pool: zcfs-serve's own figures for the same volume
pool=$("$ZCFS_BIN/zcfs-serve" --print-pinned --transport=uring --queue-depth=4 --max-write=128K \
	--buffer-pool=on / / 2>/dev/null)
check "status: v1's stock layout pins $one" test "$(vol_field v1 pinned_layouts.stock)" = "$one"
check "status: v1 with an unregistered pool pins $pool" \
	test "$(vol_field v1 pinned_layouts.pool_unregistered)" = "$pool"
srv=$(vol_field v1 pinned_layouts.server)
check "status: what v1's server locked ($srv, bufpool=$(vol_field v1 pinned_layouts.server_bufpool)) is at most its charge" \
	test "${srv:-x}" -le "$one"
ctl volume create v2 --transport uring >/dev/null
before=$(snapshot)
used_before=$(ctl tenant list | jq -r '.tenants[0].memlock_used')
out=$(ctl call volume.publish "{\"id\":\"v2\",\"target\":\"$TGT/v2\"}")
echo "# $out"
check "v2 is RESOURCE_EXHAUSTED" test "$(jq -r .error.code <<<"$out")" = RESOURCE_EXHAUSTED
fit=$(jq -r .error.message <<<"$out" | sed -n 's/.*queue_depth=\([0-9]*\) would fit.*/\1/p')
check "the message names a queue depth that fits ($fit)" test -n "$fit"
check "nothing changed on disk, in mounts, in processes" test "$(snapshot)" = "$before"
check "no storage dir for v2" test ! -e "$STORE/t1/v2"
check "no target dir for v2" test ! -e "$TGT/v2"
check "budget use unchanged" test "$(ctl tenant list | jq -r '.tenants[0].memlock_used')" = "$used_before"
check "v2 stays created" test "$(vol_field v2 state)" = created
check "a volume at queue_depth=$fit publishes" create_publish v3 "$TGT/v3" --queue-depth "${fit:-1}"
check "the tenant is now within budget" \
	test "$(ctl tenant list | jq -r '.tenants[0] | .memlock_used <= .memlock_budget')" = true
ctl volume unpublish v3 "$TGT/v3" >/dev/null
check "after unpublishing v1 ..." ctl volume unpublish v1 "$TGT/v1"
check "... v2 publishes (recovery)" ctl volume publish v2 "$TGT/v2"
echo data >"$TGT/v2/f"
check "v2 serves" grep -q data "$STORE/t1/v2/f"
check "status shows v2 charged, v1 not" \
	test "$(ctl status --json | jq -c '[.volumes[] | {(.id): .pinned}] | add | [.v1, .v2]')" = "[0,$one]"
ctl volume unpublish v2 "$TGT/v2" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
