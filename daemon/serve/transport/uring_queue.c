/* FUSE-over-io_uring queue thread (see uring_queue.h). Requests arrive as
 * CQEs of the entries' REGISTER / COMMIT_AND_FETCH commands; READ and WRITE
 * move their data as the queue's payload strategy says (uring_payload.h:
 * backing I/O on the same ring into or out of the entry's buffer, or
 * zero-copy) and are committed from that completion, so the thread never
 * blocks on file data. Every other opcode runs synchronously through
 * session_dispatch. */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "daemon/serve/backend/inode.h"
#include "hugebuf.h"
#include "common/log.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "daemon/serve/backend/source_walk.h"
#include "daemon/serve/fuse/fuse_msg.h"
#include "uring_holder.h"
#include "uring_queue.h"
#include "uring_ringmem.h"
#include "uring_userdata.h"
#include "uring_zerocopy.h"

_Static_assert(offsetof(struct io_uring_sqe, cmd_op) == 8, "sqe->cmd_op at byte 8");
_Static_assert(offsetof(struct io_uring_sqe, addr3) == ZCFS_URING_CMD_AREA_OFF,
	       "SQE command area at byte 48");

static void report(struct uring_queue *q, bool *done, int *err, int r)
{
	pthread_mutex_lock(&q->lock);
	if (!*done) {
		*err = r;
		*done = true;
	}
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static int wait_report(struct uring_queue *q, bool *done, int *err)
{
	int r;

	pthread_mutex_lock(&q->lock);
	while (!*done)
		pthread_cond_wait(&q->cond, &q->lock);
	r = *err;
	pthread_mutex_unlock(&q->lock);
	return r;
}

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

static struct io_uring_sqe *queue_sqe(struct uring_queue *q)
{
	return ring_sqe(&q->ring);
}

struct io_uring_sqe *uring_queue_sqe(struct uring_queue *q)
{
	return queue_sqe(q);
}

struct io_uring_sqe *uring_queue_fuse_cmd_sqe(struct uring_queue *q, uint32_t op)
{
	/* A holder's ring (its fixed file 0 is the fuse fd) or our own. */
	struct io_uring_sqe *sqe = ring_sqe(q->holder ? &q->hring : &q->ring);

	if (!sqe)
		return NULL;
	sqe->opcode = IORING_OP_URING_CMD;
	if (q->holder || q->fixed_fuse_fd) {
		sqe->fd = 0;
		sqe->flags = IOSQE_FIXED_FILE;
	} else {
		sqe->fd = q->se->fuse_fd;
	}
	sqe->cmd_op = op;
	return sqe;
}

static int submit_fuse_cmd(struct uring_queue *q, struct uring_entry *e, uint32_t op)
{
	struct io_uring_sqe *sqe = uring_queue_fuse_cmd_sqe(q, op);
	struct zcfs_uring_cmd_req cmd;

	if (!sqe)
		return -EBUSY;
	memset(&cmd, 0, sizeof(cmd));
	cmd.qid = (uint16_t)q->qid;
	if (op == ZCFS_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)e->iov;
		sqe->len = ZCFS_URING_REGISTER_IOVS;
	} else {
		cmd.commit_id = e->commit_id;
	}
	memcpy((char *)sqe + ZCFS_URING_CMD_AREA_OFF, &cmd, sizeof(cmd));
	if (q->pops->prep_cmd)	/* 7.46 form: zero-copy slot, fixed pool */
		q->pops->prep_cmd(q, e, sqe, op);
	if (q->holder) {
		/* The holder's sq thread reads the iovecs in its own mm: from
		 * the memfd, mapped at the same address there. */
		struct ringmem_slot *s = ringmem_slot(q->rm, q->qid, e->index);
		if (op == ZCFS_URING_CMD_REGISTER) {
			memcpy(s->iov, e->iov, sizeof(s->iov));
			sqe->addr = (uint64_t)(uintptr_t)s->iov;
		}
		sqe->user_data = ud_encode_gen(UD_FUSE_CMD, e->index,
					       holder_note_cmd(s, q->holder_epoch, q->hring.sq.sqe_tail - 1, op,
							       op == ZCFS_URING_CMD_REGISTER ? 0 : e->commit_id));
	} else {
		sqe->user_data = ud_encode(UD_FUSE_CMD, e->index);
	}
	e->cmd_op = op;
	e->state = ENT_IN_KERNEL;
	if (q->rm && op == ZCFS_URING_CMD_COMMIT_AND_FETCH) {
		e->committed_id = e->commit_id;
		if (!e->clear_after_submit) {
			e->clear_after_submit = true;
			q->n_clear++;
		}
	}
	return 0;
}

