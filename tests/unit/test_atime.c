/* source_read_moves_atime: the kernel's atime rules for a backing mount
 * (strictatime, relatime, noatime, nodiratime, ro), which the exclusive
 * cache asks at OPEN to decide whether a read must reach the server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <cmocka.h>
#include "daemon/serve/backend/source_mount.h"

static const struct timespec now = { .tv_sec = 1000000, .tv_nsec = 500 };

static struct stat times(mode_t type, time_t a, time_t m, time_t c)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = type | 0644;
	st.st_atim.tv_sec = a;
	st.st_mtim.tv_sec = m;
	st.st_ctim.tv_sec = c;
	return st;
}

static void strictatime_always(void **state)
{
	struct stat st = times(S_IFREG, now.tv_sec - 1, 10, 10);
	(void)state;
	assert_true(source_read_moves_atime(0, &st, &now));
	st = times(S_IFDIR, now.tv_sec - 1, 10, 10);
	assert_true(source_read_moves_atime(0, &st, &now));
	/* an atime of exactly now does not move */
	st.st_atim = now;
	assert_false(source_read_moves_atime(0, &st, &now));
}

static void relatime_after_changes_and_daily(void **state)
{
	struct stat st = times(S_IFREG, 500, 500, 400);
	(void)state;
	assert_true(source_read_moves_atime(ST_RELATIME, &st, &now));	/* atime == mtime */
	st = times(S_IFREG, 500, 400, 600);
	assert_true(source_read_moves_atime(ST_RELATIME, &st, &now));	/* ctime after atime */
	st = times(S_IFREG, now.tv_sec - 10, 400, 400);
	assert_false(source_read_moves_atime(ST_RELATIME, &st, &now));	/* read since the change */
	st = times(S_IFREG, now.tv_sec - 24 * 60 * 60, 400, 400);
	assert_true(source_read_moves_atime(ST_RELATIME, &st, &now));	/* a day old */
	st = times(S_IFREG, now.tv_sec - 10, now.tv_sec - 10, 400);
	st.st_atim.tv_nsec = 1;	/* past mtime by a nanosecond */
	assert_false(source_read_moves_atime(ST_RELATIME, &st, &now));
}

static void noatime_nodiratime_ro(void **state)
{
	struct stat f = times(S_IFREG, 500, 500, 500), d = times(S_IFDIR, 500, 500, 500);
	(void)state;
	assert_false(source_read_moves_atime(ST_NOATIME, &f, &now));
	assert_false(source_read_moves_atime(ST_NOATIME | ST_RELATIME, &d, &now));
	assert_false(source_read_moves_atime(ST_RDONLY, &f, &now));
	assert_false(source_read_moves_atime(ST_NODIRATIME | ST_RELATIME, &d, &now));
	assert_true(source_read_moves_atime(ST_NODIRATIME | ST_RELATIME, &f, &now));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strictatime_always),
		cmocka_unit_test(relatime_after_changes_and_daily),
		cmocka_unit_test(noatime_nodiratime_ro),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
