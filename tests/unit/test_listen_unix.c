/* common/listen_unix.c: stale sockets replaced, live ones and
 * non-sockets kept, mode applied, parents made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <cmocka.h>
#include "common/listen_unix.h"

static char dir[] = "/tmp/zcfs-test-listen.XXXXXX";
static char path[sizeof(dir) + 32];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/run/zcfs/s.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int connect_to(const char *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static void listens_with_mode(void **state)
{
	_cleanup_close_ int fd = listen_unix(path, 4, 0660, LISTEN_UNIX_NONBLOCK), c = -1;
	struct stat st;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0660);
	c = connect_to(path);
	assert_true(c >= 0);
	/* Someone accepts on it: KEEP_LIVE refuses, the others replace it. */
	assert_int_equal(listen_unix(path, 4, 0600, LISTEN_UNIX_KEEP_LIVE), -EADDRINUSE);
	{
		_cleanup_close_ int again = listen_unix(path, 4, 0600, 0);
		assert_true(again >= 0);
	}
}

static void stale_replaced(void **state)
{
	_cleanup_close_ int fd = -1;
	int old;

	(void)state;
	old = listen_unix(path, 4, 0600, 0);
	assert_true(old >= 0);
	close(old);		/* a crashed owner's socket file */
	assert_int_equal(connect_to(path), -ECONNREFUSED);
	fd = listen_unix(path, 4, 0600, LISTEN_UNIX_KEEP_LIVE);
	assert_true(fd >= 0);
	close(connect_to(path));
}

static void non_socket_kept(void **state)
{
	char file[sizeof(dir) + 16];
	struct stat st;
	_cleanup_close_ int fd = -1;

	(void)state;
	snprintf(file, sizeof(file), "%s/file", dir);
	close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	assert_int_equal(listen_unix(file, 4, 0600, 0), -EEXIST);
	assert_int_equal(listen_unix(file, 4, 0600, LISTEN_UNIX_KEEP_LIVE), -EEXIST);
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	/* zcfsd's own socket path: whatever is there goes. */
	fd = listen_unix(file, 4, 0600, LISTEN_UNIX_REPLACE_ANY);
	assert_true(fd >= 0);
	assert_int_equal(lstat(file, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
}

static void too_long(void **state)
{
	char p[200];

	(void)state;
	memset(p, 'a', sizeof(p) - 1);
	p[0] = '/';
	p[sizeof(p) - 1] = '\0';
	assert_int_equal(listen_unix(p, 4, 0600, 0), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(listens_with_mode),
		cmocka_unit_test(stale_replaced),
		cmocka_unit_test(non_socket_kept),
		cmocka_unit_test(too_long),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
