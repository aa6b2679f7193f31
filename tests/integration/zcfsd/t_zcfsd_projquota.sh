#!/usr/bin/env bash
# Kernel-enforced volume sizes (project quotas, lifecycle/size.c) on XFS
# mounted prjquota and on ext4 with quota,project mounted prjquota, both
# on loop devices (backing_fs.sh). Per file system:
# - a passthrough tenant's sized volume: volume get says project-quota and
#   passthrough on; df / df -i show the project's limits; writes through
#   passthrough stop at the size (within one MiB, nothing refused below)
#   and everything written reads back intact;
# - through the server (a tenant without passthrough): dd, fallocate, a
#   file extended by truncate then written, mmap writes: none gets past
#   the size;
# - two volumes of one tenant do not borrow each other's space; a link or
#   rename across them is EXDEV;
# - volume.resize up while a writer waits on a full volume: it goes on to
#   the new size;
# - zcfsd killed between a volume's project id and its limits: the limits
#   are found again at its restart (same id);
# - delete removes the project's limits;
# - two zcfsd on one file system, creating at once: no project id twice.
# Exit 77 on a kernel without project quotas (this project's CI host:
# CONFIG_XFS_QUOTA, CONFIG_QFMT_V2); run it in the 7.3 guest:
#   scripts/guest.sh --modules xfs,loop,quota_v2 -- tests/integration/zcfsd/t_zcfsd_projquota.sh
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
. "$(dirname "$0")/../helpers/backing_fs.sh"
zcfsd_require python3
: "${PROJQUOTA_FS:=xfs ext4}"
: "${PROJQUOTA_BIG:=1G}"	# the passthrough volume's size
M=$((1024 * 1024))
to_bytes() { numfmt --from=iec "$1"; }

