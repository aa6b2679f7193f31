#!/usr/bin/env bash
# zcfs benchmark: fio data workloads and small-file metadata rates on native
# tmpfs and on every zcfs-serve data path this kernel/build has, all in one
# run, reported as ratios to native.  See bench/README.md.
#
#   bench/run.sh                       (or `make bench`)
#   BENCH_TARGETS="native devfuse" BENCH_WORKLOADS="direct meta" bench/run.sh
#   BENCH_RUNTIME=30 bench/run.sh      longer, steadier runs
#   BENCH_REPEAT=3 bench/run.sh        3 rounds per workload, median ratio
#   BENCH_LABEL=TEXT                   a line at the top of latest.md (bench/guest.sh: TCG)
#   BACKING=xfs bench/run.sh           every target (native too) on one XFS
#                                      (or ext4) on a loop device over an image
#                                      file on the disk bench/results is on,
#                                      instead of a tmpfs each; results then in
#                                      bench/results/BACKING/
#
# Writes bench/results/latest.{json,md,png} (only latest.md and .png are
# committed: the JSON is generated, git-ignored); the previous latest.json is
# rotated to previous.json when the measurements are done.  Raw fio/metarate output and server logs
# of the last run stay in bench/results/tmp/raw/ (git-ignored).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)

: "${ZCFS_BIN:=$root/bin}"
: "${ZCFS_BENCHBIN:=$root/build/bench}"
: "${BENCH_RUNTIME:=5}"          # seconds measured per fio job
: "${BENCH_RAMP:=1}"             # seconds of ramp before measuring
: "${BENCH_SIZE:=256M}"          # file size per fio job
: "${BENCH_JOBS:=2}"             # fio numjobs / metarate processes
: "${BENCH_META_FILES:=5000}"    # files per metarate process
: "${BENCH_META_REPEAT:=3}"      # metarate runs per target and round (median reported)
: "${BENCH_REPEAT:=1}"           # rounds per workload (median of per-round ratios)
: "${BENCH_CACHE:=exclusive}"    # --cache= for zcfs targets (if the build has it)
: "${BACKING:=tmpfs}"             # tmpfs, xfs or ext4: what every target's files are on
case $BACKING in tmpfs|xfs|ext4) ;; *) echo "bench: BACKING=$BACKING: tmpfs, xfs or ext4" >&2; exit 2;; esac
if [ "$BACKING" = tmpfs ]; then : "${BENCH_RESULTS:=$here/results}"; else : "${BENCH_RESULTS:=$here/results/$BACKING}"; fi
: "${BENCH_TARGETS:=native devfuse peer-devfuse uring-qd8 peer-uring uring-qd32 passthrough peer-passthrough bufpool zerocopy}"
# The peer: libfuse's example/passthrough_hp (the peer-* targets), built by
# ../shared/tools/build-passthrough-hp.sh into build/peer/ unless
# BENCH_PEER_BIN names one already built.
: "${BENCH_PEER_BIN:=}"
: "${BENCH_WORKLOADS:=all}"
: "${BENCH_SERVE_OPTS:=}"        # extra zcfs-serve options for every zcfs target
: "${BENCH_MOUNT_WAIT_S:=10}"    # a server not serving by then is given up (a loaded machine: more)
: "${PYTHON:=python3}"
# 'scale' in BENCH_WORKLOADS, or BENCH_SCALE=1, adds bench/scale.sh (many
# volumes through one zcfsd; not a per-target workload). Alone, it runs
# without the per-target suite (native only, no workloads).
: "${BENCH_SCALE:=0}"
_wl=()
for w in $BENCH_WORKLOADS; do
	if [ "$w" = scale ]; then BENCH_SCALE=1; else _wl+=("$w"); fi
