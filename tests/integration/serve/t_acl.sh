#!/usr/bin/env bash
# POSIX ACLs (xfstests generic/099): with --ownership=native the kernel
# enforces the backing files' ACLs (FUSE_POSIX_ACL) and a parent's default
# ACL, not the umask, sets a new entry's mode and ACL (FUSE_DONT_MASK);
# without a default ACL the umask still applies; an access ACL set by an
# owner outside the file's group drops set-gid (FUSE_SETXATTR_EXT's
# ACL_KILL_SGID); a set-gid parent's new subdirectory keeps the default
# ACL's permissions. --no-acl and --ownership=xattr have none: setfacl fails
# with EOPNOTSUPP. ~3 s.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
require_cmd setfacl
require_cmd getfacl
U=65534
S=$(make_tmpdir 64M)
M=$(make_tmpdir)
zcfs_mount "$S" "$M"
mkdir "$M/d"
chmod 0755 "$M/d"
check "setfacl -d on a directory" setfacl -d -m u::rwx,g::r-x,o::--- "$M/d"
check "getfacl shows the default ACL" bash -c "getfacl -p '$M/d' 2>/dev/null | grep -q '^default:other::---'"
(umask 077; touch "$M/d/file"; mkdir "$M/d/sub")
check "file under a default ACL ignores umask 077 ($(stat -c %A "$M/d/file"))" test "$(stat -c %A "$M/d/file")" = "-rw-r-----"
check "directory inherits the default ACL ($(stat -c %A "$M/d/sub"))" test "$(stat -c %A "$M/d/sub")" = "drwxr-x---"
check "subdirectory carries the default ACL on" bash -c "getfacl -p '$M/d/sub' 2>/dev/null | grep -q '^default:other::---'"
(umask 027; touch "$M/plain")
check "without a default ACL the umask applies ($(stat -c %A "$M/plain"))" test "$(stat -c %A "$M/plain")" = "-rw-r-----"
echo secret >"$M/acl"
chmod 0644 "$M/acl"
check "readable by others by mode" as_user $U cat "$M/acl"
check "setfacl u:$U:--- on a file" setfacl -m u:$U:--- "$M/acl"
check "the kernel enforces the ACL entry" bash -c "! setpriv --reuid=$U --regid=$U --clear-groups -- cat '$M/acl' >/dev/null 2>&1"
check "the backing file holds the ACL" bash -c "getfacl -n -p '$S/acl' 2>/dev/null | grep -q '^user:$U:---'"
check "setfacl -b removes it" setfacl -b "$M/acl"
check "readable again" as_user $U cat "$M/acl"
# Setting an access ACL drops set-gid when the caller (the owner) is
# outside the file's group, as on a local file system (generic/375).
for f in "$M/sgf" "$M/sgd"; do
	case $f in *f) : >"$f";; *) mkdir "$f";; esac
	chown $U:$U "$f"; chmod 2755 "$f"
	setpriv --reuid=$U --regid=$U --clear-groups -- setfacl -m u::rwx,g::rwx,o::rwx "$f"
	check "$(basename "$f"): the owner in the group keeps set-gid ($(stat -c %A "$f"))" test "$(stat -c %a "$f")" = 2777
	chmod 2755 "$f"
	setpriv --reuid=$U --regid=$((U - 1)) --clear-groups -- setfacl -m u::rwx,g::rwx,o::rwx "$f"
	check "$(basename "$f"): the owner outside the group drops it ($(stat -c %A "$f"))" test "$(stat -c %a "$f")" = 777
done
# A subdirectory of a set-gid directory with a default ACL gets the
# permissions the ACL gives, and set-gid (generic/444).
mkdir "$M/sgp"; setfacl -d -m u:101:rwx "$M/sgp"; chown $U:$U "$M/sgp"; chmod 2755 "$M/sgp"
for g in $U $((U - 1)); do
	setpriv --reuid=$U --regid=$g --clear-groups -- mkdir "$M/sgp/sub$g"
	check "mkdir by gid $g in a set-gid dir with a default ACL ($(stat -c %A "$M/sgp/sub$g"))" \
		test "$(stat -c %A "$M/sgp/sub$g")" = drwxrwsr-x
done
zcfs_umount "$M"

for args in "--no-acl" "--ownership=xattr"; do
	zcfs_mount "$S" "$M" $args
	out=$(setfacl -m u:$U:--- "$M/acl" 2>&1)
	check "$args: setfacl refused ($out)" grep -q "Operation not supported" <<<"$out"
	(umask 022; touch "$M/x$RANDOM")
	check "$args: umask applies" bash -c "ls -l '$M' | grep -q '^-rw-r--r--.* x'"
	zcfs_umount "$M"
done
finish
