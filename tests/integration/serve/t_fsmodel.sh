#!/usr/bin/env bash
# Randomized content model check (fsmodel) through a zcfs mount, then the
# same model compared against the backing directory after unmount and again
# through a fresh mount of the same SOURCE.
# FSMODEL_SEED / FSMODEL_OPS override the defaults (fixed seed, 20000 ops).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
is_native || require_fuse
need_serve
FSMODEL=$(need_testbin fsmodel)
seed=${FSMODEL_SEED:-20240611}
ops=${FSMODEL_OPS:-20000}

new_tmpdir SRC 1G
new_tmpdir MNT
new_tmpdir WORK
chmod 777 "$WORK"

mount_or_native "$SRC" "$MNT"
mkdir "$MNT/root" "$MNT/user"
chown 1001:1001 "$MNT/user"

log "run 1: root, seed $seed, $ops ops, 6 files"
check "fsmodel as root" timeout 120 "$FSMODEL" --seed "$seed" --ops "$ops" \
	--dump "$WORK/root.dump" "$MNT/root"
log "run 2: uid 1001, 12 files of at most 256 KiB, many descriptors"
check "fsmodel as uid 1001" timeout 120 setpriv --reuid=1001 --regid=1001 --clear-groups -- \
	"$FSMODEL" --seed $((seed + 1)) --ops $((ops / 2)) --files 12 --max-size 262144 \
	--max-fds 40 --dump "$WORK/user.dump" "$MNT/user"

rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
check "mount gone" eval '! is_mounted "$MNT"'

log "backing directory against the model"
check "backing root/ matches model" "$FSMODEL" --verify-only --dump "$WORK/root.dump" "$SRC/root"
check "backing user/ matches model" "$FSMODEL" --verify-only --dump "$WORK/user.dump" "$SRC/user"
bad_owner=$(find "$SRC/user" -mindepth 1 ! -uid 1001 -printf '%P ')
check "files created by uid 1001 are owned by 1001 on the backing store ($bad_owner)" [ -z "$bad_owner" ]

log "remount and verify through the mount"
mount_or_native "$SRC" "$MNT"
check "remounted root/ matches model" "$FSMODEL" --verify-only --dump "$WORK/root.dump" "$MNT/root"
check "remounted user/ matches model" setpriv --reuid=1001 --regid=1001 --clear-groups -- \
	"$FSMODEL" --verify-only --dump "$WORK/user.dump" "$MNT/user"
rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after second umount (rc=$rc)" [ "$rc" -eq 0 ]
[ "$_zcfs_failed" -eq 0 ] || show_log "$MNT"
finish