done
if [ "$BENCH_SCALE" = 1 ] && [ ${#_wl[@]} -eq 0 ]; then BENCH_TARGETS=native; fi
BENCH_WORKLOADS="${_wl[*]}"

# Each peer target right after the zcfs target it is compared with, so the
# two figures of a "vs peer" ratio are taken seconds apart.
ALL_TARGETS=(native devfuse peer-devfuse uring-qd8 uring-inline peer-uring uring-qd32 uring-stock passthrough sized
             peer-passthrough bufpool zerocopy auto)
# Run order (reads first so they see the layout, writes after).
ALL_WORKLOADS=(seqread-direct randread-direct seqwrite-direct randwrite-direct
               seqread-cold seqread-buffered randread-buffered seqwrite-buffered randwrite-buffered
               meta)

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- selection
declare -A want_target=()
for t in $BENCH_TARGETS; do
	ok=0
	for a in "${ALL_TARGETS[@]}"; do [ "$a" = "$t" ] && ok=1; done
	[ $ok = 1 ] || { echo "bench: unknown target '$t' (known: ${ALL_TARGETS[*]})" >&2; exit 2; }
	want_target[$t]=1
done
targets=()
for a in "${ALL_TARGETS[@]}"; do [ -n "${want_target[$a]:-}" ] && targets+=("$a"); done
[ ${#targets[@]} -gt 0 ] || { echo "bench: BENCH_TARGETS selects nothing" >&2; exit 2; }
[ -n "${want_target[native]:-}" ] || log "note: 'native' not selected, ratios will be missing"

# BENCH_WORKLOADS: each word is 'all', 'data', or a substring of workload
# names ('direct', 'buffered', 'seqread', 'rand', 'meta', 'randwrite-direct').
workloads=()
declare -A want_wl=()
for w in $BENCH_WORKLOADS; do
	hit=0
	for a in "${ALL_WORKLOADS[@]}"; do
		case $w in
		all) want_wl[$a]=1; hit=1;;
		data) [ "$a" != meta ] && { want_wl[$a]=1; hit=1; };;
		*) [[ $a == *"$w"* ]] && { want_wl[$a]=1; hit=1; };;
		esac
	done
	[ $hit = 1 ] || { echo "bench: BENCH_WORKLOADS word '$w' matches no workload (${ALL_WORKLOADS[*]})" >&2; exit 2; }
done
for a in "${ALL_WORKLOADS[@]}"; do [ -n "${want_wl[$a]:-}" ] && workloads+=("$a"); done
data_selected=0
for w in "${workloads[@]}"; do [ "$w" != meta ] && data_selected=1; done

[[ $BENCH_RUNTIME =~ ^[0-9]+$ && $BENCH_RUNTIME -gt 0 ]] || { echo "bench: BENCH_RUNTIME must be a positive integer" >&2; exit 2; }
[[ $BENCH_RAMP =~ ^[0-9]+$ ]] || { echo "bench: BENCH_RAMP must be an integer" >&2; exit 2; }
[[ $BENCH_REPEAT =~ ^[0-9]+$ && $BENCH_REPEAT -gt 0 ]] || { echo "bench: BENCH_REPEAT must be a positive integer" >&2; exit 2; }

# ---------------------------------------------------------------- prerequisites
[ "$(id -u)" -eq 0 ] || die "must run as root (mounts tmpfs and FUSE)"
command -v fio >/dev/null || die "fio not installed (make deps)"
command -v "$PYTHON" >/dev/null || die "$PYTHON not installed"
command -v gnuplot >/dev/null || log "note: gnuplot not installed, no PNG"

# ---------------------------------------------------------------- work area
mkdir -p "$BENCH_RESULTS/tmp"
work=$(mktemp -d "$BENCH_RESULTS/tmp/run.XXXXXX") || die "mktemp"
raw=$work/raw
mkdir -p "$raw"
# fio runs in an empty directory of its own: a job whose name is an
# existing directory in fio's working directory (bench/ when run from the
# repository root, as `make bench` does) gets that name as its one file,
# shared by every numjobs clone (fio's exists_and_not_regfile(jobname)),
# so both jobs did their I/O on one file "bench" instead of one each.
fio_cwd=$work/fio-cwd
mkdir -p "$fio_cwd"

_pids=()      # zcfs-serve processes
_fuse=()      # FUSE mountpoints
_tmpfs=()     # tmpfs mountpoints
_loop=""      # BACKING=xfs|ext4: the loop device, its mount is $work/backing
_bg=""        # running fio (its timeout wrapper), killed first at cleanup
_uring_param=/sys/module/fuse/parameters/enable_uring

# forget_pid PID: a reaped server is no business of cleanup any more (its
# number may be reused by an unrelated process).
forget_pid() {
	local p keep=()
	for p in "${_pids[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
	_pids=("${keep[@]}")
}

# abort_fuse MNT: abort the FUSE connection behind MNT (unsticks a hung server).
abort_fuse() {
	local dev minor
	dev=$(mountpoint -d "$1" 2>/dev/null) || return 0
	minor=${dev#*:}
	[ -w "/sys/fs/fuse/connections/$minor/abort" ] && echo 1 >"/sys/fs/fuse/connections/$minor/abort"
	return 0
}

cleanup() {
	local rc=$? p m i
	trap - EXIT INT TERM
	if [ -n "$_bg" ] && kill -0 "$_bg" 2>/dev/null; then
		# timeout(1) passes TERM on to fio; fio stuck on a dead mount is
		# released by the connection abort below.
		kill -TERM "$_bg" 2>/dev/null
		for i in $(seq 30); do kill -0 "$_bg" 2>/dev/null || break; sleep 0.1; done
	fi
	for p in "${_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for m in "${_fuse[@]}"; do
		if mountpoint -q "$m" 2>/dev/null; then
			umount "$m" 2>/dev/null || { abort_fuse "$m"; umount -l "$m" 2>/dev/null; }
		fi
	done
	for p in "${_pids[@]}"; do
		for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	for m in "${_tmpfs[@]}"; do
		mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
	done
	if [ -n "$_loop" ]; then
		mountpoint -q "$work/backing" 2>/dev/null &&
			{ umount "$work/backing" 2>/dev/null || umount -l "$work/backing" 2>/dev/null; }
		losetup -d "$_loop" 2>/dev/null
		rm -f "$work/backing.img"
	fi
	if [ -d "$work" ]; then
		# Keep the raw output of the last run for inspection.
		rm -rf "$BENCH_RESULTS/tmp/raw"
		mv "$raw" "$BENCH_RESULTS/tmp/raw" 2>/dev/null
		rm -rf --one-file-system "$work" 2>/dev/null
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# kv FILE KEY VALUE: append one key=value line (value on one line).
kv() { printf '%s=%s\n' "$2" "$(printf '%s' "$3" | tr '\n\r' '  ')" >>"$1"; }

now() { date +%s.%N; }

# proc_cpu PID: utime+stime of the whole process (all threads, io_uring
# workers included) in clock ticks; empty if it is gone.
proc_cpu() {
	local s fl
	[ -n "$1" ] || return 0
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	read -ra fl <<<"$s"
	echo $(( fl[11] + fl[12] ))
}

fuse_alive() { # MNT PID
	kill -0 "$2" 2>/dev/null && grep -q " $1 fuse" /proc/self/mounts && stat "$1" >/dev/null 2>&1
}

tmpfs_size() {
	# Room for the fio files plus the metadata tree.
	local bytes
	bytes=$(numfmt --from=iec "${BENCH_SIZE%B}" 2>/dev/null) || bytes=$((256 << 20))
	echo $(( (bytes * BENCH_JOBS) / 1048576 + 512 ))M
}

# ---------------------------------------------------------------- zcfs probing
serve=$ZCFS_BIN/zcfs-serve
serve_help=""
serve_version=""
if [ -x "$serve" ]; then
	serve_help=$("$serve" --help 2>&1 </dev/null | head -c 20000)
	serve_version=$("$serve" --version 2>&1 </dev/null | head -n 1)
fi

# target_opts NAME: zcfs-serve options of a target (without the common ones).
target_opts() {
	case $1 in
	devfuse)     echo "--transport=devfuse";;
	uring-qd8)   echo "--transport=uring --queue-depth=8";;
	# uring-qd8 with its backing reads and writes done in the queue's
	# thread instead of on its ring (asynchronous where the fs takes
	# RWF_NOWAIT: XFS, ext4; tmpfs is inline in both)
	uring-inline) echo "--transport=uring --queue-depth=8 --uring-backing=inline";;
	uring-qd32)  echo "--transport=uring --queue-depth=32";;
	passthrough) echo "--passthrough";;
	# today's sized volume of a passthrough tenant when the server counts
	# (server-count: --quota-bytes turns passthrough off), beside
	# passthrough, which a project-quota volume keeps
	sized)       echo "--passthrough --quota-bytes=1024G";;
	# Linux >= 7.3 (bench/guest.sh): stock entries (what 6.18 runs), a
	# registered buffer pool without zero-copy, zero-copy on every open,
	# and the defaults (auto: pools, zero-copy per open file where it wins)
	uring-stock) echo "--transport=uring --buffer-pool=off --zero-copy=off";;
	bufpool)     echo "--transport=uring --buffer-pool=registered --zero-copy=off";;
	zerocopy)    echo "--transport=uring --zero-copy=on";;
	auto)        echo "--transport=uring";;
	esac
}

