/* A publish's wait for its new server to serve, in the event loop. The
 * server is untrusted and what it does (say 'R', lie, close the pipe,
 * exit, stay silent) decides when the publish is answered, so the wait is
 * a state: the ready pipe is in the epoll set, the server's exit comes as
 * its pidfd event, the deadline is a timer of the loop. Every other
 * request is served meanwhile; the volume's own publish, unpublish,
 * restart and delete answer UNAVAILABLE. Outcomes, as before the wait
 * was asynchronous: 'R' published; an exit first, anything but 'R', or a
 * pipe closed unwritten by a server that stays alive: failed, every step
 * undone (the server killed); silence until the deadline: published, the
 * clients wait for its INIT (the stall detector handles one that never
 * answers). */
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

/* zcfs-serve without --ready-fd: a server that fails at once (bad
 * source, bad options) is caught within this long. */
#define LEGACY_EXIT_WAIT_MS 200

static void server_exited(struct zcfsd *d, struct zcfsd_volume *v);

static void unwatch_ready(struct zcfsd *d, struct zcfsd_publish_wait *w)
{
	if (w->ready_fd < 0)
		return;
	zcfsd_unwatch(d, &w->ready_watch);
	w->ready_fd = safe_close(w->ready_fd);
}

/* W let go: its watch, deadline and hold on the server's exit off. */
static void release(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfsd_publish_wait *w = v->pubwait;

	unwatch_ready(d, w);
	zcfsd_deadline_cancel(d, &w->due);
	if (v->sup->on_exit == server_exited)
		v->sup->on_exit = NULL;
	free(w);
	v->pubwait = NULL;
	zcfsd_changed(d);
}

void zcfsd_publish_wait_release(struct zcfsd *d, struct zcfsd_volume *v)
{
	if (v->pubwait)
		release(d, v);
}

/* Answers the waiting publish of V: published when E is NULL, else
 * failed with E and undone. */
static void finish(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfs_err *e)
{
	struct zcfsd_publish_wait done = *v->pubwait;

	/* Over before the answer is made: it says "published". */
	release(d, v);
	if (!e)
		zcfsd_publish_done(d, v, v->targets[0], done.read_only);
	else
		zcfsd_publish_undo_first(d, v, done.created_storage, done.created_target);
	done.done(d, v, done.token, e ? e : &(struct zcfs_err){ .code = ZCFS_OK });
}

static void fail(struct zcfsd *d, struct zcfsd_volume *v, const char *why)
{
	struct zcfs_err e = { .code = ZCFS_OK };

	zcfs_fail(&e, ZCFS_INTERNAL, -EPROTO,
		  "zcfs-serve for volume '%s' did not signal readiness properly (%s); stopped, see %s/logs/%s.log",
		  v->id, why, d->state_dir, v->id);
	log_warn("event=server-not-ready volume=%s pid=%d reason=\"%s\" effect=\"publish failed\"", v->id,
		 (int)v->srv.pid, why);
	finish(d, v, &e);
}

static void ready_readable(struct zcfsd *d, void *obj, uint32_t events);
static void due(struct zcfsd *d, void *obj);

int zcfsd_publish_wait_begin(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct zcfsd_publish_wait *init, const struct zcfsd_answer *a,
			     struct zcfs_err *e)
{
	struct zcfsd_publish_wait *w = malloc(sizeof(*w));
	int64_t now = zcfsd_now_ms();
	int r = 0;

	if (!w) {
		safe_close(init->ready_fd);
		zcfsd_publish_undo_first(d, v, init->created_storage, init->created_target);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	*w = *init;
	w->ready_watch = (struct zcfsd_watch){ 0 };
	w->due = (struct zcfsd_deadline){ 0 };
	v->pubwait = w;
	zcfsd_changed(d);

	w->started_ms = now;
	zcfsd_deadline_at(d, &w->due, now + (w->ready_fd >= 0 ? ZCFSD_READY_TIMEOUT_MS : LEGACY_EXIT_WAIT_MS),
			  due, v);
	/* Its server's exit fails this publish instead of being restarted. */
	v->sup->on_exit = server_exited;
	if (w->ready_fd >= 0)
		r = zcfsd_watch(d, &w->ready_watch, w->ready_fd, EPOLLIN, ready_readable, v);
	w->done = a->done;
	if (r == 0 && !(w->token = a->defer(a->ctx, "volume.publish")))
		r = -ENOTCONN;	/* not from a client: nobody to answer later */
	if (r < 0) {
		bool storage = w->created_storage, target = w->created_target;

		release(d, v);
		zcfsd_publish_undo_first(d, v, storage, target);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "waiting for the server of '%s': %s", v->id,
				 strerror(-r));
	}
	return 1;
}

bool zcfsd_publishing(const struct zcfsd_volume *v, struct zcfs_err *e)
{
	if (!v->pubwait)
		return false;
	zcfs_fail(e, ZCFS_UNAVAILABLE, -EBUSY,
		  "volume '%s' is being published (its new server has not said it serves yet); retry", v->id);
	return true;
}

static void ready_readable(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;
	int r;

	(void)events;
	r = zcfsd_ready_read(v->pubwait->ready_fd);
	if (r == -EAGAIN)
		return;
	if (r == 0) {
		log_info("event=server-ready volume=%s pid=%d ms=%lld", v->id, (int)v->srv.pid,
			 (long long)(zcfsd_now_ms() - v->pubwait->started_ms));
		finish(d, v, NULL);
	} else if (r == -EPIPE) {
		/* Closed unwritten: a dying server's exit follows within
		 * moments and says more; one that stays alive has lied. */
		unwatch_ready(d, v->pubwait);
		v->pubwait->eof = true;
	} else {
		fail(d, v, r == -EPROTO ? "bad ready byte" : strerror(-r));
	}
}

static void server_exited(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfs_err e = { .code = ZCFS_OK };
	char how[96];
	siginfo_t si;

	zcfsd_server_reap(d, v, &si);
	zcfsd_exit_describe(&si, how, sizeof(how));
	if (si.si_code == CLD_EXITED && si.si_status == 0 && !zcfsd_conn_ours(v->conn, v->id))
		/* A server ends with 0 when its connection ends: the mount was
		 * taken away (unmounted by someone else) as it started. */
		zcfs_fail(&e, ZCFS_UNAVAILABLE, -ECHILD,
			  "the mount of volume '%s' went away before its server served (unmounted "
			  "meanwhile); retry the publish", v->id);
	else
		zcfs_fail(&e, ZCFS_INTERNAL, -ECHILD,
			  "zcfs-serve for volume '%s' exited before serving (%s); see %s/logs/%s.log", v->id,
			  how, d->state_dir, v->id);
	log_warn("event=server-exit volume=%s pid=%d %s effect=\"publish failed\"", v->id,
		 (int)si.si_pid, how);
	finish(d, v, &e);
}

static void due(struct zcfsd *d, void *obj)
{
	struct zcfsd_volume *v = obj;
	struct zcfsd_publish_wait *w = v->pubwait;

	if (w->eof) {
		fail(d, v, "ready pipe closed unwritten");
	} else if (w->ready_fd < 0) {
		finish(d, v, NULL);	/* no --ready-fd: alive after the fixed wait */
	} else {
		log_warn("event=server-not-ready volume=%s pid=%d waited_ms=%d effect=\"published; "
			 "clients wait for its INIT\"", v->id, (int)v->srv.pid, ZCFSD_READY_TIMEOUT_MS);
		finish(d, v, NULL);
	}
}
