#!/usr/bin/env bash
# Extended attributes on symlinks, fifos and devices behave as on tmpfs
# (xfstests generic/062), in native and xattr ownership: trusted.* set,
# read, listed and removed on the link itself (never its target), user.*
# refused with EPERM on a symlink, the ownership record never shown. ~2 s.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd setfattr
require_cmd getfattr
for own in native xattr; do
	S=$(make_tmpdir 64M)
	M=$(make_tmpdir)
	zcfs_mount "$S" "$M" --ownership=$own
	log "ownership=$own"
	echo data >"$M/t"
	ln -s t "$M/lnk"
	mkfifo "$M/fifo"
	mknod "$M/chr" c 1 3
	for n in lnk fifo chr; do
		check "$own $n: setfattr -h trusted.a" setfattr -h -n trusted.a -v v1 "$M/$n"
		check "$own $n: getfattr -h trusted.a" bash -c "getfattr -h --only-values -n trusted.a '$M/$n' 2>/dev/null | grep -qx v1"
		check "$own $n: listed, record hidden" bash -c "getfattr -h -d -m - '$M/$n' 2>/dev/null | grep -q '^trusted.a=' && ! getfattr -h -d -m - '$M/$n' 2>/dev/null | grep -q containers"
	done
	check "$own: the target has no trusted.a" bash -c "! getfattr -n trusted.a '$M/t' >/dev/null 2>&1"
	out=$(setfattr -h -n user.a -v 1 "$M/lnk" 2>&1)
	check "$own: user.* on a symlink: EPERM ($out)" grep -q "Operation not permitted" <<<"$out"
	check "$own lnk: removexattr" setfattr -h -x trusted.a "$M/lnk"
	check "$own lnk: gone after remove" bash -c "! getfattr -h -n trusted.a '$M/lnk' >/dev/null 2>&1"
	check "$own: the symlink still resolves" grep -q data "$M/lnk"
	zcfs_umount "$M"
done
finish