# peer_opts NAME: passthrough_hp options of a peer target. --nopassthrough
# keeps the data in the server (passthrough_hp turns on writeback and long
# cache timeouts itself, like --cache=exclusive); io_uring as zcfs's
# uring-qd8.
peer_opts() {
	case $1 in
	peer-devfuse)     echo "--foreground --nopassthrough -o allow_other";;
	peer-uring)       echo "--foreground --nopassthrough -o allow_other,io_uring,io_uring_q_depth=8";;
	peer-passthrough) echo "--foreground -o allow_other";;
	esac
}

# The peer binary: BENCH_PEER_BIN, else build/peer/passthrough_hp, built
# there by ../shared/tools/build-passthrough-hp.sh (shared/ found next to
# the repository, as in the development checkout). Sets PEER_BIN, or
# PEER_WHY to why the peer targets are not available.
PEER_BIN=""
PEER_WHY=""
peer_prepare() {
	local shared out rc
	if [ -n "$BENCH_PEER_BIN" ]; then
		if [ -x "$BENCH_PEER_BIN" ]; then PEER_BIN=$BENCH_PEER_BIN; else PEER_WHY="BENCH_PEER_BIN=$BENCH_PEER_BIN is not executable"; fi
		return 0
	fi
	out=$root/build/peer
	if [ -x "$out/passthrough_hp" ]; then PEER_BIN=$out/passthrough_hp; return 0; fi
	# ZCFS_SHARED: where shared/ is when not next to the repository (a
	# worktree under /work/wt: /work/shared), as build-suites.sh takes it
	shared=$(cd "${ZCFS_SHARED:-$root/../shared}" 2>/dev/null && pwd)
	if [ -z "$shared" ] || [ ! -x "$shared/tools/build-passthrough-hp.sh" ]; then
		PEER_WHY="not available: no ${ZCFS_SHARED:-$root/../shared}/tools/build-passthrough-hp.sh (the libfuse sources are outside the repository; ZCFS_SHARED=DIR)"
		return 0
	fi
	log "building the peer (libfuse passthrough_hp) into $out"
	mkdir -p "$out"
	# It may apt-get its build tools: under the machine's apt lock.
	if command -v flock >/dev/null; then
		flock /tmp/zcfs-apt.lock "$shared/tools/build-passthrough-hp.sh" "$out" >"$raw/peer-build.log" 2>&1
	else
		"$shared/tools/build-passthrough-hp.sh" "$out" >"$raw/peer-build.log" 2>&1
	fi
	rc=$?
	if [ $rc -eq 0 ] && [ -x "$out/passthrough_hp" ]; then
		PEER_BIN=$out/passthrough_hp
	elif [ $rc -eq 77 ]; then
		PEER_WHY="not available: build-passthrough-hp.sh exit 77: $(grep -v '^$' "$raw/peer-build.log" | tail -n 1)"
	else
		PEER_WHY="not available: build-passthrough-hp.sh failed (exit $rc): $(grep -v '^$' "$raw/peer-build.log" | tail -n 1)"
	fi
}

