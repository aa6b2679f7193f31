#!/usr/bin/env bash
# A connection number (the anonymous device minor of a FUSE superblock)
# and a mount id are handed to the next mount anywhere once a volume's
# last mount is gone; zcfsd must never take that mount for the volume's
# (docs/security.md "Unmounting"). The volume's only target is unmounted
# behind zcfsd's back while zcfsd is stopped, a standalone zcfs-serve
# (fuse.zcfs, root) is mounted at once and gets the freed number; then
# zcfsd goes on, sees the connection end and unmounts the volume's
# targets: the standalone mount stays and serves (before: zcfsd found it
# by the number, "event=unmount-moved ... found_at=" it, and unmounted it;
# seen in an xfstests run beside another engineer's standalone mounts).
# Runtime: about 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
conn=$(vol_field v1 conn)
mkdir -p "$W/other/src" "$W/other/mnt"
echo other >"$W/other/src/g"
kill -STOP "$ZCFSD_PID"
umount -i "$TGT/a" || { kill -CONT "$ZCFSD_PID"; fail "umount -i a"; }
zcfs_mount "$W/other/src" "$W/other/mnt"
other=$(awk -v p="$W/other/mnt" '$5 == p { print $3 }' /proc/self/mountinfo | tail -n 1)
kill -CONT "$ZCFSD_PID"
[ "$other" = "0:$conn" ] ||
	skip "the standalone mount got $other, not the freed 0:$conn (another mount on the machine took it)"
log "the standalone mount has the volume's old connection number 0:$conn"
check "zcfsd sees the volume's connection end" \
	wait_for "connection-aborted" 10 grep -q "event=connection-aborted volume=v1" "$W/zcfsd.log"
check "... and drops its target" wait_for "targets dropped" 5 test "$(vol_field v1 'targets | length')" = 0
sleep 0.5
check "the standalone mount is still mounted" mountpoint -q "$W/other/mnt"
check "... and serves" test "$(cat "$W/other/mnt/g" 2>&1)" = other
check "zcfsd never took it for the volume's" bash -c "! grep -q 'found_at=$W/other/mnt' '$W/zcfsd.log'"
check "publish v1 again" ctlq volume publish v1 "$TGT/a"
check "unpublish v1" ctlq volume unpublish v1 "$TGT/a"
check "the standalone mount is still there after that" test "$(cat "$W/other/mnt/g" 2>&1)" = other
zcfs_umount "$W/other/mnt" || log "standalone server exit status $?"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
