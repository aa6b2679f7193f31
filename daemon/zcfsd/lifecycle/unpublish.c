/* Unpublish of a volume's last target without blocking the event loop.
 * Its waits are on things a server controls (writeback of dirty pages,
 * the server's exit), so each is a phase the loop polls, and the request
 * is answered when the last one ends (through the caller's zcfsd_answer);
 * every other request is served meanwhile. SYNCING: a syncfs child
 * writes the kernel's dirty pages back, given up on after 10 s (killed,
 * reaped later). Then the targets are unmounted at once. STOPPING: the
 * connection is aborted and the server's exit awaited as an ordinary
 * pidfd event, SIGKILL after 1.5 s, forgotten 3 s after that. While it
 * runs, the volume's publish, unpublish, restart and delete answer
 * UNAVAILABLE. */
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

#define UNPUB_SYNC_MS 10000
#define UNPUB_EXIT_MS 1500
#define UNPUB_KILL_MS 3000
#define UNPUB_POLL_MS 20

/* Over before the answer is made: the client's next request (served at
 * once, zcfsd_control_complete) may act on V, delete it too. */
static void answer(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfs_err *e)
{
	struct zcfsd_unpublish *u = v->unpub;

	v->unpub = NULL;
	u->done(d, v, u->token, e);
	free(u->target);
	free(u);
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
	r = zcfsd_syncfs_start(v->targets[0], &v->unpub->sync_pidfd);
	if (r < 0) {
		log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
		v->unpub->sync_pidfd = -1;
	}
	v->unpub->token = a->defer(a->ctx, "volume.unpublish");
	v->unpub->done = a->done;
	v->unpub->phase = ZCFSD_UNPUB_SYNCING;
	v->unpub->due_ms = zcfsd_now_ms() + UNPUB_SYNC_MS;
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

/* Syncfs over (or given up on): unmount, then let the server go. True
 * when it answered (failed). */
static bool after_sync(struct zcfsd *d, struct zcfsd_volume *v, int64_t now)
{
	struct zcfs_err e = { .code = ZCFS_OK };
	int r;

	if (v->unpub->sync_pidfd >= 0) {
		r = zcfsd_syncfs_finish(v->unpub->sync_pidfd, now >= v->unpub->due_ms);
		if (r == -EINPROGRESS)
			return false;
		v->unpub->sync_pidfd = -1;
		if (r < 0)
			log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
	}
	r = zcfsd_volume_unmount_all(v, false);
	if (r < 0) {
		/* Still published, server and all: a later unpublish retries. */
		zcfsd_unpublish_failed(v, v->unpub->target, r, &e);
		answer(d, v, &e);
		return true;
	}
	zcfsd_server_stop(d, v, ZCFSD_STOP_ABORT, NULL);
	v->unpub->phase = ZCFSD_UNPUB_STOPPING;
	v->unpub->due_ms = now + UNPUB_EXIT_MS;
	return false;
}

/* True when it answered (the server gone). */
static bool stopping(struct zcfsd *d, struct zcfsd_volume *v, int64_t now)
{
	struct zcfs_err e = { .code = ZCFS_OK };

	if (v->srv.pidfd >= 0 && now >= v->unpub->due_ms) {
		if (v->unpub->killed) {
			/* not ours to wait for any longer */
			zcfsd_server_stop(d, v, ZCFSD_STOP_FORGET, NULL);
		} else {
			zcfsd_server_stop(d, v, ZCFSD_STOP_KILL, "no-exit-after-abort");
			v->unpub->killed = true;
			v->unpub->due_ms = now + UNPUB_KILL_MS;
		}
	}
	if (v->srv.pidfd >= 0)
		return false;	/* its exit is a pidfd event (the server module forgets it) */
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	zcfsd_unpublish_done(d, v, v->unpub->target);
	answer(d, v, &e);
	return true;
}

/* One step of every unpublish under way, up to the first that answers:
 * true then, and the caller walks again (answer(): V or any other volume
 * may be gone). One answered is not under way any more. */
static bool step_until_answer(struct zcfsd *d, int64_t now)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		if (v->unpub && v->unpub->phase == ZCFSD_UNPUB_SYNCING && after_sync(d, v, now))
			return true;
		if (v->unpub && v->unpub->phase == ZCFSD_UNPUB_STOPPING && stopping(d, v, now))
			return true;
	}
	return false;
}

void zcfsd_unpublish_tick(struct zcfsd *d)
{
	int64_t now = zcfsd_now_ms();

	while (step_until_answer(d, now))
		;
}

int zcfsd_unpublish_timeout_ms(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->unpub)
			return UNPUB_POLL_MS;
	return -1;
}