# help_lacks OPTS...: prints the first option/value --help does not mention.
help_lacks() {
	local o name val
	for o in "$@"; do
		name=${o%%=*}
		grep -q -- "$name" <<<"$serve_help" || { echo "$name"; return; }
		if [[ $o == *=* ]]; then
			val=${o#*=}
			[[ $val =~ ^[0-9]+$ ]] && continue
			grep -q -- "$val" <<<"$serve_help" || { echo "$o"; return; }
		fi
	done
}

common_opts=(--foreground)
read -ra _extra <<<"$BENCH_SERVE_OPTS"
common_opts+=("${_extra[@]}")
cache_opt=""
if [ -n "$BENCH_CACHE" ] && grep -q -- "--cache" <<<"$serve_help"; then
	cache_opt="--cache=$BENCH_CACHE"
	common_opts+=("$cache_opt")
fi

# FUSE-over-io_uring is off until enabled; turn it on (and leave it on, as
# tests/run-integration.sh does: restoring it could pull it from under a
# concurrent test run).
need_uring=0
for t in "${targets[@]}"; do [[ $t == uring-* || $t == bufpool || $t == zerocopy || $t == auto || $t == passthrough || $t == peer-uring ]] && need_uring=1; done
if [ $need_uring = 1 ] && [ -e "$_uring_param" ] && [ "$(cat "$_uring_param")" != Y ]; then
	if echo Y >"$_uring_param" 2>/dev/null; then
		log "enabled FUSE over io_uring ($_uring_param)"
	else
		log "note: could not enable $_uring_param"
	fi
fi

# ---------------------------------------------------------------- run info
info=$raw/run.env
: >"$info"
kv "$info" started "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
kv "$info" runtime "$BENCH_RUNTIME"
kv "$info" ramp "$BENCH_RAMP"
kv "$info" size "$BENCH_SIZE"
kv "$info" jobs "$BENCH_JOBS"
kv "$info" meta_files "$BENCH_META_FILES"
kv "$info" meta_repeat "$BENCH_META_REPEAT"
kv "$info" repeat "$BENCH_REPEAT"
kv "$info" cache "${cache_opt:-default (zcfs-serve has no --cache)}"
kv "$info" targets "${targets[*]}"
kv "$info" workloads "${workloads[*]}"
kv "$info" clk_tck "$(getconf CLK_TCK)"
kv "$info" fio_version "$(fio --version 2>&1)"
kv "$info" zcfs_version "${serve_version:-not built}"
kv "$info" enable_uring "$(cat "$_uring_param" 2>/dev/null || echo absent)"
kv "$info" root "$root"
kv "$info" label "${BENCH_LABEL:-}"

# ---------------------------------------------------------------- the peer
for t in "${targets[@]}"; do
	if [[ $t == peer-* ]]; then
		peer_prepare
		kv "$info" peer "${PEER_BIN:-$PEER_WHY}"
		if [ -n "$PEER_BIN" ]; then log "peer: $PEER_BIN"; else log "peer: $PEER_WHY"; fi
		break
	fi
done

# ---------------------------------------------------------------- metarate
metarate=$ZCFS_BENCHBIN/metarate
if [ -n "${want_wl[meta]:-}" ] && { [ ! -x "$metarate" ] || [ "$here/metarate.c" -nt "$metarate" ]; }; then
	metarate=$work/metarate
	log "building metarate (not found in $ZCFS_BENCHBIN)"
	${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -pthread \
		-o "$metarate" "$here/metarate.c" || die "cannot build metarate"
fi

# ---------------------------------------------------------------- workloads
wl_rw() {
	case $1 in
	seqread-*) echo "read 1M";; seqwrite-*) echo "write 1M";;
	randread-*) echo "randread 4k";; randwrite-*) echo "randwrite 4k";;
	esac
}

