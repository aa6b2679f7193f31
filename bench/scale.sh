#!/usr/bin/env bash
# zcfs scale benchmark: many volumes through one zcfsd.
#
#   bench/scale.sh OUTDIR        (bench/run.sh calls it with BENCH_SCALE=1
#                                 or BENCH_WORKLOADS containing "scale")
#
# Publishes SCALE_VOLUMES volumes for 4 tenants, one at a time, and measures
#   - publish latency: from the request to the target being mounted (a
#     findmnt --poll waiting on the mount table), and to zcfsd's answer
#     (which includes its 200 ms wait for a server that dies at once);
#   - memory per idle volume: each server's VmRSS (and Pss) from
#     /proc/PID/status and smaps_rollup, the bytes zcfsd charged as pinned,
#     and zcfsd's own RSS growth;
#   - fio throughput of one volume alone, then of all volumes at once
#     (one job per volume; sequential 64 KiB direct reads, then writes);
#   - unpublish latency.
# Writes OUTDIR/scale.env (key=value, read by bench/report.py), fio JSON and
# zcfsd/server logs. Root only; everything it mounts or starts is removed by
# an EXIT trap, also on failure or Ctrl-C.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=../tests/integration/helpers/scale_policy.sh
. "$root/tests/integration/helpers/scale_policy.sh"
: "${ZCFS_BIN:=$root/bin}"
: "${SCALE_VOLUMES:=64}"          # multiple of 4 (4 tenants)
: "${SCALE_TRANSPORT:=devfuse}"   # devfuse, or uring (queue depth 2, 64 KiB)
: "${SCALE_RUNTIME:=5}"           # seconds per fio run
: "${SCALE_FILE:=16M}"            # file per volume for the fio runs
: "${SCALE_UID_BASE:=2101}"       # tenant uids: BASE..BASE+3

out=${1:?usage: scale.sh OUTDIR}
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
log() { printf '[scale %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; kv status failed; kv reason "$*"; exit 1; }
kv() { printf '%s=%s\n' "$1" "$(printf '%s' "$2" | tr '\n\r' '  ')" >>"$out/scale.env"; }
: >"$out/scale.env"
[ "$(id -u)" -eq 0 ] || die "must run as root"
[ $((SCALE_VOLUMES % 4)) -eq 0 ] && [ "$SCALE_VOLUMES" -gt 0 ] || die "SCALE_VOLUMES must be a positive multiple of 4"
for c in fio jq findmnt; do command -v "$c" >/dev/null || die "$c not installed"; done
[ -x "$ZCFS_BIN/zcfsd" ] && [ -x "$ZCFS_BIN/zcfsctl" ] || die "zcfsd/zcfsctl not built in $ZCFS_BIN"

work=$(mktemp -d /tmp/zcfs-scale.XXXXXX) || die "mktemp"
chmod 755 "$work"
zpid=""
cleanup() {
	local rc=$? p m
	trap - EXIT INT TERM
	[ -n "$zpid" ] && kill -KILL "$zpid" 2>/dev/null
	for p in $(pgrep -f "[z]cfs-serve .*$work/" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	for m in $(awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	cp "$work/zcfsd.log" "$out/zcfsd.log" 2>/dev/null
	rm -rf --one-file-system "$work" 2>/dev/null
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

N=$SCALE_VOLUMES PER=$((SCALE_VOLUMES / 4))
sock=$work/zcfsd.sock store=$work/storage tgt=$work/targets
mkdir -p "$store" "$tgt/t1" "$tgt/t2" "$tgt/t3" "$tgt/t4" "$work/state"
# Room for the fio files; tmpfs keeps the backing store out of the figures.
fbytes=$(numfmt --from=iec "${SCALE_FILE%B}") || die "bad SCALE_FILE"
mount -t tmpfs -o "size=$(( fbytes * N / 1048576 + 256 ))m,mode=755" zcfs-scale "$store" || die "tmpfs"
scale_policy "$work/policy.json" "$store" "$tgt" "$SCALE_UID_BASE" "$PER"
ctl() { "$ZCFS_BIN/zcfsctl" --socket "$sock" "$@"; }
"$ZCFS_BIN/zcfsd" --policy "$work/policy.json" --state-dir "$work/state" --socket "$sock" \
	--serve "$ZCFS_BIN/zcfs-serve" --foreground 2>"$work/zcfsd.log" &
zpid=$!
for _ in $(seq 100); do [ -S "$sock" ] && ctl status >/dev/null 2>&1 && break; sleep 0.05; done
ctl status >/dev/null 2>&1 || die "zcfsd did not start: $(tail -n 2 "$work/zcfsd.log")"
case $SCALE_TRANSPORT in
uring) topts=(--transport uring --queue-depth 2 --max-write 64K);;
devfuse) topts=(--transport devfuse --queue-depth 2 --max-write 64K);;
*) die "SCALE_TRANSPORT must be devfuse or uring";;
esac
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
pss_kib() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null; }
now_ns() { date +%s%N; }
# pctl P FILE: nearest-rank percentile of the numbers in FILE
pctl() { sort -n "$2" | awk -v p="$1" '{ a[NR] = $1 } END { if (NR) { i = int((NR * p + 99) / 100); if (i < 1) i = 1; print a[i] } }'; }

