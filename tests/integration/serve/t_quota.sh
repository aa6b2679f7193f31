#!/usr/bin/env bash
# Volume size limit (--quota-bytes): statfs shows the limit; buffered,
# O_DIRECT and fallocate writes past it get ENOSPC (after a short write)
# while everything acknowledged before stays intact; rewriting allocated
# data still works on a full volume; unlink, rename-over, truncate and an
# unlinked-but-open file give space back; hard links count once; the count
# after a restart (a fresh scan) matches the count kept by requests. Inodes
# in use (df -i) are the volume's own, with a size and with --count-inodes
# alone (zcfsd's volumes without a size), which keeps passthrough possible.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
serve_require
require_cmd python3

new_tmpdir SRC	# ext4: backing writes go through the ring
new_tmpdir MNT
new_tmpdir WORK
M=$((1024 * 1024))
LIMIT=$((8 * M))

# used_kib MNT: what statfs says is in use, in KiB
used_kib() { df --output=used -k "$1" | tail -n 1 | tr -d ' '; }
size_kib() { df --output=size -k "$1" | tail -n 1 | tr -d ' '; }
# the backing tree's allocation, hard links once, in KiB
backing_kib() { du -s -k "$SRC" | cut -f1; }
near() { local a=$1 b=$2 tol=${3:-64}; [ $((a > b ? a - b : b - a)) -le "$tol" ]; }

# data already in SOURCE counts from the start
head -c $((3 * M)) /dev/urandom >"$SRC/old"
zcfs_mount "$SRC" "$MNT" --quota-bytes=8M
check "statfs size is the limit" [ "$(size_kib "$MNT")" -eq $((LIMIT / 1024)) ]
check "existing data counted at start" near "$(used_kib "$MNT")" "$(backing_kib)"
check "the start is logged" grep -q "quota: limit=$LIMIT" "$MNT.log"

log "fill it with a buffered write"
dd if=/dev/urandom of="$MNT/fill" bs=64k count=160 2>"$WORK/dd.err" # 10 MiB asked
check "writing past the limit fails with ENOSPC" grep -q "No space left on device" "$WORK/dd.err"
sz=$(stat -c %s "$MNT/fill")
check "a partial file stays, not more than the room ($sz bytes)" [ "$sz" -gt 0 ] && [ "$sz" -le $((5 * M + 65536)) ]
check "what was written reads back as the backing file" cmp "$MNT/fill" "$SRC/fill"
check "the old data is intact" cmp "$MNT/old" "$SRC/old"
check "statfs: nothing available" [ "$(df --output=avail -k "$MNT" | tail -n 1 | tr -d ' ')" -le 64 ]
check "a new file's data is refused" bash -c "! dd if=/dev/zero of='$MNT/more' bs=4k count=1 conv=fsync status=none 2>/dev/null"
check "O_DIRECT writes are refused too" bash -c "! dd if=/dev/zero of='$MNT/more' bs=64k count=1 oflag=direct status=none 2>/dev/null"
check "fallocate past the limit is refused" bash -c "! fallocate -l 4M '$MNT/more' 2>/dev/null"
head -c 65536 /dev/urandom >"$WORK/new"
check "rewriting allocated data works when full" dd if="$WORK/new" of="$MNT/old" bs=64k count=1 conv=notrunc,fsync status=none
check "... and reads back" cmp -n 65536 "$WORK/new" "$MNT/old"
check "small files can still be created (inodes are not bytes)" touch "$MNT/empty"

log "give space back"
rm -f "$MNT/more"
check "unlink frees" bash -c "rm '$MNT/fill' && dd if=/dev/zero of='$MNT/a' bs=1M count=4 conv=fsync status=none"
check "truncate frees" bash -c "truncate -s 0 '$MNT/a' && dd if=/dev/zero of='$MNT/b' bs=1M count=4 conv=fsync status=none"
check "count matches the backing tree" near "$(used_kib "$MNT")" "$(backing_kib)"
# rename over an existing file frees the replaced one
dd if=/dev/zero of="$MNT/c" bs=1M count=1 conv=fsync status=none
check "rename over a file frees it" bash -c "mv '$MNT/c' '$MNT/b' && dd if=/dev/zero of='$MNT/d' bs=1M count=3 conv=fsync status=none"
# hard links: one inode, counted once, freed with its last name
check "hard link" ln "$MNT/d" "$MNT/d2"
check "count matches with a hard link" near "$(used_kib "$MNT")" "$(backing_kib)"
rm "$MNT/d"
check "the last link still holds the space" bash -c "! dd if=/dev/zero of='$MNT/e' bs=1M count=4 conv=fsync status=none 2>/dev/null"
rm -f "$MNT/e" "$MNT/d2"
# a file written after unlink while open gives its space back at close
python3 - "$MNT/u" <<'EOF' || check "unlinked open file" false
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.unlink(sys.argv[1])
os.write(fd, b"x" * (2 << 20))
os.fsync(fd)
os.close(fd)
EOF
sleep 0.2	# RELEASE is asynchronous to close(2)
check "count matches after an unlinked open file" near "$(used_kib "$MNT")" "$(backing_kib)"
mkdir -p "$MNT/dir/sub" && echo hi >"$MNT/dir/sub/x" && ln -s x "$MNT/dir/sub/l"
check "count matches with directories and symlinks" near "$(used_kib "$MNT")" "$(backing_kib)"

