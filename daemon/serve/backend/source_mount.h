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
#include "daemon/common/util.h"

/* Replaces *root_fd (SOURCE) with an O_PATH fd of a detached recursive
 * clone of it whose mounts have the atime flags of mount_flags (MS_*)
 * and, when read_only, MOUNT_ATTR_RDONLY. Returns 1 when it did, 0 when
 * mount_flags ask for nothing SOURCE's mount lacks (relatime, rw), or a
 * negative errno (EPERM: no CAP_SYS_ADMIN) with *root_fd unchanged. */
int source_mount_attrs(int *root_fd, unsigned long mount_flags, bool read_only) _must_check_;

#endif
