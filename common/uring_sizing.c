/* Sizing of an io_uring volume (see uring_sizing.h). The ring arithmetic
 * mirrors the kernel's io_uring_setup: entries rounded up to a power of
 * two, twice as many CQEs, regions page-rounded. */
#include <stdio.h>
#include <string.h>
#include "uring_sizing.h"
#include "kernel/zcfs_uring_abi.h"

/* SMP_CACHE_BYTES on x86-64: the kernel aligns the SQ index array to it. */
#define KERNEL_CACHELINE 64
/* struct io_uring_cqe without CQE32 */
#define CQE_SIZE 16

static unsigned roundup_pow2(unsigned v)
{
	unsigned p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

size_t uring_payload_size(uint32_t max_write, uint32_t max_pages, size_t page_size)
{
	size_t sz = MAX((size_t)ZCFS_FUSE_MIN_READ_BUFFER, (size_t)max_write);

	return MAX(sz, (size_t)max_pages * page_size);
}

/* One CPU number at *p (at most 6 digits), advancing *p past it. */
static int take_cpu(const char **p, unsigned long *ret)
{
	unsigned long v = 0;
	int digits = 0;

	while (**p >= '0' && **p <= '9') {
		if (++digits > 6)
			return -EINVAL;
		v = v * 10 + (unsigned long)(**p - '0');
		(*p)++;
	}
	if (!digits)
		return -EINVAL;
	*ret = v;
	return 0;
}

int uring_parse_cpu_list(const char *list, unsigned *ret)
{
	const char *p = list;
	unsigned n = 0;

	while (*p && *p != '\n') {
		unsigned long a, b;

		if (take_cpu(&p, &a) < 0)
			return -EINVAL;
		b = a;
		if (*p == '-') {
			p++;
			if (take_cpu(&p, &b) < 0 || b < a)
				return -EINVAL;
		}
		n += (unsigned)(b - a + 1);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	if (n == 0)
		return -EINVAL;
	*ret = n;
	return 0;
}

int uring_possible_cpus(unsigned *ret)
{
	_cleanup_fclose_ FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char line[256];

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))
		return -EIO;
	return uring_parse_cpu_list(line, ret);
}

void uring_geometry_init(struct uring_geometry *g, unsigned nr_queues, unsigned depth,
			 uint32_t max_write, uint32_t max_pages, size_t page_size, size_t cqes_off)
{
	memset(g, 0, sizeof(*g));
	g->nr_queues = nr_queues;
	g->depth = depth;
	g->max_write = max_write;
	g->page_size = page_size;
	g->header_size = ALIGN_UP(sizeof(struct zcfs_uring_req_header), page_size);
	g->payload_size = ALIGN_UP(uring_payload_size(max_write, max_pages, page_size), page_size);
	g->payload_bufs = g->budget_payload_bufs = depth;
	/* Every entry has at most one SQE in flight (its FUSE command or its
	 * backing I/O), plus the eventfd poll that wakes the thread. */
	g->ring_entries = depth + 1;
	g->sq_entries = roundup_pow2(g->ring_entries);
	g->cq_entries = 2 * g->sq_entries;
	g->cqes_off = cqes_off;
}

/* The deepest queue up to max_depth whose volume fits budget with
 * max_write payloads; 0 when not even one entry does. */
static unsigned deepest_that_fits(const struct uring_sizing *s, unsigned max_depth, uint32_t max_write,
				  uint64_t budget)
{
	struct uring_geometry g;
	unsigned d;

	for (d = max_depth; d >= 1; d--) {
		uring_geometry_init(&g, s->ncpus, d, max_write, (uint32_t)(max_write / s->page_size),
				    s->page_size, s->cqes_off);
		if (uring_pinned_bytes(&g) <= budget)
			return d;
	}
	return 0;
}

