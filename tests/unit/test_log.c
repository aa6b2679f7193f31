/* common/log.c: one event is one line whatever a message holds (a
 * client's string with a newline and a forged "<0>" priority cannot
 * start a line of its own), and --log-format=json lines are valid JSON
 * with valid UTF-8 (bytes that are not become U+FFFD). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "common/log.h"

/* What FN logged to stderr (malloc'ed). */
static char *captured(void (*fn)(void))
{
	FILE *t = tmpfile();
	int saved = dup(STDERR_FILENO);
	char *buf = calloc(1, 8192);
	ssize_t n;

	assert_non_null(t);
	assert_non_null(buf);
	assert_true(saved >= 0);
	assert_true(dup2(fileno(t), STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	n = pread(fileno(t), buf, 8191, 0);
	assert_true(n > 0);
	fclose(t);
	return buf;
}

static const char *const hostile = "vol\n<0>zcfs: level=emerg forged\rline";

static void log_hostile(void)
{
	log_info("event=x name=\"%s\" done", hostile);
}

static void text_one_line(void **state)
{
	char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	log_set_format(LOG_FORMAT_TEXT);
	out = captured(log_hostile);
	assert_non_null(strstr(out, "level=info event=x name=\"vol <0>zcfs: level=emerg forged line\" done\n"));
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
	free(out);
}

static void log_bytes(void)
{
	/* é, two bytes that are no UTF-8, a surrogate (ED A0 80), an
	 * overlong '/', then an emoji and a sequence cut short at the end */
	log_info("m=caf\xc3\xa9 \xff\xfe \xed\xa0\x80 \xc0\xaf \xf0\x9f\x98\x80 \xe2\x82");
}

static void json_valid_utf8(void **state)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o, *m;
	char *out;

	(void)state;
	unsetenv("JOURNAL_STREAM");
	log_set_format(LOG_FORMAT_JSON);
	out = captured(log_bytes);
	log_set_format(LOG_FORMAT_TEXT);
	assert_non_null(tok);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, out, (int)strlen(out) - 1);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "message", &m));
	assert_string_equal(json_object_get_string(m),
			    "m=caf\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
			    "\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80 \xef\xbf\xbd\xef\xbf\xbd");
	json_object_put(o);
	json_tokener_free(tok);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_one_line),
		cmocka_unit_test(json_valid_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
