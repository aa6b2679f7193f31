#!/usr/bin/env bash
# SIGKILL of zcfs-serve while clients read, write, stat and list through the
# mount: every client must see ENOTCONN within a few seconds (none may
# hang), the dead mount answers ENOTCONN, and umount -l leaves nothing.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
serve_require
FSLOOP=$(need_testbin fsloop)
LIMIT=${KILL_LIMIT_SECS:-5}   # seconds from SIGKILL to every client reporting

new_tmpdir SRC 256M
new_tmpdir MNT
new_tmpdir OUTD
head -c 1M /dev/urandom >"$SRC/data"
mkdir "$SRC/w"; chmod 777 "$SRC/w"

round() {
	local name=$1; shift
	local modes=("$@") pids=() m i t0 t1 rc
	log "round $name: clients ${modes[*]}"
	zcfs_mount "$SRC" "$MNT" "${MOUNT_OPTS[@]}"
	i=0
	for m in "${modes[@]}"; do
		local dir=$MNT
		[ "$m" = write ] && dir=$MNT/w
		# bounded even if it hangs in the kernel (SIGKILL ends FUSE waits)
		timeout -s KILL 60 "$FSLOOP" "$m" "$dir" 50 >"$OUTD/$name.$i" 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	# all clients running and succeeding
	for i in $(seq 100); do
		local n=0 f
		for f in "$OUTD/$name".*; do grep -q started "$f" && n=$((n + 1)); done
		[ "$n" -eq "${#modes[@]}" ] && break
		sleep 0.05
	done
	check "$name: all ${#modes[@]} clients running before the kill" [ "$n" -eq "${#modes[@]}" ]
	sleep 0.5
	t0=$(date +%s%N)
	kill -KILL "$ZCFS_PID"
	i=0
	for p in "${pids[@]}"; do
		rc=0; wait "$p" || rc=$?
		t1=$(date +%s%N)
		local ms=$(( (t1 - t0) / 1000000 ))
		log "client ${modes[$i]}: rc=$rc after ${ms}ms: $(grep -v started "$OUTD/$name.$i" | tr '\n' ' ')"
		check "$name: ${modes[$i]} client got ENOTCONN (rc=$rc)" [ "$rc" -eq 0 ]
		check "$name: ${modes[$i]} client done within ${LIMIT}s of SIGKILL (${ms}ms)" \
			[ "$ms" -lt $((LIMIT * 1000)) ]
		i=$((i + 1))
	done
	rc=0; wait "$ZCFS_PID" || rc=$?
	check "$name: server died of SIGKILL (rc=$rc)" [ "$rc" -eq 137 ]
	if is_mounted "$MNT"; then
		local err
		# (the root's attributes may be cached: list it and look up a new name)
		err=$(timeout -s KILL 10 ls "$MNT" 2>&1 >/dev/null; timeout -s KILL 10 stat "$MNT/new-name-$RANDOM" 2>&1 >/dev/null)
		check "$name: dead mount answers ENOTCONN (${err//$'\n'/; })" \
			eval '[ "$(grep -c "not connected" <<<"$err")" -eq 2 ]'
		timeout -s KILL 10 umount -l "$MNT"
	fi
	check "$name: no mount left after umount -l" eval '! is_mounted "$MNT"'
}

MOUNT_OPTS=()
round busy read write stat readdir directread
round many read read write write stat stat
# a server with one worker thread, killed under the same load
MOUNT_OPTS=(--threads=1)
round onethread read write stat
check "no fuse.zcfs mount of ours remains" eval '! grep -q " $MNT " /proc/self/mounts'
finish
