/* Memlock budget bookkeeping: which transports are charged and what a
 * tenant has in use (the pinned-bytes figure itself: test_geometry.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/uring_sizing.h"
#include "daemon/zcfsd/budget/budget.h"

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

/* A ring holder volume pays for its second ring per queue (the holder's
 * beside the server's own), nothing else; /dev/fuse pays nothing. */
static void test_ring_holder_pays_its_rings(void **state)
{
	struct policy_tenant t = { .io_uring = true };
	struct zcfsd_volume v = { .transport = POLICY_TRANSPORT_URING, .queue_depth = 4, .max_write = 131072 };
	struct zcfsd d = { .ncpus = 2 };
	struct uring_geometry g;
	uint64_t plain, held;

	(void)state;
	assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &plain), 0);
	v.ring_holder = true;
	assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &held), 0);
	uring_geometry_init(&g, 2, 4, 131072, 32, 4096, URING_DEFAULT_CQES_OFF);
	assert_true(plain > 0);
	assert_int_equal(held, plain + 2 * uring_ring_bytes(&g));
	v.transport = POLICY_TRANSPORT_DEVFUSE;
	assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &held), 0);
	assert_int_equal(held, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_transports_pay),
		cmocka_unit_test(test_tenant_used),
		cmocka_unit_test(test_ring_holder_pays_its_rings),
	};
	return cmocka_run_group_tests_name("budget", tests, NULL, NULL);
}
