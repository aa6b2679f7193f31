#!/usr/bin/env bash
# Volume storage is reachable only by the tenant's uid/gid and root
# (docs/security.md "Volume storage"): after a client makes the volume
# root 1777 and writes world-readable files into it, an unrelated host
# user can neither list, read, delete nor plant anything in the backing
# storage (before: the storage root was 0711 and the backing directory
# took the client's 0777, so it could), while clients inside the volume
# still see the modes they set. Runtime: about 3 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require setpriv
OTHER=2999

zcfsd_start_with_v1
chmod 1777 "$TGT/a"
echo "zcfs-secret" >"$TGT/a/f"
chmod 0644 "$TGT/a/f"
mkdir -m 0777 "$TGT/a/d"
check "clients see the root as 1777 ($(stat -c %a "$TGT/a"))" test "$(stat -c %a "$TGT/a")" = 1777
check "clients see f as 0644" test "$(stat -c %a "$TGT/a/f")" = 644
check "the storage root is root:tenant-gid 0710 ($(stat -c '%a %u:%g' "$STORE/t1"))" \
	test "$(stat -c '%a %u:%g' "$STORE/t1")" = "710 0:$TENANT_UID"
as_other() { setpriv --reuid=$OTHER --regid=$OTHER --clear-groups -- "$@" 2>/dev/null; }
check "another host user cannot list the volume's storage" eval "! as_other ls '$STORE/t1/v1' >/dev/null"
check "... nor read a world-readable file in it" eval "! as_other cat '$STORE/t1/v1/f' >/dev/null"
check "... nor delete it" eval "! as_other rm -f '$STORE/t1/v1/f'"
check "... nor plant a file with a forged ownership record" \
	eval "! as_other sh -c 'echo x >$STORE/t1/v1/d/planted'"
check "the file is still there for clients" test "$(cat "$TGT/a/f")" = zcfs-secret
check "nothing was planted" test ! -e "$TGT/a/d/planted"
ctl volume unpublish v1 "$TGT/a" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
