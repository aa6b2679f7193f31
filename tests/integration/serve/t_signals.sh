#!/usr/bin/env bash
# Orderly shutdown paths of zcfs-serve:
#   SIGTERM / SIGINT          -> unmounts, exits 0
#   external umount           -> exits 0
#   SIGTERM while a client is busy / holds files open -> exits 0, mount gone,
#                                the client gets an error, nothing hangs
#   umount -l while a client holds a file open -> the client keeps working or
#                                gets an error/EOF; once it closes, the server
#                                exits 0
#   umount -l + SIGTERM while a client holds a file open -> exits 0, client
#                                gets an error or EOF, nothing hangs
# The server is started with default signal dispositions (background jobs of
# a non-interactive shell otherwise inherit SIGINT ignored).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
serve_require
FSLOOP=$(need_testbin fsloop)
T=10 # seconds any step may take

new_tmpdir SRC 256M
new_tmpdir MNT
new_tmpdir OUTD
head -c 1M /dev/urandom >"$SRC/data"

# serve: SRC on MNT, with every signal reset to its default action
# shellcheck disable=SC2120  # callers may pass server options
serve() { ZCFS_SERVE_DEFAULT_SIGNALS=1 zcfs_mount "$SRC" "$MNT" "$@"; }

# mount_gone_within SECS
mount_gone_within() {
	local i
	for i in $(seq $(($1 * 20))); do is_mounted "$MNT" || return 0; sleep 0.05; done
	return 1
}

# cleanup_mount: in case a step failed, leave a clean state for the next one
cleanup_mount() {
	if is_mounted "$MNT"; then umount -l "$MNT" 2>/dev/null; fi
	kill -KILL "$ZCFS_PID" 2>/dev/null
	wait "$ZCFS_PID" 2>/dev/null
	true
}

sanity_io() { cat "$MNT/data" >/dev/null && echo hi >"$MNT/hello" && [ "$(cat "$MNT/hello")" = hi ]; }

for sig in TERM INT; do
	log "SIG$sig on an idle mount"
	serve
	check "SIG$sig: mount works" sanity_io
	check "SIG$sig: startup line names the transport" grep -q 'transport=' "$MNT.log"
	kill -"$sig" "$ZCFS_PID"
	rc=0; wait_pid_exit "$ZCFS_PID" $T || rc=$?
	check "SIG$sig: server exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
	check "SIG$sig: mount gone" mount_gone_within 2
	cleanup_mount
done

log "external umount"
serve
sanity_io
umount "$MNT"
rc=0; wait_pid_exit "$ZCFS_PID" $T || rc=$?
check "umount: server exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
check "umount: mount gone" mount_gone_within 1
cleanup_mount

log "SIGTERM while clients are busy"
serve
pids=()
for m in read write stat; do
	mkdir -p "$MNT/w$m" # does not exist below the mount: ENOENT once detached
	cp "$SRC/data" "$MNT/w$m/data"
	FSLOOP_ANY_ERROR=1 timeout -s KILL 60 "$FSLOOP" "$m" "$MNT/w$m" 50 >"$OUTD/busy.$m" 2>&1 &
	pids+=($!)
done
sleep 1
kill -TERM "$ZCFS_PID"
rc=0; wait_pid_exit "$ZCFS_PID" $T || rc=$?
check "busy SIGTERM: server exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
check "busy SIGTERM: mount gone" mount_gone_within 2
i=0
for m in read write stat; do
	rc=0; wait_pid_exit "${pids[$i]}" $T || rc=$?
	log "client $m: rc=$rc $(grep -v started "$OUTD/busy.$m" | tr '\n' ' ')"
	# 0: got an error (any: ENOTCONN, ECONNABORTED, or ENOENT once the mount
	# is detached); 124: hung; 3: never noticed
	check "busy SIGTERM: $m client got an error and did not hang (rc=$rc)" [ "$rc" -eq 0 ]
	kill -KILL "${pids[$i]}" 2>/dev/null
	i=$((i + 1))
done
cleanup_mount

log "umount -l while a client holds a file open, then the client closes"
serve
timeout -s KILL 60 "$FSLOOP" hold "$MNT" 4 >"$OUTD/hold1" 2>&1 &
hp=$!
sleep 0.5
umount -l "$MNT"
check "lazy: mount point detached" mount_gone_within 1
rc=0; wait_pid_exit "$hp" $T || rc=$?
log "client: rc=$rc $(grep -v started "$OUTD/hold1" | tr '\n' ' ')"
# 3 = kept reading the detached mount until its time limit (legitimate), 0 = got error/EOF
check "lazy: client did not hang (rc=$rc)" [ "$rc" -eq 3 -o "$rc" -eq 0 ]
rc=0; wait_pid_exit "$ZCFS_PID" $T || rc=$?
check "lazy: server exits 0 once the last file is closed (rc=$rc)" [ "$rc" -eq 0 ]
cleanup_mount

log "umount -l while a client holds a file open, then SIGTERM"
serve
timeout -s KILL 60 "$FSLOOP" hold "$MNT" 30 >"$OUTD/hold2" 2>&1 &
hp=$!
exec 7<"$MNT/data" # and this shell holds one too
sleep 0.5
umount -l "$MNT"
sleep 0.3
kill -TERM "$ZCFS_PID"
rc=0; wait_pid_exit "$ZCFS_PID" $T || rc=$?
check "lazy+TERM: server exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
rc=0; wait_pid_exit "$hp" $T || rc=$?
log "client: rc=$rc $(grep -v started "$OUTD/hold2" | tr '\n' ' ')"
check "lazy+TERM: client got an error or EOF, no hang (rc=$rc)" [ "$rc" -eq 0 ]
timeout -s KILL $T dd bs=64k count=1 iflag=direct <&7 >/dev/null 2>&1
rc=$?
check "lazy+TERM: read on the shell's open fd does not hang (rc=$rc)" [ "$rc" -ne 124 -a "$rc" -ne 137 ]
exec 7<&-
check "lazy+TERM: no mount left" mount_gone_within 1
cleanup_mount

check "no mount of ours left" eval '! grep -q " $MNT " /proc/self/mounts'
finish
