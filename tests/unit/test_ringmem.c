/* What a successor reads from a dead server's entry header (uring_ringmem.h,
 * ringmem_held_state): the request as delivered, a reply being written,
 * or a complete reply -- the states uring_reply leaves the header in; and
 * the queues' form it reads from the memfd (ringmem_get_ext), bounded by
 * the room the mapping has. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "common/uring_sizing.h"
#include "kernel/zcfs_uring_abi.h"
#include "daemon/serve/transport/uring_ringmem.h"

static void deliver(struct zcfs_uring_req_header *h, uint32_t opcode)
{
	struct fuse_in_header in = { .len = 80, .opcode = opcode, .unique = 4242, .nodeid = 7 };

	memset(h, 0, sizeof(*h));
	memcpy(h->in_out, &in, sizeof(in));
}

static void reply(struct zcfs_uring_req_header *h, int32_t error)
{
	struct fuse_out_header oh = { .len = 24, .error = error, .unique = 4242 };

	ringmem_mark_replying(h->in_out);
	memcpy(h->in_out, &oh, sizeof(oh));
}

static void test_delivered_requests_are_served(void **state)
{
	static const uint32_t ops[] = { FUSE_LOOKUP, FUSE_WRITE, FUSE_SETATTR, FUSE_FSYNC,
					FUSE_NOTIFY_REPLY, CUSE_INIT };
	struct zcfs_uring_req_header h;

	(void)state;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		deliver(&h, ops[i]);
		assert_int_equal(ringmem_held_state(h.in_out), RINGMEM_HELD_REQUEST);
	}
}

static void test_half_written_reply(void **state)
{
	struct zcfs_uring_req_header h;
	struct fuse_in_header in;

	(void)state;
	deliver(&h, FUSE_WRITE);
	ringmem_mark_replying(h.in_out);
	assert_int_equal(ringmem_held_state(h.in_out), RINGMEM_HELD_REPLYING);
	/* only the opcode changes: unique and nodeid stay as delivered */
	memcpy(&in, h.in_out, sizeof(in));
	assert_int_equal(in.unique, 4242);
	assert_int_equal(in.nodeid, 7);
}

static void test_complete_replies(void **state)
{
	static const int32_t errs[] = { 0, -1, -ENOSYS, -ECANCELED, -4095 };
	struct zcfs_uring_req_header h;

	(void)state;
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		deliver(&h, FUSE_WRITE);
		reply(&h, errs[i]);
		assert_int_equal(ringmem_held_state(h.in_out), RINGMEM_HELD_REPLIED);
	}
}

/* A fresh memfd of 2 queues x 8 entries x 128 KiB payloads, mapped
 * again as a successor would (recovering): the form recorded by the
 * first mapping is read through the second. */
static void test_recorded_pool_is_bounded(void **state)
{
	struct uring_geometry g;
	struct ringmem *first = NULL, *next = NULL;
	unsigned f = 0, n = 0, room;
	int fd = memfd_create("test-ringmem", MFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	uring_geometry_init(&g, 2, 8, 128u << 10, 32, 4096, URING_DEFAULT_CQES_OFF);
	assert_int_equal(ringmem_attach(fd, &g, false, false, &first), 0);
	room = ringmem_pool_room(first);
	assert_int_equal(room, 8);	/* one payload buffer per entry */
	assert_int_equal(ringmem_get_ext(first, &f, &n), 0);	/* nothing recorded */
	ringmem_set_ext(first, RINGMEM_EXT_POOL, room);
	ringmem_detach(first);
	assert_int_equal(ringmem_attach(fd, &g, true, true, &next), 0);
	assert_true(next->recovering);
	assert_int_equal(ringmem_get_ext(next, &f, &n), 1);
	assert_int_equal(n, room);
	/* one buffer more than the region holds: it would overrun the next
	 * queue's headers (the last queue's: the end of the mapping) */
	ringmem_set_ext(next, RINGMEM_EXT_POOL, room + 1);
	assert_int_equal(ringmem_get_ext(next, &f, &n), -EPROTO);
	assert_int_equal(n, room + 1);
	ringmem_set_ext(next, RINGMEM_EXT_POOL, UINT32_MAX);
	assert_int_equal(ringmem_get_ext(next, &f, &n), -EPROTO);
	ringmem_set_ext(next, RINGMEM_EXT_POOL | RINGMEM_EXT_REGISTERED, 0);
	assert_int_equal(ringmem_get_ext(next, &f, &n), -EPROTO);
	/* zero-copy or a registered pool without a pool: no such queue */
	ringmem_set_ext(next, RINGMEM_EXT_ZERO_COPY, 0);
	assert_int_equal(ringmem_get_ext(next, &f, &n), -EPROTO);
	ringmem_set_ext(next, 0, 3);
	assert_int_equal(ringmem_get_ext(next, &f, &n), -EPROTO);
	ringmem_set_ext(next, 0, 0);
	assert_int_equal(ringmem_get_ext(next, &f, &n), 1);
	ringmem_detach(next);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delivered_requests_are_served),
		cmocka_unit_test(test_half_written_reply),
		cmocka_unit_test(test_complete_replies),
		cmocka_unit_test(test_recorded_pool_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