/* After a submit: the COMMITs it carried are the kernel's now, so a
 * successor must not serve those requests again. */
static void clear_submitted(struct uring_queue *q)
{
	unsigned i;

	for (i = 0; i < q->g->depth && q->n_clear; i++) {
		struct uring_entry *e = &q->ents[i];
		if (!e->clear_after_submit)
			continue;
		e->clear_after_submit = false;
		q->n_clear--;
		atomic_store(&ringmem_slot(q->rm, q->qid, i)->done_id, e->committed_id);
	}
}

/* The reply function of ring requests: out header into in_out, payload
 * into the entry's buffer (no copy when the handler built it there). An
 * iov without a base is data already where the kernel takes it (zero-copy
 * READ): only its length goes back. */
static int uring_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	struct uring_entry *e = req->tctx;
	struct uring_queue *q = e->q;
	struct fuse_out_header oh;
	char *dst = e->payload;
	size_t cap = dst ? q->g->payload_size : 0, total = 0, copied = 0;
	int i;

	for (i = 0; i < iovcnt; i++) {
		total += iov[i].iov_len;
		if (iov[i].iov_base)
			copied += iov[i].iov_len;
		else if (dst && iov[i].iov_len)
			copied = SIZE_MAX;	/* a buffer we would have to fill: a bug */
	}
	if (copied > cap) {
		log_err("op=%s reply of %zu bytes exceeds the %zu-byte ring payload",
			fuse_opcode_name(req->in.opcode), total, cap);
		error = -EIO;
		iovcnt = 0;
		total = 0;
	}
	/* From here the request's bytes go: a successor must not serve it
	 * again from them (ringmem_held_state). */
	if (q->rm && !q->holder)
		ringmem_mark_replying(e->hdr->in_out);
	for (i = 0, copied = 0; i < iovcnt; i++) {
		if (iov[i].iov_base && iov[i].iov_base != dst + copied && iov[i].iov_len)
			memmove(dst + copied, iov[i].iov_base, iov[i].iov_len);
		copied += iov[i].iov_len;
	}
	if (q->pops->finish_reply)
		q->pops->finish_reply(q, e, error, total);
	oh.len = (uint32_t)(sizeof(oh) + total);
	oh.error = error;
	oh.unique = req->in.unique;
	e->hdr->ring_ent_in_out.payload_sz = (uint32_t)total;
	/* The out header last: with it the reply is complete for a successor. */
	atomic_thread_fence(memory_order_release);
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	if (q->holder)	/* a successor commits it as it is */
		holder_replied(ringmem_slot(q->rm, q->qid, e->index));
	return submit_fuse_cmd(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
}

/* READ and WRITE (async in the opcode table): their data moves on the
 * ring (uring_payload.c). */
static void serve_async(struct zcfs_req *req)
{
	struct uring_entry *e = req->tctx;

	uring_payload_serve_io(e->q, e);
}

/* A request landed in e: decode it from header and payload and answer
 * through session_dispatch (async opcodes through serve_async). */
static void entry_serve(struct uring_queue *q, struct uring_entry *e)
{
	struct zcfs_uring_req_header *h = e->hdr;
	struct zcfs_req *req = &e->req;
	struct fuse_in_header in;
	uint32_t psz = h->ring_ent_in_out.payload_sz;
	int r;

	memcpy(&in, h->in_out, sizeof(in));
	e->commit_id = h->ring_ent_in_out.commit_id;
	if (q->holder)	/* as delivered: a successor may have to serve it again */
		holder_save_request(ringmem_slot(q->rm, q->qid, e->index), h, e->payload);
	r = q->pops->take(q, e, in.opcode);
	*req = (struct zcfs_req){ .se = q->se, .in = in, .reply = uring_reply, .serve_async = serve_async,
				  .tctx = e, .outbuf = e->payload,
				  .outbuf_size = e->payload ? q->g->payload_size : 0 };
	if (r == 0)
		r = psz > q->g->payload_size ? -EPROTO :
		    req_decode(req, &in, h->op_in, sizeof(h->op_in), e->payload, psz, false);
	if (r < 0) {
		log_warn("malformed ring request op=%u payload=%u: %s", in.opcode, psz, strerror(-r));
		reply_err(req, -EIO);
		return;
	}
	session_dispatch(req);
	/* An opcode that takes no reply must still give the entry back. */
	if (e->state == ENT_IN_SERVER)
		uring_reply(req, -ENOSYS, NULL, 0);
}

