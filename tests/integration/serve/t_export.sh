#!/usr/bin/env bash
# File handles (xfstests generic/426 467 477 756 777): zcfs-serve either
# hands out handles that open again after the kernel dropped its inodes,
# or none at all (FUSE_NO_EXPORT_SUPPORT: name_to_handle_at EOPNOTSUPP);
# never one that opens as ESTALE. Today: none (docs/architecture.md
# says why). ~2 s.
. "$(dirname "$0")/../../lib.sh"
require_root
require_fuse
S=$(make_tmpdir)
M=$(make_tmpdir)
zcfs_mount "$S" "$M"
echo x >"$M/f"
ln "$M/f" "$M/g"
mkdir "$M/d"
for p in f g d; do
	out=$("$ZCFS_TESTBIN/fhandle" "$M/$p" "$M")
	check "$p: no handle or a working one ($out)" test $? = 0
	check "$p: refused with EOPNOTSUPP, as negotiated" test "$out" = "nohandle EOPNOTSUPP"
done
zcfs_umount "$M"
finish
