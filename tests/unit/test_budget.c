/* Memlock budget maths: the pinned-bytes formula, which transports are
 * charged, and the deepest queue that fits a free budget. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "zcfsd.h"

static void test_devfuse_pins_nothing(void **state)
{
	(void)state;
	assert_int_equal(zcfsd_pinned_formula(false, 64, 1024, 16u << 20), 0);
}

static void test_formula(void **state)
{
	uint64_t one;

	(void)state;
	/* 2 queues x 4 entries x (128K + 4K) + 2 rings */
	one = zcfsd_pinned_formula(true, 2, 4, 128 * 1024);
	assert_int_equal(one, 2 * (4 * (131072ULL + 4096) + zcfsd_ring_overhead(4)));
	/* linear in queues */
	assert_int_equal(zcfsd_pinned_formula(true, 4, 4, 128 * 1024), 2 * one);
	/* ring overhead is page aligned and grows with depth */
	assert_int_equal(zcfsd_ring_overhead(8) % 4096, 0);
	assert_true(zcfsd_ring_overhead(1024) > zcfsd_ring_overhead(8));
	/* no overflow at the largest options: 1024 CPUs, depth 1024, 16M */
	assert_true(zcfsd_pinned_formula(true, 1024, 1024, 16u << 20) > (16ULL << 30));
}

static void test_which_transports_pay(void **state)
{
	struct policy_tenant with = { .io_uring = true }, without = { .io_uring = false };

	(void)state;
	assert_true(zcfsd_uses_uring(POLICY_TRANSPORT_URING, &with));
	assert_true(zcfsd_uses_uring(POLICY_TRANSPORT_AUTO, &with));
	assert_false(zcfsd_uses_uring(POLICY_TRANSPORT_DEVFUSE, &with));
	assert_false(zcfsd_uses_uring(POLICY_TRANSPORT_AUTO, &without));
	assert_false(zcfsd_uses_uring(POLICY_TRANSPORT_URING, &without));
}

static void test_depth_that_fits(void **state)
{
	uint64_t need8 = zcfsd_pinned_formula(true, 2, 8, 1u << 20);
	uint32_t d;

	(void)state;
	/* exactly enough for 8 */
	assert_int_equal(zcfsd_depth_that_fits(2, 1u << 20, need8), 8);
	/* one byte short of 8 */
	assert_int_equal(zcfsd_depth_that_fits(2, 1u << 20, need8 - 1), 7);
	/* nothing fits */
	assert_int_equal(zcfsd_depth_that_fits(2, 1u << 20, 0), 0);
	assert_int_equal(zcfsd_depth_that_fits(2, 1u << 20,
					       zcfsd_pinned_formula(true, 2, 1, 1u << 20) - 1), 0);
	/* capped at the largest depth */
	assert_int_equal(zcfsd_depth_that_fits(2, 4096, UINT64_MAX), 1024);
	/* the answer fits and the next does not, across budgets */
	for (uint64_t b = 1 << 20; b < (256ULL << 20); b = b * 3 / 2) {
		d = zcfsd_depth_that_fits(4, 256 * 1024, b);
		if (d)
			assert_true(zcfsd_pinned_formula(true, 4, d, 256 * 1024) <= b);
		if (d < 1024)
			assert_true(zcfsd_pinned_formula(true, 4, d + 1, 256 * 1024) > b);
	}
}

static void test_tenant_used(void **state)
{
	struct zcfsd_volume a = { .id = "a", .tenant = "t1", .pinned = 100, .n_targets = 1 };
	struct zcfsd_volume b = { .id = "b", .tenant = "t1", .pinned = 50, .n_targets = 0 };
	struct zcfsd_volume c = { .id = "c", .tenant = "t2", .pinned = 7, .n_targets = 2 };
	struct zcfsd d = { 0 };

	(void)state;
	a.next = &b;
	b.next = &c;
	d.volumes = &a;
	/* only published volumes are charged */
	assert_int_equal(zcfsd_tenant_used(&d, "t1"), 100);
	assert_int_equal(zcfsd_tenant_used(&d, "t2"), 7);
	assert_int_equal(zcfsd_tenant_used(&d, "t3"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devfuse_pins_nothing),
		cmocka_unit_test(test_formula),
		cmocka_unit_test(test_which_transports_pay),
		cmocka_unit_test(test_depth_that_fits),
		cmocka_unit_test(test_tenant_used),
	};
	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
