#!/usr/bin/env bash
# kill -9 of a volume's server in the middle of a fio write job with
# --verify=crc32c: zcfsd restarts the server on the same connection and
# resends the requests in flight, so the job completes and verifies
# without an I/O error. Needs zcfs-serve --resume (serving a connection
# initialized by an earlier server); skipped with that reason otherwise.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require fio
"$ZCFS_BIN/zcfs-serve" --help | grep -q -- --resume ||
	skip "zcfs-serve cannot resume a live connection after a restart (no --resume: no INIT is replayed, node ids and file handles die with the server)"
# On io_uring, FUSE_NOTIFY_RESEND (6.18) does not replay what the dead
# server's ring entries held: the new server answers those itself from the
# ring buffers zcfsd keeps in a memfd (--ring-memfd, docs/supervision.md).

zcfsd_env 256M true
zcfsd_start
create_publish_or_fail v1 "$TGT/a"
# Rate-limited so the kill lands in the middle of the write phase.
fio --name=crash --directory="$TGT/a" --rw=write --bs=64k --size=96M --rate=48m --ioengine=psync \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --end_fsync=1 >"$W/fio.out" 2>&1 &
FIO=$!
# A lost request would block the writer forever: bound the wait.
( sleep 90; kill -9 "$FIO" 2>/dev/null ) &
WATCHDOG=$!
sleep 0.7
P0=$(server_pid v1)
check "fio is still writing when the server is killed" kill -0 "$FIO"
kill -9 "$P0"
check "fio completes and verifies" wait "$FIO"
kill "$WATCHDOG" 2>/dev/null
check "the server was restarted" test "$(vol_field v1 restarts)" -ge 1
check "fio saw no verify error" bash -c "! grep -qi 'verify.*fail\|bad magic\|crc32c' '$W/fio.out'"
log "requests the killed server's ring entries held, answered by its successor: $(grep -c 'held by the previous server' "$STATE/logs/v1.log" 2>/dev/null)"
if [ "$_zcfs_failed" -eq 0 ]; then sed 's/^/# fio: /' "$W/fio.out" | tail -n 8; else sed 's/^/# fio: /' "$W/fio.out" | head -n 30; fi
ctl volume unpublish v1 "$TGT/a" >/dev/null
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
