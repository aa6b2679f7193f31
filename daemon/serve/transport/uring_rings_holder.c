/* Holder rings (see uring_rings.h, uring_holder.h): the FUSE commands go
 * on hring, a ring holder's SQPOLL ring mapped from holder_fd; each is
 * recorded in the ring memfd before it is published, so a successor
 * resumes every entry where this server left it. */
#include <poll.h>
#include <string.h>
#include "common/log.h"
#include "uring_entry.h"
#include "uring_holder.h"
#include "uring_kick.h"
#include "uring_ring.h"
#include "uring_rings.h"
#include "uring_userdata.h"
#include "uring_zerocopy.h"

static struct ringmem_slot *slot(const struct uring_queue *q, unsigned idx)
{
	return ringmem_slot(q->rm, q->qid, idx);
}

/* Whether any entry of the queue was ever given a command: then a server
 * of this connection had added the queue (and its pool) to the kernel. */
static bool queue_commanded(const struct uring_queue *q)
{
	for (unsigned i = 0; i < q->g->depth; i++)
		if (atomic_load(&slot(q, i)->gen))
			return true;
	return false;
}

/* Where a held request's payload is: the entry's buffer, or on a pool
 * queue the buffer the kernel delivered it in (NULL: none that exists). */
static void *held_payload(const struct uring_queue *q, const struct uring_entry *e)
{
	uint32_t off = e->hdr->ring_ent_in_out.offset;

	if (!q->pool_on)
		return e->payload;
	if (off % q->g->payload_size || off / q->g->payload_size >= q->pool.nbufs)
		return NULL;
	return q->pool_base + off;
}

/* Created, restricted and enabled by the holder. */
static int holder_setup(struct uring_queue *q)
{
	int r;

	q->setup_step = "holder_ring";
	r = holder_ring_map(q->holder_fd, ringmem_holder_params(q->rm, q->qid), &q->hring);
	if (r < 0)
		return r;
	q->holder_fd = -1;	/* the ring's now: closed by io_uring_queue_exit */
	q->hring_ok = true;
	q->cmd_ring = &q->hring;
	q->fixed_fuse_fd = true;	/* the holder's fixed file 0 */
	return 0;
}

/* The holder's CQ made visible to our wait: a multishot poll of its ring
 * fd on our ring (readable when it has CQEs). Re-armed when the kernel
 * ends it. */
static int arm_holder_poll(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = uring_queue_sqe(q);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, q->hring.ring_fd, POLLIN);
	sqe->user_data = ud_encode(UD_HOLDER_POLL, 0);
	q->hpoll_armed = true;
	return 0;
}

static void log_attach(struct uring_queue *q, uint32_t tail, const unsigned *n)
{
	log_info("qid=%u: holder rings epoch=%llu sq_tail=%u entries: register=%u wait=%u resubmit=%u "
		 "recommit=%u serve-saved=%u serve-header=%u dead=%u cq_ready=%u", q->qid,
		 (unsigned long long)q->holder_epoch, tail, n[HOLDER_TAKE_REGISTER], n[HOLDER_TAKE_WAIT],
		 n[HOLDER_TAKE_RESUBMIT], n[HOLDER_TAKE_RECOMMIT], n[HOLDER_TAKE_SERVE_SAVED],
		 n[HOLDER_TAKE_SERVE_HEADER], n[HOLDER_TAKE_DEAD], io_uring_cq_ready(&q->hring));
}

