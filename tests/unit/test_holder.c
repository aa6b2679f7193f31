/* A server's take-over of a ring holder's rings (uring_holder.h): the
 * action holder_take_decide picks for each state an entry can be left in
 * by a killed predecessor, the generation bits of its CQEs, and the saved
 * copy of a request that a reply overwrote. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "kernel/zcfs_uring_abi.h"
#include "daemon/serve/transport/uring_holder.h"
#include "daemon/serve/transport/uring_userdata.h"

#define EPOCH 3

/* The slot after a command of generation gen at SQ position pos. */
static void cmd(struct ringmem_slot *s, uint32_t pos, uint32_t op)
{
	holder_note_cmd(s, EPOCH, pos, op, op == ZCFS_URING_CMD_REGISTER ? 0 : 77);
}

static void test_decide_same_holder(void **state)
{
	struct ringmem_slot s;
	uint64_t g;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(holder_take_decide(&s, EPOCH, 10, 0), HOLDER_TAKE_REGISTER);
	cmd(&s, 10, ZCFS_URING_CMD_REGISTER);
	/* written at 10, the kernel's tail still 10: never published */
	assert_int_equal(holder_take_decide(&s, EPOCH, 10, 0), HOLDER_TAKE_RESUBMIT);
	/* published: in the kernel, its CQE comes */
	assert_int_equal(holder_take_decide(&s, EPOCH, 11, 0), HOLDER_TAKE_WAIT);
	/* taken: served again from the copy until its reply is complete */
	g = atomic_load(&s.gen);
	assert_true(holder_take_cqe(&s, g & UD_GEN_MASK, 0));
	assert_false(holder_take_cqe(&s, g & UD_GEN_MASK, 0));	/* consumed once */
	assert_int_equal(holder_take_decide(&s, EPOCH, 11, 0), HOLDER_TAKE_SERVE_SAVED);
	holder_replied(&s);
	assert_int_equal(holder_take_decide(&s, EPOCH, 11, 0), HOLDER_TAKE_RECOMMIT);
	/* its COMMIT_AND_FETCH written, then published */
	cmd(&s, 11, ZCFS_URING_CMD_COMMIT_AND_FETCH);
	assert_int_equal(holder_take_decide(&s, EPOCH, 11, 0), HOLDER_TAKE_RESUBMIT);
	assert_int_equal(holder_take_decide(&s, EPOCH, 12, 0), HOLDER_TAKE_WAIT);
	/* an older CQE of the entry is not the current one */
	assert_false(holder_take_cqe(&s, g & UD_GEN_MASK, 0));
	/* a failed command: retried, re-registered or given up */
	g = atomic_load(&s.gen);
	assert_true(holder_take_cqe(&s, g & UD_GEN_MASK, -EAGAIN));
	assert_int_equal(holder_take_decide(&s, EPOCH, 12, 0), HOLDER_TAKE_RESUBMIT);
	s.taken_res = -ENOENT;
	assert_int_equal(holder_take_decide(&s, EPOCH, 12, 0), HOLDER_TAKE_REGISTER);
	s.taken_res = -ENOTCONN;
	assert_int_equal(holder_take_decide(&s, EPOCH, 12, 0), HOLDER_TAKE_DEAD);
	/* SQ positions wrap */
	cmd(&s, UINT32_MAX, ZCFS_URING_CMD_REGISTER);
	assert_int_equal(holder_take_decide(&s, EPOCH, UINT32_MAX, 0), HOLDER_TAKE_RESUBMIT);
	assert_int_equal(holder_take_decide(&s, EPOCH, 0, 0), HOLDER_TAKE_WAIT);
}

static void test_decide_dead_holder(void **state)
{
	struct ringmem_slot s;
	uint64_t g;

	(void)state;
	memset(&s, 0, sizeof(s));
	cmd(&s, 5, ZCFS_URING_CMD_REGISTER);
	s.in.unique = 40;
	/* its command died with holder EPOCH; nothing delivered since the
	 * request it took last (unique 40): a fresh entry */
	assert_int_equal(holder_take_decide(&s, EPOCH + 1, 0, 40), HOLDER_TAKE_REGISTER);
	assert_int_equal(holder_take_decide(&s, EPOCH + 1, 0, 0), HOLDER_TAKE_REGISTER);
	/* delivered after it (header written), never taken: serve it */
	assert_int_equal(holder_take_decide(&s, EPOCH + 1, 0, 42), HOLDER_TAKE_SERVE_HEADER);
	/* taken: as with a live holder, but whatever the SQ says */
	g = atomic_load(&s.gen);
	assert_true(holder_take_cqe(&s, g & UD_GEN_MASK, 0));
	assert_int_equal(holder_take_decide(&s, EPOCH + 1, 0, 42), HOLDER_TAKE_SERVE_SAVED);
	holder_replied(&s);
	assert_int_equal(holder_take_decide(&s, EPOCH + 1, 0, 42), HOLDER_TAKE_RECOMMIT);
}

static void test_ud_generation(void **state)
{
	enum ud_kind k;
	uint32_t i;
	uint64_t ud = ud_encode_gen(UD_FUSE_CMD, 7, (1ULL << 30) + 5);

	(void)state;
	assert_int_equal(ud_decode(ud, &k, &i), 0);
	assert_int_equal(k, UD_FUSE_CMD);
	assert_int_equal(i, 7);
	assert_int_equal(ud_gen(ud), ((1ULL << 30) + 5) & UD_GEN_MASK);
	assert_int_equal(ud_gen(ud_encode(UD_FUSE_CMD, 7)), 0);
}

static void test_generation_skips_zero_bits(void **state)
{
	struct ringmem_slot s;

	(void)state;
	memset(&s, 0, sizeof(s));
	atomic_store(&s.gen, UD_GEN_MASK);	/* next would have low bits 0 */
	assert_int_not_equal(holder_note_cmd(&s, EPOCH, 0, ZCFS_URING_CMD_REGISTER, 0) & UD_GEN_MASK, 0);
}

static void test_saved_copy(void **state)
{
	struct ringmem_slot s;
	struct zcfs_uring_req_header h;
	struct fuse_in_header in = { .len = 4096 + 40, .opcode = FUSE_WRITE, .unique = 99 };
	char payload[4096], orig[4096];

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (char)i;
	memcpy(orig, payload, sizeof(orig));
	memcpy(h.in_out, &in, sizeof(in));
	h.ring_ent_in_out.payload_sz = sizeof(payload);
	holder_save_request(&s, &h, payload);
	/* the reply: an out header, 8 bytes of fuse_write_out */
	memset(h.in_out, 0xee, 16);
	memset(payload, 0xee, 8);
	h.ring_ent_in_out.payload_sz = 8;
	holder_restore_request(&s, &h, payload);
	assert_memory_equal(h.in_out, &in, sizeof(in));
	assert_int_equal(h.ring_ent_in_out.payload_sz, sizeof(payload));
	assert_memory_equal(payload, orig, sizeof(orig));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_same_holder),
		cmocka_unit_test(test_decide_dead_holder),
		cmocka_unit_test(test_ud_generation),
		cmocka_unit_test(test_generation_skips_zero_bits),
		cmocka_unit_test(test_saved_copy),
	};
	return cmocka_run_group_tests_name("holder", tests, NULL, NULL);
}
