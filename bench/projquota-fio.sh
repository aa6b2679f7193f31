#!/usr/bin/env bash
# bench/projquota-fio.sh (make bench-projquota): the goal figure of issue 26.
# On XFS mounted prjquota and on ext4 with project quotas (loop devices over
# image files, tests/integration/helpers/backing_fs.sh), fio direct 1 MiB
# sequential read and write (sync engine, one job, 256 MiB file) on
#   native  a directory of that file system,
#   pt      a 1 GiB zcfsd volume of a passthrough tenant: its size is a
#           project quota, so it keeps kernel passthrough,
#   srv     a 1 GiB volume as sized volumes were before (size_enforcement:
#           server: the server counts, no passthrough, data through it),
# in interleaved rounds: odd rounds native, pt, srv; even rounds srv, pt,
# native (pt always next to native; each target's mean position the same).
# Each round gives pt / native and srv / native of that round; the report
# gives their medians and ranges, how many rounds reach 0.90, and, from
# zcfsd's per-volume counters (zcfs_volume_{read,written}_bytes_total),
# the bytes each run sent through the volume's server: passthrough must
# send none, so its data never waits on the server.
# The 6.18 host has no project quotas (CONFIG_XFS_QUOTA, CONFIG_QFMT_V2),
# so by default this boots the Linux 7.3 guest (scripts/guest.sh with xfs,
# loop, quota_v2) and runs itself there (--inside OUT).
#   PQB_FS="xfs ext4"  PQB_ROUNDS=8  PQB_RUNTIME=10 (s per fio run)
#   PQB_RAMP=1 (s)  PQB_SIZE=256M  PQB_HOST=1 (run on this kernel, without a guest)
#   PQB_OUT (default bench/results/projquota: latest.md and raw.tsv committed,
#   the guest's logs in guest/ not)
# Exit 0 when it measured (the verdict is in latest.md), 77 naming what is
# missing (no project quotas, no kernel), 1 on errors.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
: "${PQB_FS:=xfs ext4}" "${PQB_ROUNDS:=8}" "${PQB_RUNTIME:=10}" "${PQB_RAMP:=1}" "${PQB_SIZE:=256M}"
export PQB_FS PQB_ROUNDS PQB_RUNTIME PQB_RAMP PQB_SIZE

# fio_bw DIR RW: KiB/s of one direct 1 MiB run on DIR/f
fio_bw() {
	fio --name=pq --filename="$1/f" --size="$PQB_SIZE" --bs=1M --rw="$2" --direct=1 \
		--ioengine=psync --numjobs=1 --time_based --runtime="$PQB_RUNTIME" --ramp_time="$PQB_RAMP" \
		--output-format=json 2>/dev/null | jq -r ".jobs[0].$2.bw"
}
# server_bytes VOLUME: bytes its server read + wrote so far (zcfsd metrics)
server_bytes() {
	curl -sf --max-time 10 --unix-socket "$MSOCK" http://localhost/metrics |
		awk -v v="volume=\"$1\"" 'index($0, v) && /^zcfs_volume_(read|written)_bytes_total/ {n += $NF}
			END {printf "%d\n", n}'
}

policy() {	# ROOT
	cat >"$POLICY" <<-JSON
	{"admin_group": "0", "defaults": {"queue_depth": 4, "max_write": "1M", "transport": "auto"},
	 "metrics": {"listen": "$MSOCK"},
	 "tenants": [
	  {"name": "pt", "uid": 2001, "gid": 2001, "storage_root": "$1/pt", "allowed_target_prefixes": ["$TGT"],
	   "memlock_budget": "64M", "size_enforcement": "kernel",
	   "data_paths": {"io_uring": true, "passthrough": true}},
	  {"name": "srv", "uid": 2002, "gid": 2002, "storage_root": "$1/srv", "allowed_target_prefixes": ["$TGT"],
	   "memlock_budget": "64M", "size_enforcement": "server",
	   "data_paths": {"io_uring": true, "passthrough": false}}]}
	JSON
}

