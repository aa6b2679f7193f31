/* zcfs_json_parse_strict: what json-c alone accepts and zcfs refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include "common/json_strict.h"

static int parse(const char *text, char *why, size_t len)
{
	json_object *o = NULL;
	int r = zcfs_json_parse_strict(text, strlen(text), &o, why, len);

	if (r == 0)
		assert_non_null(o);
	else
		assert_null(o);
	json_object_put(o);
	return r;
}

static void refused(void **state)
{
	static const char *const bad[] = {
		"{\"id\":\"a\\u0000b\"}",		/* NUL in a value */
		"{\"a\\u0000b\":1}",			/* NUL in a key */
		"{\"id\":\"d1\",\"id\":\"d2\"}",	/* duplicate key */
		"{\"p\":{\"x\":1,\"x\":2}}",		/* nested duplicate */
		"[{\"x\":1,\"x\":1}]",			/* in an array */
		"{\"method\":\"status\"} x",		/* trailing garbage */
		"{}{}",					/* two values */
		"{\"a\":1,}",				/* not strict JSON */
		"{'a':1}",
		"",
	};
	char why[96];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (parse(bad[i], why, sizeof(why)) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_int_equal(parse(bad[i], why, sizeof(why)), -EINVAL);
		assert_true(why[0] != '\0');
	}
}

static void accepted(void **state)
{
	static const char *const good[] = {
		"{\"method\":\"status\"}",
		"{\"method\":\"status\"}  \r\n",
		"{\"a\":\"x:y\",\"b\":\"\\\\u0000\"}",	/* ':' in a string, an escaped backslash */
		"{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}]}",	/* same key at other levels */
		"{\"q\":\"\\\"}\\\":{\"}",		/* quotes and braces inside a string */
		"{\"u\":\"\\u00e9\\u0001\"}",
	};
	char why[96];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int r = parse(good[i], why, sizeof(why));
		if (r)
			fail_msg("refused %s: %s", good[i], why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refused),
		cmocka_unit_test(accepted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
