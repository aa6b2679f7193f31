/* zcfsd's restart delay: a server that served comes back at once, the
 * first exits before serving too, then a crash loop backs off (bounded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "daemon/zcfsd/server/server_int.h"

static void served_servers_restart_at_once(void **state)
{
	unsigned unserved = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		assert_int_equal(zcfsd_restart_delay_ms(&unserved, true), 0);
	assert_int_equal(unserved, 0);
}

static void crash_loop_backs_off_after_free_tries(void **state)
{
	unsigned unserved = 0, last = 0, d;
	int i;

	(void)state;
	for (i = 0; i < RESTART_FREE_TRIES; i++)
		assert_int_equal(zcfsd_restart_delay_ms(&unserved, false), 0);
	assert_int_equal(zcfsd_restart_delay_ms(&unserved, false), RESTART_BACKOFF_MIN_MS);
	for (i = 0; i < 40; i++) {
		d = zcfsd_restart_delay_ms(&unserved, false);
		assert_true(d >= last);
		assert_true(d <= RESTART_BACKOFF_MAX_MS);
		last = d;
	}
	assert_int_equal(last, RESTART_BACKOFF_MAX_MS);
	/* once it serves again, the next exit is immediate and the count restarts */
	assert_int_equal(zcfsd_restart_delay_ms(&unserved, true), 0);
	assert_int_equal(zcfsd_restart_delay_ms(&unserved, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(served_servers_restart_at_once),
		cmocka_unit_test(crash_loop_backs_off_after_free_tries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
