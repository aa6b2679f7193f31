/* The override_stat record codec and checked number parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <cmocka.h>
#include "common/ownership.h"
#include "common/parse.h"

static void parse_plain_record(void **state)
{
	struct ovr_stat o;
	(void)state;
	assert_int_equal(ovr_parse("1001:100:0644", 13, &o), 0);
	assert_int_equal(o.uid, 1001);
	assert_int_equal(o.gid, 100);
	assert_int_equal(o.mode, 0644);
	assert_false(o.has_type);
}

static void parse_typed_records(void **state)
{
	struct ovr_stat o;
	const char *s;
	(void)state;
	s = "0:0:0755:dir";
	assert_int_equal(ovr_parse(s, strlen(s), &o), 0);
	assert_int_equal(o.mode, S_IFDIR | 0755);
	s = "5:6:04711:file";
	assert_int_equal(ovr_parse(s, strlen(s), &o), 0);
	assert_int_equal(o.mode, S_IFREG | 04711);
	s = "0:0:0600:char-1-3";
	assert_int_equal(ovr_parse(s, strlen(s), &o), 0);
	assert_true(S_ISCHR(o.mode));
	assert_int_equal(major(o.rdev), 1);
	assert_int_equal(minor(o.rdev), 3);
	s = "1:1:0777:symlink";
	assert_int_equal(ovr_parse(s, strlen(s), &o), 0);
	assert_true(S_ISLNK(o.mode));
}

static void reject_malformed_records(void **state)
{
	static const char *const bad[] = {
		"", "1", "1:2", "1:2:", "a:2:0644", "1:b:0644", "1:2:0999", "1:2:077777",
		"1:2:0644:nope", "1:2:0644:dir:x", "-1:2:0644", "1:2:0644:char-1", "4294967295:0:0644",
		"1:2:0644:block-1-2x",
	};
	struct ovr_stat o;
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ovr_parse(bad[i], strlen(bad[i]), &o), -EINVAL);
}

static void format_round_trip(void **state)
{
	struct ovr_stat in = { .uid = 7, .gid = 8, .mode = S_IFBLK | 0660, .rdev = makedev(8, 1) }, out;
	char buf[OVR_MAXLEN];
	int n;
	(void)state;
	n = ovr_format(&in, buf, sizeof(buf));
	assert_true(n > 0);
	assert_string_equal(buf, "7:8:0660:block-8-1");
	assert_int_equal(ovr_parse(buf, (size_t)n, &out), 0);
	assert_int_equal(out.mode, in.mode);
	assert_int_equal(out.rdev, in.rdev);
	assert_int_equal(ovr_format(&in, buf, 5), -ENOSPC);
}

static void parse_numbers(void **state)
{
	uint64_t v = 99;
	(void)state;
	assert_int_equal(parse_u64("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u64("", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("4x", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_u64("101", 0, 100, &v), -ERANGE);
	assert_int_equal(parse_u64("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 42);
	assert_int_equal(parse_size("64M", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(parse_size("1GiB", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(parse_size("1Q", 0, UINT64_MAX, &v), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_plain_record),
		cmocka_unit_test(parse_typed_records),
		cmocka_unit_test(reject_malformed_records),
		cmocka_unit_test(format_round_trip),
		cmocka_unit_test(parse_numbers),
	};
	return cmocka_run_group_tests_name("ownership", tests, NULL, NULL);
}