# run_fio TDIR OUT WL PID [TAG]: results in OUT/WL[TAG].{env,fio.json,fio.err}
run_fio() {
	local dir=$1 out=$2 wl=$3 pid=$4 tag=${5:-} rw bs direct extra=() c0 c1 c2 t0 t1 t2 rc fpid
	read -r rw bs <<<"$(wl_rw "$wl")"
	if [[ $wl == *-direct ]]; then direct=1; else direct=0; fi
	# Buffered writes are only done when they reach the backing store.
	[ $direct = 0 ] && [[ $rw == *write ]] && extra+=(--end_fsync=1)
	# fio's default invalidate=1 drops a file's page cache each time a
	# time-based job wraps around and reopens it: a no-op on tmpfs, a
	# cold pass through the server on FUSE. Buffered workloads measure
	# what caching gives (both sides warm); seqread-cold keeps the cold
	# pass visible.
	if [ $direct = 0 ]; then
		if [[ $wl == *-cold ]]; then extra+=(--invalidate=1); else extra+=(--invalidate=0); fi
	fi
	local env=$out/$wl$tag.env f=$out/$wl$tag
	: >"$env"
	c0=$(proc_cpu "$pid"); t0=$(now)
	(cd "$fio_cwd" && exec timeout -k 10 $((BENCH_RUNTIME + BENCH_RAMP + 120)) \
		fio --output-format=json --output="$f.fio.json" \
		--name=bench --directory="$dir" --size="$BENCH_SIZE" --numjobs="$BENCH_JOBS" \
		--group_reporting --ioengine=sync --rw="$rw" --bs="$bs" --direct="$direct" \
		--norandommap --randrepeat=0 --iomem_align=4096 --fallocate=none \
		--time_based --runtime="$BENCH_RUNTIME" --ramp_time="$BENCH_RAMP" "${extra[@]}") \
		2>"$f.fio.err" &
	fpid=$!
	_bg=$fpid
	sleep "$BENCH_RAMP"
	c1=$(proc_cpu "$pid"); t1=$(now)
	wait $fpid; rc=$?
	_bg=""
	c2=$(proc_cpu "$pid"); t2=$(now)
	kv "$env" fio_rc "$rc"
	kv "$env" t_start "$t0"; kv "$env" t_ramp_end "$t1"; kv "$env" t_end "$t2"
	kv "$env" server_ticks_start "${c0:-}"; kv "$env" server_ticks_ramp_end "${c1:-}"
	kv "$env" server_ticks_end "${c2:-}"
	if [ $rc -ne 0 ]; then
		kv "$env" status failed
		kv "$env" reason "fio exit $rc: $(grep -v '^$' "$f.fio.err" | tail -n 3)"
		return 1
	fi
	kv "$env" status ok
}

# run_meta TDIR OUT PID [TAG]: runs go to OUT/meta[TAG].jsonl, one line each
run_meta() {
	local dir=$1 out=$2 pid=$3 tag=${4:-} env=$2/meta${4:-}.env i rc c0 c1 t0 t1
	: >"$env"
	: >"$out/meta$tag.jsonl"
	c0=$(proc_cpu "$pid"); t0=$(now)
	for i in $(seq "$BENCH_META_REPEAT"); do
		mkdir -p "$dir/meta.$i" || { kv "$env" status failed; kv "$env" reason "mkdir $dir/meta.$i failed"; return 1; }
		timeout -k 10 600 "$metarate" -n "$BENCH_META_FILES" -p "$BENCH_JOBS" "$dir/meta.$i" \
			>>"$out/meta$tag.jsonl" 2>"$out/meta$tag.err"
		rc=$?
		if [ $rc -ne 0 ]; then
			kv "$env" status failed
			kv "$env" reason "metarate exit $rc: $(tail -n 2 "$out/meta$tag.err")"
			return 1
		fi
		rmdir "$dir/meta.$i" 2>/dev/null
	done
	c1=$(proc_cpu "$pid"); t1=$(now)
	[ -n "$pid" ] && [ -n "$c0" ] && [ -n "$c1" ] && kv "$env" server_ticks "$((c1 - c0))"
	kv "$env" seconds "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')"
	kv "$env" status ok
}

