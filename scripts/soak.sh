#!/usr/bin/env bash
# Soak (make soak; not in CI): randomized file operations against a model,
# with volume servers killed and zcfsd restarted under them, for
# SOAK_SECONDS, on one volume per transport (SOAK_TRANSPORTS), then a check
# that every byte a client was told is written is still there.
#
#   make soak                         SOAK_SECONDS=120 by default
#   SOAK_SECONDS=600 SOAK_SEED=7 SOAK_TRANSPORTS=devfuse make soak
#
# Workers alternate per volume: fsmodel rounds (random ops on a few files,
# each round its own directory, model dumped at the end) and fio write
# rounds with --verify=crc32c. Between and during them a chaos loop:
#   - kill -9 of a volume server (zcfsd restarts it with --resume on the
#     same connection): on /dev/fuse at any moment, the worker must not
#     notice; on io_uring only between rounds, because a request held by a
#     dead server's ring entry is never replayed by the kernel
#     (docs/supervision.md) and the worker would block until unpublish;
#   - kill -9 or SIGTERM of zcfsd and a new zcfsd (re-adopts the servers);
#   - unpublish and publish again between rounds.
# At the end every completed fsmodel round is verified through the mount
# (fsmodel --verify-only), every fio round with fio --verify_only, and
# after the final unpublish every fsmodel round again against the backing
# directory. Prints counts and "soak: PASS/FAIL"; exit 0 only on PASS.
# An fsmodel round hit by a server kill whose only failures are files
# deleted while open (EBADF/ESTALE: a restarted server cannot find them,
# docs/supervision.md) is counted as known-limitation, not as a failure,
# unless SOAK_STRICT=1.
. "$(dirname "$0")/../tests/lib.sh"
. "$(dirname "$0")/../tests/integration/helpers/zcfsd_lib.sh"
require_root
require_fuse
require_cmd jq
require_cmd fio

: "${SOAK_SECONDS:=120}"
: "${SOAK_SEED:=$RANDOM}"
: "${SOAK_TRANSPORTS:=devfuse uring}"
: "${SOAK_OPS:=20000}"
FSMODEL=$ZCFS_TESTBIN/fsmodel
[ -x "$FSMODEL" ] || fail "fsmodel not built ($FSMODEL): run make"
RANDOM=$SOAK_SEED
log "seed $SOAK_SEED, ${SOAK_SECONDS}s, transports: $SOAK_TRANSPORTS"

uring_ok=0
[ "$(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null)" = Y ] && uring_ok=1
vols=()
for t in $SOAK_TRANSPORTS; do
	if [ "$t" = uring ] && [ $uring_ok = 0 ]; then log "skipping uring: enable_uring is not Y"; continue; fi
	vols+=("soak-$t")
