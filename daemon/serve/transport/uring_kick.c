/* Kicks of waiting requests (see uring_kick.h). */
#include <string.h>
#include <sys/stat.h>
#include "common/log.h"
#include "daemon/serve/backend/inode.h"
#include "daemon/serve/backend/source_walk.h"
#include "daemon/serve/fuse/fuse_msg.h"
#include "uring_kick.h"
#include "uring_queue.h"
#include "uring_ringmem.h"

/* The kernel knows files by node id = inode number (inode.c); which ones
 * it still caches only it knows, so SOURCE is walked (bounded) until one
 * is. */
struct kick {
	struct uring_queue *q;
	unsigned tries;
};

static int kick_entry(const struct source_entry *e, void *ctx)
{
	struct kick *k = ctx;
	struct fuse_notify_retrieve_out rt;
	struct iovec iov = { .iov_base = &rt, .iov_len = sizeof(rt) };

	if (S_ISDIR(e->st->st_mode))
		return e->depth < 16 ? SOURCE_WALK_NEXT : SOURCE_WALK_PRUNE;
	if (!S_ISREG(e->st->st_mode))
		return SOURCE_WALK_NEXT;
	if (++k->tries > 4096)
		return -ENOENT;
	memset(&rt, 0, sizeof(rt));
	/* The NOTIFY_REPLY carries this as its unique, and the ring refuses
	 * a request with unique 0 with a kernel WARNING (6.18
	 * fuse_uring_copy_to_ring: WARN_ON(req->in.h.unique == 0), reported
	 * as fuse_uring_prepare_send). Even (bit 0 marks interrupts), far
	 * above the kernel's own counter, below FUSE_UNIQUE_RESEND, and new
	 * on this connection (ringmem_kick_unique says why). */
	rt.notify_unique = ringmem_kick_unique(k->q->rm);
	rt.nodeid = inode_nodeid_for(k->q->se->inodes, e->st->st_dev, e->st->st_ino);
	if (rt.nodeid && fuse_notify(k->q->se, FUSE_NOTIFY_RETRIEVE, &iov, 1) == 0)
		return SOURCE_WALK_STOP;
	return SOURCE_WALK_NEXT;
}

static bool kick(struct uring_queue *q, unsigned *tries)
{
	struct kick k = { .q = q };
	bool sent = source_walk(q->se->root_fd, kick_entry, &k) == SOURCE_WALK_STOP;

	*tries = k.tries;
	return sent;
}

bool uring_kick(struct uring_queue *q)
{
	unsigned tries;

	return kick(q, &tries);
}

void uring_kick_waiting(struct uring_queue *q)
{
	unsigned tries;

	if (!kick(q, &tries))
		log_info("qid=%u: no cached file to kick requests that waited for a server (%u tried): "
			 "they go out with the next new request", q->qid, tries);
}
