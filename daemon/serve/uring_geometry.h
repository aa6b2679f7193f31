/* Sizes of everything the io_uring transport allocates and pins, computed
 * in one place: the queue code allocates from these numbers and
 * --print-pinned reports them, so the two cannot drift apart. */
#ifndef ZCFS_URING_GEOMETRY_H
#define ZCFS_URING_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>
#include "util.h"

struct zcfs_session;

struct uring_geometry {
	unsigned nr_queues;	/* = the kernel's num_possible_cpus() */
	unsigned depth;		/* FUSE entries per queue */
	size_t page_size;
	size_t header_size;	/* 288-byte entry header, page-rounded */
	size_t payload_size;	/* per entry, >= the ring's max payload */
	/* Payload buffers of one queue: depth (one per entry, stock) or the
	 * size of its 7.46 buffer pool. budget_payload_bufs is the most the
	 * layout may switch to after INIT (auto), which the pinned-bytes
	 * figure must cover. */
	unsigned payload_bufs;
	unsigned budget_payload_bufs;
	unsigned ring_entries;	/* asked of io_uring_setup: depth + wake poll */
	unsigned sq_entries;	/* what the kernel makes of it */
	unsigned cq_entries;
	size_t cqes_off;	/* offset of the CQE array in the rings region */
};

/* Offset of the CQE array when the kernel cannot be asked (6.x x86-64). */
#define URING_DEFAULT_CQES_OFF 64

/* The ring's payload rule: max(8192, max_write, max_pages * page). */
size_t uring_payload_size(uint32_t max_write, uint32_t max_pages, size_t page_size);
/* Number of CPUs in a sysfs cpu list such as "0-3,6"; -EINVAL if malformed. */
int uring_parse_cpu_list(const char *list, unsigned *ret) _must_check_;
/* num_possible_cpus() from /sys/devices/system/cpu/possible. */
int uring_possible_cpus(unsigned *ret) _must_check_;
/* Fills g from the session limits and the kernel's ring layout. */
void uring_geometry_init(struct uring_geometry *g, unsigned nr_queues, unsigned depth,
			 uint32_t max_write, uint32_t max_pages, size_t page_size, size_t cqes_off);
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

/* Creates a throwaway SQE128 ring of `entries` entries: 0 when io_uring
 * works here, with the kernel's CQE array offset in *cqes_off. */
int uring_probe_layout(unsigned entries, size_t *cqes_off) _must_check_;
/* The geometry the session's transport will allocate. */
int uring_geometry_for_session(struct uring_geometry *g, const struct zcfs_session *se) _must_check_;

#endif
