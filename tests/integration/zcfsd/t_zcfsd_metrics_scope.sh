#!/usr/bin/env bash
# The metrics socket scopes series by the scraper's credentials as the
# control socket scopes calls (issue 27; before, any admin-group member
# read every tenant's volumes, targets and counters): policy admin group
# 0, t1 admin_uids [3001], t2 admin_gids [4002]; volumes a1 (t1) and b1
# (t2), published. uid 3001 scrapes t1's series and nothing of t2 (no
# b1, no tenant "t2"), uid 3002 in group 4002 the reverse, uid 3003
# (admin group only) zcfsd's own families and no tenant, root both, and
# after metrics.full_view_uids [3005] is reloaded, uid 3005 both (a
# Prometheus). Transport-independent: devfuse only. About 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require setpriv curl

zcfsd_env 64M true yes
MSOCK=$W/run/metrics.sock
policy_jq --arg s "$MSOCK" '.tenants[0].admin_uids = [3001] | .tenants[1].admin_gids = [4002] |
	. + {metrics: {listen: $s}}'
mkdir -p "$TGT/t2"
zcfsd_start
wait_for "the metrics socket" 5 test -S "$MSOCK" || { show_zcfsd_log; fail "no metrics socket"; }
ctlq volume create a1 --tenant t1 --transport devfuse && ctlq volume publish a1 "$TGT/a1" &&
	ctlq volume create b1 --tenant t2 --transport devfuse && ctlq volume publish b1 "$TGT/t2/b1" ||
	{ show_zcfsd_log; fail "setup"; }

# scrape_as UID [GROUPS]: the scrape as that peer (gid 0: the admin group)
scrape_as() {
	local g=(--clear-groups)
	[ -n "${2:-}" ] && g=(--groups="$2")
	setpriv --reuid="$1" --regid=0 "${g[@]}" -- curl -sf --max-time 5 --unix-socket "$MSOCK" \
		http://localhost/metrics
}
scrape_as 3001 >"$W/m3001"
scrape_as 3002 4002 >"$W/m3002"
scrape_as 3003 >"$W/m3003"
curl -sf --max-time 5 --unix-socket "$MSOCK" http://localhost/metrics >"$W/mroot"
log "series with a tenant label: root $(grep -c 'tenant=' "$W/mroot"), 3001 $(grep -c 'tenant=' "$W/m3001"), 3002 $(grep -c 'tenant=' "$W/m3002"), 3003 $(grep -c 'tenant=' "$W/m3003")"

check "t1's admin sees a1" grep -q '^zcfs_volume_server_up{volume="a1",tenant="t1"} 1$' "$W/m3001"
check "t1's admin sees t1's budget" grep -q '^zcfs_tenant_memlock_budget_bytes{tenant="t1"}' "$W/m3001"
check "t1's admin sees no series of t2" bash -c "! grep -v '^#' '$W/m3001' | grep -q 't2'"
check "t1's admin sees nothing of b1" bash -c "! grep -q 'b1' '$W/m3001'"
check "t2's admin (by group) sees b1" grep -q '^zcfs_volume_server_up{volume="b1",tenant="t2"} 1$' "$W/m3002"
check "t2's admin sees nothing of a1 or t1" bash -c "! grep -v '^#' '$W/m3002' | grep -q 'a1\|\"t1\"'"
check "an admin-group member of no tenant sees no tenant's series" bash -c "! grep -q 'tenant=' '$W/m3003'"
check "... but zcfsd's own families" grep -q '^process_open_fds ' "$W/m3003"
check "root sees both volumes" bash -c "grep -q 'volume=\"a1\"' '$W/mroot' && grep -q 'volume=\"b1\"' '$W/mroot'"
scrape_as 3005 >"$W/m3005"
check "uid 3005 sees no tenant before it is named" bash -c "! grep -q 'tenant=' '$W/m3005'"

policy_jq '.metrics.full_view_uids = [3005]'
check "policy with metrics.full_view_uids reloads" ctlq policy reload
scrape_as 3005 >"$W/m3005"
check "uid 3005 (full_view_uids) sees both volumes" \
	bash -c "grep -q 'volume=\"a1\"' '$W/m3005' && grep -q 'volume=\"b1\"' '$W/m3005'"
check "... as many series as root" test "$(grep -c 'tenant=' "$W/m3005")" = "$(grep -c 'tenant=' "$W/mroot")"
if PROMTOOL=$("$(dirname "$0")/../../../scripts/promtool.sh" 2>/dev/null); then
	check "promtool check metrics: the scoped scrape is clean" bash -c "'$PROMTOOL' check metrics <'$W/m3001'"
fi
finish
