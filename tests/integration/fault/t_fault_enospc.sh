#!/usr/bin/env bash
# Fault: a volume's storage is full. Its storage dir is a small tmpfs
# (8 MiB, 256 inodes); a client fills it with data and then with files:
# it gets ENOSPC both times, its server keeps running and serving (reads,
# deletes, writes once space is back), another volume of the same tenant
# keeps serving, zcfsd keeps answering, and every byte written and
# fsynced before is intact after an unpublish and a new publish.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
# zcfsd creates STORAGE_ROOT/ID only when missing: the tmpfs stands in.
mkdir -p "$STORE/t1/v1"
chmod 0711 "$STORE/t1"
mount -t tmpfs -o size=8m,nr_inodes=256,mode=0700 zcfs-enospc "$STORE/t1/v1" || fail "tmpfs"
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
create_publish v2 "$TGT/b" || fail "publish v2"
P1=$(server_pid v1)

dd if=/dev/urandom of="$TGT/a/before" bs=64k count=32 conv=fsync status=none || fail "write before"
mkdir "$TGT/a/dir" && echo small >"$TGT/a/dir/small" && sync "$TGT/a/dir/small"
sum=$(md5sum <"$TGT/a/before")

log "fill with data"
dd if=/dev/zero of="$TGT/a/fill" bs=64k count=256 conv=fsync 2>"$W/dd.err"
rc=$?
cat "$W/dd.err" | sed 's/^/# dd: /'
check "filling the volume fails (dd rc=$rc)" [ "$rc" -ne 0 ]
check "... with ENOSPC" grep -q "No space left on device" "$W/dd.err"
check "the server is the same process" test "$(server_pid v1)" = "$P1"
check "v1 still serves what was written before" bash -c "[ \"\$(md5sum <'$TGT/a/before')\" = '$sum' ]"
check "v1 still lists its directory" bash -c "ls '$TGT/a' | grep -q fill"
check "v2 keeps serving writes" bash -c "echo fine >'$TGT/b/f' && sync '$TGT/b/f' && grep -q fine '$TGT/b/f'"
check "zcfsd answers" ctlq status
check "deleting frees space" rm "$TGT/a/fill"
check "writes succeed again" bash -c "dd if=/dev/zero of='$TGT/a/after' bs=64k count=8 conv=fsync status=none"

log "fill with files (inodes)"
n=0
while [ $n -lt 400 ] && touch "$TGT/a/dir/f$n" 2>"$W/touch.err"; do n=$((n + 1)); done
sed 's/^/# create: /' "$W/touch.err"
check "creating files stops with ENOSPC after $n" grep -q "No space left on device" "$W/touch.err"
check "mkdir fails cleanly too" bash -c "! mkdir '$TGT/a/dir/d' 2>/dev/null"
check "the server survived" test "$(server_pid v1)" = "$P1"
check "stat still works" stat "$TGT/a/dir/small" >/dev/null
rm -f "$TGT/a/dir"/f*
check "files can be created again" bash -c ": >'$TGT/a/dir/again'"
check "server restarts: none" test "$(vol_field v1 restarts)" = 0

log "remount"
check "unpublish v1" ctlq volume unpublish v1 "$TGT/a"
check "publish v1 again" ctlq volume publish v1 "$TGT/a"
check "fsynced data intact after remount" bash -c "[ \"\$(md5sum <'$TGT/a/before')\" = '$sum' ]"
check "small file intact after remount" grep -q small "$TGT/a/dir/small"
check "backing file matches" bash -c "[ \"\$(md5sum <'$STORE/t1/v1/before')\" = '$sum' ]"
ctlq volume unpublish v1 "$TGT/a"
ctlq volume unpublish v2 "$TGT/b"
umount "$STORE/t1/v1" || umount -l "$STORE/t1/v1"
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
