/* A new server's readiness (server.h): the pipe its "serving" byte
 * comes through, and how a server that exited instead ended. */
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include "common/log.h"
#include "server_int.h"

int zcfsd_ready_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	/* A reader that may find the pipe empty after poll never blocks. */
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
		int r = -errno;

		fds[0] = safe_close(fds[0]);
		fds[1] = safe_close(fds[1]);
		return r;
	}
	return 0;
}

int zcfsd_ready_read(int ready_fd)
{
	char buf[8];
	ssize_t n = read(ready_fd, buf, sizeof(buf));

	if (n == 1 && buf[0] == 'R')
		return 0;
	if (n > 0)
		return -EPROTO;	/* garbage, or more than the one byte */
	if (n == 0)
		return -EPIPE;
	return errno == EINTR ? -EAGAIN : -errno;
}

void zcfsd_exit_describe(const siginfo_t *si, char *buf, size_t len)
{
	if (si->si_pid == 0)
		snprintf(buf, len, "exit status unknown");
	else if (si->si_code == CLD_EXITED)
		snprintf(buf, len, "exit status %d", si->si_status);
	else
		snprintf(buf, len, "killed by signal %d (%s)", si->si_status, strsignal(si->si_status));
}
