/* zcfsd upgrade in place (SIGUSR2, daemon.upgrade): zcfsd saves its
 * state and execs the binary at its own path again, with the same
 * arguments and pid. The volumes never stop: their servers run on, the
 * new image re-adopts them as after any zcfsd restart (state.json,
 * pidfds, pidfd_getfd), and reaps them as its children. The control
 * socket is handed across the exec (ZCFSD_LISTEN_FD), so clients see no
 * refused connection, only a pause. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "lifecycle.h"

static char self_exe[PATH_MAX];

void zcfsd_upgrade_init(void)
{
	ssize_t n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);

	self_exe[n > 0 ? n : 0] = '\0';
}

const char *zcfsd_upgrade_binary(void)
{
	return self_exe;
}

/* A published volume with no server running: zcfsd's dup of its fuse fd
 * is then all that keeps the connection, and the exec closes it. */
const char *zcfsd_upgrade_blocker(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if ((v->n_targets && (v->srv.pid <= 0 || v->srv.handover_due_ms)) || v->unpub ||
		    v->standby.pid || v->pubwait)
			return v->id;
	return NULL;
}

int zcfsd_upgrade_request(struct zcfsd *d, const char *via, struct zcfs_err *e)
{
	if (!self_exe[0] || access(self_exe, X_OK) < 0)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOEXEC,
				 "cannot exec zcfsd's binary '%s' again: %s", self_exe,
				 self_exe[0] ? strerror(errno) : "unknown path");
	d->upgrade = true;
	log_info("event=upgrade-requested via=%s binary=%s", via, self_exe);
	return 0;
}

bool zcfsd_upgrade_due(struct zcfsd *d)
{
	const char *busy;

	if (!d->upgrade)
		return false;
	busy = zcfsd_upgrade_blocker(d);
	if (busy) {
		log_debug("event=upgrade-waiting volume=%s reason=server-not-running", busy);
		return false;
	}
	return true;
}

int zcfsd_upgrade_exec(struct zcfsd *d, char **argv)
{
	char fd[16];

	if (d->listen_fd >= 0 && fcntl(d->listen_fd, F_SETFD, 0) == 0) {
		snprintf(fd, sizeof(fd), "%d", d->listen_fd);
		(void)setenv("ZCFSD_LISTEN_FD", fd, 1);
	}
	(void)setenv("ZCFSD_UPGRADED", "1", 1);	/* no second detach */
	log_info("event=upgrade-exec binary=%s", self_exe);
	fflush(stderr);
	execv(self_exe, argv);
	log_err("event=upgrade-failed binary=%s error=%m", self_exe);
	return -errno;
}
