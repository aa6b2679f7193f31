/* Unpublish of a volume's last target without blocking the event loop.
 * Its waits are on things a server controls (writeback of dirty pages,
 * the server's exit), so each is a phase the loop polls, and the request
 * is answered when the last one ends (through the caller's zcfsd_answer);
 * every other request is served meanwhile. SYNCING: a syncfs child
 * writes the kernel's dirty pages back (its pidfd watched), given up on
 * after 10 s (killed, reaped later). Then the targets are unmounted at
 * once. STOPPING: the connection is aborted and the server's exit is
 * this operation's (v->sup->on_exit, not a restart), SIGKILL after 1.5 s,
 * forgotten 3 s after that. While it
 * runs, the volume's publish, unpublish, restart and delete answer
 * UNAVAILABLE. */
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

static void after_sync(struct zcfsd *d, struct zcfsd_volume *v, bool give_up);
static void synced(struct zcfsd *d, void *obj, uint32_t events);
static void sync_late(struct zcfsd *d, void *obj);
static void stopped(struct zcfsd *d, struct zcfsd_volume *v);
static void exit_late(struct zcfsd *d, void *obj);
static void server_exited(struct zcfsd *d, struct zcfsd_volume *v);

#define UNPUB_SYNC_MS 10000
#define UNPUB_EXIT_MS 1500
#define UNPUB_KILL_MS 3000

/* The record let go: its watch, deadline and hold on the server's exit off. */
static void release(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfsd_unpublish *u = v->unpub;

	zcfsd_unwatch(d, &u->sync_watch);
	safe_close(u->sync_pidfd);
	zcfsd_deadline_cancel(d, &u->due);
	if (v->sup->on_exit == server_exited)
		v->sup->on_exit = NULL;
	free(u->target);
	free(u);
	v->unpub = NULL;
	zcfsd_changed(d);
}

/* Over before its answer: a request the client pipelined behind it
 * (served inside done) sees the volume as it is now. */
static void answer(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfs_err *e)
{
	uint64_t token = v->unpub->token;
	void (*done)(struct zcfsd *, struct zcfsd_volume *, uint64_t, const struct zcfs_err *) =
		v->unpub->done;

	release(d, v);
	done(d, v, token, e);
}

void zcfsd_lifecycle_release(struct zcfsd *d, struct zcfsd_volume *v)
{
	zcfsd_publish_wait_release(d, v);
	zcfsd_restart_release(d, v);
	zcfsd_delete_release(d, v);
	if (v->unpub)
		release(d, v);
}

