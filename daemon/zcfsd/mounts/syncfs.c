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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/log.h"
#include "common/walk_nofuse.h"
#include "mounts.h"

int zcfsd_child_pidfd(pid_t pid, int *pidfd)
{
	int fd = pidfd_open(pid, 0);

	if (fd < 0) {
		int r = -errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		return r;
	}
	*pidfd = fd;
	return 0;
}

int zcfsd_syncfs_start(const char *target, int *pidfd)
{
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* Only the volume's own root is opened (its server is asked):
		 * nothing on the way, so a FUSE mount over it fails at once. */
		const char *leaf = NULL;
		int pfd = nofuse_open_parent(target, &leaf, NULL, 0);
		int dfd = pfd < 0 ? -1 : openat(pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_exit(dfd >= 0 && syncfs(dfd) == 0 ? 0 : 1);
	}
	return zcfsd_child_pidfd(pid, pidfd);
}

int zcfsd_syncfs_finish(struct zcfsd *d, int pidfd, bool give_up)
{
	siginfo_t si = { 0 };

	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) == 0 && si.si_pid) {
		close(pidfd);
		return si.si_code == CLD_EXITED && si.si_status == 0 ? 0 : -EIO;
	}
	if (!give_up)
		return -EINPROGRESS;
	/* Still writing: the abort that follows ends its requests and the
	 * child exits; waiting for it could take as long as the server, so
	 * the event loop reaps it later. */
	(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	zcfsd_reap_later(d, pidfd);
	return -ETIMEDOUT;
}

int zcfsd_syncfs_bounded(struct zcfsd *d, const char *target, int timeout_ms)
{
	struct pollfd p = { .events = POLLIN };
	int r = zcfsd_syncfs_start(target, &p.fd);

	if (r < 0)
		return r;
	(void)poll(&p, 1, timeout_ms);
	return zcfsd_syncfs_finish(d, p.fd, true);
}
