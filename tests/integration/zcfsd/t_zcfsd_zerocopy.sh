#!/usr/bin/env bash
# zcfsd on a kernel with buffer pools and zero-copy (Linux 7.3, protocol
# 7.46; on this project's machines: in the guest, scripts/guest-suite.sh).
# Tenant t1 has data_paths.zero_copy and its volume is published through
# `zcfs-csi serve` (a kubelet-like NodePublishVolume); tenant t2 has not
# (zcfsctl publish). Required:
#  - t1's server: pools and zero-copy on, CAP_SYS_ADMIN dropped after its
#    rings and pools were registered; t2's: pools, zero-copy off
#    (disabled_by_option), never any capability;
#  - every thread of both servers: the tenant's uid, CapEff, CapPrm and
#    CapAmb 0, Seccomp 2, NoNewPrivs 1;
#  - the pool bytes charged to the tenant (the volume's pinned figure
#    covers every queue's pool), RLIMIT_MEMLOCK = that grant, and what
#    the server has locked within it;
#  - fio crc32c verify on both: 4 KiB direct randrw, 1 MiB direct,
#    64 KiB buffered with fsync, unaligned (3000-byte) buffered;
#  - the queues' counts when they stop: t1 served requests zero-copy,
#    t2 through the pool and none zero-copy.
# Skips (77) where zcfsctl kernel finds no zero-copy.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
trap zcfsd_quiet_cleanup EXIT
zcfsd_require fio python3 setpriv
[ "$ZCFS_TRANSPORT" = uring ] || skip "pools and zero-copy exist only on the io_uring transport"
st=$("$ZCFS_BIN/zcfsctl" kernel --json | jq -r '.paths.zero_copy.status + ": " + .paths.zero_copy.reason')
[ "${st%%:*}" = supported ] || skip "zero_copy $st [kernel $(uname -r)]"
[ -x "$ZCFS_BIN/zcfs-csi" ] || fail "$ZCFS_BIN/zcfs-csi not built"
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || skip "python3-grpcio / python3-grpc-tools not installed"
top=$(cd "$(dirname "$0")/../../.." && pwd)

ZCFS_TEST_ZERO_COPY=true zcfsd_env 256M true yes
# t2: io_uring, no zero-copy
sed -i "s|\"allowed_target_prefixes\": \[\"$TGT/t2\"\]}|\"allowed_target_prefixes\": [\"$TGT/t2\"], \"data_paths\": {\"io_uring\": true, \"zero_copy\": false}}|" "$POLICY"
grep -q '"zero_copy": false}}' "$POLICY" || fail "policy: t2's data_paths not written"
zcfsd_start
EP=$W/plugin/csi.sock
mkdir -p "$W/plugin" "$W/registry" "$TGT/t2"
"$ZCFS_BIN/zcfs-csi" --socket "$SOCK" --state-dir "$W/state/csi" --node-id guest-node \
	serve --endpoint "unix://$EP" --registration-socket "$W/registry/reg.sock" 2>"$W/csi.log" &
_zcfs_pids+=("$!")
for _ in $(seq 200); do grep -q 'event=serving' "$W/csi.log" && break; sleep 0.05; done
grep -q 'event=serving' "$W/csi.log" || { cat "$W/csi.log"; fail "zcfs-csi serve did not start"; }
csi() { PYTHONPATH=$top/tests/integration/helpers $PY "$top/tests/integration/helpers/csi_publish.py" \
	"$top/plugin/proto" /usr/include "unix://$EP" "$@"; }

ZC=pv-zc ZT=$TGT/pods/zc/mount
mkdir -p "$(dirname "$ZT")"
check "t1: NodePublishVolume through zcfs-csi serve" csi publish "$ZC" "$ZT" tenant=t1 transport=uring
create_publish_or_fail v2 "$TGT/t2/b" --tenant t2
slog() { echo "$STATE/logs/$1.log"; }
check "t1: pools and zero-copy on ($(grep -o 'uring data path.*' "$(slog $ZC)"))" \
	grep -qE 'uring data path: bufpool=(on|registered) .*zero_copy=on' "$(slog $ZC)"
check "t1: CAP_SYS_ADMIN dropped after registration" grep -q 'caps: CAP_SYS_ADMIN dropped' "$(slog $ZC)"
check "t2: pools without zero-copy ($(grep -o 'uring data path.*' "$(slog v2)"))" \
	grep -qE 'uring data path: bufpool=(on|registered) .*zero_copy=off zc_reason=disabled_by_option' "$(slog v2)"

