/* Writing a volume's dirty pages back before its connection is aborted.
 * With writeback caching the kernel holds acknowledged writes; a busy
 * target is detached and its connection aborted at unpublish, which
 * would drop them. syncfs(2) in a child bounds the wait: a hung server
 * must not hang zcfsd. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemon/common/log.h"
#include "mounts.h"

/* Children given up on: reaped once they exit (zcfsd_syncfs_reap), so a
 * hung unpublish leaves no zombie. */
#define MAX_ABANDONED 64
static int abandoned[MAX_ABANDONED];
static unsigned n_abandoned;

void zcfsd_syncfs_reap(void)
{
	unsigned i = 0;

	while (i < n_abandoned) {
		siginfo_t si = { 0 };
		if (waitid(P_PIDFD, (id_t)abandoned[i], &si, WEXITED | WNOHANG) < 0 || si.si_pid) {
			close(abandoned[i]);
			abandoned[i] = abandoned[--n_abandoned];
			continue;
		}
		i++;
	}
}

int zcfsd_syncfs_reap_timeout_ms(void)
{
	return n_abandoned ? 250 : -1;
}

int zcfsd_syncfs_bounded(const char *target, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int status, r;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_exit(fd >= 0 && syncfs(fd) == 0 ? 0 : 1);
	}
	p.fd = pidfd_open(pid, 0);
	if (p.fd < 0) {
		r = -errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return r;
	}
	r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		/* Still writing: the abort that follows ends its requests and
		 * the child exits; waiting for it here could block as long as
		 * the server, so the event loop reaps it later. */
		(void)kill(pid, SIGKILL);
		if (n_abandoned < MAX_ABANDONED)
			abandoned[n_abandoned++] = p.fd;
		else
			close(p.fd);	/* stays a zombie: 64 hung unpublishes at once */
		return -ETIMEDOUT;
	}
	close(p.fd);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