# ---------------------------------------------------------------- targets
# start_server NAME SRC MNT OUT: mounts; sets SERVER_PID; returns 0 when
# mounted, 1 with the reason in $OUT/target.env otherwise.
SERVER_PID=""
start_server() {
	local name=$1 src=$2 mnt=$3 out=$4 env=$4/target.env opts cmd lacks="" i rc
	if [[ $name == peer-* ]]; then
		read -ra opts <<<"$(peer_opts "$name")"
		kv "$env" options "passthrough_hp ${opts[*]}"
		if [ -z "$PEER_BIN" ]; then
			kv "$env" status unavailable
			kv "$env" reason "$PEER_WHY"
			return 1
		fi
		cmd=("$PEER_BIN" "${opts[@]}")
	else
		read -ra opts <<<"$(target_opts "$name")"
		kv "$env" options "${opts[*]} ${common_opts[*]}"
		if [ ! -x "$serve" ]; then
			kv "$env" status unavailable
			kv "$env" reason "not available: $serve not built"
			return 1
		fi
		lacks=$(help_lacks "${opts[@]}")
		cmd=("$serve" "${opts[@]}" "${common_opts[@]}")
	fi
	mkdir -p "$mnt"
	"${cmd[@]}" "$src" "$mnt" >"$out/server.log" 2>&1 </dev/null &
	SERVER_PID=$!
	_pids+=("$SERVER_PID")
	_fuse+=("$mnt")
	for i in $(seq "$((BENCH_MOUNT_WAIT_S * 20))"); do
		# A zcfs target serves once its log says so: a data path that
		# fails after INIT (--zero-copy=on without the kernel's buffer
		# pools) has a live mount for a moment, and a target that ran on
		# it would be measured on a dying server.
		if fuse_alive "$mnt" "$SERVER_PID" &&
			{ [[ $name == peer-* ]] || grep -q 'serving .*transport=' "$out/server.log"; } &&
			kill -0 "$SERVER_PID" 2>/dev/null; then
			kv "$env" status ok
			kv "$env" pid "$SERVER_PID"
			if [[ $name == peer-* ]]; then
				kv "$env" datapath "libfuse passthrough_hp ($PEER_BIN)"
			else
				kv "$env" datapath "$(grep -v '^$' "$out/server.log" | head -n 3)"
			fi
			kv "$env" mount_type "$(awk -v m="$mnt" '$2 == m { print $3 }' /proc/self/mounts | tail -n 1)"
			return 0
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -TERM "$SERVER_PID" 2>/dev/null; sleep 0.5; kill -KILL "$SERVER_PID" 2>/dev/null
		mountpoint -q "$mnt" && { abort_fuse "$mnt"; umount -l "$mnt"; }
		wait "$SERVER_PID" 2>/dev/null
		forget_pid "$SERVER_PID"
		kv "$env" status failed
		kv "$env" reason "${cmd[0]##*/} did not mount within ${BENCH_MOUNT_WAIT_S}s: $(tail -n 2 "$out/server.log")"
		return 1
	fi
	wait "$SERVER_PID"; rc=$?
	forget_pid "$SERVER_PID"
	local why
	# The server's own reason (its first error line), not its "exiting".
	why=$(grep -m1 'level=error' "$out/server.log")
	[ -n "$why" ] || why=$(grep -v '^$' "$out/server.log" | tail -n 1)
	kv "$env" status unavailable
	if [ -n "$lacks" ] || [ $rc -eq 2 ]; then
		kv "$env" reason "not available in this build (${lacks:+--help has no $lacks; }exit $rc: $why)"
	else
		kv "$env" reason "not available on this kernel/build (exit $rc: $why)"
	fi
	return 1
}

# stop_server MNT PID OUT: unmount, wait for the server, record its exit.
stop_server() {
	local mnt=$1 pid=$2 env=$3/target.env i rc
	if mountpoint -q "$mnt"; then
		umount "$mnt" 2>/dev/null || { sleep 1; umount "$mnt" 2>/dev/null; } ||
			{ kv "$env" problem "umount $mnt failed (busy?), aborted the connection"; abort_fuse "$mnt"; umount -l "$mnt"; }
	fi
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		kv "$env" problem "the server still running 10s after umount; killed"
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null; rc=$?
	forget_pid "$pid"
	kv "$env" server_exit "$rc"
	[ $rc -ne 0 ] && kv "$env" problem "the server exited with status $rc after umount"
	return 0
}