done
[ ${#vols[@]} -gt 0 ] || skip "no transport to soak"

zcfsd_env 8M true
mount -t tmpfs -o size=2g,mode=755 zcfs-soak "$STORE" || fail "tmpfs"
zcfsd_start
declare -A transport=() worker=() wkind=() wround=() pending=() busy_since=() killed_in=()
for v in "${vols[@]}"; do
	transport[$v]=${v#soak-}
	ctl volume create "$v" --transport "${transport[$v]}" --queue-depth 2 --max-write 64K >/dev/null ||
		fail "create $v"
	ctl volume publish "$v" "$TGT/$v" >/dev/null || { show_zcfsd_log; fail "publish $v"; }
	worker[$v]=""; pending[$v]=""
done

rounds_ok=0 rounds_failed=0 rounds_known=0 kills=0 kills_busy=0 daemon_restarts=0 republishes=0
fsmodel_rounds=() fio_rounds=() failures=()
n=0

start_worker() {
	local v=$1 dir
	n=$((n + 1))
	dir=$TGT/$v/r$n
	mkdir -p "$dir" || { failures+=("mkdir $dir"); return 1; }
	if [ $((n % 3)) -ne 0 ]; then
		wkind[$v]=fsmodel
		timeout 300 "$FSMODEL" --quiet --seed $((SOAK_SEED * 1000 + n)) --ops "$SOAK_OPS" \
			--dump "$W/r$n.dump" "$dir" >"$W/r$n.log" 2>&1 &
	else
		wkind[$v]=fio
		timeout 300 fio --name=soak --directory="$dir" --rw=randwrite --bs=16k --size=16m \
			--ioengine=psync --verify=crc32c --do_verify=1 --verify_fatal=1 --end_fsync=1 \
			--randseed=$n >"$W/r$n.log" 2>&1 &
	fi
	worker[$v]=$!
	wround[$v]=$n
	busy_since[$v]=$SECONDS
}

# reap V: collects a finished worker; returns 1 while it still runs.
reap() {
	local v=$1 rc r=${wround[$1]:-}
	[ -n "${worker[$v]}" ] || return 0
	kill -0 "${worker[$v]}" 2>/dev/null && return 1
	wait "${worker[$v]}"; rc=$?
	worker[$v]=""
	if [ $rc -eq 0 ]; then
		rounds_ok=$((rounds_ok + 1))
		if [ "${wkind[$v]}" = fsmodel ]; then fsmodel_rounds+=("$v:$r"); else fio_rounds+=("$v:$r"); fi
	elif [ -n "${killed_in[$r]:-}" ] && [ "${wkind[$v]}" = fsmodel ] && [ "${SOAK_STRICT:-0}" = 0 ] &&
	     ! grep '^FAIL' "$W/r$r.log" | grep -vqE 'unlinked inode|close\([0-9]+\): Bad file descriptor|fstat: Stale file handle'; then
		# Known (docs/supervision.md): a restarted server cannot find
		# files deleted while open, their fh answers EBADF/ESTALE.
		# Such a round is counted apart and not verified at the end.
		rounds_known=$((rounds_known + 1))
		log "round $r (fsmodel on $v): only deleted-while-open files failed across a server restart (known)"
	else
		rounds_failed=$((rounds_failed + 1))
		failures+=("round $r (${wkind[$v]} on $v) rc=$rc${killed_in[$r]:+ (server killed during it)}: $(grep -m 3 -vE '^$|unlinked inode' "$W/r$r.log" | tr '\n' ' ')")
		log "FAILED round $r (${wkind[$v]} on $v) rc=$rc"
		sed 's/^/#   /' "$W/r$r.log" | tail -n 8
	fi
	return 0
}

kill_server() {
	local v=$1 p
	p=$(server_pid "$v")
	[ -n "$p" ] && [ "$p" != 0 ] || return 0
	kill -9 "$p" 2>/dev/null && kills=$((kills + 1))
	# served again by a new server
	wait_for "$v restarted" 15 bash -c "p2=\$('$ZCFS_BIN/zcfsctl' --socket '$SOCK' volume get $v | jq -r .volume.pid); [ \"\$p2\" -gt 0 ] && [ \"\$p2\" != $p ] && stat '$TGT/$v' >/dev/null" ||
		failures+=("server of $v not restarted after kill")
}

republish() {
	local v=$1
	ctl volume unpublish "$v" "$TGT/$v" >/dev/null && ctl volume publish "$v" "$TGT/$v" >/dev/null ||
		{ failures+=("republish $v"); show_zcfsd_log; }
	republishes=$((republishes + 1))
}

restart_daemon() {
	if [ $((RANDOM % 2)) = 0 ]; then
		zcfsd_kill9
	else
		kill -TERM "$ZCFSD_PID"; wait "$ZCFSD_PID" 2>/dev/null; ZCFSD_PID=
	fi
	zcfsd_start
	daemon_restarts=$((daemon_restarts + 1))
	for v in "${vols[@]}"; do
		[ "$(vol_field "$v" state)" = published ] || failures+=("$v not re-adopted after zcfsd restart")
	done
}

end=$((SECONDS + SOAK_SECONDS))
while [ $SECONDS -lt $end ]; do
	for v in "${vols[@]}"; do
		reap "$v" || continue
		# Actions that need an idle volume run between rounds.
		case ${pending[$v]} in
		kill) kill_server "$v";;
		republish) republish "$v";;
		esac
		pending[$v]=""
		start_worker "$v"
	done
	sleep "0.$((RANDOM % 9 + 1))"
	v=${vols[$((RANDOM % ${#vols[@]}))]}
	case $((RANDOM % 12)) in
	0|1|2)
		if [ "${transport[$v]}" = devfuse ]; then
			[ -n "${worker[$v]}" ] && kills_busy=$((kills_busy + 1)) && killed_in[${wround[$v]}]=1
			kill_server "$v"
		else
			pending[$v]="kill"
		fi;;
	3) restart_daemon;;
	4) pending[$v]=republish;;
	esac
	# A worker far beyond its usual time is stuck: report it.
	for v in "${vols[@]}"; do
		if [ -n "${worker[$v]}" ] && [ $((SECONDS - busy_since[$v])) -gt 120 ]; then
			failures+=("round ${wround[$v]} on $v stuck for 120 s")
			kill -9 "${worker[$v]}" 2>/dev/null
		fi
	done
done
log "time is up; waiting for the last rounds"
for v in "${vols[@]}"; do
	while ! reap "$v"; do sleep 0.2; done
done

log "verifying every completed round through the mounts"
verified=0 verify_failed=0
# verify_fsmodel DIR LOG WHAT: every fsmodel round checked against its dump
# under DIR/VOLUME/rROUND, counted in verified / verify_failed
verify_fsmodel() {
	local e v r
	for e in "${fsmodel_rounds[@]}"; do
		v=${e%%:*} r=${e#*:}
		if "$FSMODEL" --quiet --verify-only --dump "$W/r$r.dump" "$1/$v/r$r" >"$W/$2$r.log" 2>&1; then
			verified=$((verified + 1))
		else
			verify_failed=$((verify_failed + 1)); failures+=("$3 round $r on $v: $(tail -n 2 "$W/$2$r.log" | tr '\n' ' ')")
		fi
	done
}
verify_fsmodel "$TGT" v "verify fsmodel"
for e in "${fio_rounds[@]}"; do
	v=${e%%:*} r=${e#*:}
	if fio --name=soak --directory="$TGT/$v/r$r" --rw=randwrite --bs=16k --size=16m --ioengine=psync \
		--verify=crc32c --verify_only --verify_fatal=1 --randseed="$r" >"$W/v$r.log" 2>&1; then
		verified=$((verified + 1))
	else
		verify_failed=$((verify_failed + 1)); failures+=("verify fio round $r on $v: $(tail -n 2 "$W/v$r.log" | tr '\n' ' ')")
	fi
done
log "unpublishing; verifying fsmodel rounds against the backing directories"
for v in "${vols[@]}"; do ctl volume unpublish "$v" "$TGT/$v" >/dev/null || failures+=("final unpublish $v"); done
verify_fsmodel "$STORE/t1" b "backing verify"
restarts=$(ctl status --json | jq -c '[.volumes[] | {(.id): .restarts}] | add')
# Servers that died of anything but our SIGKILL (or a SIGTERM/abort at
# unpublish) crashed: that is a failure whatever the rounds say.
crashes=$(grep 'event=server-exit' "$W/zcfsd.log" | grep -v 'signal=9 \|status=unknown(adopted)\|status=0 ')
[ -n "$crashes" ] && failures+=("servers exited on their own: $(tr '\n' ' ' <<<"$crashes")")
grep -q ' fuse.zcfs ' <(grep " $W" /proc/self/mounts) && failures+=("mounts left under $W")

echo "soak: seed=$SOAK_SEED seconds=$SOAK_SECONDS volumes=${vols[*]}"
echo "soak: rounds ok=$rounds_ok failed=$rounds_failed known-limitation=$rounds_known (fsmodel ${#fsmodel_rounds[@]}, fio ${#fio_rounds[@]})"
echo "soak: server kills=$kills (during a round: $kills_busy), zcfsd restarts=$daemon_restarts, republishes=$republishes, server restarts per volume $restarts"
echo "soak: final checks passed=$verified failed=$verify_failed"
for f in "${failures[@]}"; do echo "soak: problem: $f"; done
if [ ${#failures[@]} -eq 0 ]; then echo "soak: PASS"; exit 0; fi
show_zcfsd_log
echo "soak: FAIL"
exit 1