# pattern_write FILE MAXBYTES: 1 MiB blocks, each stamped with its index,
# written O_DIRECT (a refusal is the write's, not a later writeback's)
# until ENOSPC/EDQUOT or MAXBYTES; prints the bytes written.
pattern_write() {
	python3 - "$1" "$2" <<-'PY'
	import errno, mmap, os, sys
	f, cap = sys.argv[1], int(sys.argv[2])
	fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
	blk = 1 << 20
	n = os.fstat(fd).st_size // blk * blk
	buf = mmap.mmap(-1, blk)
	try:
	    while n < cap:
	        buf[:] = (b"%016d" % (n // blk)) * (blk // 16)
	        w = os.pwrite(fd, buf, n)
	        n += w
	        if w < blk:
	            break
	except OSError as e:
	    if e.errno not in (errno.ENOSPC, errno.EDQUOT):
	        raise
	print(os.fstat(fd).st_size)
	PY
}
# pattern_verify FILE: every full block holds its index.
pattern_verify() {
	python3 - "$1" <<-'PY'
	import sys
	blk, i = 1 << 20, 0
	with open(sys.argv[1], "rb") as f:
	    while True:
	        b = f.read(blk)
	        if len(b) < blk:
	            break
	        if b != (b"%016d" % i) * (blk // 16):
	            sys.exit("block %d differs" % i)
	        i += 1
	print(i)
	PY
}
used_kib() { du -s -k "$1" | cut -f1; }
df_kib() { df --output="$1" -k "$2" | tail -n 1 | tr -d ' '; }

policy() {	# ROOT
	cat >"$POLICY" <<-JSON
	{"admin_group": "0", "defaults": {"queue_depth": 4, "max_write": "128K", "transport": "auto"},
	 "tenants": [
	  {"name": "pt", "uid": 2001, "gid": 2001, "storage_root": "$1/pt", "allowed_target_prefixes": ["$TGT"],
	   "memlock_budget": "64M", "size_enforcement": "kernel",
	   "data_paths": {"io_uring": true, "passthrough": true}},
	  {"name": "srv", "uid": 2002, "gid": 2002, "storage_root": "$1/srv", "allowed_target_prefixes": ["$TGT"],
	   "memlock_budget": "64M", "data_paths": {"io_uring": true}}
	 ]}
	JSON
}

big_volume() {	# TYPE ROOT
	local type=$1 root=$2 size n got sum inodes
	size=$(to_bytes "$PROJQUOTA_BIG")
	check "$type: publish a $PROJQUOTA_BIG passthrough volume" ctlq volume create "b$type" --tenant pt --size "$PROJQUOTA_BIG" --transport "$ZCFS_TRANSPORT"
	ctlq volume publish "b$type" "$TGT/b$type" || { show_zcfsd_log; fail "publish b$type"; }
	check "$type: size_enforcement project-quota" test "$(vol_field "b$type" size_enforcement)" = project-quota
	wait_for "passthrough on" 5 bash -c "[ \"\$(\"$ZCFS_BIN/zcfsctl\" --socket '$SOCK' volume get b$type | jq -r .volume.passthrough.state)\" = on ]"
	check "$type: passthrough on" test "$(vol_field "b$type" passthrough.state)" = on
	check "$type: the server does not count" bash -c "! tr '\\0' ' ' </proc/$(server_pid "b$type")/cmdline | grep -q -- '--quota-bytes\|--count-inodes'"
	check "$type: df shows the size ($(df_kib size "$TGT/b$type") KiB)" test "$(df_kib size "$TGT/b$type")" = $((size / 1024))
	# the limit, or the file system's own inodes where it has fewer (ext4)
	inodes=$(( size / 4096 < $(df_kib itotal "$root") ? size / 4096 : $(df_kib itotal "$root") ))
	check "$type: df -i shows the inode limit ($(df_kib itotal "$TGT/b$type"), want $inodes)" test "$(df_kib itotal "$TGT/b$type")" = "$inodes"
	n=$(pattern_write "$TGT/b$type/data" $((size + 64 * M)))
	log "$type: wrote $n bytes into the $size-byte volume"
	check "$type: writes stop at the size: nothing past it ($n <= $size)" test "$n" -le "$size"
	check "$type: ... and nothing under it refused ($n >= size - 1 MiB)" test "$n" -ge $((size - M))
	check "$type: the file's data went by passthrough (registered $(vol_field "b$type" passthrough.registered))" \
		test "$(vol_field "b$type" passthrough.registered)" -ge 1
	echo 3 >/proc/sys/vm/drop_caches
	got=$(pattern_verify "$TGT/b$type/data")
	check "$type: every block written reads back ($got blocks)" test "$got" = $((n / M))
	check "$type: df shows it used ($(df_kib used "$TGT/b$type") KiB)" test "$(df_kib used "$TGT/b$type")" -ge $(((n - M) / 1024))
	sum=$(used_kib "$root/pt/b$type")
	check "$type: the backing storage holds no more than the size ($sum KiB)" test "$sum" -le $((size / 1024 + 64))
	rm -f "$TGT/b$type/data"
	ctlq volume unpublish "b$type" "$TGT/b$type"
	ctlq volume delete "b$type"
}

# ENOSPC/EDQUOT through the server: each way of allocating
server_paths() {	# TYPE ROOT
	local type=$1 root=$2 v=s$1 n
	ctlq volume create "$v" --tenant srv --size 32M --transport "$ZCFS_TRANSPORT"
	ctlq volume publish "$v" "$TGT/$v" || { show_zcfsd_log; fail "publish $v"; }
	check "$type: server volume: project-quota, passthrough off-policy" \
		test "$(vol_field "$v" size_enforcement)/$(vol_field "$v" passthrough.state)" = project-quota/off-policy
	dd if=/dev/zero of="$TGT/$v/dd" bs=1M count=64 oflag=direct 2>"$W/dd.err"
	check "$type: dd past 32M fails" grep -q "No space left\|quota exceeded" "$W/dd.err"
	n=$(stat -c %s "$TGT/$v/dd")
	check "$type: dd got up to the size ($n)" test "$n" -ge $((31 * M)) -a "$n" -le $((32 * M))
	rm -f "$TGT/$v/dd"
	check "$type: fallocate of 40M fails" bash -c "! fallocate -l 40M '$TGT/$v/fa' 2>/dev/null"
	check "$type: fallocate of 16M succeeds" fallocate -l 16M "$TGT/$v/fa"
	truncate -s 64M "$TGT/$v/tr"
	check "$type: a file extended by truncate then written fails past the room" \
		bash -c "! dd if=/dev/zero of='$TGT/$v/tr' bs=1M count=64 conv=notrunc,fsync status=none 2>/dev/null"
	rm -f "$TGT/$v/tr" "$TGT/$v/fa"
	python3 - "$TGT/$v/mm" <<-'PY' >"$W/mmap.out" 2>&1
	import mmap, os, sys
	fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
	os.ftruncate(fd, 64 << 20)
	m = mmap.mmap(fd, 64 << 20)
	for off in range(0, 64 << 20, 4096):
	    m[off:off + 4096] = b"m" * 4096
	m.flush()
	print("no error")
	PY
	log "$type: mmap writes of 64M into 32M: exit $? $(tail -n 1 "$W/mmap.out")"
	check "$type: mmap writes do not get past the size" test "$(used_kib "$root/srv/$v")" -le $((32 * 1024 + 64))
	check "$type: ... and are refused somewhere" bash -c "! grep -q 'no error' '$W/mmap.out'"
	rm -f "$TGT/$v/mm"
	check "$type: after removing everything a 16M write fits" dd if=/dev/zero of="$TGT/$v/ok" bs=1M count=16 conv=fsync status=none
	rm -f "$TGT/$v/ok"
	ctlq volume unpublish "$v" "$TGT/$v"
	ctlq volume delete "$v"
}

two_volumes() {	# TYPE ROOT
	local type=$1 a=x$1 b=y$1 n pid
	for v in $a $b; do
		ctlq volume create "$v" --tenant srv --size 32M --transport "$ZCFS_TRANSPORT"
		ctlq volume publish "$v" "$TGT/$v" || fail "publish $v"
	done
	n=$(pattern_write "$TGT/$a/f" $((64 * M)))
	check "$type: $a stops at 32M ($n)" test "$n" -le $((32 * M))
	n=$(pattern_write "$TGT/$b/f" $((64 * M)))
	check "$type: $b still gets its own 32M ($n), nothing borrowed" test "$n" -ge $((31 * M)) -a "$n" -le $((32 * M))
	check "$type: hard link across volumes: EXDEV" bash -c "ln '$TGT/$a/f' '$TGT/$b/l' 2>&1 | grep -q 'cross-device'"
	check "$type: rename across volumes: EXDEV" python3 -c "
import os, errno, sys
try:
    os.rename('$TGT/$a/f', '$TGT/$b/r')
except OSError as e:
    sys.exit(0 if e.errno == errno.EXDEV else 1)
sys.exit(1)"
	log "$type: resize $a to 48M while a writer waits on it"
	python3 - "$TGT/$a/f" <<-'PY' >"$W/writer.out" 2>&1 &
	import errno, mmap, os, sys, time
	fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
	buf = mmap.mmap(-1, 1 << 20)
	deadline = time.time() + 30
	while time.time() < deadline:
	    try:
	        os.pwrite(fd, buf, os.fstat(fd).st_size)
	    except OSError as e:
	        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
	            raise
	        if os.fstat(fd).st_size >= 47 << 20:
	            break
	        time.sleep(0.2)
	print(os.fstat(fd).st_size)
	PY
	pid=$!
	sleep 2
	check "$type: volume resize $a 48M" ctlq volume resize "$a" 48M
	check "$type: df shows 48M" test "$(df_kib size "$TGT/$a")" = $((48 * 1024))
	wait "$pid"
	n=$(tail -n 1 "$W/writer.out")
	check "$type: the writer went on to the new size ($n)" test "$n" -ge $((47 * M)) -a "$n" -le $((48 * M))
	for v in $a $b; do ctlq volume unpublish "$v" "$TGT/$v"; ctlq volume delete "$v"; done
}

# Two zcfsd (state dirs and policies of their own) on one file system
# create and publish sized volumes at the same time, each holding an id
# 300 ms between choosing and setting it: every volume gets an id of its
# own (its directory carries it) and its own limit. Before the claim was
# checked on the file system both zcfsd picked the same ids.
two_daemons() {	# TYPE ROOT
	local type=$1 root=$2 i ids dirs
	local W2=$W/z2 SOCK2=$W/z2/zcfsd.sock
	mkdir -p "$W2"
	sed "s|\"name\": \"pt\"|\"name\": \"pt2\"|; s|$root/pt\"|$root/pt2\"|; s|$root/srv\"|$root/srv2\"|" "$POLICY" >"$W2/policy.json"
	zcfsd_kill9
	ZCFSD_TEST_PROJID_DELAY_MS=300 zcfsd_start
	ZCFSD_TEST_PROJID_DELAY_MS=300 "$ZCFS_BIN/zcfsd" --policy "$W2/policy.json" --state-dir "$W2/state" \
		--socket "$SOCK2" --serve "$ZCFS_BIN/zcfs-serve" --foreground 2>>"$W2/zcfsd.log" &
	Z2=$!
	_zcfs_pids+=("$Z2")
	wait_for "the second zcfsd answers" 10 bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK2' status >/dev/null 2>&1"
	for i in 1 2 3 4; do
		( ctlq volume create "d1$type$i" --tenant pt --size 8M --transport "$ZCFS_TRANSPORT" &&
		  ctlq volume publish "d1$type$i" "$TGT/d1$type$i" ) &
		( "$ZCFS_BIN/zcfsctl" --socket "$SOCK2" volume create "d2$type$i" --tenant pt2 --size 16M \
			--transport "$ZCFS_TRANSPORT" >/dev/null &&
		  "$ZCFS_BIN/zcfsctl" --socket "$SOCK2" volume publish "d2$type$i" "$TGT/d2$type$i" >/dev/null ) &
	done
	wait_jobs() { local j; for j in $(jobs -p); do [ "$j" = "$Z2" ] || [ "$j" = "$ZCFSD_PID" ] || wait "$j"; done; }
	wait_jobs
	ids=$(for i in 1 2 3 4; do
		echo "d1$type$i $(vol_field "d1$type$i" project_id)"
		echo "d2$type$i $("$ZCFS_BIN/zcfsctl" --socket "$SOCK2" volume get "d2$type$i" | jq -r .volume.project_id)"
	done)
	log "$type: project ids: $(tr '\n' ' ' <<<"$ids")"
	check "$type: 8 volumes of two zcfsd, all with a project id" test "$(awk '$2 > 0' <<<"$ids" | wc -l)" = 8
	check "$type: no project id twice" test "$(awk '{print $2}' <<<"$ids" | sort -u | wc -l)" = 8
	dirs=$(for i in 1 2 3 4; do lsattr -pd "$root/pt/d1$type$i" "$root/pt2/d2$type$i"; done 2>/dev/null | awk '{print $1}' | sort -u | wc -l)
	check "$type: 8 storage directories, 8 project ids on them" test "$dirs" = 8
	check "$type: each volume has its own limit (8M / 16M)" bash -c \
		"[ \$(df --output=size -k '$TGT/d1${type}1' | tail -n 1) = 8192 ] && [ \$(df --output=size -k '$TGT/d2${type}1' | tail -n 1) = 16384 ]"
	for i in 1 2 3 4; do
		ctlq volume unpublish "d1$type$i" "$TGT/d1$type$i"; ctlq volume delete "d1$type$i"
		"$ZCFS_BIN/zcfsctl" --socket "$SOCK2" volume unpublish "d2$type$i" "$TGT/d2$type$i" >/dev/null
		"$ZCFS_BIN/zcfsctl" --socket "$SOCK2" volume delete "d2$type$i" >/dev/null
	done
	kill -KILL "$Z2" 2>/dev/null; wait "$Z2" 2>/dev/null
	zcfsd_kill9
	zcfsd_start
}

crash_between() {	# TYPE ROOT
	local type=$1 root=$2 v=k$1 id
	zcfsd_kill9
	ZCFSD_TEST_KILL_AFTER_PROJID=1 zcfsd_start
	ctlq volume create "$v" --tenant pt --size 24M --transport "$ZCFS_TRANSPORT"
	ctlq volume publish "$v" "$TGT/$v"
	wait_for "zcfsd killed itself between the id and the limits" 5 bash -c "! kill -0 $ZCFSD_PID 2>/dev/null"
	id=$(jq -r ".volumes[] | select(.id == \"$v\") | .project_id" "$STATE/state.json")
	check "$type: the project id was in state.json before it was set ($id)" test "$id" -gt 0
	zcfsd_kill9
	zcfsd_start
	check "$type: the restart logged the limits set again" grep -q "event=size-readopt volume=$v project_id=$id" "$W/zcfsd.log"
	check "$type: the storage directory shows the limit at once ($(df_kib size "$root/pt/$v") KiB)" test "$(df_kib size "$root/pt/$v")" = $((24 * 1024))
	check "$type: publish after the crash" ctlq volume publish "$v" "$TGT/$v"
	check "$type: same project id ($(vol_field "$v" project_id))" test "$(vol_field "$v" project_id)" = "$id"
	n=$(pattern_write "$TGT/$v/f" $((64 * M)))
	check "$type: and it is enforced ($n)" test "$n" -le $((24 * M))
	ctlq volume unpublish "$v" "$TGT/$v"
	ctlq volume delete "$v"
	check "$type: delete released the project (storage gone)" test ! -e "$root/pt/$v"
}

zcfsd_env 64M true
for type in $PROJQUOTA_FS; do
	backing_fs_require "$type"
	backing_fs_mount "$type" "$W/root-$type" 2G quota
	backing_quota_require
	policy "$W/root-$type"
	zcfsd_start
	big_volume "$type" "$W/root-$type"
	server_paths "$type" "$W/root-$type"
	two_volumes "$type" "$W/root-$type"
	two_daemons "$type" "$W/root-$type"
	crash_between "$type" "$W/root-$type"
	zcfsd_kill9
	backing_fs_umount "$W/root-$type"
done
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
