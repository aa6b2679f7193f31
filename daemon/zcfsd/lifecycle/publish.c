/* volume.publish, volume.unpublish and volume.delete: every request path
 * is checked before anything changes; a failing step undoes the earlier ones. */
#include <string.h>
#include <sys/mount.h>
#include "common/log.h"
#include "common/parse.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/mounts/rootown.h"
#include "daemon/zcfsd/server/server.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

/* A further target of a published volume: a bind mount of the first. */
static int publish_bind(struct zcfsd_volume *v, int tfd, const char *target, bool ro, const char *note,
			struct zcfs_err *e)
{
	int r = zcfsd_mount_bind(v, tfd, target, ro, e);

	if (r == 0 && (r = zcfsd_volume_add_target(v, target, note)) < 0) {
		(void)umount2(target, UMOUNT_NOFOLLOW | MNT_DETACH);
		zcfs_fail(e, ZCFS_INTERNAL, r, "out of memory");
	}
	return r;
}

/* A further target with MOUNT_GROUP: the running server has read the
 * root's record, so it stays; the target is refused unless it matches. */
static int publish_group_kept(const struct policy_tenant *t, const struct zcfsd_volume *v,
			      int64_t mount_group, struct zcfs_err *e)
{
	_cleanup_close_ int dfd = zcfsd_storage_open(t, v->id);

	if (dfd < 0 || !zcfsd_root_owner_matches(dfd, NULL, mount_group))
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
				 "volume '%s' is published with another group on its root than mount_group %lld",
				 v->id, (long long)mount_group);
	return 0;
}

/* The first target: storage (*CREATED_STORAGE when made here), the root's
 * group, the fuse mount on TFD, the server (*READY_FD: its ready pipe, or
 * -1 without --ready-fd). Undoes its own steps on failure, except the
 * storage it made; the wait for the server is publish_wait.c's. */
static int publish_first(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			 int tfd, const char *target, bool ro, const char *note, int64_t mount_group,
			 uint64_t pinned, bool *created_storage, int *ready_fd, struct zcfs_err *e)
{
	int r = zcfsd_storage_ensure(t, v->id, created_storage, e);

	if (r < 0 || (r = zcfsd_size_prepare(d, v, t, e)) < 0)
		return r;
	if (mount_group >= 0) {
		_cleanup_close_ int dfd = zcfsd_storage_open(t, v->id);
		r = dfd < 0 ? zcfs_fail(e, ZCFS_INTERNAL, dfd, "storage of '%s': %s", v->id, strerror(-dfd)) :
			      zcfsd_root_owner_apply(dfd, NULL, mount_group, e);
		if (r < 0)
			return r;
	}
	r = zcfsd_mount_fuse(d, v, tfd, target, ro, zcfsd_volume_uses_uring(v, t), e);
	if (r < 0)
		return r;
	r = zcfsd_volume_add_target(v, target, note);
	if (r < 0) {
		zcfs_fail(e, ZCFS_INTERNAL, r, "out of memory");
		(void)zcfsd_target_unmount(v, target, true);
		v->fuse_fd = safe_close(v->fuse_fd);
		return r;
	}
	v->pinned = pinned;	/* charged from here on: the spawn's rlimit counts it */
	v->srv.restarts = 0;
	r = zcfsd_server_start(d, v, t, ready_fd, e);
	if (r < 0)
		zcfsd_publish_undo_first(d, v, false, false);
	return r;
}

/* The same target again, its mount alike: NOTE must be its note, or its
 * first (saved). */
static int publish_same_note(struct zcfsd *d, struct zcfsd_volume *v, size_t i, const char *note,
			     struct zcfs_err *e)
{
	const char *old = v->target_notes[i];
	int r;

	if (!note || (old && !strcmp(old, note)))
		return 0;
	if (old)
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' is published at %s with another note", v->id, v->targets[i]);
	r = zcfsd_volume_set_target_note(v, i, note);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "out of memory");
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	log_info("event=target-note volume=%s target=%s bytes=%zu", v->id, v->targets[i], strlen(note));
	return 0;
}

