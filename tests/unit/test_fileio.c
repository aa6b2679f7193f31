/* common/fileio.c: whole writes, atomic replacement, mkdir -p. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "common/fileio.h"

static char dir[] = "/tmp/zcfs-test-fileio.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static size_t entries(const char *path)
{
	_cleanup_closedir_ DIR *d = opendir(path);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	return n;
}

static void read_back(int dfd, const char *name, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
}

static void write_all_to_file_and_socket(void **state)
{
	_cleanup_close_ int a = -1, b = -1;
	char big[256 * 1024], back[8];
	int sv[2];

	(void)state;
	memset(big, 'x', sizeof(big));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	a = sv[0];
	b = sv[1];
	assert_int_equal(write_all(a, "abc", 3), 0);
	assert_int_equal(read(b, back, sizeof(back)), 3);
	assert_memory_equal(back, "abc", 3);
	/* A peer gone: -EPIPE, and no SIGPIPE ends the test. */
	b = safe_close(b);
	assert_int_equal(write_all(a, big, sizeof(big)), -EPIPE);
	/* Not a socket: plain write(2), every byte. */
	{
		char path[sizeof(dir) + 16];
		_cleanup_close_ int fd = -1;
		struct stat st;
		snprintf(path, sizeof(path), "%s/plain", dir);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(write_all(fd, big, sizeof(big)), 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_size, sizeof(big));
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(write_all(-1, "x", 1), -EBADF);
}

static void atomic_write_replaces(void **state)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[64];
	struct stat st;

	(void)state;
	assert_true(dfd >= 0);
	assert_int_equal(write_file_atomic(dfd, "s.json", "{\"a\":1}", 7, true, 0600), 0);
	read_back(dfd, "s.json", buf, sizeof(buf));
	assert_string_equal(buf, "{\"a\":1}\n");
	assert_int_equal(fstatat(dfd, "s.json", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(write_file_atomic(dfd, "s.json", "two", 3, false, 0640), 0);
	read_back(dfd, "s.json", buf, sizeof(buf));
	assert_string_equal(buf, "two");
	/* Nothing but the file itself is left behind. */
	assert_int_equal(entries(dir), 1);
	assert_int_equal(unlinkat(dfd, "s.json", 0), 0);
}

static void atomic_write_failure_keeps_old(void **state)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[64], longname[NAME_MAX + 1];

	(void)state;
	assert_true(dfd >= 0);
	assert_int_equal(write_file_atomic(dfd, "keep", "old", 3, false, 0600), 0);
	/* A directory in the name's place: the rename fails, the temp goes. */
	assert_int_equal(mkdirat(dfd, "isdir", 0700), 0);
	assert_int_equal(write_file_atomic(dfd, "isdir", "new", 3, false, 0600), -EISDIR);
	/* A name whose temporary would not fit NAME_MAX. */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(write_file_atomic(dfd, longname, "new", 3, false, 0600), -ENAMETOOLONG);
	assert_int_equal(write_file_atomic(-1, "keep", "new", 3, false, 0600), -EBADF);
	read_back(dfd, "keep", buf, sizeof(buf));
	assert_string_equal(buf, "old");
	assert_int_equal(entries(dir), 2);
	assert_int_equal(unlinkat(dfd, "keep", 0), 0);
	assert_int_equal(unlinkat(dfd, "isdir", AT_REMOVEDIR), 0);
}

static void mkdir_p_and_undo(void **state)
{
	char top[sizeof(dir) + 8], deep[sizeof(dir) + 16], file[sizeof(dir) + 16];
	_cleanup_free_ char *made = NULL;
	struct stat st;

	(void)state;
	snprintf(top, sizeof(top), "%s/a", dir);
	snprintf(deep, sizeof(deep), "%s/a/b/c", dir);
	assert_int_equal(mkdir_p(deep, 0700), 0);
	assert_int_equal(stat(deep, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(top, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_equal(mkdir_p(deep, 0700), 0);	/* already there */
	assert_int_equal(rmdir(deep), 0);
	*strrchr(deep, '/') = '\0';
	assert_int_equal(rmdir(deep), 0);
	/* Undoable: remembers the shallowest it made, undo stops above it. */
	snprintf(deep, sizeof(deep), "%s/a/x/y", dir);
	assert_int_equal(mkdir_p_undoable(deep, 0700, &made), 0);
	snprintf(file, sizeof(file), "%s/a/x", dir);
	assert_string_equal(made, file);
	rmdir_created(deep, made);
	assert_int_equal(stat(file, &st), -1);
	assert_int_equal(stat(top, &st), 0);
	free(TAKE_PTR(made));
	/* Nothing made: NULL, and undo does nothing. */
	assert_int_equal(mkdir_p_undoable(top, 0700, &made), 0);
	assert_null(made);
	rmdir_created(top, made);
	assert_int_equal(stat(top, &st), 0);
	/* A file in the way. */
	snprintf(file, sizeof(file), "%s/a/f", dir);
	close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	snprintf(deep, sizeof(deep), "%s/a/f/g", dir);
	assert_int_equal(mkdir_p(deep, 0700), -ENOTDIR);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(top), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(write_all_to_file_and_socket),
		cmocka_unit_test(atomic_write_replaces),
		cmocka_unit_test(atomic_write_failure_keeps_old),
		cmocka_unit_test(mkdir_p_and_undo),
	};
	signal(SIGPIPE, SIG_DFL);
	umask(022);
	return cmocka_run_group_tests(tests, setup, teardown);
}
