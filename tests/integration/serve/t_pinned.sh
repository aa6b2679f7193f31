#!/usr/bin/env bash
# --print-pinned against what a running server really pins.
#
# The io_uring transport pins, per queue: its ring (rings region with the
# CQE and SQ index arrays, and the 128-byte SQE array; kernel memory that
# io_uring charges to the uid of an unprivileged creator) and one mlocked
# mapping of entry headers and payload buffers. Of a running server we read
# VmLck (the mlocked buffers) and the sizes of its anon_inode:[io_uring]
# mappings (exactly the kernel's page-rounded ring regions), and require
# their sum to equal the printed figure within TOLERANCE bytes (default 0:
# both come from the same page-rounded arithmetic, so any difference is a
# bug). On /dev/fuse the figure must be 0 and nothing may be locked.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
serve_require
TOLERANCE=${TOLERANCE:-0}
S=$ZCFS_BIN/zcfs-serve
# AddressSanitizer turns mlock() into a no-op: nothing to measure there.
ldd "$S" 2>/dev/null | grep -q libasan && skip "ASan build: AddressSanitizer ignores mlock(), VmLck cannot be measured"

if [ "$ZCFS_TRANSPORT" = uring ]; then
	param=/sys/module/fuse/parameters/enable_uring
	[ -e "$param" ] || skip "kernel has no FUSE-over-io_uring ($param missing)"
	[ "$(cat "$param")" = Y ] || skip "enable_uring=N (echo Y > $param as root)"
fi

new_tmpdir SRC 64M
new_tmpdir MNT

# measured PID: VmLck plus the io_uring mappings, in bytes
measured() {
	local pid=$1 lck start end total=0 range
	lck=$(awk '/^VmLck:/ { print $2 * 1024 }' "/proc/$pid/status")
	while read -r range _ _ _ _ path; do
		[ "$path" = "anon_inode:[io_uring]" ] || continue
		start=${range%-*} end=${range#*-}
		total=$((total + 16#$end - 16#$start))
	done <"/proc/$pid/maps"
	echo "$((lck + total)) $lck $total"
}

# one_config OPTS...: figure printed vs. figure measured for these options
one_config() {
	local printed got lck rings diff
	printed=$("$S" --print-pinned --transport="$ZCFS_TRANSPORT" "$@" "$SRC" "$MNT") ||
		fail "--print-pinned $* failed"
	check "--print-pinned $* prints a number ($printed)" eval '[[ $printed =~ ^[0-9]+$ ]]'
	check "--print-pinned mounted nothing" eval '! is_mounted "$MNT"'
	zcfs_mount "$SRC" "$MNT" "$@"
	# Touch the mount so every queue saw the ring come up.
	echo data >"$MNT/f" && cat "$MNT/f" >/dev/null
	read -r got lck rings < <(measured "$ZCFS_PID")
	log "options '$*': printed $printed, measured $got (VmLck $lck + io_uring maps $rings)"
	diff=$((printed - got)); diff=${diff#-}
	check "pinned figure within $TOLERANCE bytes of the measured $got ($*)" [ "$diff" -le "$TOLERANCE" ]
	if [ "$ZCFS_TRANSPORT" = uring ]; then
		check "server runs on io_uring ($*)" grep -q "transport=uring" "$MNT.log"
		check "figure is not 0 on io_uring" [ "$printed" -gt 0 ]
	else
		check "figure is 0 on /dev/fuse" [ "$printed" -eq 0 ]
	fi
	rc=0; umount_wait "$MNT" || rc=$?
	check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
	[ "$_zcfs_failed" -eq 0 ] || show_log "$MNT"
}

one_config
one_config --queue-depth=3 --max-write=256K
one_config --queue-depth=20 --max-write=64K

# The kernel enforces the grant: an unprivileged server (tenant uid, no
# CAP_IPC_LOCK) whose RLIMIT_MEMLOCK is the printed figure locks all of
# it; one page less and the kernel refuses the lock (the server then runs
# with unlocked buffers, pinning nothing, and says so).
grant_run() {
	local limit=$1 pid lck
	"$ZCFS_TESTBIN/mountfd" "$SRC" "$MNT" prlimit --memlock="$limit" \
		setpriv --reuid=1600 --regid=1600 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$S" --foreground --fd=3 --ownership=xattr --transport=uring --queue-depth=2 \
		--max-write=256K "$SRC" 2>"$MNT.log" &
	pid=$!
	_zcfs_pids+=("$pid")
	_zcfs_mounts+=("$MNT")
	for _ in $(seq 100); do grep -q "serving" "$MNT.log" 2>/dev/null && break; sleep 0.05; done
	lck=$(awk '/^VmLck:/ { print $2 * 1024 }' "/proc/$pid/status" 2>/dev/null)
	umount "$MNT" 2>/dev/null || umount -l "$MNT"
	wait "$pid" 2>/dev/null
	echo "${lck:-none}"
}
if [ "$ZCFS_TRANSPORT" = uring ]; then
	chown 1600:1600 "$SRC"
	fig=$("$S" --print-pinned --transport=uring --queue-depth=2 --max-write=256K "$SRC" "$MNT")
	lck=$(grant_run "$fig")
	check "memlock = figure ($fig): the server locks its buffers (VmLck $lck)" \
		eval '[[ $lck =~ ^[0-9]+$ ]] && [ "$lck" -gt 0 ]'
	# mlock is checked against the process's own locked pages (the rings
	# are charged to the uid apart): a page less than the buffers is refused.
	limit=$(( ${lck:-4096} - 4096 ))
	lck2=$(grant_run "$limit")
	check "memlock a page below the buffers: the kernel refuses what exceeds it (VmLck $lck2 <= $limit < $lck)" \
		eval '[[ $lck2 =~ ^[0-9]+$ ]] && [ "$lck2" -le "$limit" ] && [ "$lck2" -lt "$lck" ]'
	check "... and the server says so" grep -q "not locked" "$MNT.log"
fi
finish
