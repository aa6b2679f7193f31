/* Who owns the rings a queue's FUSE commands go on, behind one table so
 * the queue (uring_queue.c) and its entries (uring_entry.c) have no branch
 * on it, chosen when the queue is made (transport_uring.c):
 *   own     the queue's own ring carries the commands (optionally over a
 *           ring memfd, uring_ringmem.h, that a restarted server maps again)
 *   holder  --holder-rings: a ring holder's SQPOLL ring carries them
 *           (uring_holder.h); the queue's own ring carries the backing
 *           I/O, the wake poll and a poll of the holder's ring, and a
 *           successor resumes every entry from the memfd's bookkeeping
 * Every hook runs on the queue thread. */
#ifndef ZCFS_URING_RINGS_H
#define ZCFS_URING_RINGS_H

#include <stdbool.h>
#include <stdint.h>

struct io_uring;
struct io_uring_sqe;
struct uring_queue;
struct uring_entry;

struct uring_rings_ops {
	const char *name;
	/* At set-up, once the queue's own ring exists: q->cmd_ring (and
	 * whether /dev/fuse is its fixed file 0). */
	int (*setup)(struct uring_queue *q);
	/* When asked to register (after INIT): REGISTERs, or resuming each
	 * entry where a predecessor left it; those that held requests are
	 * served. */
	int (*attach)(struct uring_queue *q);
	/* An entry's command SQE is complete but for its user_data. */
	void (*prep_cmd)(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe,
			 uint32_t op);
	/* Whether a command CQE (user_data ud) of entry idx is to be handled:
	 * false for one a dead predecessor had handled. */
	bool (*take_cqe)(struct uring_queue *q, uint32_t idx, uint64_t ud, int res);
	/* A request was taken by e / e's reply is about to overwrite it /
	 * e's reply is complete (NULL: nothing). */
	void (*taken)(struct uring_queue *q, struct uring_entry *e);
	void (*replying)(struct uring_queue *q, struct uring_entry *e);
	void (*replied)(struct uring_queue *q, struct uring_entry *e);
	/* Before the thread waits: true when completions wait already. */
	bool (*flush)(struct uring_queue *q);
	/* A ring to reap besides the queue's own, or NULL. */
	struct io_uring *(*more_cqes)(struct uring_queue *q);
	/* One step of a planned hand-over once the completions are reaped:
	 * 0 while under way, 1 when done, -errno when it failed. */
	int (*handover_step)(struct uring_queue *q);
	/* At stop, after the queue's own ring is gone. */
	void (*release)(struct uring_queue *q);
};

extern const struct uring_rings_ops uring_rings_own;
extern const struct uring_rings_ops uring_rings_holder;

#endif
