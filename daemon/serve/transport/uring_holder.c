/* Per-entry bookkeeping of a server on a ring holder's rings (see
 * uring_holder.h): what a successor finds, and what it does with it. */
#include <errno.h>
#include <string.h>
#include "kernel/zcfs_uring_abi.h"
#include "uring_holder.h"
#include "uring_userdata.h"

static enum holder_take after_failure(int32_t res)
{
	if (res == -EAGAIN || res == -EINTR)
		return HOLDER_TAKE_RESUBMIT;
	/* A commit the kernel did not know: the entry is free again. */
	if (res == -ENOENT)
		return HOLDER_TAKE_REGISTER;
	return HOLDER_TAKE_DEAD;
}

enum holder_take holder_take_decide(const struct ringmem_slot *s, uint64_t epoch, uint32_t sq_ktail,
				    uint64_t hdr_commit_id)
{
	uint64_t gen = atomic_load(&s->gen);
	bool took = gen && atomic_load(&s->taken) == gen;

	if (!gen)
		return HOLDER_TAKE_REGISTER;
	if (s->epoch != epoch) {
		/* An earlier holder's ring: every command it had is gone, the
		 * requests its entries held are still the kernel's. */
		if (took && s->taken_res == 0)
			return atomic_load(&s->replied) == gen ? HOLDER_TAKE_RECOMMIT :
								 HOLDER_TAKE_SERVE_SAVED;
		if (hdr_commit_id && hdr_commit_id != s->in.unique)
			return HOLDER_TAKE_SERVE_HEADER;
		return HOLDER_TAKE_REGISTER;
	}
	if ((int32_t)(s->pos - sq_ktail) >= 0)
		return HOLDER_TAKE_RESUBMIT;
	if (!took)
		return HOLDER_TAKE_WAIT;
	if (s->taken_res != 0)
		return after_failure(s->taken_res);
	return atomic_load(&s->replied) == gen ? HOLDER_TAKE_RECOMMIT : HOLDER_TAKE_SERVE_SAVED;
}

const char *holder_take_name(enum holder_take t)
{
	static const char *const names[] = { "register", "wait", "resubmit", "recommit",
					     "serve-saved", "serve-header", "dead" };

	return (unsigned)t < ARRAY_SIZE(names) ? names[t] : "?";
}

uint32_t holder_sq_ktail(const struct io_uring *ring)
{
	return atomic_load_explicit((_Atomic unsigned *)ring->sq.ktail, memory_order_acquire);
}

int holder_ring_map(int fd, const struct io_uring_params *p, struct io_uring *ring)
{
	struct io_uring_params prm = *p;
	uint32_t tail;
	int r;

	if (!(prm.flags & IORING_SETUP_SQPOLL) || !(prm.flags & IORING_SETUP_SQE128) || !prm.sq_entries)
		return -EPROTO;
	r = io_uring_queue_mmap(fd, &prm, ring);
	if (r < 0)
		return r;
	ring->flags = prm.flags;
	ring->features = prm.features;
	ring->ring_fd = ring->enter_ring_fd = fd;
	tail = holder_sq_ktail(ring);
	ring->sq.sqe_head = ring->sq.sqe_tail = tail;
	return 0;
}

uint64_t holder_note_cmd(struct ringmem_slot *s, uint64_t epoch, uint32_t pos, uint32_t cmd_op,
			 uint64_t commit_id)
{
	uint64_t gen = atomic_load(&s->gen) + 1;

	/* Generations whose low bits are 0 would look like a plain ud. */
	if ((gen & UD_GEN_MASK) == 0)
		gen++;
	s->epoch = epoch;
	s->pos = pos;
	s->cmd_op = cmd_op;
	s->commit_id = commit_id;
	atomic_store_explicit(&s->gen, gen, memory_order_release);
	return gen;
}

bool holder_take_cqe(struct ringmem_slot *s, uint64_t ud_gen, int32_t res)
{
	uint64_t gen = atomic_load(&s->gen);

	if ((gen & UD_GEN_MASK) != ud_gen || atomic_load(&s->taken) == gen)
		return false;
	s->taken_res = res;
	atomic_store_explicit(&s->taken, gen, memory_order_release);
	return true;
}

void holder_save_request(struct ringmem_slot *s, const struct zcfs_uring_req_header *h,
			 const void *payload)
{
	uint32_t psz = h->ring_ent_in_out.payload_sz;

	memcpy(&s->in, h->in_out, sizeof(s->in));
	s->psz = psz;
	if (payload)
		memcpy(s->psave, payload, MIN(psz, RINGMEM_SAVE_BYTES));
}

void holder_replied(struct ringmem_slot *s)
{
	atomic_store_explicit(&s->replied, atomic_load(&s->taken), memory_order_release);
}

void holder_restore_request(const struct ringmem_slot *s, struct zcfs_uring_req_header *h,
			    void *payload)
{
	memcpy(h->in_out, &s->in, sizeof(s->in));
	h->ring_ent_in_out.payload_sz = s->psz;
	if (payload)
		memcpy(payload, s->psave, MIN(s->psz, RINGMEM_SAVE_BYTES));
}
