/* fh numbering: a server's fhs never name a handle of another server of
 * the same connection (different epochs), and stale or forged fhs of its
 * own are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/serve/backend/handle.h"

static struct zcfs_handle *new_handle(void)
{
	struct zcfs_handle *h = NULL;

	assert_int_equal(handle_new(dup(0), false, &h), 0);
	return h;
}

static void successor_never_reuses_an_fh(void **state)
{
	struct handle_table *old = NULL, *succ = NULL;
	uint64_t fh_old[4], fh_new[4];

	(void)state;
	assert_int_equal(handle_table_new(&old), 0);
	assert_int_equal(handle_table_new(&succ), 0);
	handle_table_set_epoch(old, 1);
	handle_table_set_epoch(succ, 2);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(handle_register(old, new_handle(), &fh_old[i]), 0);
		assert_int_equal(handle_register(succ, new_handle(), &fh_new[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		/* The successor meets the predecessor's fh as unknown (it re-opens
		 * the file), never as one of its own handles. */
		assert_null(handle_get(succ, fh_old[i]));
		assert_null(handle_unregister(succ, fh_old[i]));
		assert_non_null(handle_get(succ, fh_new[i]));
		for (int j = 0; j < 4; j++)
			assert_true(fh_old[i] != fh_new[j]);
	}
	handle_table_free(old);
	handle_table_free(succ);
}

static void stale_and_forged_fh_refused(void **state)
{
	struct handle_table *t = NULL;
	struct zcfs_handle *h;
	uint64_t fh, fh2;

	(void)state;
	assert_int_equal(handle_table_new(&t), 0);
	handle_table_set_epoch(t, 7);
	assert_int_equal(handle_register(t, new_handle(), &fh), 0);
	h = handle_unregister(t, fh);
	assert_non_null(h);
	handle_free(h);
	assert_int_equal(handle_register(t, new_handle(), &fh2), 0);
	assert_true(fh2 != fh);		/* same slot, next generation */
	assert_null(handle_get(t, fh));
	assert_null(handle_get(t, fh2 ^ (1ULL << 63)));	/* another epoch */
	assert_non_null(handle_get(t, fh2));
	handle_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(successor_never_reuses_an_fh),
		cmocka_unit_test(stale_and_forged_fh_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
