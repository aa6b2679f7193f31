#!/usr/bin/env bash
# Publishing a target a volume already has succeeds only if the top mount
# there is that volume's own connection (zcfsd_target_same); a foreign
# mount over or instead of it is never taken for it:
#  1. a tmpfs mounted over the volume's target: publishing it again is
#     FAILED_PRECONDITION naming what is there (before: OK, publish
#     "succeeded" onto the tmpfs); unpublish leaves the tmpfs alone; once
#     the tmpfs is gone, publishing it again is OK;
#  2. another zcfs connection (a standalone zcfs-serve) mounted over it:
#     the same (before: OK, any fuse.zcfs passed);
#  3. a bind target unmounted behind zcfsd's back: publishing it again
#     is FAILED_PRECONDITION "not mounted" (before: OK with nothing
#     mounted); unpublish then publish mounts it again;
#  4. asking read-only where it is read-write stays ALREADY_EXISTS.
# Runtime: about 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
pub() { code_of ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$1\"${2:+,\"read_only\":$2}}"; }
msg() { ctl call volume.publish "{\"id\":\"v1\",\"target\":\"$1\"}" 2>/dev/null | jq -r '.error.message // "OK"'; }
top_fstype() { awk -v p="$1" '$5 == p { for (i = 7; i < NF; i++) if ($i == "-") t = $(i + 1) } END { print t }' /proc/self/mountinfo; }
conn=$(vol_field v1 conn)
echo hello >"$TGT/a/f" || fail "write f"

check "publishing the same target again is OK" test "$(pub "$TGT/a")" = OK

# 1. a tmpfs over the target
mount -t tmpfs -o size=1M tmpfs "$TGT/a" || fail "tmpfs over a"
echo mine >"$TGT/a/tmpfs-file"
check "over a tmpfs: publish again is FAILED_PRECONDITION ($(msg "$TGT/a"))" \
	test "$(pub "$TGT/a")" = FAILED_PRECONDITION
check "... the top mount is still the tmpfs" test "$(top_fstype "$TGT/a")" = tmpfs
check "... unpublish does not succeed" bash -c "! $ZCFS_BIN/zcfsctl --socket $SOCK volume unpublish v1 $TGT/a >/dev/null 2>&1"
check "... and leaves the tmpfs alone" test "$(cat "$TGT/a/tmpfs-file" 2>&1)" = mine
umount "$TGT/a" || fail "umount the tmpfs"
check "tmpfs gone: publish again is OK" test "$(pub "$TGT/a")" = OK
check "... the volume serves there" test "$(cat "$TGT/a/f" 2>&1)" = hello

# 2. another zcfs connection over the target
mkdir -p "$W/other"
echo other >"$W/other/g"
zcfs_mount "$W/other" "$TGT/a"
check "another zcfs mount on top ($(awk -v p="$TGT/a" '$5 == p {print $3}' /proc/self/mountinfo | tail -n 1), ours 0:$conn)" \
	test "$(cat "$TGT/a/g" 2>&1)" = other
check "over another zcfs connection: publish again is FAILED_PRECONDITION ($(msg "$TGT/a"))" \
	test "$(pub "$TGT/a")" = FAILED_PRECONDITION
zcfs_umount "$TGT/a" || log "standalone server exit status $?"
check "it gone: publish again is OK" test "$(pub "$TGT/a")" = OK

# 3. a bind target unmounted behind zcfsd's back
ctlq volume publish v1 "$TGT/b" || fail "bind v1 at b"
umount "$TGT/b" || fail "umount b"
check "b unmounted externally: publish again is FAILED_PRECONDITION ($(msg "$TGT/b"))" \
	test "$(pub "$TGT/b")" = FAILED_PRECONDITION
check "... unpublish b succeeds" ctlq volume unpublish v1 "$TGT/b"
check "... then publish b mounts it again" bash -c "$ZCFS_BIN/zcfsctl --socket $SOCK volume publish v1 $TGT/b >/dev/null && test \"\$(cat $TGT/b/f)\" = hello"

# 4. read-only asked where it is read-write
check "read-only asked at a read-write target: ALREADY_EXISTS" test "$(pub "$TGT/a" true)" = ALREADY_EXISTS

ctlq volume unpublish v1 "$TGT/b"
ctlq volume unpublish v1 "$TGT/a"
check "no zcfs mount left under W" bash -c "! awk '\$3 == \"fuse.zcfs\"' /proc/self/mounts | grep -q ' $W/'"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
