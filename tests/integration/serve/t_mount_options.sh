#!/usr/bin/env bash
# zcfs-serve mounts like every FUSE server: -o generic mount options reach
# the mount (dev, suid, noexec, noatime, strictatime, ro, fsname=,
# subtype=), and the backing atime follows the mount's atime flags on
# every path (SOURCE served from a clone mount with those flags: noatime
# through kernel passthrough, strictatime, ro; with the exclusive cache
# an open whose read must move atime keeps no cached pages), zcfs's long options work as -o key=value, a bad -o is one line
# and exit 2 with nothing mounted; deploy/mount.fuse.zcfs (mount(8)'s
# helper) mounts SOURCE, source:/dir and -o source= forms; -o remount,ro
# goes to mount(2). And a server only ever unmounts and aborts its own
# connection (xfstests generic/412): one stopped while its mountpoint was
# unmounted and mounted again by another server leaves the new mount
# alone when it resumes and exits; one terminated after a lazy unmount
# with a file still open aborts its own connection only. ~7 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../helpers/mnt_helpers.sh"
require_root
require_fuse
top=$(cd "$(dirname "$0")/../../.." && pwd)
S=$(make_tmpdir)
M=$(make_tmpdir)
M2=$(make_tmpdir)
echo hi >"$S/f"

# mount_opts MNT: the per-mount and super options of the topmost mount at MNT
mount_opts() { awk -v m="$1" '$5 == m {o = $6; sub(/.* - /, ""); o = o " " $3} END {print o}' /proc/self/mountinfo; }
# mount_fs MNT: "TYPE SOURCE" of the topmost mount at MNT
mount_fs() { awk -v m="$1" '$5 == m {sub(/.* - /, ""); t = $1 " " $2} END {print t}' /proc/self/mountinfo; }
has_opt() { tr ' ,' '\n\n' <<<"$(mount_opts "$1")" | grep -qx "$2"; }
lacks_opt() { ! has_opt "$@"; }

log "default: nodev,nosuid"
zcfs_mount "$S" "$M"
check "default mount is nodev" has_opt "$M" nodev
check "default mount is nosuid" has_opt "$M" nosuid
check "type fuse.zcfs, source SOURCE" test "$(mount_fs "$M")" = "fuse.zcfs $S"
check "server exits 0 on umount" zcfs_umount "$M"

log "-o dev,suid,noexec,noatime,fsname=,subtype=, long options as keys"
zcfs_mount "$S" "$M" -o dev,suid,noexec,noatime,fsname=source:/x,subtype=zz,cache=exclusive,no_writeback
check "dev: no nodev" lacks_opt "$M" nodev
check "suid: no nosuid" lacks_opt "$M" nosuid
check "noexec" has_opt "$M" noexec
check "noatime" has_opt "$M" noatime
check "fsname= is the source, subtype= the type" test "$(mount_fs "$M")" = "fuse.zz source:/x"
check "-o cache=exclusive reached the server (1-day entry timeout: -d not needed)" grep -q hi "$M/f"
check "server exits 0" zcfs_umount "$M"

log "-o noatime: reads and listings through the server leave atime alone (generic/003)"
echo data >"$S/old"; mkdir -p "$S/od"; touch -a -d '2001-01-01 00:00' "$S/old" "$S/od"
zcfs_mount "$S" "$M" -o noatime,cache=none
cat "$M/old" >/dev/null; ls "$M/od" >/dev/null
check "file atime unchanged ($(stat -c %X "$S/old"))" test "$(stat -c %X "$S/old")" = "$(date -d '2001-01-01 00:00' +%s)"
check "directory atime unchanged" test "$(stat -c %X "$S/od")" = "$(date -d '2001-01-01 00:00' +%s)"
zcfs_umount "$M"
zcfs_mount "$S" "$M" -o cache=none
cat "$M/old" >/dev/null
check "without noatime the read updates atime (backing relatime)" test "$(stat -c %X "$S/old")" != "$(date -d '2001-01-01 00:00' +%s)"
zcfs_umount "$M"

# SOURCE's mount is relatime: once atime is past mtime and ctime, a
# read there leaves it (for a day); under strictatime every read moves it.
log "-o strictatime: every read through the server updates atime (generic/003)"
zcfs_mount "$S" "$M" -o strictatime,cache=none
cat "$M/old" >/dev/null; t0=$(stat -c %X "$S/old")
sleep 1.1; cat "$M/old" >/dev/null
check "a second read under strictatime updates atime again ($t0 -> $(stat -c %X "$S/old"))" test "$(stat -c %X "$S/old")" != "$t0"
check "and the client sees it" test "$(stat -c %X "$M/old")" = "$(stat -c %X "$S/old")"
zcfs_umount "$M"

