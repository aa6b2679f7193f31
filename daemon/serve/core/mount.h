/* Mounting a FUSE connection: mount(2) directly when we may, libfuse's
 * fusermount3 helper otherwise. */
#ifndef ZCFS_MOUNT_H
#define ZCFS_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include "common/util.h"

struct zcfs_mount;
struct zcfs_options;

/* Mounts a new connection at o->mountpoint with o's mount options (-o);
 * *ret_fd is its /dev/fuse fd. */
int zcfs_mount(const struct zcfs_options *o, uint32_t max_read, struct zcfs_mount **ret,
	       int *ret_fd) _must_check_;
/* Writeback caching: lets the mount hold up to bytes of dirty pages
 * (the bdi's max_bytes). Needs root; -errno otherwise. */
int zcfs_mount_set_dirty_limit(struct zcfs_mount *m, uint64_t bytes) _must_check_;
/* Detaches the mount and aborts its connection so every reader wakes;
 * only ever our own: nothing when the connection has ended already, no
 * umount of another mount found at the mountpoint. */
void zcfs_unmount(struct zcfs_mount *m);
void zcfs_mount_free(struct zcfs_mount *m);
/* Aborts the connection behind a FUSE mountpoint's st_dev (fusectl). */
int fuse_abort_connection(dev_t dev);

#endif
