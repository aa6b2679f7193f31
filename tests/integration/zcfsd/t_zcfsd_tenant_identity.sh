#!/usr/bin/env bash
# Tenant identity on the control socket (docs/security.md "Tenant identity"):
# a peer that is not root manages only the tenants whose admin_uids hold
# its uid or whose admin_gids one of its groups (SO_PEERCRED,
# SO_PEERGROUPS). Policy: admin group 0; t1 admin_uids [3001]; t2
# admin_gids [4002]. Peers (all in the admin group):
#   uid 3001            manages t1: creates, publishes, unpublishes,
#                       deletes t1's volumes; t2's are PERMISSION_DENIED
#                       for every method and change nothing; status,
#                       volume list, tenant list show t1 only
#   uid 3002 + gid 4002 manages t2 (by its supplementary group), not t1
#   uid 3003            manages nothing: sees no tenant, creates nothing
#   root                manages and sees both; only root reloads the policy
# Before: no such fields (the policy is refused) and every admin-group
# member could act on every tenant.
# Runtime: about 10 s (devfuse only).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require setpriv

zcfsd_env 64M true yes
policy_jq '.tenants[0].admin_uids = [3001] | .tenants[1].admin_gids = [4002]'
mkdir -p "$TGT/t2"
zcfsd_start

# as UID [GROUPS] -- CMD...: zcfsctl as that peer (gid 0: the admin group)
as() {
	local uid=$1 g=(--clear-groups)
	[ -n "$2" ] && g=(--groups="$2")
	shift 3
	setpriv --reuid="$uid" --regid=0 "${g[@]}" -- "$ZCFS_BIN/zcfsctl" --socket "$SOCK" "$@"
}
code_as() { as "$@" 2>/dev/null | jq -r 'if .error then .error.code else "OK" end'; }
names_as() { as "$1" "$2" -- call "$3" | jq -c "[$4] | sort"; }

# root makes one volume per tenant
ctlq volume create r1 --tenant t1 && ctlq volume create r2 --tenant t2 &&
	ctlq volume publish r2 "$TGT/t2/r2" || { show_zcfsd_log; fail "root setup"; }

# uid 3001: t1
check "3001 creates a t1 volume" test "$(code_as 3001 '' -- call volume.create '{"id":"a1","tenant":"t1"}')" = OK
check "3001 publishes it" test "$(code_as 3001 '' -- call volume.publish "{\"id\":\"a1\",\"target\":\"$TGT/a1\"}")" = OK
check "... mounted" grep -q " $TGT/a1 " /proc/self/mounts
check "3001 may not create for t2" \
	test "$(code_as 3001 '' -- call volume.create '{"id":"a2","tenant":"t2"}')" = PERMISSION_DENIED
check "... and the message says why" \
	bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get a2 >/dev/null 2>&1; test \$? -ne 0"
r2_now() { snapshot; ctl volume get r2 | jq -c 'del(.volume.uptime_s)'; }
before=$(r2_now)
for m in volume.get volume.delete; do
	check "3001 $m of t2's r2: PERMISSION_DENIED" test "$(code_as 3001 '' -- call $m '{"id":"r2"}')" = PERMISSION_DENIED
done
check "3001 volume.unpublish of t2's r2: PERMISSION_DENIED" \
	test "$(code_as 3001 '' -- call volume.unpublish "{\"id\":\"r2\",\"target\":\"$TGT/t2/r2\"}")" = PERMISSION_DENIED
check "3001 volume.publish of t2's r2 elsewhere: PERMISSION_DENIED" \
	test "$(code_as 3001 '' -- call volume.publish "{\"id\":\"r2\",\"target\":\"$TGT/t2/x\"}")" = PERMISSION_DENIED
check "... r2 untouched (mounts, files, servers, record)" test "$(r2_now)" = "$before"
msg=$(as 3001 '' -- call volume.delete '{"id":"r2"}' | jq -r .error.message)
names_both() { [[ $msg == *"uid 3001"*"'t2'"* ]]; }
check "the refusal names uid and tenant ($msg)" names_both
check "3001's status: tenant t1 only" test "$(names_as 3001 '' status '.result.tenants[].name')" = '["t1"]'
check "3001's status: t1's volumes only" test "$(names_as 3001 '' status '.result.volumes[].id')" = '["a1","r1"]'
check "3001's volume list: t1's only" test "$(names_as 3001 '' volume.list '.result.volumes[].id')" = '["a1","r1"]'
check "3001's tenant list: t1 only" test "$(names_as 3001 '' tenant.list '.result.tenants[].name')" = '["t1"]'
check "3001 may not reload the policy" test "$(code_as 3001 '' -- call policy.reload)" = PERMISSION_DENIED

# uid 3002 with supplementary group 4002: t2
check "3002 (group 4002) sees r2, not t1's" test "$(names_as 3002 4002 volume.list '.result.volumes[].id')" = '["r2"]'
check "3002 unpublishes r2" \
	test "$(code_as 3002 4002 -- call volume.unpublish "{\"id\":\"r2\",\"target\":\"$TGT/t2/r2\"}")" = OK
check "3002 may not touch t1's a1" \
	test "$(code_as 3002 4002 -- call volume.unpublish "{\"id\":\"a1\",\"target\":\"$TGT/a1\"}")" = PERMISSION_DENIED
check "... a1 still mounted" grep -q " $TGT/a1 " /proc/self/mounts
check "3002 without group 4002 manages nothing" \
	test "$(code_as 3002 '' -- call volume.get '{"id":"r2"}')" = PERMISSION_DENIED

# uid 3003: nothing
check "3003 sees no tenant" test "$(names_as 3003 '' status '.result.tenants[].name')" = '[]'
check "3003 sees no volume" test "$(names_as 3003 '' status '.result.volumes[].id')" = '[]'
check "3003 creates nothing (single tenant implied or named)" \
	test "$(code_as 3003 '' -- call volume.create '{"id":"c1","tenant":"t1"}')" = PERMISSION_DENIED

# root: everything
check "root sees both tenants" test "$(ctl call status | jq -c '[.result.tenants[].name] | sort')" = '["t1","t2"]'
check "root sees every volume" test "$(ctl call volume.list | jq -c '[.result.volumes[].id] | sort')" = '["a1","r1","r2"]'
check "root reloads the policy" test "$(code_of ctl call policy.reload)" = OK
check "3001 unpublishes and deletes its a1" \
	eval "[ \"\$(code_as 3001 '' -- call volume.unpublish '{\"id\":\"a1\",\"target\":\"$TGT/a1\"}')\" = OK ] &&
	      [ \"\$(code_as 3001 '' -- call volume.delete '{\"id\":\"a1\"}')\" = OK ]"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