void uring_geometry_choose(struct uring_geometry *g, const struct uring_sizing *s)
{
	uint64_t budget = s->budget ? s->budget : URING_DEFAULT_PINNED_BUDGET;
	unsigned want = s->depth ? s->depth : URING_PREFERRED_DEPTH;
	/* A depth asked for is kept; a chosen one is at least 2 while the
	 * smallest max_write allows it (one entry serves while the other
	 * already waits in the kernel), 1 only after that. */
	unsigned least = s->depth ? s->depth : 2;
	uint32_t first = s->max_write ? s->max_write : URING_PREFERRED_MAX_WRITE;
	uint32_t last = s->max_write ? s->max_write : URING_MIN_MAX_WRITE;
	uint32_t mw;
	unsigned d;

	for (; least >= 1; least = s->depth ? 0 : least - 1) {
		for (mw = first; mw >= last; mw /= 2) {
			d = deepest_that_fits(s, want, mw, budget);
			if (d >= least) {
				uring_geometry_init(g, s->ncpus, d, mw, (uint32_t)(mw / s->page_size),
						    s->page_size, s->cqes_off);
				return;
			}
		}
	}
	/* Nothing fits: the smallest, over budget. */
	uring_geometry_init(g, s->ncpus, s->depth ? s->depth : 1, last, (uint32_t)(last / s->page_size),
			    s->page_size, s->cqes_off);
}

uint64_t uring_default_pinned_bytes(unsigned ncpus)
{
	const struct uring_sizing s = { .ncpus = ncpus, .page_size = 4096,
					.cqes_off = URING_DEFAULT_CQES_OFF };
	struct uring_geometry g;

	uring_geometry_choose(&g, &s);
	return uring_pinned_bytes(&g);
}

size_t uring_ring_bytes(const struct uring_geometry *g)
{
	size_t rings, sqes;

	rings = ALIGN_UP(g->cqes_off + (size_t)g->cq_entries * CQE_SIZE, KERNEL_CACHELINE);
	rings += (size_t)g->sq_entries * sizeof(uint32_t);
	sqes = (size_t)g->sq_entries * ZCFS_URING_SQE_SIZE;
	return ALIGN_UP(rings, g->page_size) + ALIGN_UP(sqes, g->page_size);
}

void uring_geometry_set_pool(struct uring_geometry *g, unsigned pool_bufs)
{
	/* Decided: the layout cannot change any more. */
	g->payload_bufs = g->budget_payload_bufs = pool_bufs;
}

void uring_geometry_set_stock(struct uring_geometry *g)
{
	g->payload_bufs = g->budget_payload_bufs = g->depth;
}

void uring_geometry_allow_pool(struct uring_geometry *g, unsigned pool_bufs)
{
	g->budget_payload_bufs = MAX(g->budget_payload_bufs, pool_bufs);
}

size_t uring_queue_buf_bytes(const struct uring_geometry *g)
{
	return (size_t)g->depth * g->header_size + (size_t)g->payload_bufs * g->payload_size;
}

size_t uring_queue_lock_bytes(const struct uring_geometry *g)
{
	return g->pool_unpinned ? (size_t)g->depth * g->header_size : uring_queue_buf_bytes(g);
}

void uring_geometry_choose_pool(struct uring_geometry *g, const struct uring_sizing *s, unsigned pool_bufs)
{
	uint64_t budget = s->budget ? s->budget : URING_POOL_PINNED_BUDGET;
	uint32_t mw = s->max_write ? s->max_write : URING_PREFERRED_MAX_WRITE;
	unsigned d = s->depth ? s->depth : URING_PREFERRED_DEPTH;

	for (;; d--) {
		uring_geometry_init(g, s->ncpus, d, mw, (uint32_t)(mw / s->page_size), s->page_size, s->cqes_off);
		g->pool_unpinned = true;
		uring_geometry_set_pool(g, pool_bufs ? pool_bufs : d);
		if (s->depth || d == 1 || uring_pinned_bytes(g) <= budget)
			return;
	}
}

uint64_t uring_default_pool_pinned_bytes(unsigned ncpus)
{
	const struct uring_sizing s = { .ncpus = ncpus, .page_size = 4096,
					.cqes_off = URING_DEFAULT_CQES_OFF };
	struct uring_geometry g;

	uring_geometry_choose_pool(&g, &s, 0);
	return uring_pinned_bytes(&g);
}

uint64_t uring_pinned_bytes(const struct uring_geometry *g)
{
	unsigned bufs = g->pool_unpinned ? 0 : MAX(g->payload_bufs, g->budget_payload_bufs);
	uint64_t per_queue = (uint64_t)g->depth * g->header_size + (uint64_t)bufs * g->payload_size;

	return (uint64_t)g->nr_queues * (uring_ring_bytes(g) + per_queue);
}
