#!/usr/bin/env bash
# A volume with many more files than the server may hold descriptors:
# zcfs-serve keeps one O_PATH fd per inode the kernel knows, and with the
# exclusive cache the kernel forgets inodes only under memory pressure.
# Run with RLIMIT_NOFILE 256, the server must ask the kernel to drop
# unused inodes (FUSE_NOTIFY_PRUNE) instead of failing with EMFILE:
# 2,000 files created, listed, read and checked, open files and buffered
# writes surviving the pruning, and the fd count staying under the limit.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
require_fuse
require_cmd prlimit
need_serve
NOFILE=256

new_tmpdir SRC 512M
new_tmpdir MNT
new_tmpdir OUT

run_mode() {
	local label=$1 errs n fds bad; shift
	rm -rf "${SRC:?}"/*
	ZCFS_SERVE_NOFILE=$NOFILE zcfs_mount "$SRC" "$MNT" --cache=exclusive "$@"
	log "$label: server $ZCFS_PID, RLIMIT_NOFILE $NOFILE"
	echo held >"$MNT/held" || fail "$label: create held"
	exec {held}<>"$MNT/held"
	errs=0
	for d in $(seq 0 39); do
		mkdir "$MNT/d$d" || errs=$((errs + 1))
		for f in $(seq 0 49); do
			printf 'file %s/%s\n' "$d" "$f" >"$MNT/d$d/f$f" || errs=$((errs + 1))
		done
	done
	check "$label: 40 dirs x 50 files created without an error ($errs)" [ "$errs" -eq 0 ]
	n=$(find "$MNT" -type f 2>"$OUT/find.err" | wc -l)
	check "$label: find lists all 2001 files ($n)" [ "$n" -eq 2001 ]
	check "$label: find reported no error" test ! -s "$OUT/find.err"
	[ -s "$OUT/find.err" ] && head -n 3 "$OUT/find.err" | sed 's/^/# /'
	errs=0
	for d in $(seq 0 39); do
		for f in 0 17 49; do
			[ "$(cat "$MNT/d$d/f$f" 2>/dev/null)" = "file $d/$f" ] || errs=$((errs + 1))
		done
	done
	check "$label: files read back after pruning, right contents ($errs bad)" [ "$errs" -eq 0 ]
	check "$label: ls -lR stats everything" bash -c "ls -lR '$MNT' >/dev/null"
	check "$label: a file held open across the pruning still reads" \
		test "$(head -n 1 <&"$held")" = held
	printf 'late\n' >&"$held"
	exec {held}>&-
	fds=$(ls "/proc/$ZCFS_PID/fd" | wc -l)
	check "$label: server holds $fds fds, under the limit $NOFILE" [ "$fds" -lt "$NOFILE" ]
	check "$label: the server pruned (log)" grep -q "descriptor pressure" "$MNT.log"
	check "$label: no request failed for want of descriptors" bash -c "! grep -q 'out of descriptors (' '$MNT.log'"
	grep 'out of descriptors (' "$MNT.log" | head -n 3 | sed 's/^/# /'
	(cd "$MNT" && md5sum d*/f* >"$OUT/sums" 2>"$OUT/cat.err")
	check "$label: reading every file through the mount: no error" test ! -s "$OUT/cat.err"
	[ -s "$OUT/cat.err" ] && head -n 3 "$OUT/cat.err" | sed 's/^/# /'
	zcfs_umount "$MNT" || fail "$label: server exit"
	bad=$(cd "$SRC" && md5sum -c --quiet "$OUT/sums" 2>&1)
	check "$label: what the mount showed is what SOURCE holds after unmount" [ -z "$bad" ]
	[ -n "$bad" ] && echo "$bad" | head -n 3 | sed 's/^/# /'
	check "$label: the held file got its late write" test "$(cat "$SRC/held")" = "held
late"
}

run_mode "exclusive (writeback)"
run_mode "exclusive, no writeback" --no-writeback
if [ "$ZCFS_TRANSPORT" = uring ]; then
	run_mode "passthrough" --passthrough
fi
finish
