/* Payload strategies of the io_uring queue (see uring_payload.h). */
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/serve/fuse/file_io.h"
#include "uring_payload.h"
#include "uring_ring.h"
#include "uring_userdata.h"
#include "uring_zerocopy.h"

/* Whether backing I/O on fd can go through the ring. A file system that
 * refuses non-blocking I/O (tmpfs) makes io_uring hand every read and
 * write to an io-wq worker thread: measured, that costs more than doing
 * the copy right here in the queue thread. Probed once per queue. */
static bool backing_via_ring(struct uring_queue *q, int fd)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };

	if (q->backing_nowait == 0)
		q->backing_nowait = q->se->opts->uring_backing == ZCFS_URING_BACKING_INLINE ||
				    (preadv2(fd, &iov, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP) ? -1 : 1;
	return q->backing_nowait > 0;
}

static void io_started(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe)
{
	sqe->user_data = ud_encode(e->io.write ? UD_BACKING_WRITE : UD_BACKING_READ, e->index);
	e->state = ENT_BACKING_IO;
	q->backing_inflight++;
}

/* The data in the entry's (or its pool) buffer: pread/pwrite of it. */
static int copy_start_io(struct uring_queue *q, struct uring_entry *e)
{
	const struct file_io *io = &e->io;
	void *buf = io->write ? (void *)e->req.data : e->payload;
	struct io_uring_sqe *sqe;
	ssize_t n;

	if (!buf)
		return -EIO;	/* a pool delivery without a buffer */
	if (!backing_via_ring(q, io->fd)) {
		n = io->write ? pwrite(io->fd, buf, io->len, (off_t)io->off) :
				pread(io->fd, buf, io->len, (off_t)io->off);
		e->state = ENT_BACKING_IO;
		q->backing_inflight++;
		uring_payload_io_done(q, e, n < 0 ? -errno : (int)n);
		return 0;
	}
	sqe = uring_queue_sqe(q);
	if (!sqe)
		return -EBUSY;
	if (io->write)
		io_uring_prep_write(sqe, io->fd, buf, (unsigned)io->len, io->off);
	else
		io_uring_prep_read(sqe, io->fd, buf, (unsigned)io->len, io->off);
	io_started(q, e, sqe);
	return 0;
}

/* Data that exists only as the client's registered pages (e's fixed
 * buffer slot): READ_FIXED / WRITE_FIXED; the rest as pool copies. */
static int zero_copy_start_io(struct uring_queue *q, struct uring_entry *e)
{
	const struct file_io *io = &e->io;
	int slot = (int)uring_fixed_entry_slot(e->index);
	struct io_uring_sqe *sqe;

	if (e->pkind != URING_PAYLOAD_ZC_READ && e->pkind != URING_PAYLOAD_ZC_WRITE)
		return copy_start_io(q, e);
	sqe = uring_queue_sqe(q);
	if (!sqe)
		return -EBUSY;
	/* addr 0: the start of the request's pages in the slot. */
	if (io->write)
		io_uring_prep_write_fixed(sqe, io->fd, NULL, (unsigned)io->len, io->off, slot);
	else
		io_uring_prep_read_fixed(sqe, io->fd, NULL, (unsigned)MIN(io->len, q->g->payload_size),
					 io->off, slot);
	io_started(q, e, sqe);
	return 0;
}

static int stock_take(struct uring_queue *q, struct uring_entry *e, uint32_t opcode)
{
	(void)q;
	(void)e;
	(void)opcode;
	return 0;	/* the entry's own buffer, fixed at REGISTER */
}

static void pool_finish_reply(struct uring_queue *q, struct uring_entry *e, int error, size_t len)
{
	(void)error;
	(void)len;
	zerocopy_put_payload(q, e);
}

/* OPEN/CREATE replies say FOPEN_IO_URING_ZERO_COPY so the kernel sends
 * that file's data as pages. */
static void zero_copy_finish_reply(struct uring_queue *q, struct uring_entry *e, int error, size_t len)
{
	if (error == 0 && len > 0 && e->payload &&
	    uring_mark_zero_copy_open(e->req.in.opcode, e->payload, len) < 0)
		log_warn("op=%s: reply too short to mark FOPEN_IO_URING_ZERO_COPY",
			 fuse_opcode_name(e->req.in.opcode));
	zerocopy_put_payload(q, e);
}

const struct uring_payload_ops uring_payload_stock = {
	.name = "stock",
	.take = stock_take,
	.start_io = copy_start_io,
};

const struct uring_payload_ops uring_payload_pool = {
	.name = "pool",
	.prep_cmd = zerocopy_prep_cmd,
	.take = zerocopy_take_payload,
	.start_io = copy_start_io,
	.finish_reply = pool_finish_reply,
};

const struct uring_payload_ops uring_payload_zero_copy = {
	.name = "zero_copy",
	.prep_cmd = zerocopy_prep_cmd,
	.take = zerocopy_take_payload,
	.start_io = zero_copy_start_io,
	.finish_reply = zero_copy_finish_reply,
};

const struct uring_payload_ops *uring_payload_for(const struct uring_queue *q)
{
	return q->zero_copy ? &uring_payload_zero_copy : q->pool_on ? &uring_payload_pool :
	       &uring_payload_stock;
}

void uring_payload_serve_io(struct uring_queue *q, struct uring_entry *e)
{
	struct zcfs_req *req = &e->req;
	bool in_pages = e->pkind == URING_PAYLOAD_ZC_READ || e->pkind == URING_PAYLOAD_ZC_WRITE;
	int r;

	if (in_pages && e->recovered) {
		/* Held by a dead predecessor: its pages were registered in that
		 * server's ring, gone with it. Nothing can reach them; the
		 * kernel would take the reply's length as data moved. */
		log_warn("qid=%u op=%s unique=%llu: zero-copy request held by the previous server ended "
			 "ECANCELED (its pages were in that server's ring)", q->qid,
			 fuse_opcode_name(req->in.opcode), (unsigned long long)req->in.unique);
		__atomic_fetch_add(&q->n_zc_lost, 1, __ATOMIC_RELAXED);
		reply_err(req, -ECANCELED);
		return;
	}
	r = file_io_begin(req, in_pages, &e->io);
	if (r < 0) {
		reply_err(req, r);
		return;
	}
	r = q->pops->start_io(q, e);
	if (r < 0) {
		/* Nothing moved: release what begin took, answer the error. */
		r = file_io_end(req, &e->io, NULL, r);
		if (r < 0 && !req->replied)
			reply_err(req, r);
	}
}

void uring_payload_io_done(struct uring_queue *q, struct uring_entry *e, int res)
{
	int r;

	q->backing_inflight--;
	e->state = ENT_IN_SERVER;
	/* e->payload is NULL for zero-copy reads: the reply is a length. */
	r = file_io_end(&e->req, &e->io, e->payload, res);
	if (r < 0 && !e->req.replied)
		reply_err(&e->req, r);
}