log "writers in flight together cannot overshoot"
pids=()
for i in 1 2 3 4; do dd if=/dev/zero of="$MNT/par$i" bs=1M count=4 oflag=direct status=none 2>/dev/null & pids+=($!); done
wait "${pids[@]}"	# not a bare wait: the server is a background job too
check "backing tree within the limit after 4 parallel 4M writers ($(backing_kib) KiB)" \
	[ "$(backing_kib)" -le $((LIMIT / 1024 + 64)) ]
check "count matches after parallel writers" near "$(used_kib "$MNT")" "$(backing_kib)"
rm -f "$MNT"/par*
before=$(used_kib "$MNT")
check "clean unmount" zcfs_umount "$MNT"

log "restart: a fresh scan finds the same count"
zcfs_mount "$SRC" "$MNT" --quota-bytes=8M --passthrough
check "same count after restart ($before KiB)" near "$(used_kib "$MNT")" "$before"
check "passthrough is off with a quota (its writes bypass the count)" grep -q "passthrough off" "$MNT.log"
check "clean unmount" zcfs_umount "$MNT"

log "inodes in use are the volume's own (df -i), with a size and with --count-inodes alone"
# the backing tree's inodes, hard links once, its root included
tree_inodes() { find "$SRC" -xdev -printf '%i\n' | sort -u | wc -l; }
iused() { df --output=iused "$1" | tail -n 1 | tr -d ' '; }
zcfs_mount "$SRC" "$MNT" --quota-bytes=8M
check "with a size: inodes in use = the tree's ($(tree_inodes))" [ "$(iused "$MNT")" -eq "$(tree_inodes)" ]
check "clean unmount" zcfs_umount "$MNT"
zcfs_mount "$SRC" "$MNT" --count-inodes --passthrough
n0=$(tree_inodes)
check "--count-inodes: inodes in use = the tree's ($n0), not the backing fs's ($(iused "$SRC"))" [ "$(iused "$MNT")" -eq "$n0" ]
check "--count-inodes: the size is the backing fs's" [ "$(size_kib "$MNT")" -eq "$(size_kib "$SRC")" ]
mkdir "$MNT/ic" && touch "$MNT/ic/a" "$MNT/ic/b" && ln -s a "$MNT/ic/s" && mkfifo "$MNT/ic/p" && ln "$MNT/ic/a" "$MNT/ic/a2"
check "--count-inodes: 5 new inodes counted (the hard link is not one)" [ "$(iused "$MNT")" -eq $((n0 + 5)) ]
rm "$MNT/ic/a"
check "--count-inodes: a name of a linked inode goes, the inode stays" [ "$(iused "$MNT")" -eq $((n0 + 5)) ]
mv "$MNT/ic/b" "$MNT/ic/s"
check "--count-inodes: rename over a file frees the replaced one" [ "$(iused "$MNT")" -eq $((n0 + 4)) ]
check "--count-inodes: the count matches the tree" [ "$(iused "$MNT")" -eq "$(tree_inodes)" ]
check "--count-inodes leaves kernel passthrough on" grep -q 'passthrough=on' "$MNT.log"
check "clean unmount" zcfs_umount "$MNT"
zcfs_mount "$SRC" "$MNT" --count-inodes
check "--count-inodes: a restart (fresh scan) finds the same count" [ "$(iused "$MNT")" -eq "$(tree_inodes)" ]
rm -rf "$MNT/ic"
check "--count-inodes: rm -r gives them back" [ "$(iused "$MNT")" -eq "$n0" ]
check "clean unmount" zcfs_umount "$MNT"

log "bad values"
check "--quota-bytes=1 is refused (exit 2)" bash -c "'$ZCFS_BIN/zcfs-serve' --quota-bytes=1 '$SRC' '$MNT' 2>/dev/null; [ \$? -eq 2 ]"
check "--quota-bytes=lots is refused (exit 2)" bash -c "'$ZCFS_BIN/zcfs-serve' --quota-bytes=lots '$SRC' '$MNT' 2>/dev/null; [ \$? -eq 2 ]"
finish
