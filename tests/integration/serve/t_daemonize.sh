#!/usr/bin/env bash
# zcfs-serve started without --foreground (how an operator's shell or
# fstab starts it): the command returns 0 once the child serves, and the
# child then opens existing files, reads and appends to them, creates,
# lists and removes them. Each OPEN reopens an O_PATH handle through the
# server's own /proc/self/fd, which must be the serving child's, not that
# of the parent that exited (a server that opened it before the fork got
# ENOENT on every OPEN).
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
S=$(make_tmpdir 64M)
M=$(make_tmpdir)
echo hello >"$S/f"
_zcfs_mounts+=("$M")
"$ZCFS_BIN/zcfs-serve" --transport="$ZCFS_TRANSPORT" "$S" "$M" 2>"$M.log"; rc=$?
_zcfs_dirs+=("$M.log")
check "zcfs-serve without --foreground returns 0 once serving (got $rc)" test $rc = 0
check "the mount is live" grep -q " $M fuse" /proc/self/mounts
spid=$(pgrep -f -- "zcfs-serve --transport=$ZCFS_TRANSPORT $S $M" | head -n 1)
[ -n "$spid" ] && _zcfs_pids+=("$spid")
check "the serving child runs (pid ${spid:-none})" test -n "$spid"
check "an existing file reads back" test "$(cat "$M/f" 2>&1)" = hello
echo more >>"$M/f"
check "an append through a new open lands" test "$(cat "$S/f")" = "$(printf 'hello\nmore')"
echo new >"$M/g"
check "a created file reads back through a new open" test "$(cat "$M/g" 2>&1)" = new
check "the directory lists both" test "$(ls "$M" | tr '\n' ' ')" = "f g "
rm -f "$M/g"
check "a removed file is gone" test ! -e "$S/g"
umount "$M"
for _ in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
check "the server exits after umount" bash -c "! kill -0 '$spid' 2>/dev/null"
finish
