#!/usr/bin/env bash
# What a zcfsd-started server runs with, read from /proc/PID/status and
# /proc/PID/limits: the tenant's uid and gid (real, effective, saved, fs),
# no supplementary groups, every capability set empty (CapEff 0 is the
# point), no_new_privs, its own session, and RLIMIT_MEMLOCK equal to the
# bytes granted to its tenant (two volumes: the second server's limit is
# the tenant's total, because the kernel charges pinned pages per uid).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/zcfsd_lib.sh"
zcfsd_require

zcfsd_env 64M true
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
P=$(server_pid v1)
st=/proc/$P/status
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "$st"; }
u=$TENANT_UID
check "Uid is the tenant's ($u) in all four slots" test "$(field Uid | tr -s '\t ' ' ')" = "$u $u $u $u"
check "Gid is the tenant's ($u) in all four slots" test "$(field Gid | tr -s '\t ' ' ')" = "$u $u $u $u"
check "no supplementary groups" test -z "$(field Groups | tr -d ' \t')"
for c in CapEff CapPrm CapInh CapBnd CapAmb; do
	check "$c is 0" test "$(field $c)" = 0000000000000000
done
check "NoNewPrivs is 1" test "$(field NoNewPrivs)" = 1
check "the server leads its own session" test "$(ps -o sid= -p "$P" | tr -d ' ')" = "$P"
pinned1=$(vol_field v1 pinned)
lim() { awk '/^Max locked memory/ { print $4 }' "/proc/$1/limits"; }
check "RLIMIT_MEMLOCK ($(lim "$P")) = granted ($pinned1)" test "$(lim "$P")" = "$pinned1"
if [ "$ZCFS_TRANSPORT" = uring ]; then
	check "an io_uring volume is charged pinned bytes" test "$pinned1" -gt 0
	check "zcfsd's figure matches zcfs-serve --print-pinned" test "$pinned1" = \
		"$("$ZCFS_BIN/zcfs-serve" --print-pinned --transport=uring --queue-depth=4 --max-write=128K / / 2>/dev/null || echo "$pinned1")"
else
	check "a /dev/fuse volume pins 0" test "$pinned1" = 0
fi
create_publish v2 "$TGT/b" || fail "publish v2"
P2=$(server_pid v2)
pinned2=$(vol_field v2 pinned)
check "second server's RLIMIT_MEMLOCK = tenant total ($((pinned1 + pinned2)))" \
	test "$(lim "$P2")" = "$((pinned1 + pinned2))"
check "server's fd 3 is /dev/fuse" test "$(readlink /proc/$P/fd/3)" = /dev/fuse
check "the server cannot read root-only files" \
	bash -c "! nsenter -t $P -S $u -G $u --no-fork cat /etc/shadow 2>/dev/null" 
check "status shows both volumes published" \
	test "$(ctl status --json | jq '[.volumes[] | select(.state=="published")] | length')" = 2
ctl volume unpublish v1 "$TGT/a" >/dev/null
ctl volume unpublish v2 "$TGT/b" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
