/* Buffer pools and zero-copy on the queue ring (see uring_zerocopy.h).
 * Nothing here runs on a kernel without the 7.46 buffer-pool series:
 * uring_ext_decide() keeps q->ext->pool false there, and then only the
 * layout check of zerocopy_queue_setup() executes. */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include "daemon/serve/sandbox/caps.h"
#include "common/log.h"
#include "common/parse.h"
#include "uring_userdata.h"
#include "uring_zerocopy.h"

static int fail_step(struct uring_queue *q, const char *step, int r)
{
	if (r < 0)
		log_err("qid=%u: buffer pool setup: %s: %s", q->qid, step, strerror(-r));
	return r;
}

static uint8_t *cmd_area(struct io_uring_sqe *sqe)
{
	return (uint8_t *)sqe + ZCFS_URING_CMD_AREA_OFF;
}

/* Fixed-buffer table: slot 0 the pool (registered pools), slots 1..depth
 * the entries' page slots (zero-copy), empty until the kernel fills one. */
static int register_table(struct uring_queue *q, const struct iovec *pool_iov)
{
	const struct uring_ext_plan *p = q->ext;
	int r;

	if (p->zero_copy) {
		r = io_uring_register_buffers_sparse(&q->ring, uring_fixed_table_size(q->g->depth));
		if (r == 0 && p->registered)
			r = io_uring_register_buffers_update_tag(&q->ring, URING_FIXED_POOL_INDEX, pool_iov,
								  NULL, 1);
	} else {
		r = io_uring_register_buffers(&q->ring, pool_iov, 1);
	}
	q->table_registered = r >= 0;
	return r < 0 ? r : 0;
}

/* ADD_QUEUE. A successor's queue exists already (-EEXIST, as recorded);
 * without CAP_SYS_ADMIN it cannot even ask for a zero-copy one (-EPERM
 * comes first) and takes the recorded form on trust. */
static int add_queue(struct uring_queue *q, const struct uring_ext_plan *p)
{
	struct io_uring_sqe *sqe;
	int r;

	if (p->adopted && p->zero_copy && !zerocopy_thread_has_cap(CAP_SYS_ADMIN))
		return 0;
	sqe = uring_queue_fuse_cmd_sqe(q, ZCFS_URING_CMD_ADD_QUEUE);
	if (!sqe)
		return fail_step(q, "ADD_QUEUE", -EBUSY);
	uring_cmd_add_queue(cmd_area(sqe), (uint16_t)q->qid, p->zero_copy);
	r = uring_queue_run_sync(q, sqe);
	if (r == -EEXIST && p->adopted)
		r = 0;
	/* The kernel checked CAP_SYS_ADMIN in ADD_QUEUE; this thread has no
	 * use for it any more (the others follow in uring_caps_drop_all). */
	if (p->zero_copy && zerocopy_caps_drop_thread() < 0)
		log_warn("qid=%u: could not drop CAP_SYS_ADMIN", q->qid);
	return fail_step(q, "ADD_QUEUE", r);
}

/* ADD_BUFPOOL. On a successor's queue the predecessor's pool (same
 * address: the ring memfd) is refused with -EINVAL and stays. */
static int add_bufpool(struct uring_queue *q, const struct uring_ext_plan *p, const struct iovec *pool)
{
	struct io_uring_sqe *sqe = uring_queue_fuse_cmd_sqe(q, ZCFS_URING_CMD_ADD_BUFPOOL);
	int r;

	if (!sqe)
		return fail_step(q, "ADD_BUFPOOL", -EBUSY);
	r = uring_cmd_add_bufpool(cmd_area(sqe), (uint16_t)q->qid, (uint64_t)(uintptr_t)pool->iov_base,
				  pool->iov_len);
	if (r == 0 && p->registered) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = URING_FIXED_POOL_INDEX;
	}
	if (r == 0)
		r = uring_queue_run_sync(q, sqe);
	if (r == -EINVAL && p->adopted) {
		log_debug("qid=%u: the queue keeps its predecessor's pool", q->qid);
		r = 0;
	}
	return fail_step(q, "ADD_BUFPOOL", r);
}