/* Entry e resumed as holder_take_decide said (t). */
static int take_entry(struct uring_queue *q, struct uring_entry *e, enum holder_take t)
{
	struct ringmem_slot *s = slot(q, e->index);

	switch (t) {
	case HOLDER_TAKE_REGISTER:
		return uring_entry_submit(q, e, ZCFS_URING_CMD_REGISTER);
	case HOLDER_TAKE_RESUBMIT:
		e->commit_id = s->commit_id;
		return uring_entry_submit(q, e, s->cmd_op);
	case HOLDER_TAKE_RECOMMIT:
		/* Maybe committed already (an earlier holder's entry): then
		 * ENOENT and a fresh REGISTER (uring_entry.c). */
		e->commit_id = e->hdr->ring_ent_in_out.commit_id;
		e->recovered = true;
		return uring_entry_submit(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
	case HOLDER_TAKE_WAIT:
		e->cmd_op = s->cmd_op;
		e->commit_id = s->commit_id;
		e->state = ENT_IN_KERNEL;
		return 0;
	case HOLDER_TAKE_SERVE_SAVED:
		holder_restore_request(s, e->hdr, held_payload(q, e));
		/* fall through */
	case HOLDER_TAKE_SERVE_HEADER:
		atomic_store(&s->taken, atomic_load(&s->gen));
		s->taken_res = 0;
		e->recovered = true;
		e->state = ENT_HELD;
		return 0;
	case HOLDER_TAKE_DEAD:
		e->state = ENT_DEAD;
		q->dead++;
		return 0;
	}
	return 0;
}

/* Each entry resumed where the predecessor left it (uring_holder.h);
 * those that need serving are served once every command is published. */
static int holder_attach(struct uring_queue *q)
{
	uint32_t tail = holder_sq_ktail(&q->hring);
	unsigned i, n[HOLDER_TAKE_DEAD + 1] = { 0 };
	bool stale_epoch = false;
	int r = 0;

	/* A standby mapped the ring while its predecessor still submitted:
	 * our SQEs go where the kernel's tail is now. */
	q->hring.sq.sqe_head = q->hring.sq.sqe_tail = tail;
	q->holder_epoch = ringmem_holder_epoch(q->rm);
	/* An unregistered pool (7.46) when the plan has one: ADD_QUEUE and
	 * ADD_BUFPOOL on the holder's ring (the queue belongs to the ring its
	 * commands come on), once per connection. */
	r = zerocopy_queue_setup(q, q->ext && q->ext->adopted && queue_commanded(q));
	q->pops = uring_payload_for(q);
	for (i = 0; i < q->g->depth && r == 0; i++) {
		struct uring_entry *e = &q->ents[i];
		struct ringmem_slot *s = slot(q, i);
		enum holder_take t = holder_take_decide(s, q->holder_epoch, tail,
							e->hdr->ring_ent_in_out.commit_id);

		n[t]++;
		stale_epoch |= atomic_load(&s->gen) && s->epoch != q->holder_epoch;
		r = take_entry(q, e, t);
	}
	if (r == 0) {
		r = io_uring_submit(&q->hring);
		r = r < 0 ? r : 0;
	}
	if (r == 0)
		r = arm_holder_poll(q);
	log_attach(q, tail, n);
	/* An earlier holder's entries died with it: what reached this queue
	 * meanwhile waits in its list (uring_kick.h). */
	if (r == 0 && q->se->resume && stale_epoch)
		uring_kick_waiting(q);
	for (i = 0; i < q->g->depth && r == 0; i++) {
		struct uring_entry *e = &q->ents[i];
		if (e->state != ENT_HELD)
			continue;
		log_info("qid=%u entry=%u: serving commit_id=%llu, taken or delivered before the previous "
			 "server died", q->qid, i, (unsigned long long)e->hdr->ring_ent_in_out.commit_id);
		e->state = ENT_IN_SERVER;
		uring_entry_serve(q, e);
	}
	return r;
}

/* The holder's sq thread reads the iovecs in its own mm: from the memfd,
 * mapped at the same address there. The command is recorded before it
 * is published; its generation goes in the user_data. */
static void holder_prep_cmd(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe,
			    uint32_t op)
{
	struct ringmem_slot *s = slot(q, e->index);
	bool reg = op == ZCFS_URING_CMD_REGISTER;

	if (reg) {
		memcpy(s->iov, e->iov, sizeof(s->iov));
		sqe->addr = (uint64_t)(uintptr_t)s->iov;
	}
	sqe->user_data = ud_encode_gen(UD_FUSE_CMD, e->index,
				       holder_note_cmd(s, q->holder_epoch, q->hring.sq.sqe_tail - 1, op,
						       reg ? 0 : e->commit_id));
}

static bool holder_take(struct uring_queue *q, uint32_t idx, uint64_t ud, int res)
{
	if (holder_take_cqe(slot(q, idx), ud_gen(ud), res))
		return true;
	q->stale_cqes++;	/* a dead predecessor had handled it */
	return false;
}

static void holder_taken(struct uring_queue *q, struct uring_entry *e)
{
	holder_save_request(slot(q, e->index), e->hdr, e->payload);
}

static void holder_replied_hook(struct uring_queue *q, struct uring_entry *e)
{
	holder_replied(slot(q, e->index));
}

/* Before our wait: the holder's SQ published, its CQ looked at (the poll
 * only tells of CQEs posted after it was armed). True when CQEs wait. */
static bool holder_flush(struct uring_queue *q)
{
	if (!q->registered || q->holder_parked)
		return false;
	if (io_uring_submit(&q->hring) >= 0 && q->n_clear)
		uring_entry_clear_submitted(q);
	if (q->handing_over)
		return false;
	if (!q->hpoll_armed && arm_holder_poll(q) < 0)
		log_err("qid=%u: cannot poll the holder's ring", q->qid);
	return io_uring_cq_ready(&q->hring) > 0;
}

/* The holder's CQ once it is ours (REGISTER done) and while no hand-over
 * is under way: from then on what arrives is the successor's. */
static struct io_uring *holder_more_cqes(struct uring_queue *q)
{
	return q->registered && !q->handing_over ? &q->hring : NULL;
}

/* Planned restart: once no entry is being served (their backing I/O done,
 * their commits written), every command is published and nothing more is
 * taken from the holder's CQ; what arrives waits there for the successor,
 * idle entries stay the holder's. */
static int holder_park(struct uring_queue *q)
{
	unsigned i;
	int r;

	if (q->holder_parked)
		return 1;
	for (i = 0; i < q->g->depth; i++)
		if (q->ents[i].state == ENT_IN_SERVER || q->ents[i].state == ENT_BACKING_IO)
			return 0;
	r = io_uring_submit(&q->hring);
	if (q->n_clear && r >= 0)
		uring_entry_clear_submitted(q);
	q->holder_parked = true;
	q->held = io_uring_cq_ready(&q->hring);
	return r < 0 ? r : 1;
}

/* Not mapped (a failed set-up): the fd is still ours. */
static void holder_release(struct uring_queue *q)
{
	if (q->hring_ok)
		io_uring_queue_exit(&q->hring);
	q->hring_ok = false;
	q->holder_fd = safe_close(q->holder_fd);
}

const struct uring_rings_ops uring_rings_holder = {
	.name = "holder",
	.setup = holder_setup,
	.attach = holder_attach,
	.prep_cmd = holder_prep_cmd,
	.take_cqe = holder_take,
	.taken = holder_taken,
	.replied = holder_replied_hook,
	.flush = holder_flush,
	.more_cqes = holder_more_cqes,
	.handover_step = holder_park,
	.release = holder_release,
};