kv volumes "$N"
kv transport "$SCALE_TRANSPORT"
kv options "${topts[*]}"
kv runtime "$SCALE_RUNTIME"
kv file_size "$SCALE_FILE"
kv zcfsd_rss_kib_start "$(rss_kib "$zpid")"
log "publishing $N volumes (${topts[*]})"
: >"$work/lat_mount"; : >"$work/lat_answer"
for i in 1 2 3 4; do
	for j in $(seq 1 "$PER"); do
		id=t$i-v$j target=$tgt/t$i/t$i-v$j
		ctl volume create "$id" --tenant "t$i" "${topts[@]}" >/dev/null || die "create $id failed"
		mkdir -p "$target"
		# findmnt waits on the mount table (poll(2) on mountinfo) and
		# stamps the moment the target shows up.
		( findmnt --poll=mount --first-only --timeout 10000 --mountpoint "$target" >/dev/null 2>&1 &&
		  now_ns >"$work/mounted" ) &
		watcher=$!
		sleep 0.05	# findmnt is polling before the request goes out
		rm -f "$work/mounted"
		t0=$(now_ns)
		ctl volume publish "$id" "$target" >/dev/null || die "publish $id failed: $(tail -n 2 "$work/state/logs/$id.log")"
		t1=$(now_ns)
		wait "$watcher"
		[ -s "$work/mounted" ] || die "no mount event seen for $id"
		echo $(( ($(cat "$work/mounted") - t0) / 1000 )) >>"$work/lat_mount"
		echo $(( (t1 - t0) / 1000 )) >>"$work/lat_answer"
	done
done
kv publish_mount_p50_us "$(pctl 50 "$work/lat_mount")"
kv publish_mount_p99_us "$(pctl 99 "$work/lat_mount")"
kv publish_answer_p50_us "$(pctl 50 "$work/lat_answer")"
kv publish_answer_p99_us "$(pctl 99 "$work/lat_answer")"
cp "$work/lat_mount" "$out/publish_mount_us.txt"; cp "$work/lat_answer" "$out/publish_answer_us.txt"

log "idle memory"
# Let the servers settle (sandbox setup, first requests done).
for i in 1 2 3 4; do for j in $(seq 1 "$PER"); do stat "$tgt/t$i/t$i-v$j" >/dev/null || die "t$i-v$j not served"; done; done
sleep 2
ctl status --json >"$out/status.json" || die "status failed"
[ "$(jq '[.volumes[] | select(.state == "published")] | length' "$out/status.json")" = "$N" ] || die "not all published"
pids=$(jq -r '.volumes[].pid' "$out/status.json")
rss_total=0 pss_total=0 rss_max=0
for p in $pids; do
	r=$(rss_kib "$p"); s=$(pss_kib "$p")
	[ -n "$r" ] || die "server $p gone"
	rss_total=$((rss_total + r)); pss_total=$((pss_total + ${s:-0}))
	[ "$r" -gt "$rss_max" ] && rss_max=$r
