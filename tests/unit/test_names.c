/* common/names.c: the id and path checks zcfsd, its state file,
 * zcfsctl and the plugins rely on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "common/names.h"

static void test_paths_and_ids(void **state)
{
	char id128[129], id129[130];

	(void)state;
	assert_true(path_is_normalized_absolute("/"));
	assert_true(path_is_normalized_absolute("/a/b.c/d"));
	assert_false(path_is_normalized_absolute("a/b"));
	assert_false(path_is_normalized_absolute("/a//b"));
	assert_false(path_is_normalized_absolute("/a/b/"));
	assert_false(path_is_normalized_absolute("/a/./b"));
	assert_false(path_is_normalized_absolute("/a/../b"));
	assert_false(path_is_normalized_absolute("/.."));
	assert_true(path_is_normalized_absolute("/a/..b/c.."));
	assert_true(path_is_under("/p/x", "/p"));
	assert_true(path_is_under("/p/x/y", "/p"));
	assert_false(path_is_under("/p", "/p"));
	assert_false(path_is_under("/px/y", "/p"));
	assert_false(path_is_under("/q/x", "/p"));
	assert_true(name_is_valid_id("a"));
	assert_true(name_is_valid_id("pvc-1234_ab.c-d"));
	assert_false(name_is_valid_id(""));
	assert_false(name_is_valid_id(".a"));
	assert_false(name_is_valid_id("-a"));
	assert_false(name_is_valid_id("../etc"));
	assert_false(name_is_valid_id("a/b"));
	assert_false(name_is_valid_id("a b"));
	assert_false(name_is_valid_id(NULL));
	assert_false(path_is_normalized_absolute(NULL));
	assert_true(path_is_under("/x", "/"));
	assert_false(path_is_under("/", "/"));
	memset(id128, 'a', 128);
	id128[128] = '\0';
	memset(id129, 'a', 129);
	id129[129] = '\0';
	assert_true(name_is_valid_id(id128));
	assert_false(name_is_valid_id(id129));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_and_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