int zcfsd_unpublish_begin(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			  const struct zcfsd_answer *a, struct zcfs_err *e)
{
	int i = zcfsd_unpublish_target_index(v, target, e), r;

	if (i < 0)
		return i;
	/* Not the last target, or nothing that could block: at once. */
	if ((size_t)i == v->n_targets || v->n_targets != 1 || !v->srv.pid)
		return zcfsd_volume_unpublish(d, v, target, e);
	v->unpub = calloc(1, sizeof(*v->unpub));
	if (v->unpub)
		v->unpub->target = strdup(target);
	if (!v->unpub || !v->unpub->target) {
		free(v->unpub);
		v->unpub = NULL;
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	v->unpub->sync_pidfd = -1;
	zcfsd_changed(d);
	r = zcfsd_syncfs_start(v->targets[0], &v->unpub->sync_pidfd);
	if (r == 0) {
		r = zcfsd_watch(d, &v->unpub->sync_watch, v->unpub->sync_pidfd, EPOLLIN, synced, v);
		if (r < 0) {
			/* Not watched: killed (reaped later) unless over already. */
			r = zcfsd_syncfs_finish(d, v->unpub->sync_pidfd, true);
			v->unpub->sync_pidfd = -1;
		}
	}
	if (r < 0) {
		log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
		v->unpub->sync_pidfd = -1;
	}
	v->unpub->token = a->defer(a->ctx, "volume.unpublish");
	v->unpub->done = a->done;
	v->unpub->phase = ZCFSD_UNPUB_SYNCING;
	/* Without a syncfs child: unmounted in this round, after the request
	 * that began it has returned (its answer is deferred). */
	zcfsd_deadline_at(d, &v->unpub->due,
			  zcfsd_now_ms() + (v->unpub->sync_pidfd >= 0 ? UNPUB_SYNC_MS : 0), sync_late, v);
	return 1;
}

bool zcfsd_unpublishing(const struct zcfsd_volume *v, struct zcfs_err *e)
{
	if (!v->unpub)
		return false;
	zcfs_fail(e, ZCFS_UNAVAILABLE, -EBUSY,
		   "volume '%s' is being unpublished from %s (its server is slow to write back or to exit); retry",
		   v->id, v->unpub->target ? v->unpub->target : "its last target");
	return true;
}

/* Syncfs over (or given up on: GIVE_UP): unmount, then let the server go. */
static void after_sync(struct zcfsd *d, struct zcfsd_volume *v, bool give_up)
{
	struct zcfs_err e = { .code = ZCFS_OK };
	int r;

	if (v->unpub->sync_pidfd >= 0) {
		/* Off first: a child given up on is the reaper's to watch. */
		if (give_up)
			zcfsd_unwatch(d, &v->unpub->sync_watch);
		r = zcfsd_syncfs_finish(d, v->unpub->sync_pidfd, give_up);
		if (r == -EINPROGRESS)
			return;
		zcfsd_unwatch(d, &v->unpub->sync_watch);
		v->unpub->sync_pidfd = -1;
		if (r < 0)
			log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
	}
	r = zcfsd_volume_unmount_all(v, false);
	if (r < 0) {
		/* Still published, server and all: a later unpublish retries. */
		zcfsd_unpublish_failed(v, v->unpub->target, r, &e);
		answer(d, v, &e);
		return;
	}
	zcfsd_restart_release(d, v);	/* a planned restart under way: over */
	zcfsd_server_stop(d, v, ZCFSD_STOP_ABORT, NULL);
	v->unpub->phase = ZCFSD_UNPUB_STOPPING;
	/* Its exit ends the unpublish (server_exited), not a restart. */
	if (v->srv.pidfd >= 0)
		v->sup->on_exit = server_exited;
	zcfsd_deadline_at(d, &v->unpub->due, zcfsd_now_ms() + UNPUB_EXIT_MS, exit_late, v);
	stopped(d, v);
}

static void synced(struct zcfsd *d, void *obj, uint32_t events)
{
	(void)events;
	after_sync(d, obj, false);
}

static void sync_late(struct zcfsd *d, void *obj)
{
	after_sync(d, obj, true);
}

/* Done once the server is gone (forgotten or seen exiting). */
static void stopped(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfs_err e = { .code = ZCFS_OK };

	if (v->srv.pidfd >= 0)
		return;
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	zcfsd_unpublish_done(d, v, v->unpub->target);
	answer(d, v, &e);
}

/* SIGKILL after UNPUB_EXIT_MS, forgotten UNPUB_KILL_MS after that. */
static void exit_late(struct zcfsd *d, void *obj)
{
	struct zcfsd_volume *v = obj;

	if (v->unpub->killed) {
		/* not ours to wait for any longer */
		zcfsd_server_stop(d, v, ZCFSD_STOP_FORGET, NULL);
	} else {
		zcfsd_server_stop(d, v, ZCFSD_STOP_KILL, "no-exit-after-abort");
		v->unpub->killed = true;
		zcfsd_deadline_at(d, &v->unpub->due, zcfsd_now_ms() + UNPUB_KILL_MS, exit_late, v);
	}
	stopped(d, v);
}

/* The server's exit, seen: reaped (as supervision would, without the
 * restart), then the unpublish is done. */
static void server_exited(struct zcfsd *d, struct zcfsd_volume *v)
{
	siginfo_t si;

	zcfsd_server_reap(d, v, &si);
	stopped(d, v);
}
