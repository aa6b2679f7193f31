#!/usr/bin/env bash
# Unpublish unmounts for real what nobody uses, and detaches (lazily) only
# a mount that is really busy (docs/security.md "Unmounting"):
#  1. an idle bind target and then the idle last target are unpublished:
#     gone from mountinfo, no `event=unmount-busy` in zcfsd's log, the
#     connection ends, the server exits (before: zcfsd's own O_PATH fd
#     kept every mount busy, each unpublish logged unmount-busy and
#     detached);
#  2. a bind target with a file held open: unpublish detaches it
#     (unmount-busy logged), the open file still reads (the connection
#     serves the other target); the last target with a file held open:
#     detached, the connection aborted (the open file fails), no mount of
#     the connection left;
#  3. the leaf of a target renamed in another mount namespace (where it is
#     no mountpoint) and replaced by a symlink to a victim tmpfs: unpublish
#     unmounts our mount at its new place and leaves the victim alone.
# Runtime: about 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/zcfsd_lib.sh"
zcfsd_require unshare

zcfsd_start_with_v1
busy_lines() { grep -c "event=unmount-busy volume=v1 target=$1 " "$W/zcfsd.log"; }
mounted_at() { awk -v p="$1" '$5 == p' /proc/self/mountinfo | grep -q .; }
not_mounted_at() { ! mounted_at "$1"; }
# under W only: a connection number is reused by the next mount anywhere
conn_mounts() { awk -v c="0:$1" -v w="$W/" '$3 == c && $9 == "fuse.zcfs" && index($5, w) == 1' /proc/self/mountinfo | wc -l; }

# 1. idle
conn=$(vol_field v1 conn)
P1=$(server_pid v1)
ctlq volume publish v1 "$TGT/b" || fail "bind v1 at b"
echo hello >"$TGT/a/f" || fail "write f"
out=$(ctl volume unpublish v1 "$TGT/b" 2>&1 >/dev/null)
check "unpublish of the idle bind target succeeds ($out)" test "$(vol_field v1 'targets | length')" = 1
check "... b is no mount any more" not_mounted_at "$TGT/b"
check "... unmounted, not detached (unmount-busy lines: $(busy_lines "$TGT/b"))" test "$(busy_lines "$TGT/b")" = 0
out=$(ctl volume unpublish v1 "$TGT/a" 2>&1 >/dev/null)
check "unpublish of the idle last target succeeds ($out)" test "$(vol_field v1 'targets | length')" = 0
check "... no mount of connection $conn left" test "$(conn_mounts "$conn")" = 0
check "... unmounted, not detached (unmount-busy lines: $(busy_lines "$TGT/a"))" test "$(busy_lines "$TGT/a")" = 0
check "... the connection is gone" wait_for "connection $conn gone" 5 test ! -e "/sys/fs/fuse/connections/$conn"
check "... the server exited" wait_for "server $P1 exit" 5 bash -c "! kill -0 $P1 2>/dev/null"

# 2. busy
ctlq volume publish v1 "$TGT/a" || fail "publish v1 at a again"
ctlq volume publish v1 "$TGT/b" || fail "bind v1 at b again"
conn=$(vol_field v1 conn)
check "the data is back" test "$(cat "$TGT/a/f" 2>&1)" = hello
exec 6<"$TGT/b/f" || fail "open b/f"
b0=$(busy_lines "$TGT/b") a0=$(busy_lines "$TGT/a")
out=$(ctl volume unpublish v1 "$TGT/b" 2>&1 >/dev/null)
check "unpublish of the busy bind target succeeds ($out)" test "$(vol_field v1 'targets | length')" = 1
check "... b is no mount any more" not_mounted_at "$TGT/b"
check "... detached as busy (unmount-busy lines: $b0 before, $(busy_lines "$TGT/b") now)" \
	test "$(( $(busy_lines "$TGT/b") - b0 ))" = 1
check "... the file held open on it still reads" test "$(cat <&6 2>&1)" = hello
exec 6<&-
exec 7<"$TGT/a/f" || fail "open a/f"
P2=$(server_pid v1)
out=$(ctl volume unpublish v1 "$TGT/a" 2>&1 >/dev/null)
check "unpublish of the busy last target succeeds ($out)" test "$(vol_field v1 'targets | length')" = 0
check "... detached as busy (unmount-busy lines: $a0 before, $(busy_lines "$TGT/a") now)" \
	test "$(( $(busy_lines "$TGT/a") - a0 ))" = 1
check "... no mount of connection $conn left" test "$(conn_mounts "$conn")" = 0
check "... the file held open fails (connection aborted)" bash -c "! cat <&7 >/dev/null 2>&1"
exec 7<&-
check "... the connection is gone" wait_for "connection $conn gone" 5 test ! -e "/sys/fs/fuse/connections/$conn"
check "... the server exited" wait_for "server $P2 exit" 5 bash -c "! kill -0 $P2 2>/dev/null"

# 3. the leaf swapped in another mount namespace
mkdir -p "$W/victim/m"
mount -t tmpfs -o size=1M tmpfs "$W/victim/m" || fail "victim tmpfs"
echo precious >"$W/victim/m/file"
ctlq volume publish v1 "$TGT/c" || fail "publish v1 at c"
conn=$(vol_field v1 conn)
unshare -m --propagation private sh -c \
	"umount '$TGT/c' && mv '$TGT/c' '$TGT/c.old' && ln -s '$W/victim/m' '$TGT/c'" ||
	fail "swap the leaf in another namespace"
check "our mount sits at c.old now" mounted_at "$TGT/c.old"
out=$(ctl volume unpublish v1 "$TGT/c" 2>&1 >/dev/null)
check "unpublish through a swapped leaf succeeds ($out)" test "$(vol_field v1 'targets | length')" = 0
check "... no mount of connection $conn left" test "$(conn_mounts "$conn")" = 0
check "... zcfsd logged where it found it" \
	grep -q "event=unmount-moved volume=v1 target=$TGT/c found_at=$TGT/c.old" "$W/zcfsd.log"
check "... the victim tmpfs is still mounted" mounted_at "$W/victim/m"
check "... with its file" test "$(cat "$W/victim/m/file" 2>&1)" = precious
rm -f "$TGT/c"
umount "$W/victim/m"
log "unmount-busy lines in all: $(grep -c 'event=unmount-busy' "$W/zcfsd.log")"
[ "$_zcfs_failed" -eq 0 ] || show_zcfsd_log
finish