static void fuse_cmd_done(struct uring_queue *q, struct uring_entry *e, int res)
{
	/* A zero-copy request's pages are registered in this ring, which
	 * dies with us: a successor could only fail it. Served here. */
	bool zc = q->zero_copy && (e->hdr->ring_ent_in_out.flags & FUSE_URING_ENT_ZERO_COPY);

	if (res == 0 && q->handing_over && !zc) {
		/* Its header and payload stay in the ring memfd for the
		 * successor, which serves and commits it. */
		e->recovered = false;
		e->state = ENT_HELD;
		q->held++;
		return;
	}
	if (res == 0) {
		e->recovered = false;
		e->state = ENT_IN_SERVER;
		entry_serve(q, e);
		return;
	}
	if (e->recovered && e->cmd_op == ZCFS_URING_CMD_COMMIT_AND_FETCH && res == -ENOENT) {
		/* The predecessor had committed it after all: nothing held it;
		 * this buffer slot becomes a new entry. */
		e->recovered = false;
		if (submit_fuse_cmd(q, e, ZCFS_URING_CMD_REGISTER) == 0)
			return;
	}
	e->recovered = false;
	if (res == -EAGAIN || res == -EINTR) {
		if (submit_fuse_cmd(q, e, e->cmd_op) == 0)
			return;
	} else if (res != -ENOTCONN && res != -ECONNABORTED && res != -ECANCELED) {
		/* -ENOTCONN and friends are the normal end; anything else is
		 * a refused command. */
		log_warn("qid=%u entry=%u %s: %s", q->qid, e->index,
			 e->cmd_op == ZCFS_URING_CMD_REGISTER ? "REGISTER" : "COMMIT_AND_FETCH",
			 strerror(-res));
		if (e->cmd_op == ZCFS_URING_CMD_REGISTER && !q->register_err)
			q->register_err = res;
	}
	e->state = ENT_DEAD;
	if (++q->dead == q->g->depth)
		log_debug("qid=%u: every entry ended", q->qid);
}

static int arm_wake(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = queue_sqe(q);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, q->efd, POLLIN);
	sqe->user_data = ud_encode(UD_WAKE, 0);
	return 0;
}

/* The holder's CQ made visible to our wait: a multishot poll of its ring
 * fd on our ring (readable when it has CQEs). Re-armed when the kernel
 * ends it. */
static int arm_holder_poll(struct uring_queue *q)
{
	struct io_uring_sqe *sqe = queue_sqe(q);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, q->hring.ring_fd, POLLIN);
	sqe->user_data = ud_encode(UD_HOLDER_POLL, 0);
	q->hpoll_armed = true;
	return 0;
}

static void handle_cqe(struct uring_queue *q, uint64_t ud, int res)
{
	enum ud_kind kind;
	uint32_t idx;
	uint64_t v;

	if (ud_decode(ud, &kind, &idx) < 0 || (kind != UD_WAKE && idx >= q->g->depth)) {
		log_warn("qid=%u: completion with unknown user_data 0x%llx", q->qid,
			 (unsigned long long)ud);
		return;
	}
	switch (kind) {
	case UD_FUSE_CMD:
		if (q->holder && !holder_take_cqe(ringmem_slot(q->rm, q->qid, idx), ud_gen(ud), res)) {
			q->stale_cqes++;	/* a dead predecessor had handled it */
			break;
		}
		fuse_cmd_done(q, &q->ents[idx], res);
		break;
	case UD_BACKING_READ:
	case UD_BACKING_WRITE:
		uring_payload_io_done(q, &q->ents[idx], res);
		break;
	case UD_SETUP:	/* a late one: uring_queue_run_sync gave up on it */
		log_warn("qid=%u: setup command completed late: %s", q->qid, strerror(-res));
		break;
	case UD_WAKE:
		if (read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_debug("qid=%u: eventfd: %m", q->qid);
		if (!atomic_load(&q->want_stop) && arm_wake(q) < 0)
			log_err("qid=%u: cannot re-arm the wake poll", q->qid);
		break;
	default:
		break;
	}
}

static void reap_ring(struct uring_queue *q, struct io_uring *ring)
{
	const uint64_t hpoll = ud_encode(UD_HOLDER_POLL, 0);
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->user_data == hpoll)	/* hring is reaped below anyway */
			q->hpoll_armed = cqe->flags & IORING_CQE_F_MORE;
		else
			handle_cqe(q, cqe->user_data, cqe->res);
		n++;
	}
	io_uring_cq_advance(ring, n);
}

