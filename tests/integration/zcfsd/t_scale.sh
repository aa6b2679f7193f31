#!/usr/bin/env bash
# Scale: 64 volumes of 4 tenants (16 each) published through one zcfsd,
# a short fio write+verify on all 64 at once, then all unpublished and
# deleted. Every volume must be served by its own live server and verify;
# afterwards no mount, server, budget or storage dir may be left.
# /dev/fuse volumes pin nothing; on io_uring each volume gets queue depth 2
# and 64 KiB max_write (288 KiB pinned, 16 per tenant = 4.5 MiB, inside
# the 8 MiB RLIMIT_MEMLOCK zcfsd can grant without CAP_SYS_RESOURCE).
# SCALE_VOLUMES (multiple of 4) shrinks or grows the run.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
. "$(dirname "$0")/../helpers/scale_policy.sh"
zcfsd_require fio

N=${SCALE_VOLUMES:-64}
PER=$((N / 4))
zcfsd_env 64M true
mount -t tmpfs -o size=1g,mode=755 zcfs-scale "$STORE" || fail "tmpfs"
scale_policy "$POLICY" "$STORE" "$TGT" "$TENANT_UID" "$PER"
for i in 1 2 3 4; do mkdir -p "$TGT/t$i"; done
zcfsd_start
if [ "$ZCFS_TRANSPORT" = uring ]; then topts=(--transport uring --queue-depth 2 --max-write 64K)
else topts=(--transport devfuse); fi

log "publishing $N volumes (${topts[*]})"
lat=()
t0=$(date +%s%N)
for i in 1 2 3 4; do
	for j in $(seq 1 "$PER"); do
		id=t$i-v$j
		ctlq volume create "$id" --tenant "t$i" "${topts[@]}" || { show_zcfsd_log; fail "create $id"; }
		s=$(date +%s%N)
		ctlq volume publish "$id" "$TGT/t$i/$id" || { show_zcfsd_log; tail "$STATE/logs/$id.log"; fail "publish $id"; }
		lat+=($(( ($(date +%s%N) - s) / 1000000 )))
	done
done
secs=$(( ($(date +%s%N) - t0) / 1000000 ))
sorted=$(printf '%s\n' "${lat[@]}" | sort -n)
p50=$(sed -n "$(( (N + 1) / 2 ))p" <<<"$sorted"); p99=$(sed -n "$(( (N * 99 + 99) / 100 ))p" <<<"$sorted")
log "published $N volumes in ${secs} ms; publish latency p50=${p50} ms p99=${p99} ms (includes zcfsd's 200 ms early-exit wait)"

status=$(ctl status --json)
check "$N volumes published" test "$(jq '[.volumes[] | select(.state == "published")] | length' <<<"$status")" = "$N"
check "$N zcfs mounts under the targets" test "$(grep -c " $TGT/t[1-4]/t[1-4]-v[0-9]* fuse.zcfs " /proc/self/mounts)" = "$N"
check "$N distinct live servers" \
	test "$(jq -r '.volumes[].pid' <<<"$status" | sort -u | while read -r p; do kill -0 "$p" 2>/dev/null && echo "$p"; done | wc -l)" = "$N"
check "each tenant has $PER published" \
	test "$(jq -r '[.tenants[].volumes_published] | unique | join(",")' <<<"$status")" = "$PER"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$ZCFSD_PID/status")
srv_rss=$(jq -r '.volumes[].pid' <<<"$status" | while read -r p; do awk '/VmRSS/ {print $2}' "/proc/$p/status"; done | awk '{s += $1} END {print s}')
pinned=$(jq '[.volumes[].pinned] | add' <<<"$status")
log "zcfsd RSS ${rss} KiB; servers' RSS total ${srv_rss} KiB ($((srv_rss / N)) KiB per idle volume); pinned total ${pinned} bytes"

log "fio write+verify on all $N volumes at once"
{
	echo "[global]"
	echo "ioengine=psync"; echo "rw=randwrite"; echo "bs=16k"; echo "size=2m"
	echo "verify=crc32c"; echo "do_verify=1"; echo "verify_fatal=1"; echo "end_fsync=1"
	for i in 1 2 3 4; do for j in $(seq 1 "$PER"); do
		echo "[t$i-v$j]"; echo "directory=$TGT/t$i/t$i-v$j"
	done; done
} >"$W/scale.fio"
t0=$(date +%s%N)
timeout 120 fio --output-format=json --output="$W/fio.json" "$W/scale.fio" 2>"$W/fio.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "fio on $N volumes completes and verifies (rc=$rc, ${ms} ms)" [ "$rc" -eq 0 ]
check "every fio job finished without error" \
	test "$(jq '[.jobs[] | select(.error == 0)] | length' "$W/fio.json" 2>/dev/null)" = "$N"
check "every volume's storage holds its fio file" \
	test "$(find "$STORE" -mindepth 3 -maxdepth 3 -type f -size 2048k | wc -l)" = "$N"
check "no server restarted" test "$(ctl status --json | jq '[.volumes[].restarts] | add')" = 0
grep -i error "$W/fio.err" | head -n 3 | sed 's/^/# fio: /'

log "unpublishing and deleting all"
t0=$(date +%s%N)
for i in 1 2 3 4; do
	for j in $(seq 1 "$PER"); do
		ctlq volume unpublish "t$i-v$j" "$TGT/t$i/t$i-v$j" || echo "# unpublish t$i-v$j failed"
		ctlq volume delete "t$i-v$j" || echo "# delete t$i-v$j failed"
	done
done
log "unpublished and deleted $N volumes in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "no zcfs mount left under W" bash -c "! grep -q ' $W/targets.* fuse.zcfs ' /proc/self/mounts"
check "no server left" wait_for "servers exit" 5 bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
check "no volume left" test "$(ctl volume list | jq '.volumes | length')" = 0
check "no budget in use" test "$(ctl tenant list | jq '[.tenants[].memlock_used] | add')" = 0
check "no storage dir left" test -z "$(find "$STORE" -mindepth 2)"
check "zcfsd is still running" kill -0 "$ZCFSD_PID"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
