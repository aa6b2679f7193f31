/* SOURCE as a mount of its own that carries the client mount's atime
 * and read-only flags. FUSE leaves atime to the server, and the backing
 * atime moves by the flags of the mount the backing files are opened on:
 * SOURCE's own (relatime, say), whatever -o noatime or strictatime the
 * client mount has. O_NOATIME covers noatime only where the server owns
 * the file, and kernel passthrough drops it altogether (the kernel opens
 * its own backing file with the client's open flags). A detached clone
 * of SOURCE with the client mount's flags makes every backing access,
 * the kernel's passthrough reads, mmap and exec included, follow them. */
#ifndef ZCFS_SOURCE_MOUNT_H
#define ZCFS_SOURCE_MOUNT_H

#include <stdbool.h>
#include <sys/stat.h>
#include "common/util.h"

/* Replaces *root_fd (SOURCE) with an O_PATH fd of a detached recursive
 * clone of it whose mounts have the atime flags of mount_flags (MS_*)
 * and, when read_only, MOUNT_ATTR_RDONLY. Returns 1 when it did, 0 when
 * mount_flags ask for nothing SOURCE's mount lacks (relatime, rw), or a
 * negative errno (EPERM: no CAP_SYS_ADMIN) with *root_fd unchanged. */
int source_mount_attrs(int *root_fd, unsigned long mount_flags, bool read_only) _must_check_;

/* The atime flags of the mount root_fd is on (statvfs ST_NOATIME,
 * ST_NODIRATIME, ST_RELATIME, ST_RDONLY; ST_RELATIME when unknown): how
 * backing reads move atime. */
unsigned long source_mount_atime_flags(int root_fd);

/* Whether reading the backing file or directory st describes would move
 * its atime now on a mount with st_flags (source_mount_atime_flags): the
 * kernel's atime_needs_update() and relatime_need_update() (fs/inode.c)
 * for that mount. The exclusive cache asks it at OPEN and OPENDIR: FUSE
 * inodes are S_NOATIME (fuse_iget), so a read the page cache answers
 * moves no atime anywhere, and the server drops FOPEN_KEEP_CACHE for an
 * open whose first read must reach the backing file (docs/caching.md). */
bool source_read_moves_atime(unsigned long st_flags, const struct stat *st, const struct timespec *now);

#endif