/* Our ring, then the holder's once it is ours (REGISTER done) and while
 * no hand-over is under way: from then on what arrives is the successor's. */
static void reap(struct uring_queue *q)
{
	reap_ring(q, &q->ring);
	if (q->holder && q->registered && !q->handing_over)
		reap_ring(q, &q->hring);
}

int uring_queue_run_sync(struct uring_queue *q, struct io_uring_sqe *sqe)
{
	const uint64_t ud = ud_encode(UD_SETUP, 0);
	struct io_uring_cqe *cqe;
	int r, res = -EIO;
	bool done = false;

	/* ADD_QUEUE and ADD_BUFPOOL complete at issue, never held. */
	sqe->user_data = ud;
	r = io_uring_submit(&q->ring);
	while (r >= 0 && !done) {
		r = io_uring_wait_cqe(&q->ring, &cqe);
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
			handle_cqe(q, cqe->user_data, cqe->res);
		}
		io_uring_cqe_seen(&q->ring, cqe);
	}
	return r < 0 ? r : res;
}

/* Kicking requests that waited for a server: NOTIFY_RETRIEVE of a
 * regular file the kernel has cached (it then sends us a NOTIFY_REPLY
 * request, and the commit of that drains its queue). The kernel knows
 * files by node id = inode number (inode.c); which ones it still caches
 * only it knows, so SOURCE is walked (bounded) until one is. */
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

static void kick_waiting(struct uring_queue *q)
{
	struct kick k = { .q = q };

	if (source_walk(q->se->root_fd, kick_entry, &k) != SOURCE_WALK_STOP)
		log_info("qid=%u: no cached file to kick requests that waited for a server (%u tried): "
			 "they go out with the next new request", q->qid, k.tries);
}

/* Hand-over: one step once the thread's completions are reaped. Entries
 * that are being served finish (their COMMIT_AND_FETCH arms them again);
 * idle entries are filled by kicks (each NOTIFY_RETRIEVE from this
 * thread, pinned to CPU qid, makes the kernel hand one request to this
 * queue). Done when no entry is idle or busy. */