# Targets are set up together and measured workload by workload (native,
# then every zcfs target, for one workload before the next), so that each
# ratio's two figures are taken seconds apart rather than minutes: the
# machine is shared and its load drifts.  With BENCH_REPEAT=N that rotation
# is done N times in a row per workload (round 1 of every target, then
# round 2, ...); round R > 1 is stored under the tag .rR.
declare -A T_DIR=() T_PID=() T_DEAD=()
live=()

setup_target() {
	local name=$1 out=$raw/$1 base=$work/$1 src env
	mkdir -p "$out" "$base/src"
	env=$out/target.env
	: >"$env"
	src=$base/src
	if [ "$BACKING" = tmpfs ]; then
		mount -t tmpfs -o "size=$(tmpfs_size),mode=755" "bench-$name" "$src" || die "tmpfs mount on $src"
		_tmpfs+=("$src")
	else
		backing_dir "$name"
		src=$BACKING_SRC
	fi
	T_PID[$name]=""
	T_DEAD[$name]=""
	if [ "$name" = native ]; then
		kv "$env" status ok
		kv "$env" options "$BACKING"
		T_DIR[$name]=$src
	else
		if ! start_server "$name" "$src" "$base/mnt" "$out"; then
			log "$name: $(grep '^reason=' "$env" | cut -d= -f2-)"
			[ "$BACKING" = tmpfs ] && umount "$src"
			return 0
		fi
		T_PID[$name]=$SERVER_PID
		T_DIR[$name]=$base/mnt
		log "$name: mounted (pid $SERVER_PID): $(grep '^datapath=' "$env" | cut -d= -f2- | cut -c1-120)"
	fi
	live+=("$name")
	if [ $data_selected = 1 ]; then
		log "$name: laying out $BENCH_JOBS x $BENCH_SIZE"
		# Written, not fallocated: tmpfs answers reads of fallocated,
		# never written pages from the zero page without touching
		# memory (native 1 MiB reads 21.6 vs 9.3 GB/s once written).
		# A whole write pass, not --create_only (which leaves a write
		# job's files empty: fio then fallocated them at the first
		# measured write workload).
		if ! (cd "$fio_cwd" && exec timeout -k 10 600 fio --name=bench --directory="${T_DIR[$name]}" \
			--size="$BENCH_SIZE" --numjobs="$BENCH_JOBS" --ioengine=sync --rw=write --bs=1M \
			--fallocate=none --output="$out/layout.out") 2>"$out/layout.err"; then
			T_DEAD[$name]="layout failed: $(tail -n 2 "$out/layout.err")"
			kv "$env" problem "${T_DEAD[$name]}"
			log "$name: ${T_DEAD[$name]}"
		elif [ "$(find "${T_DIR[$name]}" -maxdepth 1 -name 'bench.*.0' -type f -size +0 | wc -l)" -ne "$BENCH_JOBS" ]; then
			T_DEAD[$name]="layout: not one file per job in ${T_DIR[$name]}: $(find "${T_DIR[$name]}" -maxdepth 1 -printf "%f " | head -c 200)"
			kv "$env" problem "${T_DEAD[$name]}"
			log "$name: ${T_DEAD[$name]}"
		fi
	fi
}

measure() { # TARGET WORKLOAD [TAG [NOTE]]
	local name=$1 w=$2 tag=${3:-} note=${4:-} out=$raw/$1 tdir=${T_DIR[$1]} pid=${T_PID[$1]}
	if [ -n "${T_DEAD[$name]}" ]; then
		: >"$out/$w$tag.env"
		kv "$out/$w$tag.env" status skipped
		kv "$out/$w$tag.env" reason "skipped: ${T_DEAD[$name]}"
		return 0
	fi
	log "$w: $name${note:+ ($note)}"
	if [ "$w" = meta ]; then
		run_meta "$tdir" "$out" "$pid" "$tag" ||
			log "$name: meta failed: $(grep '^reason=' "$out/meta$tag.env" | cut -d= -f2-)"
	else
		run_fio "$tdir" "$out" "$w" "$pid" "$tag" ||
			log "$name: $w failed: $(grep '^reason=' "$out/$w$tag.env" | cut -d= -f2-)"
	fi
	if [ -n "$pid" ] && ! fuse_alive "$tdir" "$pid"; then
		T_DEAD[$name]="the server died or lost its mount during $w: $(tail -n 2 "$out/server.log")"
		kv "$out/target.env" problem "${T_DEAD[$name]}"
		log "$name: ${T_DEAD[$name]}"
	fi
}

