#!/usr/bin/env bash
# Hostile gRPC input on `zcfs-csi serve` in front of a real zcfsd
# (csi_hostile.py): garbage, HTTP/1.1, bad HTTP/2, malformed and oversized
# protobuf (cap 256 KiB, CSI_GRPC_MSG_MAX), NUL bytes and invalid UTF-8 in
# strings, unknown methods, clients gone mid-call, 200 concurrent
# connections: the right status or a closed connection, the plugin keeps
# serving, and nothing changed in zcfsd (its volume list and the mounts
# are as before, no server left). About 20 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
top=$(cd "$(dirname "$0")/../../.." && pwd)

zcfsd_env 64M true
zcfsd_start
EP=$W/csi.sock
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id hostile \
	serve --endpoint "unix://$EP" 2>"$W/csi.log" &
CSIPID=$!
_zcfs_pids+=("$CSIPID")
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi serve did not start"; }
before=$(ctl volume list | jq -c '[.volumes[].id]')
rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$CSIPID/status")

$PY "$top/tests/integration/helpers/csi_hostile.py" "$top/plugin/proto" /usr/include "$EP" "$TGT" t1 >"$W/py.out" 2>&1
prc=$?
cat "$W/py.out"
check "hostile client: every check passed" test "$prc" -eq 0
check "zcfs-csi serve is still running" kill -0 "$CSIPID"
check "zcfsd has the volumes it had (none)" test "$(ctl volume list | jq -c '[.volumes[].id]')" = "$before"
check "no mount left under the targets" bash -c "! grep -q ' $TGT/' /proc/self/mounts"
check "no zcfs-serve left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
rss1=$(awk '/^VmRSS/ {print $2}' "/proc/$CSIPID/status")
log "plugin RSS ${rss0} kB before, ${rss1} kB after"
# ASan's shadow and quarantine multiply a process's RSS: its own bound
rss_max=65536
if ldd "$ZCFS_BIN/zcfs-csi" 2>/dev/null | grep -q libasan; then rss_max=262144; fi
check "plugin RSS stays under $((rss_max / 1024)) MiB (${rss1} kB)" test "${rss1:-999999}" -lt "$rss_max"
[ "$prc" -eq 0 ] || tail -n 30 "$W/csi.log" | sed 's/^/# csi: /'
finish
