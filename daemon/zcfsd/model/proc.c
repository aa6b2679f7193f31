/* What /proc says of a process zcfsd started or takes over (a server,
 * a ring holder, a standby): its start time, which guards against a
 * reused pid, and its parent. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/util.h"
#include "model.h"

/* The fields of /proc/PID/stat after comm (which may hold spaces and
 * parens: they restart after the last ')'), or NULL. */
static const char *proc_stat_after_comm(pid_t pid, char *buf, size_t len)
{
	_cleanup_close_ int fd = -1;
	char path[64], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p + 2 : NULL;
}

unsigned long long zcfsd_proc_starttime(pid_t pid)
{
	char buf[1024];
	const char *p = proc_stat_after_comm(pid, buf, sizeof(buf));
	unsigned long long st = 0;

	if (!p || sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", &st) != 1)
		return 0;
	return st;
}

int zcfsd_proc_exit_status(pid_t pid, int *status)
{
	char buf[1024];
	const char *p = proc_stat_after_comm(pid, buf, sizeof(buf)), *last;
	int st;

	if (!p)
		return -ESRCH;
	/* exit_code, the last field, in waitpid(2)'s form */
	last = strrchr(p, ' ');
	if (!last || sscanf(last, " %d", &st) != 1)
		return -EPROTO;
	*status = st;
	return 0;
}

pid_t zcfsd_proc_ppid(pid_t pid)
{
	char buf[1024];
	const char *p = proc_stat_after_comm(pid, buf, sizeof(buf));
	int ppid = 0;

	if (!p || sscanf(p, "%*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}
