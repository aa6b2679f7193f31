/* What a queue ring's CQE is about, carried in its user_data: the kind of
 * operation in bits 32-39, the entry index in the low 32 bits and, for the
 * FUSE commands of a holder's ring (uring_holder.h), the low 24 bits of the
 * command's generation in bits 40-63 (0 otherwise). The encoder asserts
 * the range so a bad index can never alias another entry; the decoder
 * refuses kinds it does not know. */
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
	UD_HOLDER_POLL,		/* multishot poll of a ring holder's ring fd */
	UD_KIND_END,
};

#define UD_INDEX_BITS 32
#define UD_INDEX_MAX UINT32_MAX
#define UD_KIND_MASK 0xffULL
#define UD_GEN_SHIFT 40
#define UD_GEN_MASK ((1ULL << 24) - 1)

/* kind and index, and gen's low 24 bits. */
static inline uint64_t ud_encode_gen(enum ud_kind kind, uint64_t index, uint64_t gen)
{
	ud_assert(kind >= UD_FUSE_CMD && kind < UD_KIND_END);
	ud_assert(index <= UD_INDEX_MAX);
	return ((gen & UD_GEN_MASK) << UD_GEN_SHIFT) | ((uint64_t)kind << UD_INDEX_BITS) |
	       (index & UD_INDEX_MAX);
}

static inline uint64_t ud_encode(enum ud_kind kind, uint64_t index)
{
	return ud_encode_gen(kind, index, 0);
}

/* The generation bits ud_encode_gen put in. */
static inline uint64_t ud_gen(uint64_t ud)
{
	return ud >> UD_GEN_SHIFT;
}

/* 0, or -EINVAL when ud was not made by ud_encode(_gen). */
static inline int ud_decode(uint64_t ud, enum ud_kind *kind, uint32_t *index)
{
	uint64_t k = (ud >> UD_INDEX_BITS) & UD_KIND_MASK;

	if (k < UD_FUSE_CMD || k >= UD_KIND_END)
		return -EINVAL;
	*kind = (enum ud_kind)k;
	*index = (uint32_t)(ud & UD_INDEX_MAX);
	return 0;
}

#endif