# one_fs TYPE: sets up TYPE, measures PQB_ROUNDS rounds into $out/raw.tsv
one_fs() {
	local type=$1 r rw t order b0 sb bw v
	backing_fs_mount "$type" "$W/r-$type" 3G quota
	[ "$BACKING_QUOTA" = yes ] || skip "no project quotas: $BACKING_QUOTA_WHY"
	policy "$W/r-$type"
	zcfsd_start
	ctlq call volume.create '{"id": "pt", "tenant": "pt", "size": "1G", "uid": 0, "gid": 0, "mode": "0755"}' ||
		{ show_zcfsd_log; fail "create pt"; }
	ctlq call volume.create '{"id": "srv", "tenant": "srv", "size": "1G", "uid": 0, "gid": 0, "mode": "0755"}' ||
		{ show_zcfsd_log; fail "create srv"; }
	ctlq volume publish pt "$TGT/pt" && ctlq volume publish srv "$TGT/srv" || { show_zcfsd_log; fail "publish"; }
	for _ in $(seq 100); do [ "$(vol_field pt passthrough.state)" = on ] && break; sleep 0.1; done
	for v in pt srv; do
		echo "# $type $v: size_enforcement=$(vol_field $v size_enforcement) passthrough=$(vol_field $v passthrough.state) data_path=$(vol_field $v data_path_effective)" |
			tee -a "$out/volumes.txt"
	done
	[ "$(vol_field pt size_enforcement)" = project-quota ] && [ "$(vol_field pt passthrough.state)" = on ] ||
		fail "$type: pt is not a project-quota passthrough volume"
	mkdir -p "$W/r-$type/native"
	declare -A dirs=([native]=$W/r-$type/native [pt]=$TGT/pt [srv]=$TGT/srv)
	for t in native pt srv; do	# lay the files out once
		fio --name=lay --filename="${dirs[$t]}/f" --size="$PQB_SIZE" --bs=1M --rw=write --direct=1 \
			--ioengine=psync >/dev/null 2>&1 || fail "$type: lay out ${dirs[$t]}/f"
	done
	for r in $(seq "$PQB_ROUNDS"); do
		order="native pt srv"; [ $((r % 2)) = 0 ] && order="srv pt native"
		for rw in read write; do
			for t in $order; do
				b0=0 sb=0
				[ "$t" = native ] || b0=$(server_bytes "$t")
				bw=$(fio_bw "${dirs[$t]}" "$rw")
				[ "$t" = native ] || sb=$(( $(server_bytes "$t") - b0 ))
				printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$type" "$r" "$rw" "$t" "$bw" "$sb" >>"$out/raw.tsv"
			done
			echo "# $type round $r $rw: $(awk -F'\t' -v f="$type" -v r="$r" -v w="$rw" \
				'$1 == f && $2 == r && $3 == w {printf "%s %d MB/s (server %d MiB) ", $4, $5 / 1024, $6 / 1048576}' "$out/raw.tsv")"
		done
	done
	ctlq volume unpublish pt "$TGT/pt"; ctlq volume unpublish srv "$TGT/srv"
	# deleted (their project quotas go), so the next fs starts afresh
	ctlq volume delete pt; ctlq volume delete srv
	zcfsd_kill9
	backing_fs_umount "$W/r-$type"
}

inside() {
	out=$1
	# shellcheck source=../tests/lib.sh
	. "$here/tests/lib.sh"
	# shellcheck source=../tests/integration/helpers/zcfsd_lib.sh
	. "$here/tests/integration/helpers/zcfsd_lib.sh"
	# shellcheck source=../tests/integration/helpers/backing_fs.sh
	. "$here/tests/integration/helpers/backing_fs.sh"
	zcfsd_require fio curl
	# io_uring with 1 MiB writes at depth 4 pins more than the default 8 MiB
	ulimit -l unlimited 2>/dev/null || ulimit -l $((64 * 1024))
	zcfsd_env 64M true
	MSOCK=$W/metrics.sock
	rm -f "$out/raw.tsv" "$out/volumes.txt"
	for type in $PQB_FS; do
		backing_fs_require "$type"
		one_fs "$type"
	done
	python3 "$here/bench/projquota_report.py" "$out/raw.tsv" "$out/volumes.txt" \
		"$(uname -r), $(nproc) CPUs, $PQB_ROUNDS rounds, ${PQB_RUNTIME}s per run after ${PQB_RAMP}s ramp, file $PQB_SIZE" >"$out/latest.md" ||
		fail "report"
	cat "$out/latest.md"
}

if [ "${1:-}" = --inside ]; then
	inside "$2"
	exit
fi
res=${PQB_OUT:-$here/bench/results/projquota}
mkdir -p "$res"
if [ "${PQB_HOST:-0}" = 1 ]; then
	"$0" --inside "$res"
	exit
fi
"$here/scripts/fetch-kernel.sh" >/dev/null || exit $?
export ZCFS_BIN=${ZCFS_BIN:-$here/bin}
# the guest writes only into its OUT (the rest of its root is read-only)
gout=$res/guest
rm -rf "$gout"
"$here/scripts/guest.sh" --modules xfs,loop,quota_v2 --mem 4096 --out "$gout" \
	--timeout "${PQB_TIMEOUT:-7200}" --env PQB_FS --env PQB_ROUNDS --env PQB_RUNTIME --env PQB_RAMP --env PQB_SIZE -- \
	"$0" --inside "$gout"
rc=$?
[ "$rc" = 0 ] && cp "$gout/latest.md" "$gout/raw.tsv" "$res/"
exit "$rc"
