#!/usr/bin/env bash
# Fault: clients hold files and directories of a volume open (a reader
# looping on an open fd, a writer appending through an open fd, a shell
# whose cwd is inside, an fd held by this test) while the volume is
# unpublished. The unpublish completes quickly (the busy mount is
# detached lazily and the connection aborted), every client gets an error
# instead of hanging, and no mount, server or client process is left.
# A new publish serves the data fsynced before.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require

zcfsd_start_with_v1
ctlq volume publish v1 "$TGT/a2" || fail "bind v1 at a2"
mkdir "$TGT/a/d"
dd if=/dev/urandom of="$TGT/a/d/data" bs=64k count=16 conv=fsync status=none || fail "write"
sum=$(md5sum <"$TGT/a/d/data")
P1=$(server_pid v1)
conn=$(vol_field v1 conn)

# Reader: one open fd, re-reading it from the start until an error.
( exec 3<"$TGT/a/d/data"; while dd bs=64k skip=0 <&3 >/dev/null 2>&1 && [ -e /proc/self/fd/3 ]; do
	exec 3<&-; exec 3<"$TGT/a/d/data" || exit 0; done; exit 0 ) 2>/dev/null &
READER=$!
# Writer: appends through an open fd and fsyncs each line, until that
# fails. (Under writeback caching a write(2) alone lands in the kernel's
# cache and succeeds even after the abort; fsync and close report it.)
python3 - "$TGT/a2/log" <<'EOF' 2>/dev/null &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
try:
    while True:
        os.write(fd, b"line\n")
        os.fsync(fd)
        time.sleep(0.01)
except OSError:
    sys.exit(0)
EOF
WRITER=$!
# A buffered writer that never fsyncs: what it wrote before the
# unpublish must still reach the storage (zcfsd syncs before it aborts).
python3 - "$TGT/a/lazy" <<'EOF' 2>/dev/null &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
try:
    for i in range(1000000):
        os.write(fd, b"lazy %08d\n" % i)
        time.sleep(0.001)
except OSError:
    pass
time.sleep(3600)
EOF
LAZY=$!
# A process whose cwd is a directory of the volume.
( cd "$TGT/a/d" && while ls . >/dev/null 2>&1; do sleep 0.05; done ) &
CWD=$!
exec 5<"$TGT/a/d/data"
sleep 0.5
lines() { grep -c "$1" "$2" 2>/dev/null || echo 0; }
wait_for "writers started" 20 bash -c "[ \$(grep -c lazy '$TGT/a/lazy' 2>/dev/null || echo 0) -ge 20 ] && grep -q line '$TGT/a/log'"
check "clients are running" kill -0 "$READER" "$WRITER" "$CWD" "$LAZY"

lazy_before=$(lines lazy "$TGT/a/lazy")
start=$(date +%s%N)
timeout 20 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" volume unpublish v1 "$TGT/a2" >/dev/null
rc2=$?
timeout 20 "$ZCFS_BIN/zcfsctl" --socket "$SOCK" volume unpublish v1 "$TGT/a" >/dev/null
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
log "unpublish of both targets took ${ms} ms"
check "unpublish completes (rc=$rc2/$rc)" bash -c "[ $rc2 -eq 0 ] && [ $rc -eq 0 ]"
check "... within 5 s (${ms} ms)" [ "$ms" -lt 5000 ]
check "zcfsd detached the busy mount" grep -qE "event=unmount-busy volume=v1" "$W/zcfsd.log"
check "reading the fd this shell holds fails" bash -c "! cat <&5 >/dev/null 2>&1"
exec 5<&-
check "the reader gets an error and exits" wait_for "reader" 10 bash -c "! kill -0 $READER 2>/dev/null"
check "the writer gets an error and exits" wait_for "writer" 10 bash -c "! kill -0 $WRITER 2>/dev/null"
check "the process in the volume's cwd gets an error and exits" \
	wait_for "cwd process" 10 bash -c "! kill -0 $CWD 2>/dev/null"
kill -9 "$READER" "$WRITER" "$CWD" "$LAZY" 2>/dev/null
check "no mount of the volume left" bash -c "! grep -qE ' $TGT/a2? ' /proc/self/mounts"
check "the connection is gone" wait_for "connection $conn gone" 5 test ! -e "/sys/fs/fuse/connections/$conn"
check "the server exited" bash -c "! kill -0 $P1 2>/dev/null"
check "status: created, no targets" test "$(vol_field v1 state)" = created
check "publish again" ctlq volume publish v1 "$TGT/a"
check "... fsynced data intact" bash -c "[ \"\$(md5sum <'$TGT/a/d/data')\" = '$sum' ]"
check "... the writer's lines are there" grep -q line "$TGT/a/log"
lazy_after=$(lines lazy "$TGT/a/lazy")
check "... and all the buffered writer had written before the unpublish ($lazy_after >= $lazy_before lines)" \
	test "$lazy_after" -ge "$lazy_before" -a "$lazy_before" -ge 20
ctlq volume unpublish v1 "$TGT/a"
check "nothing left mounted under W" bash -c "! grep -q ' $W' /proc/self/mounts"
check "no server left" bash -c "! pgrep -f '[z]cfs-serve .*$W/' >/dev/null"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
