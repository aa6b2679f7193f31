/* volume.create: a volume record (and, with an owner for its root, the
 * storage directory and its root's ownership record) from a checked spec. */
#include <string.h>
#include "common/log.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

static bool has_owner(const struct zcfsd_root_owner *o)
{
	return o->has_uid || o->has_gid || o->has_mode;
}

static bool spec_has_owner(const struct zcfsd_volume_spec *s)
{
	return has_owner(&s->owner);
}

/* A new volume's root: what volume.create gives, each field it does not
 * give from the tenant's volume_root (policy). Only for a new volume: an
 * existing one is compared with what the request gives, never with the
 * policy, which may have changed since (and the root with chmod/chown). */
static struct zcfsd_root_owner new_root_owner(const struct zcfsd_volume_spec *s)
{
	const struct policy_volume_root *d = &s->tenant->volume_root;
	struct zcfsd_root_owner o = s->owner;

	if (!o.has_uid && d->has_uid) {
		o.has_uid = true;
		o.uid = d->uid;
	}
	if (!o.has_gid && d->has_gid) {
		o.has_gid = true;
		o.gid = d->gid;
	}
	if (!o.has_mode && d->has_mode) {
		o.has_mode = true;
		o.mode = d->mode;
	}
	return o;
}

/* CreateVolume is idempotent: the same request succeeds again. */
static int check_existing(const struct zcfsd_volume *old, const struct zcfsd_volume_spec *s,
			  struct zcfs_err *e)
{
	if (spec_has_owner(s)) {
		_cleanup_close_ int dfd = zcfsd_storage_open(s->tenant, s->id);
		if (dfd < 0 || !zcfsd_root_owner_matches(dfd, &s->owner, -1))
			return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
					 "volume '%s' exists with another owner or mode of its root", s->id);
	}
	if (strcmp(old->tenant, s->tenant->name) || old->queue_depth != s->queue_depth ||
	    old->max_write != s->max_write || old->transport != s->transport ||
	    old->read_only != s->read_only || old->size != s->size || old->ring_holder != s->ring_holder)
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' exists with other parameters", s->id);
	if (!old->note != !s->note || (s->note && strcmp(old->note, s->note)))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST, "volume '%s' exists with another note", s->id);
	return 0;
}

/* The root's ownership record is in place before any server reads the root. */
static int apply_root_owner(const struct zcfsd_volume_spec *s, const struct zcfsd_root_owner *o,
			    bool *created_storage, struct zcfs_err *e)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = zcfsd_storage_ensure(s->tenant, s->id, created_storage, e);
	if (r < 0)
		return r;
	dfd = zcfsd_storage_open(s->tenant, s->id);
	r = dfd < 0 ? zcfs_fail(e, ZCFS_INTERNAL, dfd, "storage of '%s': %s", s->id, strerror(-dfd)) :
		      zcfsd_root_owner_apply(dfd, o, -1, e);
	if (r < 0 && *created_storage)
		zcfsd_storage_remove_dir(s->tenant, s->id);
	return r;
}

static struct zcfsd_volume *volume_new(const struct zcfsd_volume_spec *s)
{
	struct zcfsd_volume *v = zcfsd_volume_alloc();

	if (!v)
		return NULL;
	v->id = strdup(s->id);
	v->tenant = strdup(s->tenant->name);
	v->note = s->note ? strdup(s->note) : NULL;
	if (!v->id || !v->tenant || (s->note && !v->note)) {
		zcfsd_volume_free(v);
		return NULL;
	}
	v->queue_depth = s->queue_depth;
	v->max_write = s->max_write;
	v->transport = s->transport;
	v->read_only = s->read_only;
	v->ring_holder = s->ring_holder;
	v->size = s->size;
	/* Until its first publish finds out what its storage root offers. */
	v->size_enf = s->size ? ZCFSD_SIZE_SERVER : ZCFSD_SIZE_NONE;
	snprintf(v->size_why, sizeof(v->size_why), "not published yet");
	return v;
}

static void log_created(const struct zcfsd_volume_spec *s, const struct zcfsd_root_owner *o)
{
	if (has_owner(o))
		log_info("event=volume-root volume=%s uid=%s%u gid=%s%u mode=%s%o", s->id,
			 o->has_uid ? "" : "~", (unsigned)o->uid, o->has_gid ? "" : "~",
			 (unsigned)o->gid, o->has_mode ? "" : "~", (unsigned)o->mode);
	log_info("event=volume-create volume=%s tenant=%s queue_depth=%u max_write=%u transport=%s size=%llu%s",
		 s->id, s->tenant->name, s->queue_depth, s->max_write,
		 policy_transport_name(s->transport), (unsigned long long)s->size,
		 s->ring_holder ? " ring_holder=yes" : "");
}

int zcfsd_volume_create(struct zcfsd *d, const struct zcfsd_volume_spec *s,
			struct zcfsd_volume **ret, struct zcfs_err *e)
{
	struct zcfsd_volume *v, *old = zcfsd_volume_find(d, s->id);
	struct zcfsd_root_owner owner;
	bool created_storage = false;
	int r;

	if (old) {
		r = check_existing(old, s, e);
		if (r == 0)
			*ret = old;
		return r;
	}
	if (zcfsd_tenant_volume_count(d, s->tenant->name) >= s->tenant->max_volumes)
		return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
				 "tenant '%s' already has %u volumes (max_volumes)", s->tenant->name,
				 s->tenant->max_volumes);
	owner = new_root_owner(s);
	if (has_owner(&owner)) {
		r = apply_root_owner(s, &owner, &created_storage, e);
		if (r < 0)
			return r;
	}
	v = volume_new(s);
	if (!v) {
		r = zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		goto fail;
	}
	v->next = d->volumes;
	d->volumes = v;
	r = zcfsd_state_save(d);
	if (r < 0) {
		d->volumes = v->next;
		zcfsd_volume_free(v);
		zcfs_fail(e, ZCFS_INTERNAL, r, "saving state: %s", strerror(-r));
		goto fail;
	}
	log_created(s, &owner);
	*ret = v;
	return 0;
fail:
	if (created_storage)
		zcfsd_storage_remove_dir(s->tenant, s->id);
	return r;
}
