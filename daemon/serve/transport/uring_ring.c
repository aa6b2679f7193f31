/* A queue's ring and memory (see uring_ring.h). */
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include "common/log.h"
#include "hugebuf.h"
#include "uring_ring.h"
#include "uring_ringmem.h"
#include "uring_userdata.h"

/* A cleared SQE; the SQ holds one slot per entry plus the wake poll, so
 * running out means a bookkeeping bug, and submitting frees slots. */
static struct io_uring_sqe *ring_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		(void)io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
	}
	if (sqe)
		memset(sqe, 0, ZCFS_URING_SQE_SIZE);
	return sqe;
}

struct io_uring_sqe *uring_queue_sqe(struct uring_queue *q)
{
	return ring_sqe(&q->ring);
}

struct io_uring_sqe *uring_queue_fuse_cmd_sqe(struct uring_queue *q, uint32_t op)
{
	/* A holder's ring (its fixed file 0 is the fuse fd) or our own. */
	struct io_uring_sqe *sqe = ring_sqe(q->cmd_ring);

	if (!sqe)
		return NULL;
	sqe->opcode = IORING_OP_URING_CMD;
	if (q->fixed_fuse_fd) {
		sqe->fd = 0;
		sqe->flags = IOSQE_FIXED_FILE;
	} else {
		sqe->fd = q->se->fuse_fd;
	}
	sqe->cmd_op = op;
	return sqe;
}

int uring_queue_run_sync(struct uring_queue *q, struct io_uring_sqe *sqe)
{
	const uint64_t ud = ud_encode(UD_SETUP, 0);
	/* On the ring it was prepared on (a holder's: its CQ is ours). */
	struct io_uring *ring = q->cmd_ring ? q->cmd_ring : &q->ring;
	struct io_uring_cqe *cqe;
	int r, res = -EIO;
	bool done = false;

	/* ADD_QUEUE and ADD_BUFPOOL complete at issue, never held. */
	sqe->user_data = ud;
	r = io_uring_submit(ring);
	while (r >= 0 && !done) {
		r = io_uring_wait_cqe(ring, &cqe);
		if (r == -EINTR) {
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		if (cqe->user_data == ud) {
			res = cqe->res;
			done = true;
		} else {
			q->on_cqe(q, cqe);
		}
		io_uring_cqe_seen(ring, cqe);
	}
	return r < 0 ? r : res;
}

int uring_queue_arm_wake(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = uring_queue_sqe(q);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, q->efd, POLLIN);
	sqe->user_data = ud_encode(UD_WAKE, 0);
	return 0;
}

int uring_queue_ring_create(struct uring_queue *q)
{
	/* Cheapest completion mode first; older kernels refuse with -EINVAL. */
	static const unsigned modes[] = {
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
		IORING_SETUP_SUBMIT_ALL,
		0,
	};
	const struct uring_geometry *g = q->g;
	struct io_uring_params p;
	size_t i;
	int r = -EINVAL;

	/* With a ring memfd (a successor takes over), deliveries must not
	 * wait in DEFER_TASKRUN's list: a killed thread drops those without
	 * writing their headers. Plain task work runs before the kill takes
	 * effect, so every delivered request can be found again. */
	for (i = q->rm ? 1 : 0; i < ARRAY_SIZE(modes) && r == -EINVAL; i++) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQE128 | modes[i];
		/* Sandboxed: start disabled so the opcode allowlist is in
		 * place before the ring can run anything (sandbox.c). */
		if (q->se->opts->sandbox)
			p.flags |= IORING_SETUP_R_DISABLED;
		r = io_uring_queue_init_params(g->ring_entries, &q->ring, &p);
	}
	if (r < 0)
		return r;
	q->ring_ok = true;
	if (p.sq_entries != g->sq_entries || p.cq_entries != g->cq_entries || p.cq_off.cqes != g->cqes_off)
		log_warn("qid=%u: ring is sq=%u cq=%u cqes@%u, sized for sq=%u cq=%u cqes@%zu; "
			 "pinned-bytes figure is off", q->qid, p.sq_entries, p.cq_entries,
			 p.cq_off.cqes, g->sq_entries, g->cq_entries, g->cqes_off);
	log_debug("qid=%u: ring flags=0x%x entries=%u", q->qid, p.flags, p.sq_entries);
	return 0;
}

/* Locked so the budget the kernel enforces (RLIMIT_MEMLOCK) is the one
 * --print-pinned reports; mlock also faults every page in. The stock
 * kernel copies into these buffers and needs no pin, so when the limit is
 * lower we run unlocked (pinning nothing) rather than not at all. An
 * unpinned pool (uring_queue_lock_bytes) stays pageable: only the headers
 * are locked, the rest let go (a ring memfd's region may have been locked
 * whole for the stock layout). */
static void lock_mem(struct uring_queue *q, char *mem, size_t size)
{
	size_t lock = uring_queue_lock_bytes(q->g);

	if (lock < size)
		(void)munlock(mem + lock, size - lock);
	q->locked = mlock(mem, lock) == 0;
	if (!q->locked) {
		static atomic_bool warned;
		if (!atomic_exchange(&warned, true))
			log_warn("ring buffers not locked (%zu bytes per queue): %m; raise "
				 "RLIMIT_MEMLOCK to the --print-pinned figure", size);
		(void)madvise(mem, lock, MADV_POPULATE_WRITE);
	}
}

/* Headers first, then one payload buffer per entry (stock) or the pool
 * (7.46: entries register an empty iov[1] and get a pool buffer per
 * request). */
int uring_queue_layout(struct uring_queue *q)
{
	const struct uring_geometry *g = q->g;
	size_t size = uring_queue_buf_bytes(g);
	bool pool = g->payload_bufs != g->depth || (q->ext && q->ext->pool);
	char *mem = q->mem;
	unsigned i;

	/* With a ring memfd the pool lives there too (ringmem_attach made
	 * room for it): the kernel keeps the pool's address for every later
	 * server of the connection. Same bytes: maybe split differently. */
	if (!mem || q->mem_size != size) {
		if (mem && !q->rm)
			munmap(mem, q->mem_size);
		q->mem = NULL;
		/* Allocated by the pinned thread, so first touch is on its node. */
		mem = q->rm ? ringmem_queue_mem(q->rm, q->qid) : hugebuf_map(size);
		if (mem == MAP_FAILED)
			return -errno;
		q->mem = mem;
		q->mem_size = size;
	}
	lock_mem(q, mem, size);
	if (!q->ents)
		q->ents = calloc(g->depth, sizeof(*q->ents));
	if (!q->ents)
		return -ENOMEM;
	q->pool_base = pool ? mem + g->depth * g->header_size : NULL;
	for (i = 0; i < g->depth; i++) {
		struct uring_entry *e = &q->ents[i];
		e->q = q;
		e->index = i;
		e->pool_id = -1;
		e->pkind = URING_PAYLOAD_COPY;
		e->hdr = (void *)(mem + i * g->header_size);
		e->payload = pool ? NULL : mem + g->depth * g->header_size + i * g->payload_size;
		e->iov[0] = (struct iovec){ .iov_base = e->hdr, .iov_len = g->header_size };
		e->iov[1] = (struct iovec){ .iov_base = e->payload, .iov_len = pool ? 0 : g->payload_size };
	}
	return 0;
}
