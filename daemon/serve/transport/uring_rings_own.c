/* Own rings (see uring_rings.h): the queue's ring carries its FUSE
 * commands; with a ring memfd a restarted server answers what its dead
 * predecessor's entries held, by commit id. */
#include <string.h>
#include <time.h>
#include "common/log.h"
#include "uring_entry.h"
#include "uring_kick.h"
#include "uring_ring.h"
#include "uring_rings.h"
#include "uring_ringmem.h"
#include "uring_userdata.h"
#include "uring_zerocopy.h"

static int own_setup(struct uring_queue *q)
{
	q->cmd_ring = &q->ring;
	return 0;
}

/* The entries a dead predecessor's left holding a request (commit id in
 * the header, never committed): the kernel still has them. */
static unsigned mark_recovered(struct uring_queue *q)
{
	unsigned i, held = 0;

	for (i = 0; i < q->g->depth && q->rm && q->rm->recovering; i++) {
		struct uring_entry *e = &q->ents[i];
		uint64_t id = e->hdr->ring_ent_in_out.commit_id;
		if (id && id != atomic_load(&ringmem_slot(q->rm, q->qid, i)->done_id)) {
			e->recovered = true;
			held++;
		}
	}
	return held;
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
		uring_entry_serve(q, e);
		return 0;
	}
	if (st == RINGMEM_HELD_REPLIED) {
		log_info("qid=%u entry=%u: committing commit_id=%llu as the previous server replied",
			 q->qid, e->index, id);
		return uring_entry_submit(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
	}
	/* What it asked may be overwritten by half a reply; the dead server
	 * did the work, its answer is lost: as the kernel's own window. */
	log_warn("qid=%u entry=%u: commit_id=%llu was being answered when the previous server died: "
		 "ended ECANCELED", q->qid, e->index, id);
	oh.unique = e->commit_id;
	e->hdr->ring_ent_in_out.payload_sz = 0;
	memcpy(e->hdr->in_out, &oh, sizeof(oh));
	return uring_entry_submit(q, e, ZCFS_URING_CMD_COMMIT_AND_FETCH);
}

/* REGISTER every entry; failures that the kernel reports at issue time
 * are already in the CQ when submit returns. */
static int own_attach(struct uring_queue *q)
{
	unsigned i, held;
	int r;

	/* Pools, zero-copy, or a layout change decided at INIT. */
	r = zerocopy_queue_setup(q, false);
	q->pops = uring_payload_for(q);
	held = r == 0 ? mark_recovered(q) : 0;
	for (i = 0; i < q->g->depth && r == 0; i++)
		if (!q->ents[i].recovered)
			r = uring_entry_submit(q, &q->ents[i], ZCFS_URING_CMD_REGISTER);
	if (r == 0) {
		r = io_uring_submit(&q->ring);
		r = r < 0 ? r : 0;
	}
	if (r == 0) {
		uring_entry_reap(q, &q->ring);
		r = q->register_err;
	}
	/* A restarted server: requests that reached this queue while no
	 * entry was registered wait in its list, and the kernel hands them
	 * out only on a COMMIT_AND_FETCH (REGISTER does not look): kick. */
	if (r == 0 && q->se->resume)
		uring_kick_waiting(q);
	/* Answer what the dead server's entries held, with its commit ids:
	 * header and payload are still in the shared buffers. */
	for (i = 0; i < q->g->depth && r == 0 && held; i++)
		if (q->ents[i].recovered)
			r = recover_held(q, &q->ents[i]);
	return r;
}

/* A successor tells a request from a reply by the opcode (ring memfd). */
static void own_replying(struct uring_queue *q, struct uring_entry *e)
{
	if (q->rm)
		ringmem_mark_replying(e->hdr->in_out);
}

static void own_prep_cmd(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe,
			 uint32_t op)
{
	(void)q;
	(void)op;
	sqe->user_data = ud_encode(UD_FUSE_CMD, e->index);
}

static bool own_take_cqe(struct uring_queue *q, uint32_t idx, uint64_t ud, int res)
{
	(void)q;
	(void)idx;
	(void)ud;
	(void)res;
	return true;
}

static bool own_flush(struct uring_queue *q)
{
	(void)q;
	return false;
}

static struct io_uring *own_more_cqes(struct uring_queue *q)
{
	(void)q;
	return NULL;
}

/* Hand-over: entries that are being served finish (their COMMIT_AND_FETCH
 * arms them again); idle entries are filled by kicks (uring_kick.h), one
 * per idle entry every 20 ms at most. Done when no entry is idle or busy. */
static int own_handover_step(struct uring_queue *q)
{
	unsigned i, idle = 0, busy = 0;
	struct timespec now;

	for (i = 0; i < q->g->depth; i++) {
		enum uring_ent_state s = q->ents[i].state;
		idle += s == ENT_IN_KERNEL;
		busy += s == ENT_IN_SERVER || s == ENT_BACKING_IO;
	}
	if (!idle && !busy)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (busy || (now.tv_sec - q->last_kick.tv_sec) * 1000000000L + now.tv_nsec - q->last_kick.tv_nsec < 20000000L)
		return 0;
	q->last_kick = now;
	for (i = 0; i < idle; i++)
		if (!uring_kick(q))
			break;	/* nothing cached: what arrives fills them, or the wait times out */
	return 0;
}

static void own_release(struct uring_queue *q)
{
	(void)q;
}

const struct uring_rings_ops uring_rings_own = {
	.name = "own",
	.setup = own_setup,
	.attach = own_attach,
	.prep_cmd = own_prep_cmd,
	.take_cqe = own_take_cqe,
	.replying = own_replying,
	.flush = own_flush,
	.more_cqes = own_more_cqes,
	.handover_step = own_handover_step,
	.release = own_release,
};
