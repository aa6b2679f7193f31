/* volume.delete without blocking the event loop. The volume's storage
 * tree is the tenant's: any size, any shape, so its removal runs in a
 * child (mounts/storage.c) whose pidfd the loop watches, and the request
 * is answered when the child ends; every other request is served
 * meanwhile, and the volume's publish, unpublish, restart and delete
 * answer UNAVAILABLE. The volume stays recorded (state.json) until its
 * storage is gone: a removal that fails, or a zcfsd that exits meanwhile
 * (the child killed), leaves it, and a later delete goes on. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

struct zcfsd_delete {
	int pidfd;
	struct zcfsd_watch watch;
	uint64_t token;
	void (*done)(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token, const struct zcfs_err *e);
};

/* The volume out of the list and its traces gone; freed by the caller. */
static void forget(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t)
{
	_cleanup_free_ char *logpath = NULL;
	struct zcfsd_volume **pp;
	int r;

	if (t)
		zcfsd_size_release(v, t);
	for (pp = &d->volumes; *pp != v; pp = &(*pp)->next)
		;
	*pp = v->next;
	zcfsd_restart_release(d, v);	/* a restart left after a teardown: its deadline */
	if (asprintf(&logpath, "%s/logs/%s.log", d->state_dir, v->id) >= 0) {
		(void)unlink(logpath);
		free(logpath);
		if (asprintf(&logpath, "%s/logs/%s.log.1", d->state_dir, v->id) < 0)
			logpath = NULL;
		else
			(void)unlink(logpath);	/* the rotated one (server/srvlog.c) */
	}
	log_info("event=volume-delete volume=%s tenant=%s", v->id, v->tenant);
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
}

static void release(struct zcfsd *d, struct zcfsd_volume *v)
{
	zcfsd_unwatch(d, &v->del->watch);
	safe_close(v->del->pidfd);
	free(v->del);
	v->del = NULL;
}

/* The removal child ended: the volume goes, or stays with the error. */
static void removed(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	struct zcfs_err e = { .code = ZCFS_OK };
	uint64_t token = v->del->token;
	void (*done)(struct zcfsd *, struct zcfsd_volume *, uint64_t, const struct zcfs_err *) =
		v->del->done;
	int r = zcfsd_storage_delete_finish(v->del->pidfd);

	(void)events;
	if (r == -EINPROGRESS)
		return;	/* a spurious wake-up */
	release(d, v);
	if (r == -EXDEV)
		zcfs_fail(&e, ZCFS_FAILED_PRECONDITION, r,
			  "removing the storage of volume '%s': another file system is mounted on it "
			  "or in it; unmount that, then retry", v->id);
	else if (r < 0)
		zcfs_fail(&e, ZCFS_INTERNAL, r, "removing the storage of volume '%s': %s", v->id,
			  strerror(-r));
	else
		forget(d, v, t);
	if (done)
		done(d, v, token, &e);
	if (r == 0)
		zcfsd_volume_free(v);
}

int zcfsd_volume_delete(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfsd_answer *a,
			struct zcfs_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	int r, pidfd = -1;

	if (v->n_targets)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
				 "volume '%s' is published at %s; unpublish it first", v->id,
				 v->targets[0]);
	if (!t) {	/* its tenant left the policy: nothing of ours to remove */
		forget(d, v, NULL);
		zcfsd_volume_free(v);
		return 0;
	}
	v->del = calloc(1, sizeof(*v->del));
	if (!v->del)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = zcfsd_storage_delete_start(t, v->id, &pidfd);
	v->del->pidfd = pidfd;
	if (r == 0)
		r = zcfsd_watch(d, &v->del->watch, pidfd, EPOLLIN, removed, v);
	if (r < 0) {
		if (pidfd >= 0)
			(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		v->del->pidfd = -1;
		zcfsd_reap_later(d, pidfd);
		release(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "removing the storage of volume '%s': %s", v->id,
				 strerror(-r));
	}
	v->del->token = a->defer(a->ctx, "volume.delete");
	v->del->done = a->done;
	return 1;
}

bool zcfsd_deleting(const struct zcfsd_volume *v, struct zcfs_err *e)
{
	if (!v->del)
		return false;
	zcfs_fail(e, ZCFS_UNAVAILABLE, -EBUSY,
		  "volume '%s' is being deleted (its storage is being removed); retry", v->id);
	return true;
}

void zcfsd_delete_release(struct zcfsd *d, struct zcfsd_volume *v)
{
	int pidfd;

	if (!v->del)
		return;
	pidfd = v->del->pidfd;
	v->del->pidfd = -1;
	(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	zcfsd_unwatch(d, &v->del->watch);
	zcfsd_reap_release(d, pidfd, true, NULL);
	release(d, v);
}
