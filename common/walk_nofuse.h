/* Paths walked as root without asking any FUSE server. Every name looked
 * up in a directory of a FUSE file system is a request to its server: a
 * tenant's (its own fusermount3 mount, or a zcfs volume whose server it
 * stopped) that never answers would make the walker wait with it. So a
 * path is walked from / one component at a time, each directory an
 * O_PATH fd, and before a name is looked up in one, its mount is checked
 * (statx: the VFS answers, not the server) not to be listed as fuse or
 * fuse.* in mountinfo. zcfsd, zcfs-csi and the volume plugin walk
 * targets through here. */
#ifndef ZCFS_WALK_NOFUSE_H
#define ZCFS_WALK_NOFUSE_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

/* PATH (absolute; no "." or ".." components) opened with FLAGS (O_PATH,
 * O_DIRECTORY, ...; O_CLOEXEC always): the fd, or -errno. No symlink or
 * magic link is followed (-ELOOP). A directory to look a name up in that
 * is on a FUSE mount: -EXDEV, and HIT (if not NULL) says which mount
 * ("fuse.x at /mnt"). PATH itself may be the root of a FUSE mount: it is
 * reached by a lookup in its parent, and opening it O_PATH asks nothing.
 * A mount that left mountinfo while walked: -ESTALE. */
int nofuse_open(const char *path, uint64_t flags, char *hit, size_t hit_len) _must_check_;

/* The parent of PATH's last component, walked and checked like every
 * directory on the way (a name is to be looked up in it): an O_PATH fd,
 * *leaf pointing into PATH. -EINVAL when the last component is empty,
 * "." or "..". */
int nofuse_open_parent(const char *path, const char **leaf, char *hit, size_t hit_len) _must_check_;

/* The mount FD (any fd, O_PATH included) is on is not FUSE: 0, -EXDEV
 * (HIT says which mount) or -errno. For a directory reached without a
 * walk, e.g. one a tenant owns and could mount its own FUSE on. */
int nofuse_check(int fd, char *hit, size_t hit_len) _must_check_;

/* rmdir of PATH's last component in its parent opened by
 * nofuse_open_parent (-ELOOP for a symlink on the way, -EXDEV for a FUSE
 * mount): 0 or -errno. A symlink as the last component is not followed
 * (-ENOTDIR). */
int rmdir_nofollow(const char *path) _must_check_;

#endif
