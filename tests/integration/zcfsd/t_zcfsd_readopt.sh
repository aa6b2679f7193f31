#!/usr/bin/env bash
# kill -9 of zcfsd: the volumes keep serving (servers and mounts do not
# depend on the daemon); a new zcfsd re-adopts them from state.json (same
# pids, pidfd + start time checked, fuse fds taken back with pidfd_getfd)
# and can unpublish them, which stops their servers. A volume whose server
# died while no daemon held its connection cannot be re-adopted: the new
# zcfsd reports it and lazily unmounts its targets, leaving nothing stale.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
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

check "ring_holder on a /dev/fuse volume is refused (INVALID_ARGUMENT)" \
	test "$(code_of ctl call volume.create '{"id":"vh","transport":"devfuse","ring_holder":true}')" = INVALID_ARGUMENT
check "... and nothing made" bash -c "! ctl_out=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get vh 2>&1) && [ ! -e '$STORE/t1/vh' ]"
# A ring holder volume (ring_holder, docs/supervision.md "Ring holder"):
# the holder is re-adopted like the server; a server killed afterwards
# resumes on the same holder's rings; a killed holder takes its server
# with it and both come back.
if [ "$ZCFS_TRANSPORT" = uring ]; then
	[ -x "$ZCFS_TESTBIN/probe" ] || fail "probe not built"
	# The tenant's default (data_paths.ring_holder, policy reloaded by
	# SIGHUP): io_uring volumes get a holder unless they say false;
	# /dev/fuse volumes none, and no error.
	policy_jq '.tenants[0].data_paths.ring_holder = true'
	kill -HUP "$ZCFSD_PID"
	wait_for "policy reloaded" 5 grep -q 'event=policy-reload' "$W/zcfsd.log"
	ctl volume create vd1 --transport uring >/dev/null
	ctl call volume.create '{"id":"vd2","transport":"uring","ring_holder":false}' >/dev/null
	ctl volume create vd3 --transport devfuse >/dev/null
	check "data_paths.ring_holder: an io_uring volume gets a holder by default, false opts out, /dev/fuse none" \
		test "$(for v in vd1 vd2 vd3; do ctl volume get $v | jq -r '.volume.ring_holder // false'; done | paste -sd,)" = true,false,false
	for v in vd1 vd2 vd3; do ctl volume delete $v >/dev/null; done
	policy_jq 'del(.tenants[0].data_paths.ring_holder)'
	kill -HUP "$ZCFSD_PID"
	create_publish v3 "$TGT/c" --ring-holder || { show_zcfsd_log; fail "publish v3 --ring-holder"; }
	H3=$(vol_field v3 holder_pid); P3=$(server_pid v3)
	# The holder's confinement (docs/security.md, "The ring holder")
	hs=/proc/$H3/status
	check "[holder] runs as the tenant ($(awk '/^Uid:/ { print $2 }' "$hs")), no capabilities, no_new_privs, seccomp filter" \
		bash -c "grep -qE '^Uid:\s+$TENANT_UID\s' $hs && grep -qE '^CapEff:\s+0+$' $hs && grep -qE '^CapPrm:\s+0+$' $hs &&
			grep -qE '^NoNewPrivs:\s+1$' $hs && grep -qE '^Seccomp:\s+2$' $hs"
	check "[holder] holds only its ring fds at 12.. besides stdio ($(ls /proc/$H3/fd | sort -n | paste -sd,))" \
		test "$(ls /proc/$H3/fd | sort -n | paste -sd,)" = "0,1,2,$(seq -s, 12 $((11 + $(vol_field v3 holder.rings))))"
	"$ZCFS_TESTBIN/probe" "$TGT/c/probe" 10 "$W/v3.stalls" >"$W/v3.probe" 2>&1 &
	probe=$!
	sleep 0.5
	zcfsd_kill9
	check "[holder] holder and server run on without zcfsd" kill -0 "$H3" "$P3"
	zcfsd_start
	check "[holder] the new zcfsd re-adopted the holder" grep -q "event=readopt-holder volume=v3 holder=$H3" "$W/zcfsd.log"
	check "[holder] same server, same holder" test "$(server_pid v3):$(vol_field v3 holder_pid)" = "$P3:$H3"
	kill -9 "$P3"
	check "[holder] a server killed after the re-adoption is restarted" \
		wait_for "v3 restart" 10 bash -c "p=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v3 | jq -r .volume.pid); [ \"\$p\" != $P3 ] && [ \"\$p\" != 0 ]"
	check "[holder] ... on the same holder" test "$(vol_field v3 holder_pid)" = "$H3"
	sleep 0.5
	kill -TERM "$probe"; wait "$probe"
	check "[holder] probe: no error across the zcfsd kill and the server kill ($(tail -n 1 "$W/v3.probe"))" \
		bash -c "! grep -qE 'probe: round [0-9]+:' '$W/v3.probe' && grep -q 'probe: rounds=' '$W/v3.probe'"
	P3=$(server_pid v3)
	kill -9 "$H3"
	check "[holder] a killed holder is logged and its server restarted with a new holder" \
		wait_for "v3 new holder" 10 bash -c "h=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v3 | jq -r '.volume.holder_pid, .volume.pid' | paste -sd:); [ \"\${h%:*}\" != $H3 ] && [ \"\${h%:*}\" != 0 ] && [ \"\${h#*:}\" != $P3 ] && [ \"\${h#*:}\" != 0 ]"
	check "[holder] ... event=holder-exit logged, no failed restart" \
		bash -c "grep -q 'event=holder-exit volume=v3 pid=$H3 ' '$W/zcfsd.log' && ! grep -q 'event=restart-failed volume=v3' '$W/zcfsd.log'"
	check "[holder] the volume serves again (no hang)" timeout 10 bash -c "echo again >'$TGT/c/g' && grep -q again '$TGT/c/g'"
	H3=$(vol_field v3 holder_pid); P3=$(server_pid v3)
	ctl volume unpublish v3 "$TGT/c" >/dev/null
	check "[holder] unpublish stops server and holder" \
		wait_for "v3 processes gone" 10 bash -c "! kill -0 $H3 2>/dev/null && ! kill -0 $P3 2>/dev/null"
	# At once again (its old holder maybe not reaped yet): a new holder
	ctl volume publish v3 "$TGT/c" >/dev/null; ctl volume unpublish v3 "$TGT/c" >/dev/null
	check "[holder] publish right after, then again: serves with a new holder" \
		bash -c "'$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume publish v3 '$TGT/c' >/dev/null && grep -q again '$TGT/c/g' &&
			h=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get v3 | jq -r .volume.holder_pid) && [ \"\$h\" -gt 0 ] && [ \"\$h\" != $H3 ]"
	ctl volume unpublish v3 "$TGT/c" >/dev/null
	zombies() { ps --ppid "$ZCFSD_PID" -o stat= | grep -c '^Z'; }
	check "[holder] no zombie children of zcfsd ($(zombies))" wait_for "no zombies" 5 bash -c "[ \$(ps --ppid $ZCFSD_PID -o stat= | grep -c '^Z') = 0 ]"
fi
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
