/* Sizes of everything an io_uring volume allocates and pins, computed in
 * one place for every program: zcfs-serve allocates from these numbers
 * and --print-pinned reports them, zcfsd charges them to the tenant and
 * zcfsctl shows them, so no two of them can disagree. Pure functions: no
 * kernel is asked here (the CQE offset is an input; zcfs-serve probes it,
 * the others take URING_DEFAULT_CQES_OFF). */
#ifndef ZCFS_URING_SIZING_H
#define ZCFS_URING_SIZING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct uring_geometry {
	unsigned nr_queues;	/* = the kernel's num_possible_cpus() */
	unsigned depth;		/* FUSE entries per queue */
	uint32_t max_write;	/* the connection's max_write (max_pages follows it) */
	size_t page_size;
	size_t header_size;	/* 288-byte entry header, page-rounded */
	size_t payload_size;	/* per entry, >= the ring's max payload */
	/* Payload buffers of one queue: depth (one per entry, stock) or the
	 * size of its 7.46 buffer pool. budget_payload_bufs is the most the
	 * layout may switch to after INIT (auto), which the pinned-bytes
	 * figure must cover. */
	unsigned payload_bufs;
	unsigned budget_payload_bufs;
	/* The pool is neither mlocked nor registered (7.46 without
	 * IORING_URING_CMD_FIXED: the kernel copies into it by its user
	 * address, as into stock buffers): not pinned, not counted. */
	bool pool_unpinned;
	unsigned ring_entries;	/* asked of io_uring_setup: depth + wake poll */
	unsigned sq_entries;	/* what the kernel makes of it */
	unsigned cq_entries;
	size_t cqes_off;	/* offset of the CQE array in the rings region */
};

/* Offset of the CQE array when the kernel cannot be asked (6.x x86-64). */
#define URING_DEFAULT_CQES_OFF 64
/* What one default io_uring volume may pin, whatever the CPU count. */
#define URING_DEFAULT_PINNED_BUDGET (32ULL << 20)
/* The geometry defaults aim for: what a 2-CPU node has always had. */
#define URING_PREFERRED_DEPTH 8
#define URING_PREFERRED_MAX_WRITE (1u << 20)
/* What one default volume pins where the kernel has buffer pools: rings
 * and entry headers; the pool is not pinned (uring_geometry_choose_pool). */
#define URING_POOL_PINNED_BUDGET (8ULL << 20)
/* The smallest max_write a default geometry goes down to. */
#define URING_MIN_MAX_WRITE (8u << 10)

/* What the default geometry is chosen from: 0 in depth or max_write means
 * "choose it", 0 in budget URING_DEFAULT_PINNED_BUDGET. */
struct uring_sizing {
	unsigned ncpus;		/* queues: possible CPUs */
	unsigned depth;
	uint32_t max_write;
	uint64_t budget;
	size_t page_size;
	size_t cqes_off;
};

/* The ring's payload rule: max(8192, max_write, max_pages * page). */
size_t uring_payload_size(uint32_t max_write, uint32_t max_pages, size_t page_size);
/* Number of CPUs in a sysfs cpu list such as "0-3,6"; -EINVAL if malformed. */
int uring_parse_cpu_list(const char *list, unsigned *ret) _must_check_;
/* num_possible_cpus() from /sys/devices/system/cpu/possible. */
int uring_possible_cpus(unsigned *ret) _must_check_;
/* Fills g for nr_queues queues of depth entries and the session limits. */
void uring_geometry_init(struct uring_geometry *g, unsigned nr_queues, unsigned depth,
			 uint32_t max_write, uint32_t max_pages, size_t page_size, size_t cqes_off);
/* The geometry for s: given depth and max_write are kept; what is left to
 * choose is chosen so that the volume pins at most the budget, preferring
 * max_write (fewer requests per large I/O) over depth, and at least two
 * entries per queue while a max_write of URING_MIN_MAX_WRITE allows it:
 * 2 CPUs: 8 x 1 MiB (16.1 MiB), 16: 3 x 512 KiB, 64: 3 x 128 KiB,
 * 256: 3 x 32 KiB (tests/unit/test_geometry.c). When even the smallest does not fit, g is the smallest
 * and uring_pinned_bytes(g) exceeds the budget: the caller refuses. */
void uring_geometry_choose(struct uring_geometry *g, const struct uring_sizing *s);
/* What a volume with every default pins on ncpus CPUs (4K pages, the
 * default CQE offset): zcfsctl's figure, zcfsd's charge of a default
 * volume and zcfs-serve --print-pinned without options agree on it. */
uint64_t uring_default_pinned_bytes(unsigned ncpus);
/* The default geometry where the kernel has buffer pools (protocol 7.46,
 * decided at INIT): entries no longer carry payload buffers and the pool
 * is not pinned, so max_write keeps s->max_write or
 * URING_PREFERRED_MAX_WRITE (1 MiB requests on any CPU count) and only
 * the depth is chosen: the deepest up to s->depth or
 * URING_PREFERRED_DEPTH whose rings and headers fit s->budget or
 * URING_POOL_PINNED_BUDGET (64 CPUs: depth 8, 2.5 MiB; tests/unit/
 * test_geometry.c), at least 1. pool_bufs 0: one per entry. */
void uring_geometry_choose_pool(struct uring_geometry *g, const struct uring_sizing *s, unsigned pool_bufs);
/* What a default volume pins on ncpus CPUs with buffer pools. */
uint64_t uring_default_pool_pinned_bytes(unsigned ncpus);
/* What one queue mlocks: headers and payloads, or the headers alone when
 * the pool is not pinned. */
size_t uring_queue_lock_bytes(const struct uring_geometry *g);
/* Final layout: the queues use a buffer pool of pool_bufs payload buffers
 * instead of one per entry (--buffer-pool=on|registered, or decided at INIT). */
void uring_geometry_set_pool(struct uring_geometry *g, unsigned pool_bufs);
/* Final layout: one payload buffer per entry (INIT offered no pools). */
void uring_geometry_set_stock(struct uring_geometry *g);
/* The layout may become a pool of pool_bufs after INIT (--buffer-pool=auto). */
void uring_geometry_allow_pool(struct uring_geometry *g, unsigned pool_bufs);
/* Kernel memory of one ring: rings region (header, CQEs, SQ index array)
 * and the 128-byte SQE array, each page-rounded, charged as locked memory
 * to the uid of an unprivileged creator. */
size_t uring_ring_bytes(const struct uring_geometry *g);
/* Entry headers and payload buffers (or pool) of one queue, as laid out
 * now (one mlocked mapping). */
size_t uring_queue_buf_bytes(const struct uring_geometry *g);
/* Everything a volume pins: every queue's ring plus its buffers, with the
 * largest payload layout it may switch to. */
uint64_t uring_pinned_bytes(const struct uring_geometry *g);

#endif
