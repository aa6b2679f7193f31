/* Buffer-pool / zero-copy bookkeeping (see uring_bufpool.h). No system
 * calls in this file: the queue thread (uring_queue.c) and the zero-copy
 * helpers (uring_zerocopy.c) do the I/O and ask these functions what the
 * bytes mean. */
#include <stdio.h>
#include <string.h>
#include "uring_bufpool.h"

#define BITS_PER_WORD 64

/* Pool part of the decision. -EOPNOTSUPP when it was demanded but cannot be. */
static int decide_pool(enum zcfs_bufpool_mode mode, const struct uring_ext_facts *f,
		       struct uring_ext_plan *p)
{
	bool demanded = mode == ZCFS_BUFPOOL_ON || mode == ZCFS_BUFPOOL_REGISTERED;

	if (mode == ZCFS_BUFPOOL_OFF) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "disabled_by_option");
		return 0;
	}
	if (!f->ring_on) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "transport_devfuse");
		return demanded ? -EOPNOTSUPP : 0;
	}
	/* Both halves of the offer: the minor says which layouts the kernel
	 * speaks, the flag that this kernel has pools compiled in. */
	if (f->minor < ZCFS_FUSE_MINOR_BUFPOOL) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "kernel_protocol_7.%u", f->minor);
		return demanded ? -EOPNOTSUPP : 0;
	}
	if (!(f->offered & FUSE_HAS_IO_URING_BUFPOOL)) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "kernel_no_FUSE_HAS_IO_URING_BUFPOOL");
		return demanded ? -EOPNOTSUPP : 0;
	}
	p->pool = true;
	/* The kernel allows an unregistered pool on a ring the server did
	 * not make (ADD_BUFPOOL only records its address; each copy runs in
	 * the holder's sq thread, whose mm maps the ring memfd at the same
	 * address); a registered one needs the holder's ring to register it. */
	if (f->holder_rings) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "holder_rings_unregistered");
		return mode == ZCFS_BUFPOOL_REGISTERED ? -EOPNOTSUPP : 0;
	}
	if (mode == ZCFS_BUFPOOL_REGISTERED && !f->memlock_ok) {
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "memlock_too_low_to_register");
		p->pool = false;
		return -EOPNOTSUPP;
	}
	/* auto registers when it can: no per-request import in the kernel. */
	p->registered = mode == ZCFS_BUFPOOL_REGISTERED || (mode == ZCFS_BUFPOOL_AUTO && f->memlock_ok);
	if (mode == ZCFS_BUFPOOL_AUTO && !f->memlock_ok)
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "auto_unregistered_memlock_too_low");
	else
		snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", mode == ZCFS_BUFPOOL_AUTO ? "auto" : "requested");
	return 0;
}

static int decide_zc(enum zcfs_zerocopy_mode mode, const struct uring_ext_facts *f,
		     struct uring_ext_plan *p)
{
	const char *no = NULL;

	if (mode == ZCFS_ZEROCOPY_OFF)
		no = "disabled_by_option";
	else if (!p->pool)	/* the kernel refuses entries of a zero-copy queue without a pool */
		no = "no_buffer_pool";
	else if (f->holder_rings)	/* its pages would be registered in the holder's ring */
		no = "holder_rings";
	else if (!f->cap_sys_admin)	/* ADD_QUEUE would fail with -EPERM */
		no = "no_CAP_SYS_ADMIN";
	else if (f->passthrough)	/* it needs CAP_SYS_ADMIN for every open: cannot drop */
		no = "passthrough_keeps_CAP_SYS_ADMIN";
	else if (f->sandbox)	/* it could not find its threads to drop it */
		no = "sandbox_cannot_drop_CAP_SYS_ADMIN";
	if (no) {
		snprintf(p->zc_reason, sizeof(p->zc_reason), "%s", no);
		return mode == ZCFS_ZEROCOPY_ON ? -EOPNOTSUPP : 0;
	}
	p->zero_copy = true;
	/* Page slots live in the fixed-buffer table; the pool joins it. */
	p->registered = p->registered || f->memlock_ok;
	snprintf(p->zc_reason, sizeof(p->zc_reason), "%s", mode == ZCFS_ZEROCOPY_AUTO ? "auto" : "requested");
	return 0;
}

int uring_ext_decide(enum zcfs_bufpool_mode pool_mode, enum zcfs_zerocopy_mode zc_mode,
		     const struct uring_ext_facts *f, struct uring_ext_plan *plan)
{
	int r, k;

	memset(plan, 0, sizeof(*plan));
	r = decide_pool(pool_mode, f, plan);
	/* Even when the pool part failed, say why zero-copy is off too. */
	k = decide_zc(zc_mode, f, plan);
	return r < 0 ? r : k;
}

/* ---- command area --------------------------------------------------- */

static void put_cmd(uint8_t area[ZCFS_URING_CMD_AREA_SZ], const struct zcfs_uring_cmd_req_v46 *c)
{
	/* The rest of the 80 bytes is zero: kernels check reserved fields. */
	memset(area, 0, ZCFS_URING_CMD_AREA_SZ);
	memcpy(area, c, sizeof(*c));
}

void uring_cmd_add_queue(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, bool zero_copy)
{
	struct zcfs_uring_cmd_req_v46 c = { .qid = qid, .flags = zero_copy ? FUSE_URING_ZERO_COPY : 0 };

	put_cmd(area, &c);
}

int uring_cmd_add_bufpool(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint64_t uaddr,
			  uint64_t len)
{
	struct zcfs_uring_cmd_req_v46 c = { .qid = qid };

	if (len == 0 || uaddr == 0)
		return -EINVAL;
	if (len > UINT32_MAX)
		return -EOVERFLOW;
	c.bufpool.uaddr = uaddr;
	c.bufpool.len = (uint32_t)len;
	put_cmd(area, &c);
	return 0;
}