# The exclusive cache keeps pages across opens (FOPEN_KEEP_CACHE) and
# FUSE inodes are S_NOATIME: a read the page cache answers moves no atime
# anywhere. An open whose first read must move atime (strictatime: every
# one; relatime: atime not past mtime and ctime, or a day old) drops the
# cached pages, so that read reaches the server (generic/003 on exclusive).
log "--cache=exclusive: reads that must move atime reach the server (generic/003)"
# nanoseconds: the client's atime (%x), and READs the server was sent
atime() { stat -c %x "$1"; }
reads() { grep -c 'op=READ ' "$M.log"; }
zcfs_mount "$S" "$M" -o strictatime,cache=exclusive --debug
echo data >"$M/ex"; mkdir "$M/exd"; cat "$M/ex" >/dev/null; ls "$M/exd" >/dev/null
t0=$(atime "$M/ex"); d0=$(atime "$M/exd")
sleep 1.1; cat "$M/ex" >/dev/null; ls "$M/exd" >/dev/null; t1=$(atime "$M/ex"); d1=$(atime "$M/exd")
check "strictatime: a second read moves the client's atime ($t0 -> $t1)" test "$t1" != "$t0"
check "strictatime: a second listing moves the directory's ($d0 -> $d1)" test "$d1" != "$d0"
sleep 1.1; cat "$M/ex" >/dev/null
check "strictatime: and a third read ($t1 -> $(atime "$M/ex"))" test "$(atime "$M/ex")" != "$t1"
zcfs_umount "$M"
zcfs_mount "$S" "$M" -o cache=exclusive --debug
echo data >"$M/rel"; t0=$(atime "$M/rel")
sleep 1.1; cat "$M/rel" >/dev/null; t1=$(atime "$M/rel")
# by a second at least: the kernel's view of a new file's times is a few
# ms off the backing file's, which alone makes the atime seem to move
later() { awk -v a="$(stat -c %.3X "$1")" -v b="$(date -d "$2" +%s.%N)" 'BEGIN { exit !(a >= b + 1) }'; }
check "relatime: the first read after a write moves atime to the read's time ($t0 -> $t1)" later "$M/rel" "$t0"
n=$(reads)
sleep 1.1; cat "$M/rel" >/dev/null
check "relatime: a second read leaves it ($(atime "$M/rel"))" test "$(atime "$M/rel")" = "$t1"
check "relatime: the second read is the kept page cache's (READs $n -> $(reads))" test "$(reads)" = "$n"
zcfs_umount "$M"

log "-o noatime on the kernel-passthrough path: its reads, mmap and exec leave atime alone (generic/120)"
cp /bin/true "$S/exe"; touch -a -d '2001-01-01 00:00' "$S/old" "$S/exe"
zcfs_mount "$S" "$M" -o noatime,exec --passthrough
if grep -q "passthrough=on" "$M.log"; then
	cat "$M/old" >/dev/null; "$M/exe"
	check "passthrough read leaves atime ($(stat -c %X "$S/old"))" test "$(stat -c %X "$S/old")" = "$(date -d '2001-01-01 00:00' +%s)"
	check "passthrough exec leaves atime ($(stat -c %X "$S/exe"))" test "$(stat -c %X "$S/exe")" = "$(date -d '2001-01-01 00:00' +%s)"
else
	log "no kernel passthrough here: not checked"
fi
zcfs_umount "$M"

touch -a -d '2001-01-01 00:00' "$S/old"; t0=$(stat -c %X "$S/old")
zcfs_mount "$S" "$M" -o ro,strictatime,subtype=
check "subtype= (empty): type fuse" test "$(mount_fs "$M")" = "fuse $S"
check "ro" has_opt "$M" ro
check "writes refused on -o ro" bash -c "! touch '$M/new' 2>/dev/null"
check "strictatime: no relatime/noatime" bash -c "! grep -E ' $M .*(relatime|noatime)' /proc/self/mountinfo >/dev/null"
cat "$M/old" >/dev/null
check "a read on a ro mount leaves atime, strictatime or not" test "$(stat -c %X "$S/old")" = "$t0"
zcfs_umount "$M"

log "bad -o: one line, exit 2, nothing mounted"
out=$("$ZCFS_BIN/zcfs-serve" -f -o bogus "$S" "$M" 2>&1); rc=$?
check "-o bogus: exit 2 ($rc)" test "$rc" = 2
check "-o bogus: one line naming it" bash -c "test \$(wc -l <<<'$out') = 1 && grep -q bogus <<<'$out'"
out=$("$ZCFS_BIN/zcfs-serve" -f -o transport "$S" "$M" 2>&1); rc=$?
check "-o transport (no value): exit 2" test "$rc" = 2
check "nothing mounted after bad -o" bash -c "! grep -q ' $M ' /proc/self/mounts"

