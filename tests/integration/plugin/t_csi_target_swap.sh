#!/usr/bin/env bash
# zcfs-csi removes only the target directory it made, never through a
# symlink (issue 27): a tenant who can write a parent of its target
# publishes at .../csi/sw/p1, swaps sw for a symlink to a directory
# outside every allowed prefix that holds a p1 of its own, and
# unpublishes. zcfsd unmounts the mount where it really is; the plugin
# must leave the outside p1 alone (before: rmdir(target) followed the
# symlink, as root). Checked for a known volume (do_unpublish) and for a
# volume zcfsd no longer knows (the unknown-volume branch). About 5 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require setpriv
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"

zcfsd_env 64M true
CSISTATE=$W/state/csi-plugin
zcfsd_start
csi() {	# METHOD JSON: OUT, RC
	OUT=$(printf '%s' "$2" | "$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$CSISTATE" "$1" \
		2>>"$W/csi.err")
	RC=$?
}
pubreq() {
	jq -nc --arg id "$1" --arg t "$2" --arg tr "$ZCFS_TRANSPORT" \
		'{volume_id: $id, target_path: $t, readonly: false,
		  volume_capability: {mount: {fs_type: ""}, access_mode: {mode: "SINGLE_NODE_WRITER"}},
		  volume_context: {tenant: "t1", transport: $tr}}'
}
unpubreq() { jq -nc --arg id "$1" --arg t "$2" '{volume_id: $id, target_path: $t}'; }
tenant() { as_user "$TENANT_UID" "$@"; }

# The tenant owns .../csi: it may rename and replace what is in it.
mkdir -p "$TGT/a/csi" "$W/outside/p1" "$W/outside2/p1"
chown "$TENANT_UID:$TENANT_UID" "$TGT/a/csi"
tenant mkdir "$TGT/a/csi/sw" "$TGT/a/csi/sx"

# 1. known volume: do_unpublish
csi NodePublishVolume "$(pubreq v1 "$TGT/a/csi/sw/p1")"
check "publish v1 at csi/sw/p1 ($OUT)" test "$RC" -eq 0
check "v1 is mounted there" mountpoint -q "$TGT/a/csi/sw/p1"
tenant mv "$TGT/a/csi/sw" "$TGT/a/csi/sw_old"
tenant ln -s "$W/outside" "$TGT/a/csi/sw"
csi NodeUnpublishVolume "$(unpubreq v1 "$TGT/a/csi/sw/p1")"
check "unpublish through the swapped parent answers OK ($OUT)" test "$RC" -eq 0
check "zcfsd unmounted v1 where it was moved" bash -c "! mountpoint -q '$TGT/a/csi/sw_old/p1'"
check "the outside directory p1 is still there" test -d "$W/outside/p1"
check "the plugin logged what it left" grep -q "event=target-left target=\"$TGT/a/csi/sw/p1\"" "$W/csi.err"

# 2. volume zcfsd no longer knows: the record alone says the target was made
csi NodePublishVolume "$(pubreq v2 "$TGT/a/csi/sx/p1")"
check "publish v2 at csi/sx/p1 ($OUT)" test "$RC" -eq 0
tenant mv "$TGT/a/csi/sx" "$TGT/a/csi/sx_old"
tenant ln -s "$W/outside2" "$TGT/a/csi/sx"
ctlq volume unpublish v2 "$TGT/a/csi/sx/p1" && ctlq volume delete v2 || fail "zcfsctl unpublish/delete v2"
csi NodeUnpublishVolume "$(unpubreq v2 "$TGT/a/csi/sx/p1")"
check "unpublish of the unknown volume answers OK ($OUT)" test "$RC" -eq 0
check "the outside directory p1 is still there (unknown volume)" test -d "$W/outside2/p1"

# 3. no swap: the directory the plugin made is removed as before
rm "$TGT/a/csi/sw"
tenant mkdir "$TGT/a/csi/sw"
csi NodePublishVolume "$(pubreq v3 "$TGT/a/csi/sw/p1")"
check "publish v3 at csi/sw/p1 ($OUT)" test "$RC" -eq 0
csi NodeUnpublishVolume "$(unpubreq v3 "$TGT/a/csi/sw/p1")"
check "unpublish v3 answers OK ($OUT)" test "$RC" -eq 0
check "the target directory it made is gone" test ! -e "$TGT/a/csi/sw/p1"
[ "$_zcfs_failed" -eq 0 ] || { sed 's/^/# csi: /' "$W/csi.err" | tail -n 20; show_zcfsd_log; }
finish
