#!/usr/bin/env bash
# A storage_root the tenant cannot reach (a directory above it without
# search permission for the tenant's uid): publish fails with
# FAILED_PRECONDITION naming that directory and the fix, before anything
# is mounted or started; after the fix the same publish works. (~3 s)
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require
# zcfsd's own bookkeeping, the same for every data path: run once (CI time).
[ "$ZCFS_TRANSPORT" = devfuse ] || skip "transport-independent, runs on devfuse only"

zcfsd_env 64M true
mkdir -p "$W/locked/store"
chmod 0700 "$W/locked"
sed -i "s|\"storage_root\": \"$STORE/t1\"|\"storage_root\": \"$W/locked/store/t1\"|" "$POLICY"
grep -q "$W/locked/store/t1" "$POLICY" || fail "policy edit"
zcfsd_start
ctlq volume create v1 --transport "$ZCFS_TRANSPORT" || fail "create v1"
before=$(snapshot)
out=$(ctl call volume.publish "{\"id\": \"v1\", \"target\": \"$TGT/a\"}")
log "publish: $out"
check "publish fails with FAILED_PRECONDITION" test "$(jq -r .error.code <<<"$out")" = FAILED_PRECONDITION
msg=$(jq -r .error.message <<<"$out")
check "the error names the directory that denies search" grep -qF "directory $W/locked (mode 0700" <<<"$msg"
check "... and the fix" grep -qF "chmod o+x $W/locked " <<<"$msg"
check "nothing was mounted or started" test "$(snapshot)" = "$before"
check "the volume stays created" test "$(vol_field v1 state)" = created
chmod 0711 "$W/locked"
check "after the fix the publish works" ctlq volume publish v1 "$TGT/a"
check "and serves" bash -c "echo ok >'$TGT/a/f' && grep -q ok '$TGT/a/f'"
ctlq volume unpublish v1 "$TGT/a"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
