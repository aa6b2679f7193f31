/* volume.restart: the planned restart of a volume's server as one state
 * machine (v->restart), which owns its events (the standby's ready pipe
 * and pidfd, the old server's exit through v->sup->on_exit) and its
 * deadline; server/ gives the parts (standby.c, notify.c, supervision's
 * handling of an exit). Answered once asked (docs/control-protocol.md:
 * the standby started, or the hand-over signalled), so the request's
 * answer is the method's return; what follows shows in volume.get.
 *   STANDBY   the successor starts (--standby-fd); 'R' on its ready pipe
 *             asks the old server to hand over; a standby that fails,
 *             lies, exits or is not ready in STANDBY_READY_TIMEOUT_MS is
 *             given up and the old server asked without one
 *   HANDOVER  the old server was asked (SIGUSR1); its exit is a planned
 *             one (no restart delay; a ready standby serves at once, else
 *             a new server starts); not gone in HANDOVER_TIMEOUT_MS: killed,
 *             and its successor takes over as after a crash
 * The machine ends at the old server's exit, at that kill, or when the
 * volume is unpublished or deleted meanwhile. */
#include <string.h>
#include <sys/epoll.h>
#include "common/log.h"
#include "daemon/zcfsd/server/server.h"
#include "lifecycle.h"

#define STANDBY_READY_TIMEOUT_MS 3000
#define HANDOVER_TIMEOUT_MS 5000

struct zcfsd_restart {
	enum { RESTART_STANDBY, RESTART_HANDOVER } phase;
	pid_t old_pid;			/* the server being replaced */
	struct zcfsd_deadline due;	/* the phase's limit */
};

static void old_exited(struct zcfsd *d, struct zcfsd_volume *v);

void zcfsd_restart_release(struct zcfsd *d, struct zcfsd_volume *v)
{
	if (!v->restart)
		return;
	zcfsd_deadline_cancel(d, &v->restart->due);
	if (v->sup->on_exit == old_exited)
		v->sup->on_exit = NULL;
	free(v->restart);
	v->restart = NULL;
	zcfsd_changed(d);
}

/* The old server killed: supervision takes its exit as after a crash. */
static void handover_late(struct zcfsd *d, void *obj)
{
	struct zcfsd_volume *v = obj;

	if (v->srv.pidfd >= 0 && v->srv.pid == v->restart->old_pid)
		zcfsd_server_stop(d, v, ZCFSD_STOP_KILL, "no-exit-after-handover");
	zcfsd_restart_release(d, v);
}

/* HANDOVER: the old server asked to hand its requests over and exit. */
static int ask(struct zcfsd *d, struct zcfsd_volume *v)
{
	int r = zcfsd_server_signal_handover(v);

	v->restart->phase = RESTART_HANDOVER;
	zcfsd_deadline_at(d, &v->restart->due, zcfsd_now_ms() + HANDOVER_TIMEOUT_MS, handover_late, v);
	if (r < 0)	/* gone meanwhile: its exit ends the machine */
		log_warn("event=server-handover-failed volume=%s pid=%d error=%s", v->id, (int)v->srv.pid,
			 strerror(-r));
	return r;
}

/* The standby given up; the old server asked now unless it was already. */
static void fall_back(struct zcfsd *d, struct zcfsd_volume *v, const char *why)
{
	zcfsd_standby_give_up(d, v, why);
	if (v->restart && v->restart->phase == RESTART_STANDBY && v->srv.pidfd >= 0)
		(void)ask(d, v);
}

static void standby_ready(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;
	int r = zcfsd_standby_ready_read(d, v);

	(void)events;
	if (r == -EAGAIN)
		return;
	if (r < 0)
		fall_back(d, v, r == -EPIPE ? "closed-ready-pipe" : "bad-ready-byte");
	else if (v->restart && v->restart->phase == RESTART_STANDBY)
		(void)ask(d, v);
}

/* Its exit before its promotion. */
static void standby_exited(struct zcfsd *d, void *obj, uint32_t events)
{
	(void)events;
	fall_back(d, obj, "exited");
}

static void standby_late(struct zcfsd *d, void *obj)
{
	fall_back(d, obj, "not-ready-in-time");
}

/* The old server's exit: supervision's, as a planned one (a ready
 * standby serves, else a new server at once); the machine is over. */
static void old_exited(struct zcfsd *d, struct zcfsd_volume *v)
{
	zcfsd_restart_release(d, v);
	zcfsd_server_exited(d, v, true);
}

/* STANDBY: the successor started and both its fds watched. */
static int standby_begin(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e)
{
	struct zcfsd_standby *n = &v->sup->standby;
	int r = zcfsd_standby_start(d, v, e);

	if (r < 0)
		return r;
	r = zcfsd_watch(d, &n->pidfd_watch, n->pidfd, EPOLLIN, standby_exited, v);
	if (r == 0)
		r = zcfsd_watch(d, &n->ready_watch, n->ready_fd, EPOLLIN, standby_ready, v);
	if (r < 0) {
		zcfsd_standby_give_up(d, v, "epoll");
		return zcfs_fail(e, ZCFS_INTERNAL, r, "epoll: %s", strerror(-r));
	}
	v->restart->phase = RESTART_STANDBY;
	zcfsd_deadline_at(d, &v->restart->due, zcfsd_now_ms() + STANDBY_READY_TIMEOUT_MS, standby_late, v);
	return 0;
}

int zcfsd_volume_restart(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e)
{
	struct zcfs_err se = { 0 };
	int r;

	if (!v->n_targets || v->srv.pidfd < 0 || !v->srv.pid)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ESRCH,
				 "volume '%s' has no running server (publish it first)", v->id);
	if (v->restart)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EALREADY,
				 "volume '%s': a restart is already under way", v->id);
	v->restart = calloc(1, sizeof(*v->restart));
	if (!v->restart)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	v->restart->old_pid = v->srv.pid;
	v->sup->on_exit = old_exited;
	zcfsd_changed(d);
	if (d->serve_can_standby && d->serve_can_resume && d->serve_can_signal_ready && !v->sup->standby.pid) {
		r = standby_begin(d, v, &se);
		if (r == 0)
			return 0;
		log_warn("event=standby-failed volume=%s error=\"%s\" action=handover-without-standby",
			 v->id, se.msg);
	}
	r = ask(d, v);
	if (r < 0) {
		zcfsd_restart_release(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "signalling the server of '%s': %s", v->id,
				 strerror(-r));
	}
	return 0;
}
