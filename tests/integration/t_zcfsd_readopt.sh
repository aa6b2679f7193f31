#!/usr/bin/env bash
# kill -9 of zcfsd: the volumes keep serving (servers and mounts do not
# depend on the daemon); a new zcfsd re-adopts them from state.json (same
# pids, pidfd + start time checked, fuse fds taken back with pidfd_getfd)
# and can unpublish them, which stops their servers. A volume whose server
# died while no daemon held its connection cannot be re-adopted: the new
# zcfsd reports it and lazily unmounts its targets, leaving nothing stale.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
ctl volume publish v1 "$TGT/a2" >/dev/null || fail "publish v1 at a2"
create_publish v2 "$TGT/b" || fail "publish v2"
echo one >"$TGT/a/f"
echo two >"$TGT/b/f"
P1=$(server_pid v1); P2=$(server_pid v2)
budget_used=$(ctl tenant list | jq -r '.tenants[0].memlock_used')

zcfsd_kill9
check "v1 keeps serving reads without zcfsd" grep -q one "$TGT/a/f"
check "v1 keeps serving writes without zcfsd" bash -c "echo more >>'$TGT/a2/f' && grep -q more '$TGT/a/f'"
check "v2 keeps serving without zcfsd" grep -q two "$TGT/b/f"
check "servers still run" kill -0 "$P1" "$P2"

zcfsd_start
check "new zcfsd logged the re-adoption of v1" grep -q "event=readopt volume=v1 pid=$P1" "$W/zcfsd.log"
check "v1 is published with the same server" test "$(server_pid v1)" = "$P1"
check "v2 is published with the same server" test "$(server_pid v2)" = "$P2"
check "v1 still has both targets" test "$(vol_field v1 'targets | length')" = 2
check "budget use is the same as before" \
	test "$(ctl tenant list | jq -r '.tenants[0].memlock_used')" = "$budget_used"
check "a third target binds to the re-adopted connection" ctl volume publish v1 "$TGT/a3"
check "... and shows the data" grep -q more "$TGT/a3/f"
check "unpublish of a re-adopted volume works" \
	bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish v1 '$TGT/a' >/dev/null &&
		 '$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish v1 '$TGT/a2' >/dev/null &&
		 '$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume unpublish v1 '$TGT/a3' >/dev/null"
check "... its server exits" wait_for "v1 server exit" 5 bash -c "! kill -0 $P1 2>/dev/null"
check "... and nothing of v1 stays mounted" bash -c "! grep -qE ' $TGT/a[23]? ' /proc/self/mounts"
check "a supervised re-adopted server is restarted after a crash" \
	bash -c "kill -9 $P2; sleep 1; p=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v2 | jq -r .volume.pid); [ \"\$p\" != $P2 ] && [ \"\$p\" != 0 ] && kill -0 \$p"

# Not re-adoptable: daemon and server both gone, the connection with them.
P2=$(server_pid v2)
[ "${P2:-0}" -gt 0 ] || fail "v2 has no server to kill"
zcfsd_kill9
kill -9 "$P2"
sleep 0.3
check "with both gone the mount is dead" bash -c "! stat '$TGT/b/f' 2>/dev/null"
zcfsd_start
check "new zcfsd reports v2 as not re-adoptable" grep -q "event=readopt-failed volume=v2" "$W/zcfsd.log"
check "v2's target was cleaned up" bash -c "! grep -q ' $TGT/b ' /proc/self/mounts"
check "v2 is back to created, its data kept" \
	bash -c "[ \"\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v2 | jq -r .volume.state)\" = created ] && grep -q two '$STORE/t1/v2/f'"
check "v2 can be published again" ctl volume publish v2 "$TGT/b"
check "... and serves its data" grep -q two "$TGT/b/f"
ctl volume unpublish v2 "$TGT/b" >/dev/null
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
