#!/usr/bin/env bash
# Two zcfs "nodes" on this machine (node-a, node-b: a zcfsd and a
# `zcfs-csi serve` each, own policy, state dir, storage root and node id)
# driven as a cluster does with external-provisioner --node-deployment on
# every node (helpers/csi_provision.py): a PVC provisioned on A (id
# NAME@node-a, topology node-a, B refusing A's topology), published on A
# and written by uid 1000 with fsGroup 2000, expanded online 64Mi ->
# 256Mi while a direct writer passes the old size (external-resizer
# through B's controller, NodeExpandVolume on A), unpublished, deleted;
# its publish on B refused naming both nodes; GetCapacity falling with
# each volume and 0 at the tenant's max_volumes (3), CreateVolume then
# RESOURCE_EXHAUSTED. About 40 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require setpriv
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
top=$(cd "$(dirname "$0")/../../.." && pwd)

zcfsd_env 64M true
start_node() {	# start_node NAME: zcfsd + zcfs-csi serve of node NAME under $W/NAME
	local n=$1 d=$W/$1 store
	# each node's storage on its own tmpfs: GetCapacity follows its free
	# space, which other writers of a shared disk (CI's parallel lanes)
	# would move by megabytes between two calls
	store=$(make_tmpdir 2G)
	mkdir -p "$d"
	STORE=$store write_policy "$d/policy.json" 64M true
	sed -i 's/"max_volumes": 8/"max_volumes": 3/' "$d/policy.json"
	"$ZCFS_BIN/zcfsd" --policy "$d/policy.json" --state-dir "$d/state" --socket "$d/zcfsd.sock" \
		--serve "$ZCFS_BIN/zcfs-serve" --foreground 2>>"$d/zcfsd.log" &
	_zcfs_pids+=("$!")
	for _ in $(seq 100); do [ -S "$d/zcfsd.sock" ] && break; sleep 0.05; done
	"$ZCFS_BIN/zcfs-csi" --socket "$d/zcfsd.sock" --state-dir "$d/csi" --node-id "$n" \
		serve --endpoint "unix://$d/csi.sock" 2>"$d/csi.log" &
	_zcfs_pids+=("$!")
	for _ in $(seq 200); do grep -q 'event=serving' "$d/csi.log" && return 0; sleep 0.05; done
	cat "$d/zcfsd.log" "$d/csi.log"
	fail "node $n did not start"
}
start_node node-a
start_node node-b

$PY "$top/tests/integration/helpers/csi_provision.py" "$top/plugin/proto" /usr/include \
	"unix://$W/node-a/csi.sock" "unix://$W/node-b/csi.sock" "$TGT" t1 "$ZCFS_TRANSPORT" >"$W/py.out" 2>&1
prc=$?
cat "$W/py.out"
check "two-node provisioning: every check passed" test "$prc" -eq 0
for n in node-a node-b; do
	check "$n: no zcfs volume left" test "$("$ZCFS_BIN/zcfsctl" --socket "$W/$n/zcfsd.sock" volume list | jq '.volumes | length')" = 0
done
check "no mount left under the targets" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
[ "$prc" -eq 0 ] || for n in node-a node-b; do tail -n 15 "$W/$n/zcfsd.log" "$W/$n/csi.log" | sed "s/^/# $n: /"; done
finish
