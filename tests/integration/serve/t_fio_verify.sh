#!/usr/bin/env bash
# fio data integrity through the mount: several jobs write with crc32c
# verification headers and read everything back (verify_fatal), with the
# psync, sync and libaio engines, buffered and O_DIRECT, sequential and
# random, block sizes 4k..1M; ~300 MiB in total, bounded in time.
# ZCFS_TEST_NATIVE=1 runs the same jobs on plain tmpfs.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
is_native || require_fuse
need_serve
require_cmd fio
require_cmd python3

new_tmpdir SRC 1G
new_tmpdir MNT
new_tmpdir WORK

mount_or_native "$SRC" "$MNT"
mkdir "$MNT/fio"

cat >"$WORK/verify.fio" <<EOF
[global]
directory=$MNT/fio
verify=crc32c
verify_fatal=1
do_verify=1
verify_dump=0
randrepeat=1
group_reporting=0
size=48m

# sequential buffered, big blocks
[seq-psync-1m]
ioengine=psync
rw=write
bs=1m
size=64m

# random buffered, small blocks, odd mix of sizes
[rand-psync-4k-64k]
ioengine=psync
rw=randwrite
bsrange=4k-64k
size=32m

# random O_DIRECT, asynchronous, queue depth 16
[rand-libaio-direct]
ioengine=libaio
iodepth=16
direct=1
rw=randwrite
bsrange=4k-256k
size=64m

# sequential O_DIRECT with the sync engine
[seq-sync-direct-128k]
ioengine=sync
direct=1
rw=write
bs=128k
size=48m

# random buffered with periodic fsync and verification while writing
[rand-sync-fsync-verify-backlog]
ioengine=sync
rw=randwrite
bs=8k
fsync=16
verify_backlog=256
size=32m

# overwrite: write the same region twice (the second pass is verified)
[overwrite-psync]
ioengine=psync
rw=randwrite
bs=16k
loops=2
size=24m

# O_DIRECT random 4k with libaio, deep queue
[rand-libaio-direct-4k]
ioengine=libaio
iodepth=32
direct=1
rw=randwrite
bs=4k
size=16m
EOF

log "fio jobs: $(grep -c '^\[' "$WORK/verify.fio") (incl. [global])"
rc=0
timeout -s KILL 120 fio --output-format=json --output="$WORK/out.json" "$WORK/verify.fio" \
	>"$WORK/fio.stdout" 2>&1 || rc=$?
check "fio exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
if [ "$rc" -ne 0 ]; then sed 's/^/# fio: /' "$WORK/fio.stdout" | tail -n 30; fi

# Per job: no error, every byte written, and read back for verification.
python3 - "$WORK/out.json" >"$WORK/jobs.txt" <<'PY' || true
import json, sys
try:
    text = open(sys.argv[1]).read()
    # fio may print warnings before the JSON document
    data = json.loads(text[text.index('{'):])
except Exception as e:
    print("BAD cannot parse fio output: %s" % e)
    sys.exit(0)
for j in data.get("jobs", []):
    w = j["write"]["io_bytes"]; r = j["read"]["io_bytes"]
    ok = j["error"] == 0 and w > 0 and r > 0
    print("%s %s error=%d written=%dMiB verified-read=%dMiB" %
          ("OK" if ok else "BAD", j["jobname"], j["error"], w >> 20, r >> 20))
PY
while read -r status rest; do
	check "fio job $rest" [ "$status" = OK ]
done <"$WORK/jobs.txt"
check "fio reported 7 jobs" [ "$(grep -c . "$WORK/jobs.txt")" -eq 7 ]
grep -i 'verify.*fail\|bad magic\|crc32c' "$WORK/fio.stdout" | head -n 5 | sed 's/^/# /'

rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]

log "remount and verify everything again (fio --verify_only)"
mount_or_native "$SRC" "$MNT"
rc=0
timeout -s KILL 120 fio --verify_only "$WORK/verify.fio" >"$WORK/fio2.stdout" 2>&1 || rc=$?
check "fio --verify_only after remount exits 0 (rc=$rc)" [ "$rc" -eq 0 ]
if [ "$rc" -ne 0 ]; then sed 's/^/# fio: /' "$WORK/fio2.stdout" | tail -n 30; fi
check "fio --verify_only read data back" grep -q 'READ: bw=' "$WORK/fio2.stdout"
rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after the second umount (rc=$rc)" [ "$rc" -eq 0 ]
[ "$_zcfs_failed" -eq 0 ] || show_log "$MNT"
finish
