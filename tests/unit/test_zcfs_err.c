/* common/zcfs_err.c: the one error record of zcfsd and the plugins. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "common/zcfs_err.h"

static void test_first_error_wins(void **state)
{
	struct zcfs_err e = { 0 };

	(void)state;
	assert_int_equal(zcfs_fail(&e, ZCFS_NOT_FOUND, -ENOENT, "no volume '%s'", "v1"), -ENOENT);
	assert_int_equal(e.code, ZCFS_NOT_FOUND);
	assert_string_equal(e.msg, "no volume 'v1'");
	/* a later, more general failure keeps the first message */
	assert_int_equal(zcfs_fail(&e, ZCFS_INTERNAL, -EIO, "publish failed"), -EIO);
	assert_int_equal(e.code, ZCFS_NOT_FOUND);
	assert_string_equal(e.msg, "no volume 'v1'");
	/* cleared by hand (an idempotent method that forgives NOT_FOUND) */
	e.code = ZCFS_OK;
	zcfs_fail(&e, ZCFS_ABORTED, -EBUSY, "busy");
	assert_int_equal(e.code, ZCFS_ABORTED);
	assert_string_equal(e.msg, "busy");
}

static void test_errno_and_return(void **state)
{
	struct zcfs_err e = { 0 };

	(void)state;
	errno = EACCES;
	/* %m is the caller's errno; errno stays what it was */
	assert_int_equal(zcfs_fail(&e, ZCFS_INTERNAL, -EACCES, "mkdir x: %m"), -EACCES);
	assert_int_equal(errno, EACCES);
	assert_string_equal(e.msg, "mkdir x: Permission denied");
	/* an error recorded never returns success */
	assert_int_equal(zcfs_fail(&e, ZCFS_INTERNAL, 0, "x"), -EINVAL);
	assert_int_equal(zcfs_fail(&e, ZCFS_INTERNAL, 5, "x"), -EINVAL);
}

static void test_code_names(void **state)
{
	(void)state;
	for (enum zcfs_code c = ZCFS_OK; c <= ZCFS_ABORTED; c++)
		assert_int_equal(zcfs_code_from_name(zcfs_code_name(c)), c);
	assert_string_equal(zcfs_code_name(ZCFS_RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
	assert_string_equal(zcfs_code_name((enum zcfs_code)99), "INTERNAL");
	assert_int_equal(zcfs_code_from_name("NOPE"), ZCFS_INTERNAL);
	assert_int_equal(zcfs_code_from_name(NULL), ZCFS_INTERNAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_error_wins),
		cmocka_unit_test(test_errno_and_return),
		cmocka_unit_test(test_code_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
