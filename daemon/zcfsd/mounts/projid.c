/* The pure parts of project quotas: which id a new volume gets, and its
 * limits from its size (mounts/projquota.h). */
#include "projquota.h"

static bool id_used(const uint32_t *used, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (used[i] == id)
			return true;
	return false;
}

uint32_t zcfsd_projid_pick(const uint32_t *used, size_t n, uint32_t from)
{
	/* N ids can block at most N candidates: the answer is within N + 1. */
	if (from < ZCFSD_PROJID_MIN)
		from = ZCFSD_PROJID_MIN;
	for (uint64_t id = from; id <= ZCFSD_PROJID_MAX && id <= (uint64_t)from + n; id++)
		if (!id_used(used, n, (uint32_t)id))
			return (uint32_t)id;
	return 0;
}

void zcfsd_proj_limits_of(uint64_t size, struct zcfsd_proj_limits *l)
{
	l->bytes = size;
	l->basic_blocks = size / 512 + (size % 512 != 0);
	l->kib = size / 1024 + (size % 1024 != 0);
	l->inodes = size / 4096;
	if (l->inodes < ZCFSD_PROJ_INODES_MIN)
		l->inodes = ZCFSD_PROJ_INODES_MIN;
}
