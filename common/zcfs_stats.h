/* Per-volume request counters shared between a zcfs-serve and zcfsd:
 * zcfsd creates a memfd, passes it to the server (--stats-fd), and both
 * map it. The server only adds (relaxed atomics, no locks, no syscalls);
 * zcfsd only reads, for its metrics, and writes the volume's size. A sandboxed server needs no socket
 * for this, and the counters survive server restarts. */
#ifndef ZCFS_STATS_H
#define ZCFS_STATS_H

#include <stddef.h>
#include <stdint.h>

#define ZCFS_STATS_MAGIC 0x7a636673u	/* "zcfs" */
#define ZCFS_STATS_VERSION 1
/* Latency buckets: upper bounds 2^i microseconds, i = 0..LAT_BUCKETS-2,
 * and the last one for everything slower. */
#define ZCFS_STATS_LAT_BUCKETS 20

struct zcfs_stats {
	uint32_t magic;
	uint32_t version;
	uint64_t requests;	/* answered requests */
	uint64_t errors;	/* answered with an error */
	uint64_t bytes_read;	/* READ payload returned */
	uint64_t bytes_written;	/* WRITE payload accepted */
	uint64_t latency_ns_sum;
	uint64_t latency[ZCFS_STATS_LAT_BUCKETS];	/* per bucket, not cumulative */
	/* Servers started on the volume's connection, each taking the next
	 * as the epoch of its fhs (handle.c). Added after version 1's first
	 * layout: a memfd of ZCFS_STATS_SIZE_V1 bytes (made by an older
	 * zcfsd) has no such field. */
	uint64_t server_starts;
	/* The volume's size as zcfsd last set it (volume.resize): written
	 * by zcfsd only, never read back by it. A server enforces the
	 * larger of this and its --quota-bytes, so whatever is written here
	 * can only let the volume grow: the live channel of an online
	 * resize. Absent in a memfd of ZCFS_STATS_SIZE_V2 bytes. */
	uint64_t quota_bytes;
};

#define ZCFS_STATS_SIZE_V1 offsetof(struct zcfs_stats, server_starts)
#define ZCFS_STATS_SIZE_V2 offsetof(struct zcfs_stats, quota_bytes)

static inline unsigned zcfs_stats_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned b = 0;

	while (b < ZCFS_STATS_LAT_BUCKETS - 1 && us >= (1ULL << b))
		b++;
	return b;
}

static inline void zcfs_stats_add(uint64_t *field, uint64_t n)
{
	__atomic_fetch_add(field, n, __ATOMIC_RELAXED);
}

static inline uint64_t zcfs_stats_read(const uint64_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}

#endif
