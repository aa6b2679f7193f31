#!/usr/bin/env bash
# `zcfs-csi serve` driven by a kubelet-like gRPC client (csi_kubelet.py,
# python3-grpcio, the project's .proto files compiled at test time) in
# front of a real zcfsd: registration GetInfo/NotifyRegistrationStatus on
# the registration socket, NodeGetInfo, NodeGetCapabilities, publish of a
# persistent and an ephemeral volume with volume_mount_group (fsGroup)
# 2000, files made by uid 1000 with group 2000 (owner 1000:2000),
# NodeGetVolumeStats (INODES from the volume's own count), unpublish,
# 16 parallel publishes, publish racing unpublish (ABORTED while zcfsd is
# held with SIGSTOP, then free races; nothing left);
# then the zcfsd checks: no volume, mount or server left. About 40 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require setpriv
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
top=$(cd "$(dirname "$0")/../../.." && pwd)

zcfsd_env 64M true
sed -i 's/"max_volumes": 8/"max_volumes": 40/' "$POLICY"
zcfsd_start
EP=$W/plugin/csi.sock REG=$W/registry/csi.zcfs.io-reg.sock
mkdir -p "$W/plugin" "$W/registry"
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id kubelet-node \
	serve --endpoint "unix://$EP" --registration-socket "$REG" 2>"$W/csi.log" &
CSIPID=$!
_zcfs_pids+=("$CSIPID")
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi serve did not start"; }
check "sockets are owner-only, 0700 (a connection acts with the plugin's identity)" \
	test "$(stat -c %a "$EP")" = 700 -a "$(stat -c %a "$REG")" = 700

ZCFSD_PID=$ZCFSD_PID $PY "$top/tests/integration/helpers/csi_kubelet.py" "$top/plugin/proto" /usr/include "unix://$EP" "$REG" \
	"$TGT" t1 "$ZCFS_TRANSPORT" >"$W/py.out" 2>&1
prc=$?
cat "$W/py.out"
check "kubelet-like client: every check passed" test "$prc" -eq 0
check "the plugin logged the registration" grep -q 'event=registered' "$W/csi.log"
check "no zcfs volume left" test "$(ctl volume list | jq '.volumes | length')" = 0
check "no mount left under the targets" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
check "no zcfs-serve left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$prc" -eq 0 ] || tail -n 30 "$W/csi.log" | sed 's/^/# csi: /'
kill -TERM "$CSIPID"
for _ in $(seq 100); do kill -0 "$CSIPID" 2>/dev/null || break; sleep 0.05; done
check "SIGTERM stops it, both sockets removed" bash -c "! kill -0 $CSIPID 2>/dev/null && [ ! -e '$EP' ] && [ ! -e '$REG' ]"
finish
