#!/usr/bin/env bash
# policy metrics.listen as a TCP address, the way Prometheus scrapes a
# DaemonSet: 127.0.0.1:PORT and [::1]:PORT serve /metrics; malformed
# addresses are refused by `zcfsctl policy check`. About 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require curl
zcfsd_env 64M true
port=$((20000 + RANDOM % 20000))
with_listen() { jq --arg l "$1" '. + {metrics: {listen: $l}}' "$W/base.json" >"$POLICY"; }
cp "$POLICY" "$W/base.json"
for bad in "127.0.0.1" "127.0.0.1:0" "127.0.0.1:70000" "localhost:9567" "[::1]9567" "::1:9567" "1.2.3.4:x"; do
	with_listen "$bad"
	check "policy check refuses metrics.listen '$bad'" bash -c "! '$ZCFS_BIN/zcfsctl' policy check '$POLICY' >/dev/null 2>&1"
done
with_listen "127.0.0.1:$port"
check "policy check takes 127.0.0.1:$port" "$ZCFS_BIN/zcfsctl" policy check "$POLICY"
zcfsd_start
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/metrics" -o "$W/m4" && break; sleep 0.1; done
check "GET http://127.0.0.1:$port/metrics answers" test -s "$W/m4"
check "... with zcfs metrics" grep -q '^zcfs' "$W/m4"
zcfsd_kill9
if [ -e /proc/net/if_inet6 ] && ip -6 addr show lo 2>/dev/null | grep -q '::1'; then
	with_listen "[::1]:$port"
	zcfsd_start
	for _ in $(seq 50); do curl -sfg "http://[::1]:$port/metrics" -o "$W/m6" && break; sleep 0.1; done
	check "GET http://[::1]:$port/metrics answers" grep -q '^zcfs' "$W/m6"
else
	log "no IPv6 loopback: [::1] not tried"
fi
finish