teardown_target() {
	local name=$1
	[ -n "${T_PID[$name]}" ] && stop_server "${T_DIR[$name]}" "${T_PID[$name]}" "$raw/$name"
	if [ "$BACKING" = tmpfs ]; then
		umount "$work/$name/src" 2>/dev/null || umount -l "$work/$name/src"
	else
		rm -rf --one-file-system "$work/backing/$name"
	fi
}

# BACKING=xfs|ext4: one file system for every target, made at the first
# call on a loop device over $work/backing.img (the disk bench/results is
# on), so native and each path see the same device in the same rounds;
# BACKING_SRC: TARGET's directory on it.
backing_dir() {
	local img=$work/backing.img n=${#targets[@]}
	if [ -z "$_loop" ]; then
		truncate -s "$(( ${n:-1} * $(tmpfs_size | tr -d M) ))M" "$img" || die "image $img"
		_loop=$(losetup --find --show "$img") || die "losetup $img"
		if [ "$BACKING" = xfs ]; then mkfs.xfs -q -f "$_loop" >&2; else mkfs.ext4 -q -F -E lazy_itable_init=0 "$_loop" >&2; fi ||
			die "mkfs.$BACKING $_loop"
		mkdir -p "$work/backing"
		mount -t "$BACKING" "$_loop" "$work/backing" || die "mount $BACKING $_loop"
		log "backing: $BACKING on $_loop over $img ($(df -h --output=size "$work/backing" | tail -n 1 | tr -d ' '))"
	fi
	mkdir -p "$work/backing/$1" && chmod 755 "$work/backing/$1"
	BACKING_SRC=$work/backing/$1
}

log "targets: ${targets[*]}; workloads: ${workloads[*]}; ${BENCH_RUNTIME}s + ${BENCH_RAMP}s ramp per job; $BENCH_REPEAT round(s)"
for t in "${targets[@]}"; do
	setup_target "$t"
done
# Native is measured before and after the zcfs targets of each workload in
# each round (report: the mean, and the drift between the two as a noise
# figure; every zcfs figure is divided by the native of its own round).
bracket=0
for t in "${live[@]}"; do [ "$t" != native ] && bracket=1; done
[ -n "${want_target[native]:-}" ] || bracket=0
for w in "${workloads[@]}"; do
	for r in $(seq "$BENCH_REPEAT"); do
		rtag=""; note=""
		[ "$r" -gt 1 ] && rtag=.r$r
		[ "$BENCH_REPEAT" -gt 1 ] && note="round $r/$BENCH_REPEAT"
		for t in "${live[@]}"; do
			measure "$t" "$w" "$rtag" "$note"
		done
		[ $bracket = 1 ] && [ -n "${T_DIR[native]:-}" ] && measure native "$w" "$rtag.2" "${note:+$note, }again"
	done
done
for t in "${live[@]}"; do
	teardown_target "$t"
done
if [ "$BENCH_SCALE" = 1 ]; then
	log "scale: bench/scale.sh (SCALE_VOLUMES=${SCALE_VOLUMES:-64})"
	ZCFS_BIN=$ZCFS_BIN "$here/scale.sh" "$raw/scale" || log "scale: failed: $(grep '^reason=' "$raw/scale/scale.env" 2>/dev/null | cut -d= -f2-)"
fi
# NodePublishVolume latency through zcfs-csi serve (bench/csi_publish.sh):
# on by default (about 30 s), BENCH_CSI=0 skips it.
if [ "${BENCH_CSI:-1}" = 1 ]; then
	log "csi: bench/csi_publish.sh (CSI_VOLUMES=${CSI_VOLUMES:-20})"
	ZCFS_BIN=$ZCFS_BIN "$here/csi_publish.sh" "$raw/csi" >/dev/null || log "csi: failed: $(grep '^reason=' "$raw/csi/csi.env" 2>/dev/null | cut -d= -f2-)"
	[ -f "$raw/csi/csi.env" ] && log "csi: $(grep -E '^(csi_publish_p50_ms|csi_publish_p99_ms|csi_rss_kb)=' "$raw/csi/csi.env" | tr '\n' ' ')"
fi
kv "$info" scale "$BENCH_SCALE"
kv "$info" finished "$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# ---------------------------------------------------------------- report
if [ -f "$BENCH_RESULTS/latest.json" ]; then
	mv -f "$BENCH_RESULTS/latest.json" "$BENCH_RESULTS/previous.json"
fi
"$PYTHON" "$here/report.py" --raw "$raw" --out "$BENCH_RESULTS" \
	--goals "$here/goals.json" --previous "$BENCH_RESULTS/previous.json" || die "report.py failed"
log "wrote $BENCH_RESULTS/latest.json latest.md latest.png"
