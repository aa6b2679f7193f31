#!/usr/bin/env bash
# Fault: a live volume's backing (storage) directory is removed, replaced
# by another directory, or replaced by a symlink to somewhere else.
#  - removed: clients get ENOENT for new names and creations, whatever the
#    server still holds stays readable, nothing is recreated, no crash;
#  - replaced by a directory: the running server keeps its own (moved)
#    directory; a restarted one serves the new one, old handles fail;
#  - replaced by a symlink: a restarted server must not follow it (zcfsd
#    checks the storage dir before every spawn and unpublishes instead).
# Throughout, nothing outside the volume's storage is touched, the other
# volumes keep serving, and unpublish and delete work.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
for v in v1 v2 v3 v4; do create_publish_or_fail "$v" "$TGT/$v"; done
for v in v1 v2 v3 v4; do mkdir "$TGT/$v/d" && echo "old-$v" >"$TGT/$v/d/f" && echo top >"$TGT/$v/top"; done
mkdir "$W/outside" && echo secret >"$W/outside/top" && chmod 755 "$W/outside" && chmod 644 "$W/outside/top"
# A directory outside every volume, where the symlink will point.
outside_snapshot() {
	(cd "$W" && find outside -printf '%p %y %m %U %s %T@\n' | sort && md5sum outside/top)
}
before=$(outside_snapshot)
v4sum=$(cd "$STORE/t1/v4" && find . -printf '%p %y %s\n' | sort)
P1=$(server_pid v1)

log "removed"
rm -rf "$STORE/t1/v1"
check "removed: the server survives" kill -0 "$P1"
check "removed: creating a file fails" bash -c "! echo x >'$TGT/v1/new' 2>/dev/null"
check "removed: mkdir fails" bash -c "! mkdir '$TGT/v1/nd' 2>/dev/null"
check "removed: a name never looked up is not found" bash -c "! stat '$TGT/v1/never' 2>/dev/null"
check "removed: listing works and is empty" bash -c "[ -z \"\$(ls -A '$TGT/v1')\" ]"
check "removed: nothing was recreated" test ! -e "$STORE/t1/v1"
check "removed: the server is still the same" test "$(server_pid v1)" = "$P1"

log "replaced by a directory"
P2=$(server_pid v2)
mv "$STORE/t1/v2" "$STORE/t1/v2.old"
mkdir "$STORE/t1/v2" && echo replaced >"$STORE/t1/v2/top" && chown -R "$TENANT_UID:$TENANT_UID" "$STORE/t1/v2"
check "replaced: the running server still serves its own directory" grep -q top "$TGT/v2/top"
check "replaced: writes go to the volume's (moved) directory" \
	bash -c "echo w >'$TGT/v2/w' && test -f '$STORE/t1/v2.old/w' && test ! -e '$STORE/t1/v2/w'"
kill -9 "$P2"
check "replaced: the server is restarted" wait_for "v2 restart" 10 \
	bash -c "p=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v2 | jq -r .volume.pid); [ \"\$p\" -gt 0 ] && [ \"\$p\" != $P2 ]"
check "replaced: the restarted server serves the new directory" \
	wait_for "new content" 5 grep -q replaced "$TGT/v2/top"
check "replaced: a name of the old directory fails" bash -c "! cat '$TGT/v2/d/f' 2>/dev/null"

log "replaced by a symlink"
P3=$(server_pid v3)
mv "$STORE/t1/v3" "$STORE/t1/v3.old"
ln -s "$W/outside" "$STORE/t1/v3"
kill -9 "$P3"
check "symlink: zcfsd refuses to restart the server on it" \
	wait_for "restart refused" 10 grep -q "event=restart-failed volume=v3 .*action=unpublish" "$W/zcfsd.log"
check "symlink: v3 is unpublished with a reason" \
	bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v3 | jq -e '.volume.state == \"created\" and (.volume.last_error | test(\"storage\"))' >/dev/null"
check "symlink: the outside file is not visible at the target" bash -c "! grep -qs secret '$TGT/v3/top'"
check "symlink: no mount left at the target" bash -c "! grep -q ' $TGT/v3 ' /proc/self/mounts"
check "symlink: publishing again is refused" bash -c "! '$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume publish v3 '$TGT/v3' 2>/dev/null"

check "v4 keeps serving" grep -q old-v4 "$TGT/v4/d/f"
check "v4's storage is untouched" test "$(cd "$STORE/t1/v4" && find . -printf '%p %y %s\n' | sort)" = "$v4sum"
check "the outside directory is untouched" test "$(outside_snapshot)" = "$before"
check "the outside directory has nothing new" test "$(ls -A "$W/outside")" = top

for v in v1 v2 v4; do check "unpublish $v" ctlq volume unpublish "$v" "$TGT/$v"; done
check "delete v1 (storage already gone)" ctlq volume delete v1
check "delete v3 removes the symlink, not its target" \
	bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume delete v3 >/dev/null && test ! -L '$STORE/t1/v3' && grep -q secret '$W/outside/top'"
check "zcfsd is still running" kill -0 "$ZCFSD_PID"
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
check "no server left" wait_for "servers exit" 5 bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