done
pinned_total=$(jq '[.volumes[].pinned] | add' "$out/status.json")
kv server_rss_kib_per_volume "$((rss_total / N))"
kv server_rss_kib_max "$rss_max"
kv server_pss_kib_per_volume "$((pss_total / N))"
kv pinned_bytes_per_volume "$((pinned_total / N))"
kv zcfsd_rss_kib_published "$(rss_kib "$zpid")"

# fio_run NAME RW JOBS...: one job per directory, time-based.
fio_run() {
	local name=$1 rw=$2; shift 2
	local args=(--output-format=json --output="$out/$name.fio.json" --ioengine=psync --rw="$rw"
		--bs=64k --direct=1 --size="$SCALE_FILE" --time_based --runtime="$SCALE_RUNTIME"
		--ramp_time=1 --group_reporting --filename=scale.dat)
	local d
	for d in "$@"; do args+=(--name="j" --directory="$d"); done
	timeout $((SCALE_RUNTIME + 120)) fio "${args[@]}" 2>"$out/$name.fio.err" ||
		{ log "fio $name failed: $(tail -n 2 "$out/$name.fio.err")"; return 1; }
	jq -r --arg side "${rw#seq}" '.jobs[0] | if $side == "read" then .read.bw_bytes else .write.bw_bytes end' \
		"$out/$name.fio.json"
}
dirs=()
for i in 1 2 3 4; do for j in $(seq 1 "$PER"); do dirs+=("$tgt/t$i/t$i-v$j"); done; done
log "laying out $N x $SCALE_FILE"
layout=(--ioengine=psync --rw=write --bs=1M --size="$SCALE_FILE" --filename=scale.dat --create_only=1)
for d in "${dirs[@]}"; do layout+=(--name=l --directory="$d"); done
fio "${layout[@]}" >/dev/null 2>"$out/layout.err" ||
	die "layout failed: $(tail -n 2 "$out/layout.err")"
for rw in read write; do
	log "fio $rw: one volume"
	b1=$(fio_run "single-$rw" "$rw" "${dirs[0]}") && kv "single_${rw}_mb_s" "$(awk -v b="$b1" 'BEGIN { printf "%.1f", b / 1e6 }')"
	log "fio $rw: all $N volumes at once"
	bn=$(fio_run "all-$rw" "$rw" "${dirs[@]}") && kv "all_${rw}_mb_s" "$(awk -v b="$bn" 'BEGIN { printf "%.1f", b / 1e6 }')"
done
restarts=$(ctl status --json | jq '[.volumes[].restarts] | add')
kv server_restarts "$restarts"

log "unpublishing"
: >"$work/lat_unpub"
for i in 1 2 3 4; do
	for j in $(seq 1 "$PER"); do
		t0=$(now_ns)
		ctl volume unpublish "t$i-v$j" "$tgt/t$i/t$i-v$j" >/dev/null || die "unpublish t$i-v$j failed"
		echo $(( ($(now_ns) - t0) / 1000 )) >>"$work/lat_unpub"
		ctl volume delete "t$i-v$j" >/dev/null || die "delete t$i-v$j failed"
	done
done
kv unpublish_p50_us "$(pctl 50 "$work/lat_unpub")"
kv unpublish_p99_us "$(pctl 99 "$work/lat_unpub")"
left=$(grep -c " $tgt/.* fuse.zcfs " /proc/self/mounts)
kv mounts_left "$left"
kv zcfsd_rss_kib_end "$(rss_kib "$zpid")"
kv status ok
log "done: $(tr '\n' ' ' <"$out/scale.env")"
