/* Kernel probe and the session's io_uring geometry (see uring_geometry.h). */
#include <liburing.h>
#include <string.h>
#include <unistd.h>
#include "daemon/serve/core/session.h"
#include "daemon/serve/core/options.h"
#include "uring_geometry.h"

int uring_probe_layout(unsigned entries, size_t *cqes_off)
{
	struct io_uring_params p;
	struct io_uring ring;
	int r;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	r = io_uring_queue_init_params(entries, &ring, &p);
	if (r < 0)
		return r;
	*cqes_off = p.cq_off.cqes;
	io_uring_queue_exit(&ring);
	return 0;
}

void uring_geometry_for_options(struct uring_geometry *g, const struct zcfs_options *o, unsigned ncpus,
				size_t page_size, size_t cqes_off)
{
	const struct uring_sizing s = { .ncpus = ncpus, .depth = o->queue_depth, .max_write = o->max_write,
					.budget = o->pinned_budget, .page_size = page_size,
					.cqes_off = cqes_off };
	unsigned pool;

	/* --buffer-pool=on: an unregistered pool, not pinned: only rings and
	 * headers count, so requests stay 1 MiB on any CPU count. */
	if (o->buffer_pool == ZCFS_BUFPOOL_ON) {
		uring_geometry_choose_pool(g, &s, o->pool_buffers);
		return;
	}
	uring_geometry_choose(g, &s);
	/* Pools: laid out from the start when demanded (INIT must offer
	 * them or the server stops), budgeted for when auto may pick them. */
	pool = o->pool_buffers ? o->pool_buffers : g->depth;
	if (o->buffer_pool == ZCFS_BUFPOOL_ON || o->buffer_pool == ZCFS_BUFPOOL_REGISTERED)
		uring_geometry_set_pool(g, pool);
	else if (o->buffer_pool == ZCFS_BUFPOOL_AUTO)
		uring_geometry_allow_pool(g, pool);
}

int uring_geometry_for_session(struct uring_geometry *g, const struct zcfs_session *se)
{
	size_t cqes_off = URING_DEFAULT_CQES_OFF;
	long page = sysconf(_SC_PAGESIZE);
	unsigned ncpu;
	int r;

	r = uring_possible_cpus(&ncpu);
	if (r < 0)
		return r;
	r = uring_probe_layout(se->opts->queue_depth + 1, &cqes_off);
	if (r < 0)
		return r;
	uring_geometry_for_options(g, se->opts, ncpu, page > 0 ? (size_t)page : 4096, cqes_off);
	return 0;
}
