/* Ring buffers a restarted server can take over (--ring-memfd).
 *
 * On 6.18, FUSE_NOTIFY_RESEND replays only the requests of /dev/fuse:
 * a request the kernel handed to a ring entry of a server that died
 * stays with that entry, and its caller waits until the connection ends.
 * But the kernel finds such a request again by its commit id on any
 * COMMIT_AND_FETCH of that queue, and copies the reply from the buffers
 * the entry registered, by their user address. So the buffers live in a
 * memfd that zcfsd keeps for the connection, and every server of the
 * volume maps it at the same address. A small table in it keeps, per
 * entry, the commit id it last committed: an entry header that carries
 * another id holds a request the kernel delivered (even one the dead
 * server never reaped). The successor serves those from the headers and
 * payloads still in the memfd and commits them with their commit ids,
 * which also puts the dead server's entries back to work. */
#ifndef ZCFS_URING_RINGMEM_H
#define ZCFS_URING_RINGMEM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "daemon/common/util.h"

struct uring_geometry;

struct ringmem_slot {
	/* What the entry last committed, set once that COMMIT was submitted:
	 * a request committed but not yet marked is served twice (the kernel
	 * then refuses the second commit), as FUSE_NOTIFY_RESEND would. */
	_Atomic uint64_t done_id;
};

struct ringmem {
	int fd;
	void *base;		/* where the memfd is mapped, the same in every server */
	size_t size;
	size_t meta_bytes;	/* header + slot table, page aligned */
	size_t queue_bytes;	/* one queue's headers and payloads */
	unsigned nr_queues, depth;
	bool recovering;	/* mapped a predecessor's buffers of this connection */
	struct ringmem_slot *slots;	/* nr_queues * depth */
};

/* Maps the memfd for geometry g. With resume, takes over a predecessor's
 * mapping (same address, same geometry) and sets recovering; otherwise,
 * or when that is impossible (logged), starts afresh -- unless
 * take_only (a standby, whose predecessor still uses them): then the
 * error. */
int ringmem_attach(int fd, const struct uring_geometry *g, bool resume, bool take_only,
		   struct ringmem **ret) _must_check_;
void ringmem_detach(struct ringmem *rm);

/* The notify_unique of this server's next kick (uring_queue.c): even,
 * from 2^62 up, and never the same twice on one connection. Every server
 * of the connection draws from one counter in the memfd: a kick request
 * a dead server left in the kernel keeps its unique in the queue's hash,
 * and a successor's kick with the same unique would make the kernel
 * match the successor's commit to the wrong entry (fuse_request_find
 * finds the first request of that unique), cross-wiring ring buffers.
 * rm NULL (no --ring-memfd): a counter of this process, time-seeded. */
uint64_t ringmem_kick_unique(struct ringmem *rm);

/* Queue qid's buffer region (headers, then payloads). */
void *ringmem_queue_mem(const struct ringmem *rm, unsigned qid);
struct ringmem_slot *ringmem_slot(const struct ringmem *rm, unsigned qid, unsigned idx);

#endif
