#!/usr/bin/env bash
# Policy handling end to end: `zcfsctl policy check` accepts the shipped
# examples and reports every problem of a bad file (file and field named,
# non-zero exit); zcfsd refuses to start on a bad policy; policy.reload and
# SIGHUP apply a good policy without touching a running volume, and a bad
# one is refused (FAILED_PRECONDITION) with the old policy kept.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require
EX=$(cd "$(dirname "$0")/../../../policy/examples" && pwd)

check "default.json passes policy check" "$ZCFS_BIN/zcfsctl" policy check "$EX/default.json"
check "multi-tenant.json passes policy check" "$ZCFS_BIN/zcfsctl" policy check "$EX/multi-tenant.json"
zcfsd_env 64M true
cat >"$W/bad.json" <<'JSON'
{"colour": 1, "tenants": [{"name": "x", "uid": 0, "gid": 5, "memlock_budget": "lots",
  "storage_root": "/srv", "allowed_target_prefixes": ["relative"]}]}
JSON
out=$("$ZCFS_BIN/zcfsctl" policy check "$W/bad.json" 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
check "bad policy: non-zero exit" test "$rc" -ne 0
for f in colour 'tenants\[0\].uid' 'tenants\[0\].memlock_budget' 'tenants\[0\].allowed_target_prefixes\[0\]'; do
	check "bad policy: $f reported with the file name" grep -q "^$W/bad.json: $f:" <<<"$out"
done
check "zcfsd refuses to start on a bad policy (exit 2)" \
	bash -c "'$ZCFS_BIN/zcfsd' --policy '$W/bad.json' --state-dir '$W/st2' --socket '$W/s2' --foreground 2>/dev/null; [ \$? = 2 ]"

zcfsd_start
create_publish v1 "$TGT/a" || fail "publish v1"
P=$(server_pid v1)
cp "$POLICY" "$W/good.json"
sed -i 's/"max_volumes": 8/"max_volumes": 9/' "$POLICY"
check "policy.reload applies a valid policy" ctl policy reload
check "... max_volumes is now 9" test "$(ctl tenant list | jq -r '.tenants[0].max_volumes')" = 9
check "... the running volume was not touched" test "$(server_pid v1)" = "$P"
cp "$W/bad.json" "$POLICY"
check "policy.reload of a bad policy is FAILED_PRECONDITION" \
	test "$(code_of ctl call policy.reload)" = FAILED_PRECONDITION
check "... the old policy stays" test "$(ctl tenant list | jq -r '.tenants[0].max_volumes')" = 9
sed 's/"max_volumes": 8/"max_volumes": 7/' "$W/good.json" >"$POLICY"
kill -HUP "$ZCFSD_PID"
check "SIGHUP reloads" wait_for reload 5 bash -c "[ \"\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' tenant list | jq -r '.tenants[0].max_volumes')\" = 7 ]"
check "... the volume still serves" bash -c "echo x >'$TGT/a/f' && [ \"\$(cat '$STORE/t1/v1/f')\" = x ]"
ctl volume unpublish v1 "$TGT/a" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
