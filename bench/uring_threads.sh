#!/usr/bin/env bash
# bench/uring_threads.sh [xfs|ext4]: where an io_uring server's time goes
# with asynchronous backing I/O (the default: RWF_NOWAIT on the ring,
# punted to io-wq workers when the page cache cannot serve it at once)
# against --uring-backing=inline (pread/pwrite in the queue thread). One
# file system on a loop device over an image in this script's temp dir;
# for each mode a zcfs-serve (uring, depth 8, --cache=exclusive) on it, 2
# files of BENCH_SIZE (1G) laid out, then fio direct (2 jobs) 1 MiB
# sequential and 4 KiB random reads and writes, each twice: warm (the
# backing files in the page cache, as in make bench) and cold (their
# page cache dropped first with POSIX_FADV_DONTNEED; one pass over the
# files, not time-based, so none of it is read twice). Per run: the
# figure, and the server's CPU seconds per GiB split between its own
# threads (queue threads: the FUSE round trip, and inline I/O) and io-wq
# workers (iou-wrk-*: punted backing I/O; the process's total, which keeps
# the time of exited workers, minus the live threads'), and how many
# workers were alive at the end. Prints one line per run.
#   BENCH_SIZE=1G  BENCH_RUNTIME=5 (warm runs)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
type=${1:-ext4}
: "${ZCFS_BIN:=$here/bin}" "${BENCH_SIZE:=1G}" "${BENCH_RUNTIME:=5}"
export ZCFS_BIN
# shellcheck source=../tests/lib.sh
. "$here/tests/lib.sh"
# shellcheck source=../tests/integration/helpers/backing_fs.sh
. "$here/tests/integration/helpers/backing_fs.sh"
require_fuse
require_cmd fio
backing_fs_require "$type"
W=$(make_tmpdir)
backing_fs_mount "$type" "$W/fs" 6G

# cpu_ticks PID: "TOTAL OWN IOWQ": the process's utime+stime (exited
# threads included), its live threads' other than io-wq workers, and
# the number of live io-wq workers
cpu_ticks() {
	local total own=0 n=0 t line s
	read -ra s <"/proc/$1/stat"
	total=$((s[13] + s[14]))
	for t in /proc/"$1"/task/*; do
		[ -r "$t/stat" ] || continue
		case $(cat "$t/comm" 2>/dev/null) in iou-wrk-*) n=$((n + 1)); continue;; esac
		line=$(sed 's/.*) //' "$t/stat" 2>/dev/null) || continue
		read -ra s <<<"$line"
		own=$((own + s[11] + s[12]))
	done
	echo "$total $own $n"
}
drop_backing() {
	python3 - "$@" <<-'PY'
	import os, sys
	for f in sys.argv[1:]:
	    fd = os.open(f, os.O_RDONLY)
	    os.fsync(fd)
	    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	    os.close(fd)
	PY
}

hz=$(getconf CLK_TCK)
for mode in async inline; do
	src=$W/fs/$mode mnt=$W/mnt-$mode
	mkdir -p "$src" "$mnt"
	opts=(--queue-depth=8 --cache=exclusive)
	[ $mode = inline ] && opts+=(--uring-backing=inline)
	ZCFS_TRANSPORT=uring zcfs_mount "$src" "$mnt" "${opts[@]}"
	pid=$ZCFS_PID
	fio --name=t --directory="$mnt" --numjobs=2 --size="$BENCH_SIZE" --bs=1M --rw=write --direct=1 \
		>/dev/null 2>&1 || fail "$mode: lay out"
	for cache in warm cold; do
		for wl in read:1M write:1M randread:4k randwrite:4k; do
			rw=${wl%%:*} bs=${wl#*:}
			tb=(--time_based --runtime="$BENCH_RUNTIME" --ramp_time=1)
			if [ $cache = cold ]; then drop_backing "$src"/t.*; tb=(); fi
			read -r t0 o0 _ <<<"$(cpu_ticks "$pid")"
			j=$(fio --name=t --directory="$mnt" --numjobs=2 --size="$BENCH_SIZE" --bs="$bs" --rw="$rw" \
				--direct=1 --group_reporting "${tb[@]}" --output-format=json 2>/dev/null)
			read -r t1 o1 nw <<<"$(cpu_ticks "$pid")"
			kind=${rw#rand}
			fig=$(jq -r ".jobs[0].$kind | if \"$bs\" == \"4k\" then \"\\(.iops | floor) IOPS\" else \"\\(.bw / 1024 | floor) MB/s\" end" <<<"$j")
			gib=$(jq -r ".jobs[0].$kind.io_kbytes / 1048576" <<<"$j")
			awk -v m="$mode" -v c="$cache" -v w="$rw $bs" -v f="$fig" -v g="$gib" -v hz="$hz" \
				-v own=$((o1 - o0)) -v all=$((t1 - t0)) -v nw="$nw" 'BEGIN {
				iowq = all - own; if (iowq < 0) iowq = 0
				printf "%-6s %-4s %-12s %-12s server CPU s/GiB: queue threads %.2f, io-wq %.2f (workers alive: %d)\n",
					m, c, w, f, own / hz / g, iowq / hz / g, nw }'
		done
	done
	zcfs_umount "$mnt" >/dev/null 2>&1
done
