#!/usr/bin/env bash
# The plugins' --metrics listeners against a real zcfsd (issue 27):
# zcfs-csi serve counts and times every gRPC call by method and gRPC code
# (zcfs_csi_requests_total, zcfs_csi_request_duration_seconds), the
# volume plugin every endpoint by method and result code
# (zcfs_volume_plugin_*); after known calls (csi_metrics.py, curl) each
# counter holds exactly the calls of its code; /healthz and /readyz answer
# 200 while serving; the unix sockets are 0660; `promtool check metrics`
# is clean. About 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require curl
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
PROMTOOL=$("$(dirname "$0")/../../../scripts/promtool.sh") || skip "no promtool (scripts/promtool.sh)"
top=$(cd "$(dirname "$0")/../../.." && pwd)

zcfsd_env 64M true
zcfsd_start
mkdir -p "$W/plugin" "$W/plugins"

# scrape SOCK: the exposition into $W/m; val KEY: one sample's value
scrape() { curl -sf --max-time 5 --unix-socket "$1" http://localhost/metrics >"$W/m"; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$W/m"; }
probe() {	# probe SOCK PATH BODY: 200 with BODY
	[ "$(curl -s --max-time 5 --unix-socket "$1" -o "$W/p" -w '%{http_code}' "http://localhost$2")" = 200 ] &&
		grep -qx "$3" "$W/p"
}

log "zcfs-csi serve --metrics"
EP=$W/plugin/csi.sock CM=$W/plugin/metrics.sock
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id n1 \
	serve --endpoint "unix://$EP" --metrics "$CM" 2>"$W/csi.log" &
_zcfs_pids+=("$!")
wait_for "zcfs-csi serving" 10 grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi did not start"; }
check "csi: metrics socket 0660" test "$(stat -c %a "$CM")" = 660
check "csi: /healthz 200 ok" probe "$CM" /healthz ok
check "csi: /readyz 200 ready" probe "$CM" /readyz ready
check "csi: no call counted yet" bash -c "scrape() { curl -sf --unix-socket '$CM' http://localhost/metrics; }; ! scrape | grep -q '^zcfs_csi_requests_total{'"
mkdir -p "$TGT/pod"
$PY "$top/tests/integration/helpers/csi_metrics.py" "$top/plugin/proto" /usr/include "unix://$EP" "$TGT/pod/mnt" t1 \
	"$ZCFS_TRANSPORT" >"$W/py.out" 2>&1
prc=$?
sed 's/^/# /' "$W/py.out"
check "csi: the calls answered as expected" test "$prc" -eq 0
scrape "$CM"
grep '^zcfs_csi_requests_total' "$W/m" | sed 's/^/# /'
check "csi: Probe OK 2" test "$(val 'zcfs_csi_requests_total{method="Probe",code="OK"}')" = 2
check "csi: NodePublishVolume OK 1" test "$(val 'zcfs_csi_requests_total{method="NodePublishVolume",code="OK"}')" = 1
check "csi: NodePublishVolume INVALID_ARGUMENT 1" \
	test "$(val 'zcfs_csi_requests_total{method="NodePublishVolume",code="INVALID_ARGUMENT"}')" = 1
check "csi: NodeUnpublishVolume OK 1" test "$(val 'zcfs_csi_requests_total{method="NodeUnpublishVolume",code="OK"}')" = 1
check "csi: the unknown method is other UNIMPLEMENTED 1" \
	test "$(val 'zcfs_csi_requests_total{method="other",code="UNIMPLEMENTED"}')" = 1
check "csi: 6 calls counted in all" test "$(awk '/^zcfs_csi_requests_total\{/ { n += $2 } END { print n }' "$W/m")" = 6
ps=$(val 'zcfs_csi_request_duration_seconds_sum{method="NodePublishVolume",code="OK"}')
log "NodePublishVolume OK took ${ps} s"
check "csi: the publish's histogram: count 1, +Inf 1, time > 0" bash -c "[ '$(val 'zcfs_csi_request_duration_seconds_count{method="NodePublishVolume",code="OK"}')' = 1 ] &&
	[ '$(val 'zcfs_csi_request_duration_seconds_bucket{method="NodePublishVolume",code="OK",le="+Inf"}')' = 1 ] &&
	awk -v s='$ps' 'BEGIN { exit !(s > 0) }'"
check "csi: process_* families" grep -q '^process_open_fds ' "$W/m"
check "csi: promtool check metrics clean" bash -c "'$PROMTOOL' check metrics <'$W/m'"
check "csi: a bad --metrics is refused (exit 2)" bash -c "'$ZCFS_BIN/zcfs-csi' serve --endpoint unix://$W/x.sock --metrics relative.sock 2>/dev/null; [ \$? = 2 ]"

log "zcfs-volume-plugin --metrics"
VPSOCK=$W/plugins/zcfs.sock VM=$W/plugins/metrics.sock
"$ZCFS_BIN/zcfs-volume-plugin" --listen "$VPSOCK" --socket "$SOCK" --state-dir "$W/state/vp" \
	--mount-root "$TGT" --metrics "$VM" 2>"$W/vp.log" &
_zcfs_pids+=("$!")
wait_for "volume plugin" 10 curl -sf --unix-socket "$VPSOCK" -X POST http://p/Plugin.Activate -o /dev/null ||
	{ cat "$W/vp.log"; fail "volume plugin did not start"; }
post() { curl -s --unix-socket "$VPSOCK" -X POST "http://p/$1" --data-binary "$2" -o /dev/null -w '%{http_code}'; }
check "vp: metrics socket 0660" test "$(stat -c %a "$VM")" = 660
check "vp: /healthz 200 ok" probe "$VM" /healthz ok
check "vp: /readyz 200 ready" probe "$VM" /readyz ready
check "vp: Create m1" test "$(post VolumeDriver.Create "{\"Name\":\"m1\",\"Opts\":{\"transport\":\"$ZCFS_TRANSPORT\"}}")" = 200
check "vp: Mount m1" test "$(post VolumeDriver.Mount '{"Name":"m1","ID":"A"}')" = 200
check "vp: Mount nosuch: 500" test "$(post VolumeDriver.Mount '{"Name":"nosuch","ID":"A"}')" = 500
check "vp: Create with a bad option: 500" test "$(post VolumeDriver.Create '{"Name":"m2","Opts":{"colour":"red"}}')" = 500
check "vp: Unmount m1" test "$(post VolumeDriver.Unmount '{"Name":"m1","ID":"A"}')" = 200
check "vp: Remove m1" test "$(post VolumeDriver.Remove '{"Name":"m1"}')" = 200
check "vp: an unknown endpoint: 500" test "$(post VolumeDriver.Nope '{}')" = 500
scrape "$VM"
grep '^zcfs_volume_plugin_requests_total' "$W/m" | sed 's/^/# /'
vv() { val "zcfs_volume_plugin_requests_total{method=\"$1\",code=\"$2\"}"; }
check "vp: Activate OK >= 1 (the start-up wait)" test "$(vv Plugin.Activate OK)" -ge 1
check "vp: Create OK 1" test "$(vv VolumeDriver.Create OK)" = 1
check "vp: Create INVALID_ARGUMENT 1" test "$(vv VolumeDriver.Create INVALID_ARGUMENT)" = 1
check "vp: Mount OK 1" test "$(vv VolumeDriver.Mount OK)" = 1
check "vp: Mount NOT_FOUND 1" test "$(vv VolumeDriver.Mount NOT_FOUND)" = 1
check "vp: Unmount OK 1, Remove OK 1" test "$(vv VolumeDriver.Unmount OK)$(vv VolumeDriver.Remove OK)" = 11
check "vp: the unknown endpoint is other UNIMPLEMENTED 1" test "$(vv other UNIMPLEMENTED)" = 1
check "vp: the Mount histogram counts its one call" \
	test "$(val 'zcfs_volume_plugin_request_duration_seconds_count{method="VolumeDriver.Mount",code="OK"}')" = 1
check "vp: promtool check metrics clean" bash -c "'$PROMTOOL' check metrics <'$W/m'"
gone() { ! ctl volume get "$1" >/dev/null 2>&1; }
check "vp: m1 gone from zcfsd" gone m1
check "csi's volume deleted (a persistent volume outlives its unpublish)" ctlq volume delete mvol
check "no zcfs volume left" test "$(ctl volume list | jq '.volumes | length')" = 0
finish
