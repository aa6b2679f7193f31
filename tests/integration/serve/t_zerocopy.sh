#!/usr/bin/env bash
# Zero-copy over FUSE-over-io_uring (protocol 7.46 buffer pools, Linux 7.3
# series): a --zero-copy=on server must say so in its init line, give up
# CAP_SYS_ADMIN once its rings are registered (CapEff 0 for a server that
# had only that capability, checked in /proc/PID/status), and pass
# posix_check and fio verification. On a kernel without the series the
# test skips naming the missing feature, as zcfsctl kernel finds it.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
require_fuse
require_cmd python3
require_cmd setpriv
[ "$ZCFS_TRANSPORT" = uring ] || skip "zero-copy exists only on the io_uring transport"
need_serve
CTL=$ZCFS_BIN/zcfsctl
PC=$(need_testbin posix_check)
[ -x "$CTL" ] || fail "$CTL not built"

new_tmpdir WORK
"$CTL" kernel --json >"$WORK/k.json" || fail "zcfsctl kernel failed"
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$WORK/k.json"; }
st=$(field "j['paths']['zero_copy']['status']")
if [ "$st" != supported ]; then
	skip "zero_copy $st: $(field "j['paths']['zero_copy']['reason']") [kernel $(field "j['kernel']"), FUSE $(field "j['fuse_protocol']")]"
fi

new_tmpdir SRC 2G
new_tmpdir MNT
# A server holding CAP_SYS_ADMIN and nothing else (bounding set of one,
# ownership in xattrs since it cannot chown): after registration its
# CapEff must be 0. It mounts with that capability itself.
new_tmpdir WRAP
printf '#!/bin/sh\nexec setpriv --bounding-set=-all,+sys_admin -- %q "$@"\n' \
	"$ZCFS_BIN/zcfs-serve" >"$WRAP/zcfs-serve"
chmod +x "$WRAP/zcfs-serve"
# A registered pool of the default geometry (2 CPUs: 16 MiB) is pinned
# by its registration: more than a default RLIMIT_MEMLOCK (8 MiB).
ulimit -l unlimited
ZCFS_BIN=$WRAP zcfs_mount "$SRC" "$MNT" --zero-copy=on --buffer-pool=registered --ownership=xattr
check "init line: bufpool=registered zero_copy=on" \
	grep -qE "uring data path: bufpool=registered .*zero_copy=on" "$MNT.log"
check "serving line carries zero_copy=on" grep -q "zero_copy=on" "$MNT.log"
check "server logged the capability drop" grep -q "caps: CAP_SYS_ADMIN dropped" "$MNT.log"
capeff=$(awk '/^CapEff:/ {print $2}' "/proc/$ZCFS_PID/status")
log "server CapEff after registration: $capeff"
check "CapEff=0 after registration ($capeff)" [ $(( 0x$capeff )) -eq 0 ]
check "server logged CapEff=0000000000000000" grep -q "CapEff=0000000000000000" "$MNT.log"
for task in /proc/"$ZCFS_PID"/task/*; do
	eff=$(awk '/^CapEff:/ {print $2}' "$task/status")
	prm=$(awk '/^CapPrm:/ {print $2}' "$task/status")
	check "thread ${task##*/}: CAP_SYS_ADMIN neither effective nor permitted" \
		[ $(( (0x$eff | 0x$prm) & (1 << 21) )) -eq 0 ]
done

out="$WORK/pc.out"
timeout -k 5 300 "$PC" "$MNT" >"$out" 2>&1; rc=$?
grep '^not ok' "$out" | sed 's/^/# /'
check "posix_check on --zero-copy=on: $(tail -n 1 "$out") (rc=$rc)" [ "$rc" -eq 0 ]

if command -v fio >/dev/null; then
	mkdir -p "$MNT/fio"
	rc=0
	timeout -s KILL 300 fio --name=zc --directory="$MNT/fio" --size=64m --bs=1m --rw=randwrite \
		--ioengine=psync --verify=crc32c --verify_fatal=1 --do_verify=1 --numjobs=2 \
		--direct=1 >"$WORK/fio.out" 2>&1 || rc=$?
	check "fio verify (O_DIRECT, 1M, zero-copy path) rc=$rc" [ "$rc" -eq 0 ]
	[ "$rc" -eq 0 ] || tail -n 20 "$WORK/fio.out" | sed 's/^/# fio: /'
fi
rc=0; umount_wait "$MNT" || rc=$?
check "server exits 0 after umount (rc=$rc)" [ "$rc" -eq 0 ]
finish || { show_log "$MNT"; exit 1; }
