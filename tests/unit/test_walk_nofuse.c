/* common/walk_nofuse.c: walks from / without symlinks, through other
 * file systems (proc: an anonymous device, looked up in mountinfo); the
 * parent of a leaf; rmdir_nofollow. FUSE mounts: t_zcfsd_fuse_walk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "common/walk_nofuse.h"

static char dir[] = "/tmp/zcfs-test-walk.XXXXXX";
static char sub[sizeof(dir) + 8], link_[sizeof(dir) + 8], vialink[sizeof(dir) + 16];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(sub, sizeof(sub), "%s/d", dir);
	snprintf(link_, sizeof(link_), "%s/l", dir);
	snprintf(vialink, sizeof(vialink), "%s/l/x", dir);
	if (mkdir(sub, 0700) < 0 || symlink("d", link_) < 0)
		return -1;
	return mkdir(vialink, 0700);
}

static int teardown(void **state)
{
	(void)state;
	(void)rmdir(vialink);
	(void)unlink(link_);
	(void)rmdir(sub);
	return rmdir(dir);
}

static void opens(void **state)
{
	_cleanup_close_ int fd = nofuse_open(sub, O_PATH | O_DIRECTORY, NULL, 0);
	_cleanup_close_ int root = nofuse_open("/", O_PATH | O_DIRECTORY, NULL, 0);
	_cleanup_close_ int proc = nofuse_open("/proc/sys/kernel", O_PATH | O_DIRECTORY, NULL, 0);
	struct stat a, b;

	(void)state;
	assert_true(fd >= 0 && root >= 0 && proc >= 0);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(sub, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	assert_int_equal(nofuse_open(link_, O_PATH | O_DIRECTORY, NULL, 0), -ELOOP);
	assert_int_equal(nofuse_open(vialink, O_PATH, NULL, 0), -ELOOP);
	assert_int_equal(nofuse_open("/proc/self/cwd", O_PATH, NULL, 0), -ELOOP);
	assert_int_equal(nofuse_open("/nonexistent-zcfs/x", O_PATH, NULL, 0), -ENOENT);
	assert_int_equal(nofuse_open("tmp", O_PATH, NULL, 0), -EINVAL);
	assert_int_equal(nofuse_open("/tmp/../tmp", O_PATH, NULL, 0), -EINVAL);
}

static void parent(void **state)
{
	const char *leaf = NULL;
	_cleanup_close_ int pfd = nofuse_open_parent(sub, &leaf, NULL, 0);
	_cleanup_close_ int top = -1;
	struct stat a, b;

	(void)state;
	assert_true(pfd >= 0);
	assert_string_equal(leaf, "d");
	assert_int_equal(fstat(pfd, &a), 0);
	assert_int_equal(stat(dir, &b), 0);
	assert_true(a.st_ino == b.st_ino);
	top = nofuse_open_parent("/tmp", &leaf, NULL, 0);
	assert_true(top >= 0);
	assert_string_equal(leaf, "tmp");
	assert_int_equal(nofuse_open_parent("/tmp/", &leaf, NULL, 0), -EINVAL);
	assert_int_equal(nofuse_open_parent("/tmp/..", &leaf, NULL, 0), -EINVAL);
	assert_int_equal(nofuse_open_parent(vialink, &leaf, NULL, 0), -ELOOP);
}

static void removes(void **state)
{
	char made[sizeof(dir) + 8];

	(void)state;
	snprintf(made, sizeof(made), "%s/m", dir);
	assert_int_equal(mkdir(made, 0700), 0);
	assert_int_equal(rmdir_nofollow(made), 0);
	assert_int_equal(access(made, F_OK), -1);
	assert_int_equal(rmdir_nofollow(vialink), -ELOOP);	/* a symlink on the way */
	assert_int_equal(access(vialink, F_OK), 0);
	assert_int_equal(rmdir_nofollow(link_), -ENOTDIR);	/* not followed */
	assert_int_equal(rmdir_nofollow(made), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(opens),
		cmocka_unit_test(parent),
		cmocka_unit_test(removes),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
