#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "log.h"
#include "passthrough.h"

int passthrough_attach(struct zcfs_session *se, struct zcfs_inode *inode, struct zcfs_handle *h,
		       struct zcfs_open_out *out)
{
	struct zcfs_backing_map map = { .fd = h->fd };
	struct zcfs_inode *ref;
	int id, r = 0;

	if (!atomic_load(&se->passthrough_on))
		return 0;
	ref = inode_get(se->inodes, inode->nodeid);
	if (!ref)
		return -ESTALE;
	inode_lock(se->inodes);
	if (inode->backing_id == 0) {
		id = ioctl(se->fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_OPEN, &map);
		if (id < 0)
			r = -errno;
		else
			inode->backing_id = id;
	}
	if (r == 0) {
		inode->opens++;
		h->inode = inode;
		h->backing_id = inode->backing_id;
	}
	inode_unlock(se->inodes);
	if (r < 0) {
		inode_put(se->inodes, ref);
		if (atomic_exchange(&se->passthrough_on, false))
			log_warn("kernel passthrough off: FUSE_DEV_IOC_BACKING_OPEN: %s%s", strerror(-r),
				 r == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return 0;
	}
	/* KEEP_CACHE and the page cache do not mix with passthrough. */
	out->open_flags = FOPEN_PASSTHROUGH | (out->open_flags & FOPEN_PARALLEL_DIRECT_WRITES);
	out->backing_id = h->backing_id;
	return 0;
}

void passthrough_detach(struct zcfs_session *se, struct zcfs_handle *h)
{
	struct zcfs_inode *inode = h->inode;
	uint32_t id;

	if (!inode)
		return;
	inode_lock(se->inodes);
	if (--inode->opens == 0 && inode->backing_id > 0) {
		id = (uint32_t)inode->backing_id;
		if (ioctl(se->fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_CLOSE, &id) < 0)
			log_debug("BACKING_CLOSE %u: %m", id);
		inode->backing_id = 0;
	}
	inode_unlock(se->inodes);
	h->inode = NULL;
	inode_put(se->inodes, inode);
}
