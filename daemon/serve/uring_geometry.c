/* Sizing of the io_uring transport (see uring_geometry.h). The ring
 * arithmetic mirrors the kernel's io_uring_setup: entries rounded up to a
 * power of two, twice as many CQEs, regions page-rounded. */
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include "session.h"
#include "uring_geometry.h"
#include "zcfs_uring_abi.h"

/* SMP_CACHE_BYTES on x86-64: the kernel aligns the SQ index array to it. */
#define KERNEL_CACHELINE 64

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

size_t uring_ring_bytes(const struct uring_geometry *g)
{
	size_t rings, sqes;

	rings = ALIGN_UP(g->cqes_off + (size_t)g->cq_entries * sizeof(struct io_uring_cqe),
			 KERNEL_CACHELINE);
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

uint64_t uring_pinned_bytes(const struct uring_geometry *g)
{
	unsigned bufs = MAX(g->payload_bufs, g->budget_payload_bufs);
	uint64_t per_queue = (uint64_t)g->depth * g->header_size + (uint64_t)bufs * g->payload_size;

	return (uint64_t)g->nr_queues * (uring_ring_bytes(g) + per_queue);
}

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

int uring_geometry_for_session(struct uring_geometry *g, const struct zcfs_session *se)
{
	size_t cqes_off = URING_DEFAULT_CQES_OFF;
	long page = sysconf(_SC_PAGESIZE);
	unsigned ncpu, pool;
	int r;

	r = uring_possible_cpus(&ncpu);
	if (r < 0)
		return r;
	r = uring_probe_layout(se->opts->queue_depth + 1, &cqes_off);
	if (r < 0)
		return r;
	uring_geometry_init(g, ncpu, se->opts->queue_depth, se->max_write, se->max_pages,
			    page > 0 ? (size_t)page : 4096, cqes_off);
	/* Pools: laid out from the start when demanded (INIT must offer
	 * them or the server stops), budgeted for when auto may pick them. */
	pool = se->opts->pool_buffers ? se->opts->pool_buffers : se->opts->queue_depth;
	if (se->opts->buffer_pool == ZCFS_BUFPOOL_ON || se->opts->buffer_pool == ZCFS_BUFPOOL_REGISTERED)
		uring_geometry_set_pool(g, pool);
	else if (se->opts->buffer_pool == ZCFS_BUFPOOL_AUTO)
		uring_geometry_allow_pool(g, pool);
	return 0;
}
