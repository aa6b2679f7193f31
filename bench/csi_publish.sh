#!/usr/bin/env bash
# NodePublishVolume latency through zcfs-csi serve's gRPC front:
#
#   bench/csi_publish.sh OUTDIR     (bench/run.sh calls it with BENCH_CSI=1
#                                    or BENCH_WORKLOADS containing "csi")
#
# Starts a private zcfsd and `zcfs-csi serve`, publishes CSI_VOLUMES (20)
# persistent volumes one after another with a kubelet-like Python gRPC
# client (bench/csi_publish.py), each timed from the call to the target
# serving; writes p50/p99/max and the plugin's RSS (VmRSS, VmHWM) to
# OUTDIR/csi.env and stdout. Goal (issue 13): p99 under 250 ms.
# Everything it starts or mounts is removed by an EXIT trap.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
: "${ZCFS_BIN:=$root/bin}"
: "${CSI_VOLUMES:=20}"
: "${CSI_TRANSPORT:=devfuse}"
out=${1:?usage: csi_publish.sh OUTDIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
: >"$out/csi.env"
kv() { printf '%s=%s\n' "$1" "$2" >>"$out/csi.env"; }
die() { echo "csi_publish: $*" >&2; kv status failed; kv reason "$*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "must run as root"
/usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null || die "python3-grpcio / python3-grpc-tools not installed"
W=$(mktemp -d /tmp/zcfs-bench-csi.XXXXXX) && chmod 755 "$W"   # the tenant's server walks to its storage
ZPID="" CPID=""
cleanup() {
	[ -n "$CPID" ] && kill -TERM "$CPID" 2>/dev/null
	[ -n "$ZPID" ] && kill -KILL "$ZPID" 2>/dev/null
	for p in $(pgrep -f "[z]cfs-serve .*$W/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	for m in $(awk -v w="$W/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r); do umount -l "$m"; done
	rm -rf --one-file-system "$W"
}
trap cleanup EXIT
mkdir -p "$W/targets" "$W/storage"
cat >"$W/policy.json" <<JSON
{"admin_group": "0", "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "auto"},
 "tenants": [{"name": "b1", "uid": 2191, "gid": 2191, "memlock_budget": "64M", "max_volumes": $((CSI_VOLUMES + 4)),
   "default_quota": "1G", "storage_root": "$W/storage/b1", "allowed_target_prefixes": ["$W/targets"],
   "data_paths": {"io_uring": true, "zero_copy": false, "passthrough": false}}]}
JSON
"$ZCFS_BIN/zcfsd" --policy "$W/policy.json" --state-dir "$W/state" --socket "$W/zcfsd.sock" \
	--serve "$ZCFS_BIN/zcfs-serve" --foreground 2>"$W/zcfsd.log" &
ZPID=$!
for _ in $(seq 100); do [ -S "$W/zcfsd.sock" ] && break; sleep 0.05; done
"$ZCFS_BIN/zcfs-csi" --socket "$W/zcfsd.sock" --state-dir "$W/state/csi" --node-id bench \
	serve --endpoint "unix://$W/csi.sock" 2>"$W/csi.log" &
CPID=$!
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || die "zcfs-csi serve did not start"
rss0=$(awk '/^VmRSS/ {print $2}' "/proc/$CPID/status")
/usr/bin/python3 "$here/csi_publish.py" "$root/plugin/proto" /usr/include "unix://$W/csi.sock" \
	"$W/targets" b1 "$CSI_TRANSPORT" "$CSI_VOLUMES" >"$W/py.out" 2>&1 || { cat "$W/py.out" >&2; die "publish run failed"; }
cat "$W/py.out" >>"$out/csi.env"
# the same publishes straight to zcfsd (zcfsctl), for the plugin's share
ctl() { "$ZCFS_BIN/zcfsctl" --socket "$W/zcfsd.sock" "$@" >/dev/null; }
direct=()
for i in $(seq "$CSI_VOLUMES"); do
	ctl volume create "zb$i" --tenant b1 --transport "$CSI_TRANSPORT" || die "zcfsctl volume create"
	t0=$(date +%s%N)
	ctl volume publish "zb$i" "$W/targets/zb$i" && stat -f "$W/targets/zb$i" >/dev/null || die "zcfsctl volume publish"
	direct+=($((($(date +%s%N) - t0) / 1000000)))
done
for i in $(seq "$CSI_VOLUMES"); do ctl volume unpublish "zb$i" "$W/targets/zb$i"; ctl volume delete "zb$i"; done
sorted=$(printf '%s\n' "${direct[@]}" | sort -n)
kv zcfsd_publish_p50_ms "$(sed -n "$(( (CSI_VOLUMES + 1) / 2 ))p" <<<"$sorted")"
kv zcfsd_publish_max_ms "$(tail -n 1 <<<"$sorted")"
kv zcfsd_publish_all_ms "$(IFS=,; echo "${direct[*]}")"
kv load_avg "$(cut -d' ' -f1-3 /proc/loadavg)"
kv csi_transport "$CSI_TRANSPORT"
kv csi_rss_idle_kb "$rss0"
kv csi_rss_kb "$(awk '/^VmRSS/ {print $2}' "/proc/$CPID/status")"
kv csi_hwm_kb "$(awk '/^VmHWM/ {print $2}' "/proc/$CPID/status")"
kv status ok
cat "$out/csi.env"
