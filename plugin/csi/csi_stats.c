/* statvfs of a FUSE target without hanging on a stuck server: a child
 * does the call and writes the result through a pipe; the parent waits a
 * bounded time, then kills the child and does not wait for it. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include "csi.h"

struct stats_msg {
	int err;
	struct statvfs st;
};

/* How long a killed child is waited for before it is left to init. */
#define REAP_WAIT_MS 100

/* Kill the child and reap it if it dies within REAP_WAIT_MS: its
 * pidfd turns readable when it exits. A request the server already took
 * (FUSE-over-io_uring hands it over at once) waits uninterruptibly even
 * for SIGKILL: then the child is left to init. */
static void kill_and_reap_briefly(pid_t pid)
{
	/* Our unreaped child: pidfd_open cannot race with pid reuse. */
	_cleanup_close_ int pidfd = pidfd_open(pid, 0);
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int status;

	kill(pid, SIGKILL);
	if (pidfd >= 0 && poll(&pfd, 1, REAP_WAIT_MS) > 0)
		(void)waitpid(pid, &status, WNOHANG);
}

int csi_statvfs_bounded(const char *path, int timeout_ms, struct statvfs *st)
{
	_cleanup_close_ int rd = -1, wr = -1;
	struct stats_msg m = { 0 };
	struct pollfd pfd;
	int p[2], r, status;
	pid_t pid;
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	rd = p[0];
	wr = p[1];
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* It may outlive us (see below): hold none of the caller's pipes. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		m.err = statvfs(path, &m.st) < 0 ? errno : 0;
		_exit(write(wr, &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : 1);
	}
	wr = safe_close(wr);
	pfd = (struct pollfd){ .fd = rd, .events = POLLIN };
	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r <= 0) {
		kill_and_reap_briefly(pid);
		return -ETIMEDOUT;
	}
	n = read(rd, &m, sizeof(m));
	(void)waitpid(pid, &status, 0);
	if (n != (ssize_t)sizeof(m))
		return -EIO;
	if (m.err)
		return -m.err;
	*st = m.st;
	return 0;
}
