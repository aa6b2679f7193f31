/* What a queue ring's CQE is about, carried in its user_data: the kind of
 * operation in the high 32 bits, the entry index in the low 32 bits. The
 * encoder asserts the range so a bad index can never alias another entry;
 * the decoder refuses kinds it does not know. */
#ifndef ZCFS_URING_USERDATA_H
#define ZCFS_URING_USERDATA_H

#include <assert.h>
#include <errno.h>
#include <stdint.h>

/* Tests redefine this to catch the assertion. */
#ifndef ud_assert
#define ud_assert(x) assert(x)
#endif

enum ud_kind {
	UD_FUSE_CMD = 1,	/* REGISTER or COMMIT_AND_FETCH of an entry */
	UD_BACKING_READ,	/* pread of a READ into the entry's payload */
	UD_BACKING_WRITE,	/* pwrite of a WRITE from the entry's payload */
	UD_WAKE,		/* poll on the queue's eventfd */
	UD_SETUP,		/* ADD_QUEUE / ADD_BUFPOOL, waited for synchronously */
	UD_KIND_END,
};

#define UD_INDEX_BITS 32
#define UD_INDEX_MAX UINT32_MAX

static inline uint64_t ud_encode(enum ud_kind kind, uint64_t index)
{
	ud_assert(kind >= UD_FUSE_CMD && kind < UD_KIND_END);
	ud_assert(index <= UD_INDEX_MAX);
	return ((uint64_t)kind << UD_INDEX_BITS) | (index & UD_INDEX_MAX);
}

/* 0, or -EINVAL when ud was not made by ud_encode. */
static inline int ud_decode(uint64_t ud, enum ud_kind *kind, uint32_t *index)
{
	uint64_t k = ud >> UD_INDEX_BITS;

	if (k < UD_FUSE_CMD || k >= UD_KIND_END)
		return -EINVAL;
	*kind = (enum ud_kind)k;
	*index = (uint32_t)(ud & UD_INDEX_MAX);
	return 0;
}

#endif
