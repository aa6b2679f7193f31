/* The pure parts of project quotas (daemon/zcfsd/mounts/projid.c): which
 * id a new volume gets, and the limits its size gives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "daemon/zcfsd/mounts/projquota.h"

static void test_pick_first(void **state)
{
	(void)state;
	assert_int_equal(zcfsd_projid_pick(NULL, 0, 0), ZCFSD_PROJID_MIN);
	/* below the range: from its start; ids of others below it do not matter */
	uint32_t low[] = { 1, 2, 100 };
	assert_int_equal(zcfsd_projid_pick(low, 3, 5), ZCFSD_PROJID_MIN);
}

static void test_pick_skips_used(void **state)
{
	uint32_t used[] = { ZCFSD_PROJID_MIN + 1, ZCFSD_PROJID_MIN, ZCFSD_PROJID_MIN + 3 };

	(void)state;
	/* any order; the lowest free one */
	assert_int_equal(zcfsd_projid_pick(used, 3, 0), ZCFSD_PROJID_MIN + 2);
	/* from: past an id the file system said is busy */
	assert_int_equal(zcfsd_projid_pick(used, 3, ZCFSD_PROJID_MIN + 3), ZCFSD_PROJID_MIN + 4);
	/* a freed id (volume deleted) is handed out again */
	uint32_t gap[] = { ZCFSD_PROJID_MIN, ZCFSD_PROJID_MIN + 2 };
	assert_int_equal(zcfsd_projid_pick(gap, 2, 0), ZCFSD_PROJID_MIN + 1);
}

static void test_pick_exhausted(void **state)
{
	uint32_t used[] = { ZCFSD_PROJID_MAX - 1, ZCFSD_PROJID_MAX };

	(void)state;
	assert_int_equal(zcfsd_projid_pick(used, 2, ZCFSD_PROJID_MAX - 1), 0);
	assert_int_equal(zcfsd_projid_pick(used, 2, ZCFSD_PROJID_MAX - 2), ZCFSD_PROJID_MAX - 2);
	assert_int_equal(zcfsd_projid_pick(NULL, 0, ZCFSD_PROJID_MAX), ZCFSD_PROJID_MAX);
	assert_int_equal(zcfsd_projid_pick(NULL, 0, 0xffffffffu), 0);
}

static void test_limits(void **state)
{
	struct zcfsd_proj_limits l;

	(void)state;
	zcfsd_proj_limits_of(1ULL << 30, &l);
	assert_int_equal(l.bytes, 1ULL << 30);
	assert_int_equal(l.basic_blocks, 2097152);
	assert_int_equal(l.kib, 1048576);
	assert_int_equal(l.inodes, 262144);
	/* rounded up, never below the size */
	zcfsd_proj_limits_of(1000, &l);
	assert_int_equal(l.basic_blocks, 2);
	assert_int_equal(l.kib, 1);
	assert_int_equal(l.inodes, ZCFSD_PROJ_INODES_MIN);
	zcfsd_proj_limits_of(16ULL << 20, &l);
	assert_int_equal(l.basic_blocks, 32768);
	assert_int_equal(l.inodes, 4096);
	/* the largest size the policy allows (1 PiB) */
	zcfsd_proj_limits_of(1ULL << 50, &l);
	assert_int_equal(l.basic_blocks, 1ULL << 41);
	assert_int_equal(l.inodes, 1ULL << 38);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_first),
		cmocka_unit_test(test_pick_skips_used),
		cmocka_unit_test(test_pick_exhausted),
		cmocka_unit_test(test_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