static void handover_step(struct uring_queue *q)
{
	unsigned i, idle = 0, busy = 0;
	struct timespec now;

	for (i = 0; i < q->g->depth; i++) {
		enum uring_ent_state s = q->ents[i].state;
		idle += s == ENT_IN_KERNEL;
		busy += s == ENT_IN_SERVER || s == ENT_BACKING_IO;
	}
	if (!idle && !busy) {
		report(q, &q->handover_done, &q->handover_err, 0);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (busy || (now.tv_sec - q->last_kick.tv_sec) * 1000000000L + now.tv_nsec - q->last_kick.tv_nsec < 20000000L)
		return;
	q->last_kick = now;
	for (i = 0; i < idle; i++) {
		struct kick k = { .q = q };
		if (source_walk(q->se->root_fd, kick_entry, &k) != SOURCE_WALK_STOP)
			break;	/* nothing cached: what arrives fills them, or the wait times out */
	}
}

static void log_attach(struct uring_queue *q, uint32_t tail, const unsigned *n)
{
	log_info("qid=%u: holder rings epoch=%llu sq_tail=%u entries: register=%u wait=%u resubmit=%u "
		 "recommit=%u serve-saved=%u serve-header=%u dead=%u cq_ready=%u", q->qid,
		 (unsigned long long)q->holder_epoch, tail, n[HOLDER_TAKE_REGISTER], n[HOLDER_TAKE_WAIT],
		 n[HOLDER_TAKE_RESUBMIT], n[HOLDER_TAKE_RECOMMIT], n[HOLDER_TAKE_SERVE_SAVED],
		 n[HOLDER_TAKE_SERVE_HEADER], n[HOLDER_TAKE_DEAD], io_uring_cq_ready(&q->hring));
}

/* On a holder's rings: each entry resumed where the predecessor left it
 * (uring_holder.h); those that need serving are served once every
 * command is published. */
static int holder_attach(struct uring_queue *q)
{
	uint32_t tail = holder_sq_ktail(&q->hring);
	unsigned i, n[HOLDER_TAKE_DEAD + 1] = { 0 };
	bool stale_epoch = false;
	int r = 0;

	/* A standby mapped the ring while its predecessor still submitted:
	 * our SQEs go where the kernel's tail is now. */
	q->hring.sq.sqe_head = q->hring.sq.sqe_tail = tail;
	q->pops = &uring_payload_stock;
	q->holder_epoch = ringmem_holder_epoch(q->rm);
	for (i = 0; i < q->g->depth && r == 0; i++) {
		struct uring_entry *e = &q->ents[i];
		struct ringmem_slot *s = ringmem_slot(q->rm, q->qid, i);
		enum holder_take t = holder_take_decide(s, q->holder_epoch, tail,
							e->hdr->ring_ent_in_out.commit_id);

		n[t]++;
		stale_epoch |= atomic_load(&s->gen) && s->epoch != q->holder_epoch;
		switch (t) {
		case HOLDER_TAKE_REGISTER:
			r = submit_fuse_cmd(q, e, ZCFS_URING_CMD_REGISTER);
			break;
		case HOLDER_TAKE_RESUBMIT:
			e->commit_id = s->commit_id;
			r = submit_fuse_cmd(q, e, s->cmd_op);
			break;
		case HOLDER_TAKE_RECOMMIT:
			/* Maybe committed already (an earlier holder's entry):
			 * then ENOENT and a fresh REGISTER (fuse_cmd_done). */
			e->commit_id = e->hdr->ring_ent_in_out.commit_id;
			e->recovered = true;
			r = submit_fuse_cmd(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
			break;
		case HOLDER_TAKE_WAIT:
			e->cmd_op = s->cmd_op;
			e->commit_id = s->commit_id;
			e->state = ENT_IN_KERNEL;
			break;
		case HOLDER_TAKE_SERVE_SAVED:
			holder_restore_request(s, e->hdr, e->payload);
			/* fall through */
		case HOLDER_TAKE_SERVE_HEADER:
			atomic_store(&s->taken, atomic_load(&s->gen));
			s->taken_res = 0;
			e->recovered = true;
			e->state = ENT_HELD;
			break;
		case HOLDER_TAKE_DEAD:
			e->state = ENT_DEAD;
			q->dead++;
			break;
		}
	}
	if (r == 0) {
		r = io_uring_submit(&q->hring);
		r = r < 0 ? r : 0;
	}
	if (r == 0)
		r = arm_holder_poll(q);
	log_attach(q, tail, n);
	/* An earlier holder's entries died with it: what reached this queue
	 * meanwhile waits in its list (see register_entries). */
	if (r == 0 && q->se->resume && stale_epoch)
		kick_waiting(q);
	for (i = 0; i < q->g->depth && r == 0; i++) {
		struct uring_entry *e = &q->ents[i];
		if (e->state != ENT_HELD)
			continue;
		log_info("qid=%u entry=%u: serving commit_id=%llu, taken or delivered before the previous "
			 "server died", q->qid, i, (unsigned long long)e->hdr->ring_ent_in_out.commit_id);
		e->state = ENT_IN_SERVER;
		entry_serve(q, e);
	}
	q->registered = true;
	return r;
}

/* A request a dead server's entry held: served, or its reply committed as
 * the dead server left it (uring_ringmem.h, ringmem_held_state). */
static int recover_held(struct uring_queue *q, struct uring_entry *e)
{
	enum ringmem_held st = ringmem_held_state(e->hdr->in_out);
	unsigned long long id = (unsigned long long)e->hdr->ring_ent_in_out.commit_id;
	struct fuse_out_header oh = { .len = sizeof(oh), .error = -ECANCELED };

	e->state = ENT_IN_SERVER;
	e->commit_id = e->hdr->ring_ent_in_out.commit_id;
	if (st == RINGMEM_HELD_REQUEST) {
		log_info("qid=%u entry=%u: serving commit_id=%llu, held by the previous server",
			 q->qid, e->index, id);
		entry_serve(q, e);
		return 0;
	}
	if (st == RINGMEM_HELD_REPLIED) {
		log_info("qid=%u entry=%u: committing commit_id=%llu as the previous server replied",
			 q->qid, e->index, id);
		return submit_fuse_cmd(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
	}
	/* What it asked may be overwritten by half a reply; the dead server
	 * did the work, its answer is lost: as the kernel's own window. */
	log_warn("qid=%u entry=%u: commit_id=%llu was being answered when the previous server died: "
		 "ended ECANCELED", q->qid, e->index, id);
	oh.unique = e->commit_id;
	e->hdr->ring_ent_in_out.payload_sz = 0;
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	return submit_fuse_cmd(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
}

/* REGISTER every entry; failures that the kernel reports at issue time
 * are already in the CQ when submit returns. */
static int register_entries(struct uring_queue *q)
{
	unsigned i;
	int r;

	unsigned held = 0;

	if (q->holder)
		return holder_attach(q);

	/* Pools, zero-copy, or a layout change decided at INIT. */
	r = zerocopy_queue_setup(q);
	q->pops = uring_payload_for(q);
	for (i = 0; i < q->g->depth && r == 0; i++) {
		struct uring_entry *e = &q->ents[i];
		if (q->rm && q->rm->recovering) {
			uint64_t id = e->hdr->ring_ent_in_out.commit_id;
			if (id && id != atomic_load(&ringmem_slot(q->rm, q->qid, i)->done_id)) {
				e->recovered = true;	/* the kernel still has this entry */
				held++;
				continue;
			}
		}
		r = submit_fuse_cmd(q, e, ZCFS_URING_CMD_REGISTER);
	}
	if (r == 0) {
		r = io_uring_submit(&q->ring);
		r = r < 0 ? r : 0;
	}
	if (r == 0) {
		reap(q);
		r = q->register_err;
	}
	/* A restarted server: requests that reached this queue while no
	 * entry was registered wait in its list, and the kernel hands them
	 * out only on a COMMIT_AND_FETCH (REGISTER does not look). Kick it:
	 * NOTIFY_RETRIEVE makes the kernel send us a request on this CPU's
	 * queue, and committing that fetches the first waiting one; each
	 * commit after it fetches the next. */
	if (r == 0 && q->se->resume)
		kick_waiting(q);
	/* Answer what the dead server's entries held, with its commit ids:
	 * header and payload are still in the shared buffers. */
	for (i = 0; i < q->g->depth && r == 0 && held; i++)
		if (q->ents[i].recovered)
			r = recover_held(q, &q->ents[i]);
	q->registered = true;
	return r;
}

static int ring_create(struct uring_queue *q)
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

/* Headers first, then one payload buffer per entry (stock) or the pool
 * (7.46: entries register an empty iov[1] and get a pool buffer per
 * request). Only ever called while no entry is registered. */
int uring_queue_layout(struct uring_queue *q)
{
	const struct uring_geometry *g = q->g;
	size_t size = uring_queue_buf_bytes(g);
	bool pool = g->payload_bufs != g->depth || (q->ext && q->ext->pool);
	char *mem = q->mem;
	unsigned i;

	/* With a ring memfd the pool lives there too (ringmem_attach made
	 * room for it): the kernel keeps the pool's address for every later
	 * server of the connection. */
	if (mem && q->mem_size == size)
		goto lock;	/* same bytes, maybe split differently */
	if (mem && !q->rm)
		munmap(mem, q->mem_size);
	q->mem = NULL;
	/* Allocated by the pinned thread, so first touch is on its node. */
	mem = q->rm ? ringmem_queue_mem(q->rm, q->qid) : hugebuf_map(size);
	if (mem == MAP_FAILED)
		return -errno;
	q->mem = mem;
	q->mem_size = size;
lock:
	/* Locked so the budget the kernel enforces (RLIMIT_MEMLOCK) is the
	 * one --print-pinned reports; mlock also faults every page in. The
	 * stock kernel copies into these buffers and needs no pin, so when
	 * the limit is lower we run unlocked (pinning nothing) rather than
	 * not at all. An unpinned pool (uring_queue_lock_bytes) stays
	 * pageable: only the headers are locked, the rest let go (a ring
	 * memfd's region may have been locked whole for the stock layout). */
	if (uring_queue_lock_bytes(g) < size)
		(void)munlock(mem + uring_queue_lock_bytes(g), size - uring_queue_lock_bytes(g));
	q->locked = mlock(mem, uring_queue_lock_bytes(g)) == 0;
	if (!q->locked) {
		static atomic_bool warned;
		if (!atomic_exchange(&warned, true))
			log_warn("ring buffers not locked (%zu bytes per queue): %m; raise "
				 "RLIMIT_MEMLOCK to the --print-pinned figure", size);
		(void)madvise(mem, uring_queue_lock_bytes(g), MADV_POPULATE_WRITE);
	}
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

static int queue_setup(struct uring_queue *q)
{
	int r;

	q->setup_step = "eventfd";
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0)
		return -errno;
	q->setup_step = "mmap";
	r = uring_queue_layout(q);
	if (r < 0)
		return r;
	if (q->holder) {
		/* Created, restricted and enabled by the holder. */
		q->setup_step = "holder_ring";
		r = holder_ring_map(q->holder_fd, ringmem_holder_params(q->rm, q->qid), &q->hring);
		if (r < 0)
			return r;
		q->holder_fd = -1;	/* the ring's now: closed by io_uring_queue_exit */
		q->hring_ok = true;
	}
	q->setup_step = "io_uring_setup";
	r = ring_create(q);
	if (r < 0)
		return r;
	q->setup_step = "io_uring_submit";
	q->fixed_fuse_fd = io_uring_register_files(&q->ring, &q->se->fuse_fd, 1) == 0;
	(void)io_uring_register_ring_fd(&q->ring);
	if (q->se->opts->sandbox) {
		q->setup_step = "io_uring_restrict";
		r = sandbox_restrict_ring(&q->ring);
		if (r < 0)
			return r;
	}
	r = arm_wake(q);
	if (r == 0) {
		r = io_uring_submit(&q->ring);
		r = r < 0 ? r : 0;
	}
	return r;
}

static void pin_to_cpu(struct uring_queue *q)
{
	char name[16];
	cpu_set_t set;
	int r;

	snprintf(name, sizeof(name), "zcfs-ring-%u", q->qid);
	(void)pthread_setname_np(pthread_self(), name);
	CPU_ZERO(&set);
	CPU_SET(q->qid, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r != 0)	/* possible but offline CPU: the queue just idles */
		log_debug("qid=%u: not pinned: %s", q->qid, strerror(r));
}

/* Planned restart on holder rings: once no entry is being served (their
 * backing I/O done, their commits written), every command is published and
 * nothing more is taken from the holder's CQ; what arrives waits there for
 * the successor, idle entries stay the holder's. */
static void holder_park(struct uring_queue *q)
{
	unsigned i;
	int r;

	if (q->holder_parked)
		return;
	for (i = 0; i < q->g->depth; i++)
		if (q->ents[i].state == ENT_IN_SERVER || q->ents[i].state == ENT_BACKING_IO)
			return;
	r = io_uring_submit(&q->hring);
	if (q->n_clear && r >= 0)
		clear_submitted(q);
	q->holder_parked = true;
	q->held = io_uring_cq_ready(&q->hring);
	report(q, &q->handover_done, &q->handover_err, r < 0 ? r : 0);
}

/* Before our wait: the holder's SQ published, its CQ looked at (the poll
 * only tells of CQEs posted after it was armed). True when CQEs wait. */
static bool holder_flush(struct uring_queue *q)
{
	if (!q->holder || !q->registered || q->holder_parked)
		return false;
	if (io_uring_submit(&q->hring) >= 0 && q->n_clear)
		clear_submitted(q);
	if (q->handing_over)
		return false;
	if (!q->hpoll_armed && arm_holder_poll(q) < 0)
		log_err("qid=%u: cannot poll the holder's ring", q->qid);
	return io_uring_cq_ready(&q->hring) > 0;
}

static void *queue_main(void *arg)
{
	struct uring_queue *q = arg;
	int r;

	pin_to_cpu(q);
	r = queue_setup(q);
	report(q, &q->setup_done, &q->setup_err, r);
	if (r < 0)
		return NULL;
	while (!atomic_load(&q->want_stop)) {
		if (holder_flush(q)) {
			r = io_uring_submit(&q->ring);	/* completions wait: no sleep */
		} else if (q->handing_over) {
			/* Kicks are retried: wake up without completions too. */
			struct __kernel_timespec ts = { .tv_nsec = 20000000 };
			struct io_uring_cqe *cqe;
			r = io_uring_submit_and_wait_timeout(&q->ring, &cqe, 1, &ts, NULL);
			if (r == -ETIME)
				r = 0;
		} else {
			r = io_uring_submit_and_wait(&q->ring, 1);
		}
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			log_err("qid=%u: io_uring_enter: %s", q->qid, strerror(-r));
			session_exit(q->se, 1);
			break;
		}
		if (q->n_clear && r >= 0)
			clear_submitted(q);
		reap(q);
		if (atomic_load(&q->want_register) && !q->registered)
			report(q, &q->register_done, &q->register_err, register_entries(q));
		if (atomic_load(&q->want_handover) && !q->handing_over)
			q->handing_over = true;
		if (q->handing_over && q->holder)
			holder_park(q);
		else if (q->handing_over)
			handover_step(q);
	}
	/* Backing I/O writes into our buffers: let it land before they go. */
	while (q->backing_inflight > 0 && io_uring_submit_and_wait(&q->ring, 1) >= 0)
		reap(q);
	report(q, &q->register_done, &q->register_err, -ESHUTDOWN);
	return NULL;
}

static void wake(struct uring_queue *q)
{
	if (q->efd >= 0 && eventfd_write(q->efd, 1) < 0)
		log_debug("qid=%u: wake: %m", q->qid);
}

int uring_queue_spawn(struct uring_queue *q, struct zcfs_session *se,
		      const struct uring_geometry *g, unsigned qid)
{
	int r;

	q->se = se;
	q->g = g;
	q->qid = qid;
	q->efd = -1;
	q->pops = &uring_payload_stock;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	r = -pthread_create(&q->thread, NULL, queue_main, q);
	q->started = r == 0;
	return r;
}

int uring_queue_wait_setup(struct uring_queue *q)
{
	if (!q->started)
		return -ESRCH;
	return wait_report(q, &q->setup_done, &q->setup_err);
}

void uring_queue_request_register(struct uring_queue *q)
{
	atomic_store(&q->want_register, true);
	wake(q);
}

void uring_queue_request_handover(struct uring_queue *q)
{
	atomic_store(&q->want_handover, true);
	wake(q);
}

int uring_queue_wait_handover(struct uring_queue *q, int timeout_ms)
{
	struct timespec until;
	int r = 0;

	if (!q->started)
		return 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->handover_done && r == 0)
		r = pthread_cond_timedwait(&q->cond, &q->lock, &until);
	r = q->handover_done ? q->handover_err : -ETIMEDOUT;
	pthread_mutex_unlock(&q->lock);
	return r;
}

int uring_queue_wait_register(struct uring_queue *q)
{
	if (!q->started)
		return -ESRCH;
	return wait_report(q, &q->register_done, &q->register_err);
}

void uring_queue_stop(struct uring_queue *q)
{
	if (!q->g)
		return;		/* never spawned */
	if (q->started) {
		atomic_store(&q->want_stop, true);
		wake(q);
		pthread_join(q->thread, NULL);
		q->started = false;
	}
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	q->ring_ok = false;
	if (q->hring_ok)
		io_uring_queue_exit(&q->hring);
	q->hring_ok = false;
	if (q->holder)	/* not mapped (a failed set-up): still ours */
		q->holder_fd = safe_close(q->holder_fd);
	zerocopy_queue_free(q);
	if (q->mem && !q->rm)
		munmap(q->mem, q->mem_size);
	q->mem = NULL;
	free(q->ents);
	q->ents = NULL;
	q->efd = safe_close(q->efd);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	q->g = NULL;
}