log "mount.fuse.zcfs"
H=$(make_tmpdir)
sed "s|@BINDIR@|$ZCFS_BIN|" "$top/deploy/mount.fuse.zcfs" >"$H/mount.fuse.zcfs"
chmod 755 "$H/mount.fuse.zcfs"
wait_gone() { for _ in $(seq 50); do grep -q " $1 " /proc/self/mounts || return 0; sleep 0.1; done; return 1; }
_zcfs_mounts+=("$M")
check "helper mounts source:/dir with -o" "$H/mount.fuse.zcfs" "source:$S" "$M" -o rw,nodev,noatime,transport="$ZCFS_TRANSPORT"
check "helper's mount serves SOURCE" grep -q hi "$M/f"
check "fsname is the spec as given" test "$(mount_fs "$M")" = "fuse.zcfs source:$S"
check "noatime passed through" has_opt "$M" noatime
check "nodev passed through" has_opt "$M" nodev
check "suid: mount(8)'s default" lacks_opt "$M" nosuid
out=$("$H/mount.fuse.zcfs" "source:$S" "$M" -o remount,ro 2>&1); rc=$?
check "-o remount,ro goes to mount(2) (quiet: '$out')" test $rc = 0 -a -z "$out"
check "remounted ro" has_opt "$M" ro
check "umount ends the helper's server" umount "$M"
check "mount gone" wait_gone "$M"
out=$("$H/mount.fuse.zcfs" zcfs "$M" -r -o "source=$S,transport=$ZCFS_TRANSPORT" 2>&1); rc=$?
check "helper with -o source= and plain -r" test $rc = 0
check "helper prints nothing on success ('$out')" test -z "$out"
check "source= served" grep -q hi "$M/f"
check "-r: ro" has_opt "$M" ro
check "dev,suid: mount(8)'s defaults" bash -c "! grep -E ' $M .*(nodev|nosuid)' /proc/self/mounts >/dev/null"
umount "$M"; wait_gone "$M"
out=$("$H/mount.fuse.zcfs" "$S" "$M" -o pigeon 2>&1); rc=$?
check "helper refuses an unknown option (exit $rc)" test $rc != 0
check "and says why ($out)" grep -q pigeon <<<"$out"
check "and mounts nothing" bash -c "! grep -q ' $M ' /proc/self/mounts"

log "generic/412: a resumed server leaves the next mount at its mountpoint alone"
zcfs_mount "$S" "$M"
A=$ZCFS_PID
kill -STOP "$A"
# The umount runs beside the test: whatever waits for stopped A (its
# superblock's end if A holds a ring entry; a df of another process on
# this shared machine, which makes a plain umount EBUSY) finishes once A
# continues. -l detaches at once all the same; -i: no umount.fuse.*
# helper (xfstests' conformance run installs one) and -c: no statfs of the
# target, both of which would ask stopped A.
umount -i -l -c "$M" & U=$!
for _ in $(seq 50); do is_mounted "$M" || break; sleep 0.1; done
check "external umount while server A is stopped" bash -c "! grep -q ' $M ' /proc/self/mounts"
zcfs_mount "$S" "$M"
B=$ZCFS_PID
kill -CONT "$A"
for _ in $(seq 100); do kill -0 "$A" 2>/dev/null || break; sleep 0.1; done
check "A exited once its connection ended" bash -c "! kill -0 $A 2>/dev/null"
rc=0; wait_pid_exit "$U" 10 || rc=$?
check "the umount returned 0 (rc=$rc)" [ "$rc" -eq 0 ]
sleep 0.3
check "B still serves the mountpoint" grep -q hi "$M/f"
check "B still runs" kill -0 "$B"

log "a server terminated after a lazy umount aborts only its own connection"
zcfs_mount "$S" "$M2"
C=$ZCFS_PID
exec 9<"$M2/f"
check "lazy umount of C's mount with a file open" umount -i -l -c "$M2"
zcfs_mount "$S" "$M2"
D=$ZCFS_PID
kill -TERM "$C"
for _ in $(seq 50); do kill -0 "$C" 2>/dev/null || break; sleep 0.1; done
check "C exited on SIGTERM" bash -c "! kill -0 $C 2>/dev/null"
check "C's open file sees its connection aborted" bash -c "! cat <&9 >/dev/null 2>&1"
exec 9<&-
check "D's mount at the same mountpoint survived" grep -q hi "$M2/f"
check "D still runs" kill -0 "$D"
ZCFS_PID=$B
check "B ends cleanly" zcfs_umount "$M"
ZCFS_PID=$D
check "D ends cleanly" zcfs_umount "$M2"
finish
