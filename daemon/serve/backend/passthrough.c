/* Kernel passthrough backing ids (passthrough.h). Registered by the
 * server itself when it may (FUSE_DEV_IOC_BACKING_OPEN needs
 * CAP_SYS_ADMIN: a standalone root server), else by zcfsd over the
 * broker (--broker-fd, broker_client.c). */
#include <stdatomic.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include "broker_client.h"
#include "common/log.h"
#include "passthrough.h"
#include "common/zcfs_broker.h"

/* inode->backing_id while the inode has opens served without
 * passthrough: the kernel refuses passthrough and cached opens of one
 * inode at the same time (EIO), so its later opens stay cached too
 * until all of them are closed. */
#define PT_REFUSED (-1)
/* Per-file fallback lines before they are only counted. */
#define MAX_FALLBACK_LINES 100

static atomic_uint fallbacks;

static int register_fd(struct zcfs_session *se, int fd)
{
	struct zcfs_backing_map map = { .fd = fd };

	if (se->broker)
		return broker_client_open(se->broker, fd);
	return RET_NERRNO(ioctl(se->fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_OPEN, &map));
}

static void unregister_id(struct zcfs_session *se, int id)
{
	uint32_t u = (uint32_t)id;
	int r;

	if (se->broker)
		r = broker_client_close(se->broker, id);
	else
		r = RET_NERRNO(ioctl(se->fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_CLOSE, &u));
	if (r < 0)
		log_debug("passthrough: closing backing id %d: %s", id, strerror(-r));
}

/* Without a broker a refusal means no CAP_SYS_ADMIN, which holds for
 * every file: off for the session. With one, only this file is affected
 * (zcfsd refused it, or is busy). Either way the open succeeds. */
static void note_failure(struct zcfs_session *se, struct zcfs_inode *inode, int r)
{
	unsigned n;

	if (!se->broker) {
		if (atomic_exchange(&se->passthrough_on, false))
			log_warn("kernel passthrough off: FUSE_DEV_IOC_BACKING_OPEN: %s%s", strerror(-r),
				 r == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return;
	}
	n = atomic_fetch_add(&fallbacks, 1) + 1;
	if (n <= MAX_FALLBACK_LINES)
		log_warn("passthrough: node %llu served without passthrough: %s%s",
			 (unsigned long long)inode->nodeid, strerror(-r),
			 n == MAX_FALLBACK_LINES ? " (further ones are not logged)" : "");
}

int passthrough_attach(struct zcfs_session *se, struct zcfs_inode *inode, struct zcfs_handle *h,
		       struct zcfs_open_out *out)
{
	struct zcfs_inode *ref;
	int got = 0, extra = 0;
	bool first;

	if (!atomic_load(&se->passthrough_on))
		return 0;
	ref = inode_get(se->inodes, inode->nodeid);
	if (!ref)
		return -ESTALE;
	inode_lock(se->inodes);
	first = inode->opens == 0 && inode->backing_id == 0;
	inode_unlock(se->inodes);
	/* Registering may mean a round trip to zcfsd: not under the lock. */
	if (first)
		got = register_fd(se, h->fd);
	inode_lock(se->inodes);
	if (first && inode->opens == 0 && inode->backing_id == 0)
		inode->backing_id = got > 0 ? got : PT_REFUSED;
	else if (got > 0)
		extra = got;	/* another open of the inode got there first */
	inode->opens++;
	h->inode = inode;
	h->backing_id = inode->backing_id;
	inode_unlock(se->inodes);
	if (extra)
		unregister_id(se, extra);
	if (got < 0 && h->backing_id <= 0)
		note_failure(se, inode, got);
	if (h->backing_id <= 0)
		return 0;
	/* KEEP_CACHE and the page cache do not mix with passthrough. */
	out->open_flags = FOPEN_PASSTHROUGH | (out->open_flags & FOPEN_PARALLEL_DIRECT_WRITES);
	out->backing_id = h->backing_id;
	return 0;
}

void passthrough_detach(struct zcfs_session *se, struct zcfs_handle *h)
{
	struct zcfs_inode *inode = h->inode;
	int id = 0;

	if (!inode)
		return;
	inode_lock(se->inodes);
	if (--inode->opens == 0) {
		id = inode->backing_id;
		inode->backing_id = 0;
	}
	inode_unlock(se->inodes);
	if (id > 0)
		unregister_id(se, id);
	h->inode = NULL;
	inode_put(se->inodes, inode);
}

void passthrough_announce(struct zcfs_session *se)
{
	int state = atomic_load(&se->passthrough_on) ? ZCFS_BROKER_PT_ON :
		    se->opts->quota_bytes ? ZCFS_BROKER_PT_QUOTA : ZCFS_BROKER_PT_NOT_OFFERED;
	int r;

	if (!se->broker)
		return;
	r = broker_client_hello(se->broker, state);
	if (r < 0)
		log_warn("passthrough broker: hello: %s", strerror(-r));
}
