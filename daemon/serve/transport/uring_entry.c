/* The entries' state machine (see uring_entry.h). Requests arrive as CQEs
 * of the entries' REGISTER / COMMIT_AND_FETCH commands; READ and WRITE
 * (async in the opcode table) move their data as the queue's payload
 * strategy says (uring_payload.h: backing I/O on the same ring into or out
 * of the entry's buffer, or zero-copy) and are committed from that
 * completion, so the thread never blocks on file data. Every other opcode
 * runs synchronously through session_dispatch. */
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/serve/fuse/fuse_msg.h"
#include "uring_entry.h"
#include "uring_ring.h"
#include "uring_rings.h"
#include "uring_ringmem.h"
#include "uring_userdata.h"

_Static_assert(offsetof(struct io_uring_sqe, cmd_op) == 8, "sqe->cmd_op at byte 8");
_Static_assert(offsetof(struct io_uring_sqe, addr3) == ZCFS_URING_CMD_AREA_OFF,
	       "SQE command area at byte 48");

int uring_entry_submit(struct uring_queue *q, struct uring_entry *e, uint32_t op)
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
	q->rings->prep_cmd(q, e, sqe, op);	/* its user_data */
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

void uring_entry_clear_submitted(struct uring_queue *q)
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
	if (q->rings->replying)
		q->rings->replying(q, e);
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
	if (q->rings->replied)	/* a successor commits it as it is */
		q->rings->replied(q, e);
	return uring_entry_submit(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
}

/* READ and WRITE (async opcodes): their data moves on the ring. */
static void serve_async(struct zcfs_req *req)
{
	struct uring_entry *e = req->tctx;

	uring_payload_serve_io(e->q, e);
}

void uring_entry_serve(struct uring_queue *q, struct uring_entry *e)
{
	struct zcfs_uring_req_header *h = e->hdr;
	struct zcfs_req *req = &e->req;
	struct fuse_in_header in;
	uint32_t psz = h->ring_ent_in_out.payload_sz;
	int r;

	memcpy(&in, h->in_out, sizeof(in));
	e->commit_id = h->ring_ent_in_out.commit_id;
	r = q->pops->take(q, e, in.opcode);
	/* As delivered, payload included (a pool buffer is known from here
	 * on): a successor may have to serve it again. */
	if (q->rings->taken)
		q->rings->taken(q, e);
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

/* A command that failed: resubmitted, turned into a fresh REGISTER, or the
 * entry's end. */
static void cmd_failed(struct uring_queue *q, struct uring_entry *e, int res)
{
	if (e->recovered && e->cmd_op == ZCFS_URING_CMD_COMMIT_AND_FETCH && res == -ENOENT) {
		/* The predecessor had committed it after all: nothing held it;
		 * this buffer slot becomes a new entry. */
		e->recovered = false;
		if (uring_entry_submit(q, e, ZCFS_URING_CMD_REGISTER) == 0)
			return;
	}
	e->recovered = false;
	if (res == -EAGAIN || res == -EINTR) {
		if (uring_entry_submit(q, e, e->cmd_op) == 0)
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

static void cmd_done(struct uring_queue *q, struct uring_entry *e, int res)
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
		uring_entry_serve(q, e);
		return;
	}
	cmd_failed(q, e, res);
}

void uring_entry_cqe(struct uring_queue *q, const struct io_uring_cqe *cqe)
{
	uint64_t ud = cqe->user_data, v;
	enum ud_kind kind;
	uint32_t idx;

	if (ud_decode(ud, &kind, &idx) < 0 || (kind != UD_WAKE && idx >= q->g->depth)) {
		log_warn("qid=%u: completion with unknown user_data 0x%llx", q->qid,
			 (unsigned long long)ud);
		return;
	}
	switch (kind) {
	case UD_FUSE_CMD:
		if (q->rings->take_cqe(q, idx, ud, cqe->res))
			cmd_done(q, &q->ents[idx], cqe->res);
		break;
	case UD_BACKING_READ:
	case UD_BACKING_WRITE:
		uring_payload_io_done(q, &q->ents[idx], cqe->res);
		break;
	case UD_SETUP:	/* a late one: uring_queue_run_sync gave up on it */
		log_warn("qid=%u: setup command completed late: %s", q->qid, strerror(-cqe->res));
		break;
	case UD_WAKE:
		if (read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_debug("qid=%u: eventfd: %m", q->qid);
		if (!atomic_load(&q->want_stop) && uring_queue_arm_wake(q) < 0)
			log_err("qid=%u: cannot re-arm the wake poll", q->qid);
		break;
	case UD_HOLDER_POLL:	/* the holder's CQ is reaped anyway */
		q->hpoll_armed = cqe->flags & IORING_CQE_F_MORE;
		break;
	default:
		break;
	}
}

void uring_entry_reap(struct uring_queue *q, struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(ring, head, cqe) {
		uring_entry_cqe(q, cqe);
		n++;
	}
	io_uring_cq_advance(ring, n);
}
