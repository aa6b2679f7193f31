/* io_uring transport arithmetic: the user_data codec (round trip, range
 * assertion, refusal of foreign values), the ring payload sizing rule, the
 * possible-CPU list parser and the pinned-bytes figure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel/zcfs_uring_abi.h"
#include "daemon/serve/transport/uring_geometry.h"
/* Catch the codec's range assertion instead of aborting. */
#define ud_assert(x) mock_assert(!!(x), #x, __FILE__, __LINE__)
#include "daemon/serve/transport/uring_userdata.h"

static void test_ud_round_trip(void **state)
{
	static const enum ud_kind kinds[] = { UD_FUSE_CMD, UD_BACKING_READ, UD_BACKING_WRITE, UD_WAKE };
	static const uint64_t idx[] = { 0, 1, 7, 1023, 65535, UD_INDEX_MAX };
	enum ud_kind k;
	uint32_t i;
	size_t a, b;

	(void)state;
	for (a = 0; a < sizeof(kinds) / sizeof(kinds[0]); a++) {
		for (b = 0; b < sizeof(idx) / sizeof(idx[0]); b++) {
			uint64_t ud = ud_encode(kinds[a], idx[b]);
			assert_int_equal(ud_decode(ud, &k, &i), 0);
			assert_int_equal(k, kinds[a]);
			assert_int_equal(i, idx[b]);
		}
	}
	/* Distinct (kind, index) pairs never collide. */
	assert_true(ud_encode(UD_FUSE_CMD, 1) != ud_encode(UD_BACKING_READ, 1));
	assert_true(ud_encode(UD_FUSE_CMD, 1) != ud_encode(UD_FUSE_CMD, 2));
}

static void test_ud_range_assert(void **state)
{
	(void)state;
	expect_assert_failure(ud_encode(UD_FUSE_CMD, (uint64_t)UD_INDEX_MAX + 1));
	expect_assert_failure(ud_encode(UD_BACKING_READ, UINT64_MAX));
	expect_assert_failure(ud_encode((enum ud_kind)0, 0));
	expect_assert_failure(ud_encode(UD_KIND_END, 0));
}

static void test_ud_decode_refuses_foreign(void **state)
{
	enum ud_kind k;
	uint32_t i;

	(void)state;
	assert_int_equal(ud_decode(0, &k, &i), -EINVAL);
	assert_int_equal(ud_decode(5, &k, &i), -EINVAL);
	assert_int_equal(ud_decode((uint64_t)UD_KIND_END << UD_INDEX_BITS, &k, &i), -EINVAL);
	assert_int_equal(ud_decode(UINT64_MAX, &k, &i), -EINVAL);
}

static void test_payload_rule(void **state)
{
	(void)state;
	/* max(8192, max_write, max_pages * page) */
	assert_int_equal(uring_payload_size(1u << 20, 256, 4096), 1u << 20);
	assert_int_equal(uring_payload_size(4096, 1, 4096), 8192);
	assert_int_equal(uring_payload_size(4096, 0, 4096), 8192);
	assert_int_equal(uring_payload_size(65536, 256, 4096), 1u << 20);
	assert_int_equal(uring_payload_size(4u << 20, 256, 4096), 4u << 20);
	assert_int_equal(uring_payload_size(12288, 3, 4096), 12288);
}

static void test_entry_sizes(void **state)
{
	struct uring_geometry g;

	(void)state;
	assert_int_equal(sizeof(struct zcfs_uring_req_header), 288);
	uring_geometry_init(&g, 2, 8, 1u << 20, 256, 4096, 64);
	assert_int_equal(g.header_size, 4096);	/* 288 page-rounded */
	assert_int_equal(g.payload_size, 1u << 20);
	assert_int_equal(g.ring_entries, 9);
	assert_int_equal(g.sq_entries, 16);
	assert_int_equal(g.cq_entries, 32);
	uring_geometry_init(&g, 1, 3, 4096, 1, 4096, 64);
	assert_int_equal(g.payload_size, 8192);
	assert_int_equal(g.sq_entries, 4);
}

static void test_pinned_bytes(void **state)
{
	struct uring_geometry g;

	(void)state;
	/* depth 8: rings region 64 + 32*16 = 576, + 16*4 = 640 -> 1 page;
	 * SQEs 16*128 = 2048 -> 1 page. */
	uring_geometry_init(&g, 2, 8, 1u << 20, 256, 4096, 64);
	assert_int_equal(uring_ring_bytes(&g), 8192);
	assert_int_equal(uring_queue_buf_bytes(&g), 8 * (4096 + (1u << 20)));
	assert_int_equal(uring_pinned_bytes(&g), 2 * (8192 + 8 * (4096 + (1u << 20))));
	assert_int_equal(uring_pinned_bytes(&g), 16859136);
	/* depth 100: sq 128, cq 256: 64 + 4096 = 4160, + 512 = 4672 -> 2 pages;
	 * SQEs 128*128 = 16384 -> 4 pages. */
	uring_geometry_init(&g, 4, 100, 128 << 10, 32, 4096, 64);
	assert_int_equal(uring_ring_bytes(&g), 8192 + 16384);
	assert_int_equal(uring_pinned_bytes(&g),
			 4ull * (24576 + 100ull * (4096 + (128 << 10))));
	/* A bigger CQE array offset moves the rings region across a page. */
	uring_geometry_init(&g, 1, 127, 8192, 2, 4096, 128);
	/* sq 128, cq 256: 128 + 4096 = 4224, + 512 = 4736 -> 2 pages */
	assert_int_equal(uring_ring_bytes(&g), 8192 + 16384);
}

static void test_cpu_list(void **state)
{
	unsigned n = 0;

	(void)state;
	assert_int_equal(uring_parse_cpu_list("0-1\n", &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(uring_parse_cpu_list("0", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(uring_parse_cpu_list("0-3,6-7\n", &n), 0);
	assert_int_equal(n, 6);
	assert_int_equal(uring_parse_cpu_list("0,2,4", &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(uring_parse_cpu_list("", &n), -EINVAL);
	assert_int_equal(uring_parse_cpu_list("3-1", &n), -EINVAL);
	assert_int_equal(uring_parse_cpu_list("a", &n), -EINVAL);
	assert_int_equal(uring_parse_cpu_list("0-", &n), -EINVAL);
	assert_int_equal(uring_parse_cpu_list("1;2", &n), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ud_round_trip),
		cmocka_unit_test(test_ud_range_assert),
		cmocka_unit_test(test_ud_decode_refuses_foreign),
		cmocka_unit_test(test_payload_rule),
		cmocka_unit_test(test_entry_sizes),
		cmocka_unit_test(test_pinned_bytes),
		cmocka_unit_test(test_cpu_list),
	};
	return cmocka_run_group_tests_name("uring", tests, NULL, NULL);
}
