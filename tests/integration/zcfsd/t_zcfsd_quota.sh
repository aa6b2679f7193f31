#!/usr/bin/env bash
# Volume sizes through zcfsd: volume.create's `size` (else the tenant's
# default_quota) becomes the server's --quota-bytes, shows in volume get,
# status and statfs of every target, is enforced (ENOSPC, nothing written
# before is lost), survives a server kill (the restarted server counts
# again) and a daemon restart (state); bad sizes are refused with
# INVALID_ARGUMENT and create nothing.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
M=$((1024 * 1024))
size_kib() { df --output=size -k "$1" | tail -n 1 | tr -d ' '; }

check "create v1 with size 16M" ctl volume create v1 --transport "$ZCFS_TRANSPORT" --size 16M >/dev/null
check "volume get shows the size" test "$(vol_field v1 size)" = $((16 * M))
check "publish v1" ctl volume publish v1 "$TGT/a" >/dev/null
check "a second target" ctl volume publish v1 "$TGT/a2" >/dev/null
check "a read-only third target (zcfsctl --read-only)" ctl volume publish v1 "$TGT/ro" --read-only >/dev/null
check "... refuses writes" bash -c "! touch '$TGT/ro/x' 2>/dev/null"
check "... shows the size too" test "$(size_kib "$TGT/ro")" = $((16 * 1024))
check "unpublish the read-only target" ctl volume unpublish v1 "$TGT/ro" >/dev/null
check "statfs of the target is the size" test "$(size_kib "$TGT/a")" = $((16 * 1024))
check "... and of the bind mount" test "$(size_kib "$TGT/a2")" = $((16 * 1024))
check "the server was started with it" grep -q -- "--quota-bytes=$((16 * M))" "/proc/$(server_pid v1)/cmdline"
status_v1() { ctl status | grep -E '^v1 '; }
check "status lists the size" bash -c "grep -q ' 16.0M ' <<<'$(status_v1)'"
check "create v2 without size: the tenant's default_quota (1G)" ctl volume create v2 --transport "$ZCFS_TRANSPORT" >/dev/null
check "v2 size is 1G" test "$(vol_field v2 size)" = $((1024 * M))
check "create v3 with size 0: no limit" ctl volume create v3 --transport "$ZCFS_TRANSPORT" --size 0 >/dev/null
check "v3 size is 0" test "$(vol_field v3 size)" = 0

log "enforced"
dd if=/dev/urandom of="$TGT/a/keep" bs=1M count=4 conv=fsync status=none
sum=$(md5sum <"$TGT/a/keep")
dd if=/dev/zero of="$TGT/a/fill" bs=1M count=20 conv=fsync 2>"$W/dd.err"
check "writing past 16M fails with ENOSPC" grep -q "No space left on device" "$W/dd.err"
check "what was written before is intact" bash -c "[ \"\$(md5sum <'$TGT/a/keep')\" = '$sum' ]"
check "the tenant's storage holds no more than the size" \
	test "$(du -s -k "$STORE/t1/v1" | cut -f1)" -le $((16 * 1024 + 64))

log "server killed: the new one counts again"
P1=$(server_pid v1)
kill -KILL "$P1"
wait_for "server restarted" 10 bash -c "p=\$(ctl volume get v1 | jq -r .volume.pid); [ -n \"\$p\" ] && [ \"\$p\" != 0 ] && [ \"\$p\" != $P1 ]"
check "still full after the restart" bash -c "! dd if=/dev/zero of='$TGT/a/more' bs=1M count=1 conv=fsync status=none 2>/dev/null"
rm -f "$TGT/a/more"
check "deleting frees space" bash -c "rm '$TGT/a/fill' && dd if=/dev/zero of='$TGT/a/more' bs=1M count=8 conv=fsync status=none"

log "daemon restart keeps sizes"
zcfsd_kill9
zcfsd_start
check "v1 size after re-adoption" test "$(vol_field v1 size)" = $((16 * M))
check "v2 size after re-adoption" test "$(vol_field v2 size)" = $((1024 * M))

log "bad sizes"
for s in lots -1 100 1.5G 2E; do
	code=$(code_of ctl call volume.create "{\"id\":\"bad\",\"size\":\"$s\"}")
	check "size '$s' is INVALID_ARGUMENT (got $code)" test "$code" = INVALID_ARGUMENT
done
code=$(code_of ctl call volume.create '{"id":"bad","size":true}')
check "size true is INVALID_ARGUMENT (got $code)" test "$code" = INVALID_ARGUMENT
check "nothing was created" bash -c "! ctl volume get bad >/dev/null 2>&1 && [ ! -e '$STORE/t1/bad' ]"
code=$(code_of ctl call volume.create '{"id":"v1","size":"32M","transport":"'"$ZCFS_TRANSPORT"'"}')
check "v1 again with another size is ALREADY_EXISTS (got $code)" test "$code" = ALREADY_EXISTS

ctl volume unpublish v1 "$TGT/a2" >/dev/null
ctl volume unpublish v1 "$TGT/a" >/dev/null
for v in v1 v2 v3; do ctl volume delete $v >/dev/null; done
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
