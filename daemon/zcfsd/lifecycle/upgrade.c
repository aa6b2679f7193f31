/* zcfsd upgrade in place (SIGUSR2, daemon.upgrade): zcfsd saves its
 * state and execs the binary at its own path again, with the same
 * arguments and pid. The volumes never stop: their servers run on, the
 * new image re-adopts them as after any zcfsd restart (state.json,
 * pidfds, pidfd_getfd), and reaps them as its children. The control
 * socket is handed across the exec (ZCFSD_LISTEN_FD), so clients see no
 * refused connection, only a pause.
 *
 * One state machine (d->upgrade): WANTED until no volume blocks it;
 * DRAINING while connected clients still wait for answers (the exec
 * would close their connections unanswered: a status call failed 1 in
 * 151 during t_zcfsd_upgrade), new connections waiting in the backlog
 * meanwhile, at most UPGRADE_DRAIN_MS; then DUE, told through the
 * completion the caller handed in. The machine is stepped by deadlines:
 * d->changed, which it binds while it is wanted and which whatever may
 * end a wait arms for now (zcfsd_changed: a server's start or exit, a
 * standby, a publish's wait, an unpublish or a restart over, a target
 * gone, an answer written, a client gone), and the drain's end. An idle
 * zcfsd, or one not upgrading, never steps it. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/server/server.h"
#include "lifecycle.h"

#define UPGRADE_DRAIN_MS 1000

struct zcfsd_upgrade {
	char self_exe[PATH_MAX];
	enum { UPGRADE_NONE, UPGRADE_WANTED, UPGRADE_DRAINING, UPGRADE_DUE } state;
	int64_t drain_since;			/* monotonic start of the drain */
	struct zcfsd_deadline drain_end;	/* steps it when the drain is over */
	struct zcfsd_upgrade_ops ops;
};

int zcfsd_upgrade_init(struct zcfsd *d, const struct zcfsd_upgrade_ops *ops)
{
	struct zcfsd_upgrade *u = calloc(1, sizeof(*u));
	ssize_t n;

	if (!u)
		return -ENOMEM;
	n = readlink("/proc/self/exe", u->self_exe, sizeof(u->self_exe) - 1);
	u->self_exe[n > 0 ? n : 0] = '\0';
	u->ops = *ops;
	d->upgrade = u;
	return 0;
}

void zcfsd_upgrade_free(struct zcfsd *d)
{
	if (!d->upgrade)
		return;
	zcfsd_deadline_cancel(d, &d->upgrade->drain_end);
	zcfsd_deadline_cancel(d, &d->changed);
	zcfsd_deadline_init(&d->changed, NULL, NULL);
	free(d->upgrade);
	d->upgrade = NULL;
}

const char *zcfsd_upgrade_binary(struct zcfsd *d)
{
	return d->upgrade ? d->upgrade->self_exe : "";
}

/* A published volume with no server running: zcfsd's dup of its fuse fd
 * is then all that keeps the connection, and the exec closes it. */
const char *zcfsd_upgrade_blocker(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if ((v->n_targets && v->srv.pid <= 0) || v->restart || v->unpub || (v->sup && v->sup->standby.pid) ||
		    v->pubwait)
			return v->id;
	return NULL;
}

/* Put off mid-drain (a volume blocks it again: a server restarting, a
 * hand-over, an unpublish): clients must reach zcfsd meanwhile, e.g. to
 * clear it, so new connections are accepted until the drain starts over. */
static void drain_off(struct zcfsd *d, struct zcfsd_upgrade *u)
{
	if (u->state != UPGRADE_DRAINING)
		return;
	zcfsd_deadline_cancel(d, &u->drain_end);
	u->ops.accepting(d, true);
	u->state = UPGRADE_WANTED;
}

/* The machine's step: d->changed's and the drain end's callback. */
static void upgrade_step(struct zcfsd *d, void *obj)
{
	struct zcfsd_upgrade *u = obj;
	const char *busy;
	int64_t now;

	if (u->state == UPGRADE_NONE || u->state == UPGRADE_DUE)
		return;
	busy = zcfsd_upgrade_blocker(d);
	if (busy) {
		log_debug("event=upgrade-waiting volume=%s reason=server-not-running", busy);
		drain_off(d, u);
		return;
	}
	now = zcfsd_now_ms();
	if (u->state == UPGRADE_WANTED) {
		u->state = UPGRADE_DRAINING;
		u->drain_since = now;
		u->ops.accepting(d, false);
		zcfsd_deadline_at(d, &u->drain_end, now + UPGRADE_DRAIN_MS, upgrade_step, u);
	}
	/* Bounded: a client that keeps sending does not hold it back. */
	if (u->ops.pending(d) && now - u->drain_since < UPGRADE_DRAIN_MS)
		return;
	zcfsd_deadline_cancel(d, &u->drain_end);
	zcfsd_deadline_cancel(d, &d->changed);
	zcfsd_deadline_init(&d->changed, NULL, NULL);	/* decided: nothing waits */
	u->state = UPGRADE_DUE;
	u->ops.due(d);
}

int zcfsd_upgrade_request(struct zcfsd *d, const char *via, struct zcfs_err *e)
{
	struct zcfsd_upgrade *u = d->upgrade;

	if (!u->self_exe[0] || access(u->self_exe, X_OK) < 0)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOEXEC,
				 "cannot exec zcfsd's binary '%s' again: %s", u->self_exe,
				 u->self_exe[0] ? strerror(errno) : "unknown path");
	log_info("event=upgrade-requested via=%s binary=%s", via, u->self_exe);
	if (u->state == UPGRADE_NONE) {
		u->state = UPGRADE_WANTED;
		/* Stepped now (after this round's events), then at each change. */
		zcfsd_deadline_at(d, &d->changed, zcfsd_now_ms(), upgrade_step, u);
	}
	return 0;
}

bool zcfsd_upgrade_due(struct zcfsd *d)
{
	return d->upgrade && d->upgrade->state == UPGRADE_DUE;
}

int zcfsd_upgrade_exec(struct zcfsd *d, char **argv)
{
	const char *self_exe = d->upgrade->self_exe;
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
