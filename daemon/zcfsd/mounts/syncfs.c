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
		 * the child exits. It stays a zombie (one per hung unpublish):
		 * waiting for it here could block as long as the server. */
		(void)kill(pid, SIGKILL);
		close(p.fd);
		return -ETIMEDOUT;
	}
	close(p.fd);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}
