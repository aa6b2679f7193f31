/* The pure parts of project quotas: which id a new volume gets, how it is
 * claimed against other claimants, and its limits from its size
 * (mounts/projquota.h). */
#include <errno.h>
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

/* One try at ID: 1 kept, 0 someone else has it too (taken off again), -errno. */
static int claim_one(const struct zcfsd_projid_ops *ops, uint32_t id)
{
	uint64_t inodes = 0;
	int r = ops->record(ops->ctx, id);

	if (r == 0)
		r = ops->assign(ops->ctx, id);
	if (r == 0)
		r = ops->charged(ops->ctx, id, &inodes);
	if (r < 0)
		return r;
	/* our empty directory is the one inode; 0: not counted yet, ours */
	if (inodes <= 1)
		return 1;
	r = ops->assign(ops->ctx, 0);
	return r < 0 ? r : 0;
}

int zcfsd_projid_claim(const uint32_t *used, size_t n, uint32_t stride,
		       const struct zcfsd_projid_ops *ops, uint32_t *id)
{
	uint32_t from = ZCFSD_PROJID_MIN;
	int r;

	*id = 0;
	if (!stride)
		stride = 1;
	for (int tries = 0; tries < 256; tries++) {
		uint32_t cand = zcfsd_projid_pick(used, n, from);

		if (!cand)
			return -ENOSPC;
		if (ops->busy(ops->ctx, cand)) {
			from = cand + 1;
			continue;
		}
		r = claim_one(ops, cand);
		if (r < 0)
			return r;
		if (r == 1) {
			*id = cand;
			return 0;
		}
		from = cand + stride;	/* lost to another claimant */
	}
	return -ENOSPC;
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
