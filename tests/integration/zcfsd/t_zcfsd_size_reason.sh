#!/usr/bin/env bash
# volume get's size_enforcement_reason for a volume that once had a
# project quota (project_id in state.json) of a tenant whose policy now
# says size_enforcement: server: the policy is the reason. zcfsd looks at
# the storage root to take the old project's limits off (lifecycle/size.c
# zcfsd_size_prepare), and when that root has no project quotas (here a
# plain directory) its probe's message replaced the reason before.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"

zcfsd_env 64M true
policy_jq '.tenants[0].size_enforcement = "server"'
zcfsd_start
ctlq volume create v1 --size 16M || fail "create v1"
zcfsd_kill9
# as a zcfsd that gave it project 0x7a000000 on a root with project quotas left it
jq '(.volumes[] | select(.id == "v1")).project_id = 2046820352' "$STATE/state.json" >"$W/state.new" &&
	cat "$W/state.new" >"$STATE/state.json" || fail "state.json"
zcfsd_start
check "zcfsd kept the project id" test "$(vol_field v1 project_id)" = 2046820352
check "publish v1" ctlq volume publish v1 "$TGT/a"
check "server-count" test "$(vol_field v1 size_enforcement)" = server-count
why=$(vol_field v1 size_enforcement_reason)
check "the reason is the policy ($why)" grep -q "policy says size_enforcement: server" <<<"$why"
check "the log says so too" grep -q 'event=size-enforcement volume=v1 mode=server-count .*reason="the tenant.s policy says size_enforcement: server"' "$W/zcfsd.log"
ctlq volume unpublish v1 "$TGT/a"
finish
