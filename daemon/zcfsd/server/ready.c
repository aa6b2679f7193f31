/* A new server's readiness (server.h): publish waits for its "serving"
 * byte. */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include "daemon/common/log.h"
#include "server.h"

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

/* How the exited server ended, leaving it for server_forget to reap;
 * si_pid stays 0 when that cannot be told. */
static void peek_exit(int pidfd, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	(void)waitid(P_PIDFD, (id_t)pidfd, si, WEXITED | WNOHANG | WNOWAIT);
}

int zcfsd_ready_wait(int ready_fd, int pidfd, int timeout_ms, siginfo_t *si)
{
	int64_t deadline = zcfsd_now_ms() + timeout_ms;
	bool eof = false;
	char buf[8];

	for (;;) {
		struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN },
				       { .fd = ready_fd, .events = POLLIN } };
		int64_t left = deadline - zcfsd_now_ms();
		ssize_t n;

		if (left < 0)
			left = 0;
		/* After EOF only the exit is of interest (it follows the
		 * close of the dying server's files within moments). */
		if (poll(p, eof ? 1 : 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (p[0].revents & POLLIN) {
			peek_exit(pidfd, si);
			return -ECHILD;
		}
		if (p[0].revents & (POLLERR | POLLNVAL))
			return -EBADF;
		if (!eof && p[1].revents) {
			n = read(ready_fd, buf, sizeof(buf));
			if (n == 1 && buf[0] == 'R')
				return 0;
			if (n > 0)
				return -EPROTO;	/* garbage, or more than the one byte */
			if (n == 0)
				eof = true;
			else if (errno != EAGAIN && errno != EINTR)
				return -errno;
		}
		if (left == 0)
			return eof ? -EPROTO : -ETIMEDOUT;
	}
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

/* zcfs-serve without --ready-fd: a server that fails at once (bad
 * source, bad options) is caught within this long. */
#define LEGACY_EXIT_WAIT_MS 200

int zcfsd_server_wait_serving(struct zcfsd *d, struct zcfsd_volume *v, int ready_fd,
			      struct zcfs_err *e)
{
	int64_t t0 = zcfsd_now_ms();
	char how[96];
	siginfo_t si;
	int r;

	if (ready_fd < 0) {
		struct pollfd p = { .fd = v->srv.pidfd, .events = POLLIN };

		if (poll(&p, 1, LEGACY_EXIT_WAIT_MS) <= 0)
			return 0;
		peek_exit(v->srv.pidfd, &si);
		r = -ECHILD;
	} else {
		r = zcfsd_ready_wait(ready_fd, v->srv.pidfd, ZCFSD_READY_TIMEOUT_MS, &si);
	}
	switch (r) {
	case 0:
		log_info("event=server-ready volume=%s pid=%d ms=%lld", v->id, (int)v->srv.pid,
			 (long long)(zcfsd_now_ms() - t0));
		return 0;
	case -ETIMEDOUT:
		log_warn("event=server-not-ready volume=%s pid=%d waited_ms=%d effect=\"published; "
			 "clients wait for its INIT\"", v->id, (int)v->srv.pid, ZCFSD_READY_TIMEOUT_MS);
		return 0;
	case -ECHILD:
		zcfsd_exit_describe(&si, how, sizeof(how));
		return zcfs_fail(e, ZCFS_INTERNAL, r,
				 "zcfs-serve for volume '%s' exited before serving (%s); see %s/logs/%s.log",
				 v->id, how, d->state_dir, v->id);
	default:
		return zcfs_fail(e, ZCFS_INTERNAL, r,
				 "zcfs-serve for volume '%s' did not signal readiness properly (%s); "
				 "stopped, see %s/logs/%s.log", v->id,
				 r == -EPROTO ? "bad or missing ready byte" : strerror(-r),
				 d->state_dir, v->id);
	}
}
