#!/usr/bin/env bash
# io_uring under the sandbox (docs/security.md "io_uring restrictions"):
# a compromised server must not get a ring the opcode allowlist never saw.
# A real sandboxed zcfs-serve is made to issue syscalls itself
# (inject_syscall: ptrace, so its own seccomp filter, Landlock domain and
# credentials decide), the way the attack of issue 14 did:
#  1. standalone (mountfd + uid 1500, --sandbox): every ring the server
#     holds refuses an unlisted register op with EACCES (restricted), one
#     ring per queue thread; a new ring + IORING_OP_SOCKET(AF_UNIX) from a
#     queue thread (io_uring) or the main thread (/dev/fuse) kills the
#     server by SIGSYS before any socket exists; so does a new ring +
#     IORING_OP_OPENAT of a file outside SOURCE from the main thread.
#  2. under zcfsd, after a kill -9 and the supervised restart with
#     --resume (and --ring-memfd on io_uring): the same for the successor.
#  3. sandbox_probe (links sandbox.c): on a ring restricted as the queues
#     do it, IORING_OP_SOCKET and IORING_OP_OPENAT(OUTSIDE) are refused;
#     after the seal a new ring kills, also from a thread that existed
#     before the seal; a /dev/fuse-style sandbox kills on io_uring_setup.
# Runtime: about 10 s per transport.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require setpriv
[ "$(uname -m)" = x86_64 ] || skip "inject_syscall knows only x86-64"
need_serve
asan_no_leak_check
INJ=$(need_testbin inject_syscall)
PROBE=$(need_testbin sandbox_probe)

ring_fds() { find "/proc/$1/fd" -lname 'anon_inode:\[io_uring\]' -printf '%f\n' 2>/dev/null | sort -n; }
ring_tids() { ps -L -o tid=,comm= -p "$1" | awk '$2 ~ /^zcfs-ring-/ { print $1 }'; }
# the thread a ring attempt is made from: a queue thread if there is one
attacker_tid() { local t; t=$(ring_tids "$1" | head -n 1); echo "${t:-$1}"; }

# rings_restricted LABEL PID: each ring refuses IORING_REGISTER_PERSONALITY
# (9, not in the allowlist) with EACCES when its own queue thread asks
# (the others get EEXIST: single issuer); nothing hands out a personality.
rings_restricted() {
	local label=$1 pid=$2 fd tid out fds tids ok
	fds=$(ring_fds "$pid")
	tids=$(ring_tids "$pid")
	if [ "$ZCFS_TRANSPORT" = uring ]; then
		check "$label: one ring per queue thread ($(echo $fds) / $(echo $tids))" \
			test -n "$fds" -a "$(wc -w <<<"$fds")" = "$(wc -w <<<"$tids")"
	else
		check "$label: a /dev/fuse server holds no ring ($(echo $fds))" test -z "$fds"
	fi
	for fd in $fds; do
		ok=no
		for tid in $tids; do
			out=$("$INJ" "$tid" "io_uring_register:$fd,9,0,0" 2>&1)
			case $out in
			*"= -EACCES") ok=yes;;
			*"= -EEXIST") ;;
			*) ok="escaped: $out"; break;;
			esac
		done
		check "$label: ring fd $fd is restricted (unlisted register op: EACCES) [$ok]" test "$ok" = yes
	done
}

# no_new_ring LABEL PID TID CALL: CALL (uring-socket, uring-openat:PATH)
# injected into thread TID kills the server by SIGSYS at io_uring_setup
no_new_ring() {
	local label=$1 pid=$2 tid=$3 call=$4 out rc=0
	out=$("$INJ" "$tid" "$call" 2>&1) || rc=$?
	check "$label: $call from thread $tid: killed by SIGSYS (rc=$rc: $(echo $out))" \
		eval "[ $rc -eq 3 ] && [[ '$out' == 'killed by SIGSYS' ]]"
	# still there (the escape worked): stop it, so the test goes on
	[ $rc -eq 3 ] || kill -KILL "$pid" 2>/dev/null
	wait_for "server $pid to be gone" 5 bash -c "! kill -0 $pid 2>/dev/null"
}