# every thread of a server: identity, capabilities, seccomp
threads_ok() { # PID UID: prints the offending thread, 1 if any
	local t f bad=0
	for t in /proc/"$1"/task/*; do
		f=$(awk '/^(Uid|CapEff|CapPrm|CapAmb|Seccomp|NoNewPrivs):/ { printf "%s=%s ", $1, $2 }' "$t/status")
		case $f in
		"Uid:=$2 CapPrm:=0000000000000000 CapEff:=0000000000000000 CapAmb:=0000000000000000 NoNewPrivs:=1 Seccomp:=2 ") ;;
		*) echo "${t##*/}: $f"; bad=1;;
		esac
	done
	return $bad
}
lim() { awk '/^Max locked memory/ { print $4 }' "/proc/$1/limits"; }
vmlck() { awk '/^VmLck:/ { print $2 * 1024 }' "/proc/$1/status"; }
for id in "$ZC" v2; do
	p=$(server_pid "$id") u=$TENANT_UID
	[ "$id" = v2 ] && u=$TENANT_UID2
	out=$(threads_ok "$p" "$u")
	check "$id: every thread ($(ls /proc/"$p"/task | wc -l)) uid $u, CapEff/CapPrm/CapAmb 0, Seccomp 2, NoNewPrivs 1" \
		test -z "$out"
	[ -n "$out" ] && echo "$out" | sed 's/^/# /'
	pinned=$(vol_field "$id" pinned)
	bufs=$(sed -n 's/.*uring data path: .* pool_buffers=\([0-9]*\).*/\1/p' "$(slog "$id")" | tail -n 1)
	q=$(sed -n 's/.*transport=uring queues=\([0-9]*\).*/\1/p' "$(slog "$id")" | tail -n 1)
	pool=$(( ${q:-0} * ${bufs:-0} * 131072 ))
	log "$id: charged $pinned bytes; pool ${q:-?} queues x ${bufs:-?} x 128 KiB = $pool; RLIMIT_MEMLOCK $(lim "$p"), VmLck $(vmlck "$p"); $(grep -o 'transport=uring [^ ]* [^ ]* pinned=[0-9]*' "$(slog "$id")" | tail -n 1)"
	check "$id: the pool bytes are charged (pinned $pinned >= $pool > 0)" test "$pool" -gt 0 -a "$pinned" -ge "$pool"
	check "$id: RLIMIT_MEMLOCK is the grant ($pinned), locked within it" \
		test "$(lim "$p")" = "$pinned" -a "$(vmlck "$p")" -le "$pinned"
done

verify() { # DIR: fio crc32c verify, the sizes and modes of the issue
	fio --output-format=terse --directory="$1" --size=8M --ioengine=psync --verify=crc32c \
		--verify_fatal=1 --do_verify=1 \
		--name=rand4k --rw=randrw --bs=4k --direct=1 \
		--name=seq1m --rw=write --bs=1M --direct=1 --stonewall \
		--name=buf64k --rw=write --bs=64k --direct=0 --fsync=4 --stonewall \
		--name=unaligned --rw=randwrite --bs=3000 --direct=0 --stonewall >"$W/fio.$2" 2>&1
}
for id in "$ZC" v2; do
	d=$ZT
	[ "$id" = v2 ] && d=$TGT/t2/b
	check "$id: fio crc32c verify (4k direct randrw, 1M direct, 64k buffered+fsync, 3000-byte buffered)" verify "$d" "$id"
	grep -iE 'error|verify|bad' "$W/fio.$id" | head -n 5 | sed 's/^/# fio: /'
done

check "t1: NodeUnpublishVolume" csi unpublish "$ZC" "$ZT"
ctlq volume unpublish v2 "$TGT/t2/b"
for id in "$ZC" v2; do wait_for "$id's server to stop" 20 bash -c "grep -q 'requests: zero_copy=' '$(slog "$id")'"; done
sum() { grep -o "requests:.*" "$(slog "$1")" | grep -o " $2=[0-9]*" | cut -d= -f2 | awk '{ s += $1 } END { print s + 0 }'; }
log "$ZC served zero_copy=$(sum "$ZC" zero_copy) pool=$(sum "$ZC" pool); v2 zero_copy=$(sum v2 zero_copy) pool=$(sum v2 pool)"
check "t1: requests served zero-copy ($(sum "$ZC" zero_copy)) > 0" test "$(sum "$ZC" zero_copy)" -gt 0
check "t2: requests served through the pool ($(sum v2 pool)) > 0, none zero-copy" \
	test "$(sum v2 pool)" -gt 0 -a "$(sum v2 zero_copy)" = 0
finish