int zerocopy_queue_setup(struct uring_queue *q, bool in_kernel)
{
	const struct uring_ext_plan *p = q->ext;
	const struct uring_geometry *g = q->g;
	struct iovec pool_iov;
	int r;

	/* INIT may have switched the layout (auto pool, or back to stock). */
	r = fail_step(q, "layout", uring_queue_layout(q));
	if (r < 0 || !p || !p->pool)
		return r;
	r = fail_step(q, "pool", bufpool_init(&q->pool, g->payload_bufs, g->payload_size));
	if (r < 0)
		return r;
	pool_iov = (struct iovec){ .iov_base = q->pool_base,
				   .iov_len = bufpool_bytes(g->payload_bufs, g->payload_size) };
	if (!in_kernel && (p->zero_copy || p->registered)) {
		r = fail_step(q, "io_uring_register_buffers", register_table(q, &pool_iov));
		if (r < 0)
			return r;
	}
	r = in_kernel ? 0 : add_queue(q, p);
	if (r == 0 && !in_kernel)
		r = add_bufpool(q, p, &pool_iov);
	if (r < 0)
		return r;
	q->pool_on = true;
	q->pool_fixed = p->registered;
	q->zero_copy = p->zero_copy;
	return 0;
}

void zerocopy_log_counts(const struct uring_queue *q)
{
	if (q->pool_on)
		log_info("qid=%u: pool buffers=%u requests: zero_copy=%llu pool=%llu zero_copy_lost=%llu",
			 q->qid, q->pool.nbufs,
			 (unsigned long long)__atomic_load_n(&q->n_zero_copy, __ATOMIC_RELAXED),
			 (unsigned long long)__atomic_load_n(&q->n_pool, __ATOMIC_RELAXED),
			 (unsigned long long)__atomic_load_n(&q->n_zc_lost, __ATOMIC_RELAXED));
}

void zerocopy_queue_free(struct uring_queue *q)
{
	if (q->pool_on && q->pool.refused)
		log_warn("qid=%u: pool: %llu delivered offsets refused", q->qid,
			 (unsigned long long)q->pool.refused);
	zerocopy_log_counts(q);
	q->pool_on = false;	/* logged once */
	bufpool_done(&q->pool);
	q->pool_on = false;
}

void zerocopy_prep_cmd(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe,
		       uint32_t op)
{
	if (op == ZCFS_URING_CMD_REGISTER)
		uring_cmd_register(cmd_area(sqe), (uint16_t)q->qid,
				   q->zero_copy ? (uint16_t)uring_fixed_entry_slot(e->index) : 0);
	else
		uring_cmd_commit(cmd_area(sqe), (uint16_t)q->qid, e->commit_id);
	/* A registered pool binds every later command of the queue to it. */
	if (q->pool_fixed) {
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		sqe->buf_index = URING_FIXED_POOL_INDEX;
	}
}

int zerocopy_take_payload(struct uring_queue *q, struct uring_entry *e, uint32_t opcode)
{
	const struct zcfs_uring_ent_in_out *io = &e->hdr->ring_ent_in_out;
	unsigned id;
	int r;

	e->payload = NULL;
	e->pool_id = -1;
	r = uring_classify_payload(opcode, io->flags, io->payload_sz, q->zero_copy, &e->pkind);
	if (r < 0) {
		e->pkind = URING_PAYLOAD_NONE;
		log_warn("qid=%u op=%u: zero-copy flag 0x%llx where none can be", q->qid, opcode,
			 (unsigned long long)io->flags);
		return r;
	}
	/* read by another thread at exit (zerocopy_log_counts) */
	__atomic_fetch_add(&q->n_zero_copy, e->pkind == URING_PAYLOAD_ZC_READ || e->pkind == URING_PAYLOAD_ZC_WRITE,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&q->n_pool, e->pkind == URING_PAYLOAD_COPY, __ATOMIC_RELAXED);
	if (!uring_payload_has_buffer(e->pkind))
		return 0;
	r = bufpool_claim(&q->pool, io->offset, &id);
	if (r < 0) {
		log_warn("qid=%u op=%u: pool offset %u refused: %s", q->qid, opcode, io->offset,
			 strerror(-r));
		e->pkind = URING_PAYLOAD_NONE;
		return -EPROTO;
	}
	e->pool_id = (int)id;
	e->payload = q->pool_base + bufpool_offset(&q->pool, id);
	return 0;
}

void zerocopy_put_payload(struct uring_queue *q, struct uring_entry *e)
{
	if (e->pool_id >= 0 && bufpool_release(&q->pool, (unsigned)e->pool_id) < 0)
		log_warn("qid=%u entry=%u: pool buffer %d was not held", q->qid, e->index, e->pool_id);
	e->pool_id = -1;
}

/* ---- capabilities -------------------------------------------------- */

bool zerocopy_thread_has_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

bool zerocopy_memlock_allows(uint64_t bytes)
{
	struct rlimit rl;

	if (zerocopy_thread_has_cap(CAP_IPC_LOCK))
		return true;	/* io_uring does not charge such a task */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		return false;
	return rl.rlim_cur == RLIM_INFINITY || bytes <= rl.rlim_cur;
}

/* caps.c: safe under the sandbox (no /proc, no prctl). */
int zerocopy_caps_drop_thread(void)
{
	return caps_drop_self();
}
