#!/usr/bin/env bash
# What a zcfsd-started server runs with, read from /proc/PID/status and
# /proc/PID/limits: the tenant's uid and gid (real, effective, saved, fs),
# no supplementary groups, every capability set empty (CapEff 0 is the
# point), no_new_privs, its own session, and RLIMIT_MEMLOCK equal to the
# bytes granted to it (two volumes: the second server's limit is its own
# share, and an mlock it tries beyond that share fails, figures logged).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
zcfsd_require
[ "$(uname -m)" = x86_64 ] || skip "inject_syscall knows only x86-64"
INJ=$(need_testbin inject_syscall)

zcfsd_start_with_v1
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
check "second server's RLIMIT_MEMLOCK = its own share ($pinned2), not the tenant's total" \
	test "$(lim "$P2")" = "$pinned2"
# The server itself tries to lock more than its share (inject_syscall:
# its own rlimit and credentials decide): 1 MiB more than it has locked.
vmlck() { awk '/^VmLck:/ { print $2 * 1024 }' "/proc/$1/status"; }
lck0=$(vmlck "$P2")
out=$("$INJ" "$P2" mmap:0,1048576,3,34,-1,0 'mlock:$0,1048576' 2>&1 | tr '\n' ' ')
lck1=$(vmlck "$P2")
addr=${out#mmap = }; addr=${addr%% *}
"$INJ" "$P2" "munmap:$addr,1048576" >/dev/null 2>&1
log "server 2: share $pinned2, locked $lck0 before, $lck1 while trying: $out"
check "server 2 cannot mlock 1 MiB beyond its share ($out)" eval "[[ '$out' == *'mlock = -E'* ]]"
check "server 2's locked memory stays within its share ($lck1 <= $pinned2)" test "$lck1" -le "$pinned2"
check "the tenant's locked memory stays within the budget ($(( $(vmlck "$P") + lck1 )) <= $((pinned1 + pinned2)))" \
	test "$(( $(vmlck "$P") + lck1 ))" -le "$((pinned1 + pinned2))"
check "server's fd 3 is /dev/fuse" test "$(readlink /proc/$P/fd/3)" = /dev/fuse
check "the server cannot read root-only files" \
	bash -c "! nsenter -t $P -S $u -G $u --no-fork cat /etc/shadow 2>/dev/null" 
check "status shows both volumes published" \
	test "$(ctl status --json | jq '[.volumes[] | select(.state=="published")] | length')" = 2
ctl volume unpublish v1 "$TGT/a" >/dev/null
ctl volume unpublish v2 "$TGT/b" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
