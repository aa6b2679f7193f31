#!/usr/bin/env bash
# Set-id bits are dropped when an unprivileged owner chowns (chgrp) any
# non-directory: regular file, fifo, socket, char and block device, in
# native and xattr ownership (pjdfstest chown/00.t 701-894 on the zcfsd
# path, where the server negotiates KILLPRIV_V2 and the xattr record
# holds the mode); set-gid without group execute stays (locking), a
# directory keeps its bits, root's chown of a set-id file stays allowed.
# A write, fallocate and truncating open by an unprivileged caller drop
# set-uid, and set-gid unless the caller is in the file's group and it is
# not group-executable (the kernel's setattr_should_drop_sgid). ~4 s.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd python3
U=65534 G1=65533 G2=65532

mode_of() { stat -c %a "$1"; }
# $PY FILE write|falloc|trunc: one modification as the calling user
PY=$(mktemp /tmp/zcfs-setid.XXXXXX.py)
_zcfs_dirs+=("$PY")
cat >"$PY" <<'EOS'
import os, sys
f, op = sys.argv[1], sys.argv[2]
fd = os.open(f, os.O_WRONLY | (os.O_TRUNC if op == "trunc" else 0))
if op == "write":
    os.write(fd, b"x")
elif op == "falloc":
    os.posix_fallocate(fd, 0, 65536)
os.close(fd)
EOS
chmod 644 "$PY"
PY="/usr/bin/python3 $PY"
for own in native xattr; do
	S=$(make_tmpdir)
	M=$(make_tmpdir)
	zcfs_mount "$S" "$M" --ownership=$own
	log "ownership=$own"
	d=$M/d
	mkdir "$d"; chmod 0777 "$d"
	: >"$d/reg"
	mkfifo "$d/fifo"
	mknod "$d/chr" c 1 3
	mknod "$d/blk" b 7 0
	python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$d/sock"
	for n in reg fifo chr blk sock; do
		f=$d/$n
		chown $U:$G1 "$f"
		chmod 06555 "$f"
		check "$own $n: 6555 before" test "$(mode_of "$f")" = 6555
		setpriv --reuid=$U --regid=$G1 --groups=$G1,$G2 -- chgrp $G2 "$f"
		check "$own $n: owner's chgrp drops set-id ($(mode_of "$f"))" test "$(mode_of "$f")" = 555
		check "$own $n: group changed" test "$(stat -c %g "$f")" = $G2
		chmod 02545 "$f"
		setpriv --reuid=$U --regid=$G1 --groups=$G1,$G2 -- chgrp $G1 "$f"
		check "$own $n: set-gid without group execute stays ($(mode_of "$f"))" test "$(mode_of "$f")" = 2545
	done
	# A write, fallocate or truncating open by a caller without CAP_FSETID
	# (KILLPRIV_V2: the server drops the bits) follows the kernel's rule:
	# set-uid goes; set-gid goes when group-executable or when the caller
	# is outside the file's group (xfstests generic/683 684).
	for op in write falloc trunc; do
		f=$d/$op
		: >"$f"; chown 0:$G1 "$f"; chmod 06666 "$f"
		as_user $U $PY "$f" $op
		check "$own $op by a non-member drops both ($(mode_of "$f"))" test "$(mode_of "$f")" = 666
		chmod 06666 "$f"
		setpriv --reuid=$U --regid=$G1 --clear-groups -- $PY "$f" $op
		check "$own $op by a member keeps set-gid without group execute ($(mode_of "$f"))" test "$(mode_of "$f")" = 2666
		chmod 06676 "$f"
		setpriv --reuid=$U --regid=$G1 --clear-groups -- $PY "$f" $op
		check "$own $op by a member drops a group-executable set-gid ($(mode_of "$f"))" test "$(mode_of "$f")" = 676
	done
	chown $U:$G1 "$d"; chmod 06777 "$d"
	setpriv --reuid=$U --regid=$G1 --groups=$G1,$G2 -- chgrp $G2 "$d"
	check "$own dir: chgrp keeps its set-id bits ($(mode_of "$d"))" test "$(mode_of "$d")" = 6777
	zcfs_umount "$M"
done
finish