void uring_cmd_register(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint16_t zc_slot)
{
	struct zcfs_uring_cmd_req_v46 c = { .qid = qid };

	c.ent_zero_copy_buf_index = zc_slot;
	put_cmd(area, &c);
}

void uring_cmd_commit(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint64_t commit_id)
{
	struct zcfs_uring_cmd_req_v46 c = { .qid = qid, .commit_id = commit_id };

	put_cmd(area, &c);
}

/* ---- pool mirror ---------------------------------------------------- */

uint64_t bufpool_bytes(unsigned nbufs, size_t buf_size)
{
	return (uint64_t)nbufs * buf_size;
}

int bufpool_init(struct bufpool *p, unsigned nbufs, size_t buf_size)
{
	memset(p, 0, sizeof(*p));
	if (nbufs == 0 || buf_size == 0)
		return -EINVAL;
	/* Offsets are u32 on the wire: the whole pool must be addressable. */
	if (bufpool_bytes(nbufs, buf_size) > UINT32_MAX)
		return -EOVERFLOW;
	p->busy = calloc((nbufs + BITS_PER_WORD - 1) / BITS_PER_WORD, sizeof(*p->busy));
	if (!p->busy)
		return -ENOMEM;
	p->nbufs = nbufs;
	p->buf_size = buf_size;
	return 0;
}

void bufpool_done(struct bufpool *p)
{
	free(p->busy);
	memset(p, 0, sizeof(*p));
}

static bool is_busy(const struct bufpool *p, unsigned id)
{
	return (p->busy[id / BITS_PER_WORD] >> (id % BITS_PER_WORD)) & 1;
}

static void take(struct bufpool *p, unsigned id)
{
	p->busy[id / BITS_PER_WORD] |= 1ULL << (id % BITS_PER_WORD);
	p->in_use++;
	p->claims++;
	p->peak = MAX(p->peak, p->in_use);
}

int bufpool_alloc(struct bufpool *p, unsigned *id)
{
	unsigned i;

	for (i = 0; i < p->nbufs; i++)
		if (!is_busy(p, i)) {
			take(p, i);
			*id = i;
			return 0;
		}
	return -ENOBUFS;
}

int bufpool_claim(struct bufpool *p, uint32_t offset, unsigned *id)
{
	unsigned i;

	if (offset % p->buf_size || offset / p->buf_size >= p->nbufs) {
		p->refused++;
		return -EPROTO;
	}
	i = (unsigned)(offset / p->buf_size);
	if (is_busy(p, i)) {
		p->refused++;
		return -EBUSY;
	}
	take(p, i);
	*id = i;
	return 0;
}

int bufpool_release(struct bufpool *p, unsigned id)
{
	if (id >= p->nbufs || !is_busy(p, id))
		return -EINVAL;
	p->busy[id / BITS_PER_WORD] &= ~(1ULL << (id % BITS_PER_WORD));
	p->in_use--;
	return 0;
}

/* ---- delivered requests --------------------------------------------- */

bool uring_op_reply_has_payload(uint32_t opcode)
{
	switch (opcode) {
	/* Answered with the out header alone. */
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_UNLINK:
	case FUSE_RMDIR:
	case FUSE_RENAME:
	case FUSE_RENAME2:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FSYNC:
	case FUSE_FSYNCDIR:
	case FUSE_FLUSH:
	case FUSE_SETXATTR:
	case FUSE_REMOVEXATTR:
	case FUSE_SETLK:
	case FUSE_SETLKW:
	case FUSE_ACCESS:
	case FUSE_INTERRUPT:
	case FUSE_DESTROY:
	case FUSE_FALLOCATE:
	case FUSE_SYNCFS:
		return false;
	default:
		/* Unknown opcodes count as having payload: a buffer we do
		 * not use costs nothing, writing without one corrupts. */
		return true;
	}
}

int uring_classify_payload(uint32_t opcode, uint64_t ent_flags, uint32_t payload_sz, bool zc_queue,
			   enum uring_payload_kind *kind)
{
	if (ent_flags & FUSE_URING_ENT_ZERO_COPY) {
		/* Pages are only ever registered for READ/WRITE on a queue
		 * that asked for zero-copy. */
		if (!zc_queue)
			return -EPROTO;
		if (opcode == FUSE_READ)
			*kind = URING_PAYLOAD_ZC_READ;
		else if (opcode == FUSE_WRITE)
			*kind = URING_PAYLOAD_ZC_WRITE;
		else
			return -EPROTO;
		return 0;
	}
	*kind = payload_sz > 0 || uring_op_reply_has_payload(opcode) ? URING_PAYLOAD_COPY
								     : URING_PAYLOAD_NONE;
	return 0;
}

int uring_mark_zero_copy_open(uint32_t opcode, void *payload, size_t len)
{
	struct zcfs_open_out o;
	size_t off;

	if (opcode == FUSE_OPEN)
		off = 0;
	else if (opcode == FUSE_CREATE)
		off = sizeof(struct fuse_entry_out);
	else
		return 0;
	if (len < off + sizeof(o))
		return -EINVAL;
	memcpy(&o, (char *)payload + off, sizeof(o));
	/* A passthrough open never reaches the ring for data, and the
	 * kernel refuses other FOPEN bits next to FOPEN_PASSTHROUGH. */
	if (o.open_flags & FOPEN_PASSTHROUGH)
		return 0;
	o.open_flags |= FOPEN_IO_URING_ZERO_COPY;
	memcpy((char *)payload + off, &o, sizeof(o));
	return 1;
}
