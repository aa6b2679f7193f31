#!/usr/bin/env bash
# Control-plane metrics and probes on zcfsd's metrics listener (issue 27):
# volume.create/delete/publish/unpublish counted by result code
# (zcfs_control_requests_total) and timed (zcfs_control_request_duration_
# seconds, a histogram per method and code; a publish's time includes its
# wait for the server); /healthz and /readyz answer 200; `promtool check
# metrics` is clean (when promtool can be had). Transport-independent:
# devfuse only. About 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"
zcfsd_require curl

zcfsd_env 64M true
MSOCK=$W/metrics.sock
policy_jq --arg s "$MSOCK" '. + {metrics: {listen: $s}}'
zcfsd_start
get() { curl -s --max-time 5 --unix-socket "$MSOCK" -o "$W/body" -w '%{http_code}' "http://localhost$1"; }
check "/healthz answers 200 ok" bash -c "[ \"\$(curl -s --unix-socket '$MSOCK' -o '$W/h' -w '%{http_code}' http://localhost/healthz)\" = 200 ] && grep -qx ok '$W/h'"
check "/readyz answers 200 ready" bash -c "[ \"\$(curl -s --unix-socket '$MSOCK' -o '$W/r' -w '%{http_code}' http://localhost/readyz)\" = 200 ] && grep -qx ready '$W/r'"
check "/ is still 404" test "$(get /)" = 404

ctlq volume create v1 --transport devfuse
ctl volume create v1 --transport devfuse >/dev/null 2>&1	# the same again: OK (idempotent)
ctl call volume.create '{"id": "../x"}' >/dev/null 2>&1
ctlq volume publish v1 "$TGT/a"
ctl volume publish v1 relative/path >/dev/null 2>&1
ctlq volume unpublish v1 "$TGT/a"
ctlq volume delete v1
ctl volume delete nosuch >/dev/null 2>&1	# OK (idempotent)
curl -sf --unix-socket "$MSOCK" http://localhost/metrics >"$W/m"
val() { awk -v k="$1" '$1 == k { print $2 }' "$W/m"; }
grep '^zcfs_control_requests_total' "$W/m" | sed 's/^/# /'
check "create OK 2" test "$(val 'zcfs_control_requests_total{method="volume.create",code="OK"}')" = 2
check "create INVALID_ARGUMENT 1 (id ../x)" test "$(val 'zcfs_control_requests_total{method="volume.create",code="INVALID_ARGUMENT"}')" = 1
check "publish OK 1" test "$(val 'zcfs_control_requests_total{method="volume.publish",code="OK"}')" = 1
check "publish INVALID_ARGUMENT 1 (a relative target)" \
	test "$(val 'zcfs_control_requests_total{method="volume.publish",code="INVALID_ARGUMENT"}')" = 1
check "unpublish OK 1" test "$(val 'zcfs_control_requests_total{method="volume.unpublish",code="OK"}')" = 1
check "delete OK 2" test "$(val 'zcfs_control_requests_total{method="volume.delete",code="OK"}')" = 2
pc=$(val 'zcfs_control_request_duration_seconds_count{method="volume.publish",code="OK"}')
ps=$(val 'zcfs_control_request_duration_seconds_sum{method="volume.publish",code="OK"}')
log "publish OK: count $pc, sum ${ps} s"
check "the publish histogram has its one request, with a time > 0" \
	bash -c "[ '$pc' = 1 ] && awk -v s='$ps' 'BEGIN { exit !(s > 0) }'"
check "+Inf bucket = count" test "$(val 'zcfs_control_request_duration_seconds_bucket{method="volume.publish",code="OK",le="+Inf"}')" = "$pc"
if PROMTOOL=$("$(dirname "$0")/../../../scripts/promtool.sh" 2>/dev/null); then
	check "promtool check metrics: clean" bash -c "'$PROMTOOL' check metrics <'$W/m'"
else
	log "no promtool here: not checked"
fi
finish