int zcfsd_volume_publish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			 bool read_only, int64_t mount_group, const char *note,
			 const struct zcfsd_answer *a, struct zcfs_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	_cleanup_close_ int tfd = -1;
	struct zcfsd_volume *owner;
	bool created_target = false, created_storage = false, first = v->n_targets == 0;
	bool ro = read_only || v->read_only;	/* a read-only volume has no writable target */
	uint64_t pinned = 0;
	int ready_fd = -1;
	size_t idx;
	int r;

	if (!t)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				 "tenant '%s' of volume '%s' is not in the policy any more", v->tenant, v->id);
	r = zcfsd_target_check(t, target, e);
	if (r < 0)
		return r;
	owner = zcfsd_target_owner(d, target, &idx);
	if (owner == v) {	/* already done, if alike */
		r = zcfsd_target_same(v, target, ro, e);
		return r < 0 ? r : publish_same_note(d, v, idx, note, e);
	}
	if (owner)
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST, "target '%s' is used by volume '%s'",
				 target, owner->id);
	if (first)
		r = zcfsd_budget_check(d, v, t, &pinned, e);
	else if (mount_group >= 0)
		r = publish_group_kept(t, v, mount_group, e);
	if (r < 0)
		return r;
	tfd = zcfsd_target_open(target, &created_target, e);
	if (tfd < 0)
		return tfd;
	r = first ? publish_first(d, v, t, tfd, target, ro, note, mount_group, pinned, &created_storage,
				  &ready_fd, e)
		  : publish_bind(v, tfd, target, ro, note, e);
	if (r < 0) {
		if (created_storage)
			zcfsd_storage_remove_dir(t, v->id);
		if (created_target)
			zcfsd_target_remove_created(target);
		return r;
	}
	if (first) {	/* answered once the server serves (publish_wait.c) */
		const struct zcfsd_publish_wait w = {
			.ready_fd = ready_fd, .read_only = ro,
			.created_storage = created_storage, .created_target = created_target,
		};
		return zcfsd_publish_wait_begin(d, v, &w, a, e);
	}
	zcfsd_publish_done(d, v, target, ro);
	return 0;
}

int zcfsd_unpublish_target_index(const struct zcfsd_volume *v, const char *target, struct zcfs_err *e)
{
	size_t i;

	if (zcfsd_target_check_shape(target, e) < 0)
		return -EINVAL;
	for (i = 0; i < v->n_targets; i++)
		if (!strcmp(v->targets[i], target))
			break;
	return (int)i;
}

int zcfsd_unpublish_failed(const struct zcfsd_volume *v, const char *target, int r, struct zcfs_err *e)
{
	if (r == -EXDEV)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r,
				 "target '%s' of volume '%s' is below a FUSE mount that zcfsd looks nothing "
				 "up in (its server could make zcfsd wait; the log's event=unmount-refused "
				 "names it); it stays published: unmount that, then retry", target, v->id);
	return zcfs_fail(e, r == -ENOTUNIQ ? ZCFS_FAILED_PRECONDITION : ZCFS_UNAVAILABLE, r,
			  "target '%s' of volume '%s' could not be unmounted (%s); it stays "
			  "published, retry", target, v->id,
			  r == -ENOTUNIQ ? "moved, and other targets moved too" : strerror(-r));
}

void zcfsd_unpublish_done(struct zcfsd *d, const struct zcfsd_volume *v, const char *target)
{
	int r = zcfsd_state_save(d);

	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	log_info("event=unpublish volume=%s target=%s targets=%zu", v->id, target, v->n_targets);
}

int zcfsd_volume_unpublish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			   struct zcfs_err *e)
{
	int i = zcfsd_unpublish_target_index(v, target, e), r;

	if (i < 0)
		return i;
	if ((size_t)i == v->n_targets)
		return 0;	/* not published there: nothing to do */
	if (v->n_targets == 1) {
		zcfsd_restart_release(d, v);
		r = zcfsd_volume_teardown(d, v, false);
	} else {
		r = zcfsd_target_unmount(v, target, false);
		if (r == 0)
			zcfsd_volume_remove_target(v, (size_t)i);
	}
	if (r < 0)
		return zcfsd_unpublish_failed(v, target, r, e);
	zcfsd_unpublish_done(d, v, target);
	return 0;
}