new_tmpdir OUT 64M
echo "zcfs-secret" >"$OUT/secret"

# 1. standalone servers
start_standalone() {
	mkdir -p "$1" "$2"
	start_sandboxed "$1" "$2" "$2.log"
	SPID=$SERVE_PID
}

start_standalone "$OUT/src1" "$OUT/mnt1"
echo data >"$OUT/mnt1/f"
check "standalone: serves before the attempt" test "$(cat "$OUT/mnt1/f")" = data
rings_restricted "standalone" "$SPID"
check "standalone: did not need the late seal" eval "! grep -q 'without sealing' '$OUT/mnt1.log'"
no_new_ring "standalone" "$SPID" "$(attacker_tid "$SPID")" uring-socket
rc=0; wait "$SPID" || rc=$?
check "standalone: the server's exit status is SIGSYS's ($rc)" [ "$rc" -eq "$SIGSYS_RC" ]
umount -l "$OUT/mnt1"

start_standalone "$OUT/src2" "$OUT/mnt2"
no_new_ring "standalone" "$SPID" "$SPID" "uring-openat:$OUT/secret"
umount -l "$OUT/mnt2"

# 2. a zcfsd server restarted with --resume after kill -9
zcfsd_start_with_v1
P0=$(server_pid v1)
restarted() { local p; p=$(server_pid v1); [ "$p" != "$1" ] && [ "$p" != 0 ] && kill -0 "$p" 2>/dev/null; }
kill -9 "$P0"
wait_for restart 5 restarted "$P0" || { show_zcfsd_log; fail "v1 was not restarted"; }
P1=$(server_pid v1)
wait_for "the successor to serve" 5 bash -c "[ \$(grep -c 'serving ' '$STATE/logs/v1.log') -ge 2 ]"
check "the successor runs with --resume" grep -qz -- --resume "/proc/$P1/cmdline"
check "the successor serves ($(echo hi >"$TGT/a/g" 2>&1; cat "$TGT/a/g" 2>&1))" test "$(cat "$TGT/a/g")" = hi
rings_restricted "zcfsd successor" "$P1"
no_new_ring "zcfsd successor" "$P1" "$(attacker_tid "$P1")" uring-socket
check "no server logged a late seal" eval "! grep -q 'without sealing' '$STATE/logs/v1.log'"
ctl volume unpublish v1 "$TGT/a" >/dev/null 2>&1

# 3. the probe: the same sandbox code, each case in its own process
mkdir -p "$OUT/vol"
echo in >"$OUT/vol/inside"
rc=0; "$PROBE" "$OUT/vol" "$OUT" ring ops >"$OUT.probe" 2>&1 || rc=$?
_zcfs_dirs+=("$OUT.probe")
grep -v '^ok' "$OUT.probe" | sed 's/^/# probe: /'
check "probe: restricted ring refuses IORING_OP_SOCKET and IORING_OP_OPENAT outside (rc=$rc)" \
	eval "[ $rc -eq 0 ] && [ \$(grep -c '^ok - refused' '$OUT.probe') -eq 2 ]"
for m in new-ring new-ring-thread; do
	rc=0; "$PROBE" "$OUT/vol" "$OUT" ring "$m" >"$OUT.probe" 2>&1 || rc=$?
	check "probe: $m after the seal dies by SIGSYS (rc=$rc $(tail -n 1 "$OUT.probe"))" [ "$rc" -eq "$SIGSYS_RC" ]
done
rc=0; "$PROBE" "$OUT/vol" "$OUT" syscall io_uring_setup >"$OUT.probe" 2>&1 || rc=$?
check "probe: without rings (/dev/fuse) io_uring_setup dies by SIGSYS (rc=$rc)" [ "$rc" -eq "$SIGSYS_RC" ]
check "nothing was written outside" test "$(ls "$OUT" | sort | tr '\n' ' ')" = "mnt1 mnt1.log mnt2 mnt2.log secret src1 src2 vol "
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
