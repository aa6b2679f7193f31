#!/usr/bin/env bash
# transport=auto under the shipped policy (policy/examples/default.json:
# queue depth 8, max_write 1M, 256M memlock budget, 32 volumes; paths and
# the tenant's uid set to this test's) on this machine, whose zcfsd has no
# CAP_SYS_RESOURCE and an 8 MiB hard RLIMIT_MEMLOCK: 16 kubelet-like
# publishes at once through `zcfs-csi serve` all publish; the volumes
# io_uring does not fit (or, with fuse.enable_uring=N, all) fall back to
# /dev/fuse, each naming its data path and why (NodeGetVolumeStats,
# volume get's data_path_reason, zcfsd's log). An explicit transport=uring
# that does not fit still gets RESOURCE_EXHAUSTED. About 20 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
command -v jq >/dev/null || skip "jq not installed"
top=$(cd "$(dirname "$0")/../../.." && pwd)

zcfsd_env
jq --arg s "$STORE/default" --arg t "$TGT" --argjson u "$TENANT_UID" \
	'.admin_group = "0" | .tenants[0] += {storage_root: $s, allowed_target_prefixes: [$t], uid: $u, gid: $u}' \
	"$top/policy/examples/default.json" >"$POLICY"
zcfsd_start
log "RLIMIT_MEMLOCK hard: $(ulimit -H -l) KiB; fuse.enable_uring: $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null || echo absent)"
EP=$W/plugin/csi.sock
mkdir -p "$W/plugin"
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id auto-node \
	serve --endpoint "unix://$EP" 2>"$W/csi.log" &
_zcfs_pids+=("$!")
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi serve did not start"; }

$PY "$top/tests/integration/helpers/csi_auto.py" "$top/plugin/proto" /usr/include "unix://$EP" "$TGT" default >"$W/py.out" 2>&1
prc=$?
cat "$W/py.out"
check "16 parallel transport=auto publishes: every check passed" test "$prc" -eq 0
fb=$(grep -c 'event=transport-fallback' "$W/zcfsd.log")
log "zcfsd logged $fb fallbacks to /dev/fuse"
check "zcfsd's log says why each fallback happened" \
	bash -c "[ $fb -eq 0 ] || ! grep 'event=transport-fallback' '$W/zcfsd.log' | grep -vq 'reason=\"[a-zA-Z_ ]*: '"

# an explicit uring that cannot have io_uring is still refused
if [ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ]; then
	ctlq volume create big --transport uring --queue-depth 1024
	check "explicit transport=uring over the limit: RESOURCE_EXHAUSTED" \
		test "$(code_of ctl call volume.publish "{\"id\":\"big\",\"target\":\"$TGT/big\"}")" = RESOURCE_EXHAUSTED
	ctlq volume create small --transport auto --queue-depth 1024
	ctlq volume publish small "$TGT/small"
	why=$(vol_field small data_path_reason)
	log "small: $(vol_field small data_path) because $why"
	check "transport=auto over the limit: published on devfuse" test "$(vol_field small data_path)" = devfuse
	check "volume get says why (RLIMIT_MEMLOCK or memlock budget)" grep -qE 'RLIMIT_MEMLOCK|memlock budget' <<<"$why"
	ctlq volume unpublish small "$TGT/small"
	ctlq volume delete small
	ctlq volume delete big
fi
check "no zcfs volume left" test "$(ctl volume list | jq '.volumes | length')" = 0
finish
