/* The max_read mount option of a zcfs volume, shared by zcfs-serve
 * (standalone mounts) and zcfsd (the mounts it hands to servers). */
#ifndef ZCFS_MAX_READ_H
#define ZCFS_MAX_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include "util.h"

/* The pipe a /dev/fuse reader splices READ replies through: the most an
 * unprivileged process may give one (pipe-max-size's default). */
#define ZCFS_SPLICE_PIPE_BYTES (1u << 20)

/* io_uring reads fill the entry's max_write payload buffer. /dev/fuse
 * READ replies go through the splice pipe, one buffer per page plus one
 * for the reply header: a read larger than the pipe less a page would be
 * copied twice instead of once. */
static inline uint32_t zcfs_mount_max_read(uint32_t max_write, bool uring)
{
	uint32_t splice_max = ZCFS_SPLICE_PIPE_BYTES - (uint32_t)sysconf(_SC_PAGESIZE);

	return uring ? max_write : MIN(max_write, splice_max);
}

#endif
