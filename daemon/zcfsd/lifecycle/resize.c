/* volume.resize: a volume grows while it serves. The new size is
 * recorded (state.json, atomically replaced) before anyone enforces it,
 * then handed to the running server through the counters it shares with
 * zcfsd (quota_bytes, model/stats.c): the server enforces the larger of
 * that and its --quota-bytes from its next request on, so df and ENOSPC
 * move without a restart and no write in flight is lost. A crash between
 * the two steps converges: a re-adopted server's counters are given the
 * recorded size again, and a restarted one gets it as --quota-bytes. */
#include <inttypes.h>
#include <string.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

int zcfsd_tenant_capacity(struct zcfsd *d, const struct policy_tenant *t, uint64_t *avail,
			  uint64_t *committed)
{
	uint64_t free_bytes;
	int r = zcfsd_storage_available(t, &free_bytes);

	*committed = 0;
	/* Saturated: 16 volumes of 2^60 bytes (each allowed) would wrap to
	 * 0 committed, and the whole free space would look available. */
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (!strcmp(v->tenant, t->name))
			*committed = *committed > UINT64_MAX - v->size ? UINT64_MAX : *committed + v->size;
	if (r < 0)
		return r;
	*avail = free_bytes > *committed ? free_bytes - *committed : 0;
	return 0;
}

/* What the tenant may still grow by: OUT_OF_RANGE past it. */
static int check_room(struct zcfsd *d, const struct policy_tenant *t, const struct zcfsd_volume *v,
		      uint64_t size, struct zcfs_err *e)
{
	uint64_t avail, committed;
	int r = zcfsd_tenant_capacity(d, t, &avail, &committed);

	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "free space of %s: %s", t->storage_root, strerror(-r));
	if (size - v->size > avail)
		return zcfs_fail(e, ZCFS_OUT_OF_RANGE, -ENOSPC,
				 "volume '%s': growing from %" PRIu64 " to %" PRIu64 " bytes needs %" PRIu64
				 " more, but tenant '%s' has %" PRIu64 " left (free space of its storage_root's "
				 "file system less the %" PRIu64 " bytes its volumes' sizes commit)",
				 v->id, v->size, size, size - v->size, t->name, avail, committed);
	return 0;
}

int zcfsd_volume_resize(struct zcfsd *d, struct zcfsd_volume *v, uint64_t size, struct zcfs_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	struct zcfs_err ign = { 0 };
	uint64_t old = v->size;
	int r;

	if (!t)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				 "tenant '%s' of volume '%s' is not in the policy any more", v->tenant, v->id);
	if (size == old)
		return 0;	/* done already: idempotent */
	if (!old)
		return zcfs_fail(e, ZCFS_OUT_OF_RANGE, -EINVAL,
				 "volume '%s' has no size limit (size 0): there is nothing to grow", v->id);
	if (size < old)
		return zcfs_fail(e, ZCFS_OUT_OF_RANGE, -EINVAL,
				 "volume '%s' is %" PRIu64 " bytes: a volume grows only (asked %" PRIu64 ")",
				 v->id, old, size);
	r = check_room(d, t, v, size, e);
	if (r == 0)
		r = zcfsd_size_set_limit(d, v, size, e);
	if (r < 0)
		return r;
	v->size = size;
	r = zcfsd_state_save(d);
	if (r < 0) {
		v->size = old;
		if (zcfsd_size_set_limit(d, v, old, &ign) < 0)
			log_err("event=resize-undo-failed volume=%s error=\"%s\"", v->id, ign.msg);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "saving state.json: %s; size unchanged", strerror(-r));
	}
	r = zcfsd_stats_set_size(v);
	log_info("event=volume-resize volume=%s from=%" PRIu64 " size=%" PRIu64 " server=%s", v->id, old, size,
		 !v->srv.pid ? "none" : r == 0 ? "told" : "at-next-start");
	return 0;
}
