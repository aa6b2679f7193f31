/* common/openat2.c: symlinks and escapes refused, O_CLOEXEC added. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "common/openat2.h"

static char dir[] = "/tmp/zcfs-test-openat2.XXXXXX";
static char sub[sizeof(dir) + 8], link_[sizeof(dir) + 8], viadir[sizeof(dir) + 16];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(sub, sizeof(sub), "%s/d", dir);
	snprintf(link_, sizeof(link_), "%s/l", dir);
	snprintf(viadir, sizeof(viadir), "%s/l/x", dir);
	if (mkdir(sub, 0700) < 0 || symlink("d", link_) < 0)
		return -1;
	return close(open(viadir + 0, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
}

static int teardown(void **state)
{
	(void)state;
	(void)unlink(viadir);
	(void)unlink(link_);
	(void)rmdir(sub);
	return rmdir(dir);
}

static void nofollow(void **state)
{
	_cleanup_close_ int fd = open_nofollow(sub, O_PATH | O_DIRECTORY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(open_nofollow(link_, O_PATH | O_DIRECTORY), -ELOOP);
	assert_int_equal(open_nofollow(viadir, O_PATH), -ELOOP);	/* a symlink on the way */
	assert_int_equal(open_nofollow("/proc/self/cwd", O_PATH), -ELOOP);
	assert_int_equal(open_nofollow("/nonexistent-zcfs", O_PATH), -ENOENT);
}

static void beneath(void **state)
{
	_cleanup_close_ int root = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;

	(void)state;
	assert_true(root >= 0);
	fd = openat2_fd(root, "x", O_RDONLY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	assert_true(fd >= 0);
	assert_int_equal(openat2_fd(root, "../d/x", O_RDONLY, RESOLVE_BENEATH), -EXDEV);
	assert_int_equal(openat2_fd(root, dir, O_PATH, RESOLVE_BENEATH), -EXDEV);
	assert_int_equal(openat2_fd(-1, "x", O_RDONLY, RESOLVE_BENEATH), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nofollow),
		cmocka_unit_test(beneath),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
