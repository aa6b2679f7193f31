/* Node operations shared by CSI and FlexVolume: publish (creating the
 * volume in zcfsd when it does not exist yet), unpublish (deleting an
 * ephemeral volume after its last target) and statistics. zcfsd decides
 * tenants, budgets, paths and mounts (also a target's read-only flag:
 * volume.publish read_only) and keeps what the orchestrator asked for
 * in its notes; this file turns the orchestrator's idempotency rules
 * into zcfsd calls and undoes its own steps when a later one fails, so a
 * failed request leaves nothing behind. */
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include "csi.h"
#include "common/log.h"
#include "common/walk_nofuse.h"
#include "plugin/common/zclient.h"

/* Removes the target directory this plugin made, resolved without any
 * symlink: a tenant who can write a parent may have swapped a component
 * for a symlink since, and rmdir(target) would then remove a directory
 * elsewhere as root. Nor is a name looked up in a FUSE directory on the
 * way (its server could hold the plugin up). Whatever cannot be removed
 * that way stays, logged. */
static void remove_target_dir(const char *target)
{
	int r = rmdir_nofollow(target);

	if (r < 0 && r != -ENOENT)
		log_warn("event=target-left target=\"%s\" reason=\"%s\"", target,
			 r == -ELOOP ? "a symlink on the way" : r == -EXDEV ? "a FUSE mount on the way" :
			 strerror(-r));
}

static void undo_create(struct csi_ctx *c, const char *id, bool created)
{
	struct zcfs_err ign = { 0 };

	if (created)
		(void)zclient_call_id(c->socket, "volume.delete", id, NULL, &ign);
}

/* What this plugin keeps in zcfsd's notes (docs/control-protocol.md
 * "Notes"): a volume an ephemeral publish made has CSI_EPHEMERAL_NOTE,
 * each target it published the request's capability (the canonical
 * record csi_request.c makes, which says readonly and ephemeral too). */
static bool volume_is_ephemeral(json_object *vol)
{
	return !strcmp(zclient_volume_str(vol, "note"), CSI_EPHEMERAL_NOTE);
}

/* TARGET's capability (caller puts), or NULL: published without one (by
 * zcfsctl, or before zcfs-csi kept notes) or not by this plugin. */
static json_object *target_capability(json_object *vol, const char *target)
{
	json_object *tn, *n;

	if (!json_object_object_get_ex(vol, "target_notes", &tn) || !json_object_object_get_ex(tn, target, &n) ||
	    !json_object_is_type(n, json_type_string))
		return NULL;
	return json_tokener_parse(json_object_get_string(n));
}

/* An existing volume must match what the request pins down. */
static int check_existing(const struct csi_publish_req *p, json_object *vol, struct zcfs_err *e)
{
	const char *tenant = zclient_volume_str(vol, "tenant"), *tr = zclient_volume_str(vol, "transport");
	json_object *size = NULL;

	if (p->ephemeral && !volume_is_ephemeral(vol))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' already exists and is not an ephemeral volume of this driver",
				 p->volume_id);
	if (!p->ephemeral && volume_is_ephemeral(vol))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' is an ephemeral volume; it cannot be published as a persistent one",
				 p->volume_id);
	if (p->tenant && strcmp(tenant, p->tenant))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' exists for tenant '%s', not '%s'", p->volume_id, tenant, p->tenant);
	if (p->transport && strcmp(tr, p->transport))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' exists with transport '%s', not '%s'", p->volume_id, tr,
				 p->transport);
	if (p->size && (!json_object_object_get_ex(vol, "size", &size) ||
			(uint64_t)json_object_get_int64(size) != p->size))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' exists with size %lld, not %llu", p->volume_id,
				 (long long)json_object_get_int64(size), (unsigned long long)p->size);
	return 0;
}

/* volume.publish of the request's target with its read-only flag and its
 * capability as the target's note. */
static int publish_target(struct csi_ctx *c, const struct csi_publish_req *p, struct zcfs_err *e)
{
	_cleanup_json_ json_object *params = json_object_new_object();

	if (!params)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_object_object_add(params, "id", json_object_new_string(p->volume_id));
	json_object_object_add(params, "target", json_object_new_string(p->target_path));
	json_object_object_add(params, "read_only", json_object_new_boolean(p->readonly));
	json_object_object_add(params, "note", json_object_new_string(
		json_object_to_json_string_ext(p->capability, JSON_C_TO_STRING_PLAIN)));
	if (p->has_group)
		json_object_object_add(params, "mount_group", json_object_new_int64(p->mount_group));
	return zcfs_call(c->socket, "volume.publish", params, NULL, e);
}

/* Republish on a target the volume already has: same capability = OK. */
static int same_target(struct csi_ctx *c, struct csi_publish_req *p, json_object *vol, struct zcfs_err *e)
{
	_cleanup_json_ json_object *old = target_capability(vol, p->target_path);
	struct zcfs_err e2 = { 0 };
	int r;

	if (old) {
		if (json_object_equal(old, p->capability))
			return 0;
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' is already published at %s with another capability or readonly (%s); asked: %s",
				 p->volume_id, p->target_path, json_object_to_json_string(old),
				 json_object_to_json_string(p->capability));
	}
	/* Published without a capability (by zcfsctl): adopted when zcfsd
	 * takes the same publish again (same read-only flag; it keeps the
	 * note from then on). */
	r = publish_target(c, p, &e2);
	if (r < 0 && e2.code == ZCFS_ALREADY_EXISTS)
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' is already published at %s by another client with other options (%s)",
				 p->volume_id, p->target_path, e2.msg);
	return r < 0 ? zcfs_fail(e, e2.code, r, "%s", e2.msg) : 0;
}

static bool any_single_writer(json_object *vol)
{
	json_object *tn, *m;

	if (!json_object_object_get_ex(vol, "target_notes", &tn))
		return false;
	json_object_object_foreach(tn, path, note) {
		_cleanup_json_ json_object *cap = target_capability(vol, path);
		(void)note;
		if (cap && json_object_object_get_ex(cap, "access_mode", &m) &&
		    !strcmp(json_object_get_string(m), csi_access_mode_name(CSI_MODE_SINGLE_NODE_SINGLE_WRITER)))
			return true;
	}
	return false;
}

static int do_publish(struct csi_ctx *c, struct csi_publish_req *p, struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL;
	bool created = false;
	int r;

	r = zclient_volume_get(c->socket, p->volume_id, &vol, e);
	if (r == -ENOENT && p->provisioned)
		return zcfs_fail(e, ZCFS_NOT_FOUND, r, "volume '%s' does not exist on this node (deleted?); "
				 "a provisioned volume is never created empty by a publish", p->volume_id);
	if (r == -ENOENT) {
		r = csi_zcfsd_create(c, p->volume_id, p, p->size, &vol, e);
		if (r < 0)
			return r;
		created = true;
	} else if (r < 0) {
		return r;
	} else if ((r = check_existing(p, vol, e)) < 0) {
		return r;
	}
	if (zclient_volume_has_target(vol, p->target_path))
		return same_target(c, p, vol, e);
	if ((p->access_mode == CSI_MODE_SINGLE_NODE_SINGLE_WRITER && zclient_volume_n_targets(vol) > 0) ||
	    any_single_writer(vol)) {
		undo_create(c, p->volume_id, created);
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
				 "volume '%s' is SINGLE_NODE_SINGLE_WRITER and already published at another target",
				 p->volume_id);
	}
	/* zcfsd mounts the target read-only or not and keeps the capability
	 * with it in one step: nothing to undo after it. */
	r = publish_target(c, p, e);
	if (r < 0)
		undo_create(c, p->volume_id, created);
	return r;
}

static int do_unpublish(struct csi_ctx *c, const char *id, const char *target, bool remove_target,
			struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL, *res = NULL, *params = NULL;
	json_object *v;
	int r;

	r = zclient_volume_get(c->socket, id, &vol, e);
	if (r == -ENOENT)
		return 0;	/* unknown volume: nothing is published, success (idempotent) */
	if (r < 0)
		return r;
	if (zclient_volume_has_target(vol, target)) {
		params = json_object_new_object();
		if (!params)
			return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		json_object_object_add(params, "id", json_object_new_string(id));
		json_object_object_add(params, "target", json_object_new_string(target));
		r = zcfs_call(c->socket, "volume.unpublish", params, &res, e);
		if (r < 0)
			return r;
		if (json_object_object_get_ex(res, "volume", &v)) {
			json_object_put(vol);
			vol = json_object_get(v);
		}
		/* Only a directory this volume was published on is removed
		 * (CSI: the plugin deletes what it created at target_path). */
		if (remove_target)
			remove_target_dir(target);
	}
	/* An ephemeral volume goes with its last target; its note stays
	 * until then, so a retry after a failed delete deletes it. */
	if (zclient_volume_n_targets(vol) == 0 && volume_is_ephemeral(vol))
		return zclient_call_id(c->socket, "volume.delete", id, NULL, e);
	return 0;
}

int csi_publish(struct csi_ctx *c, struct csi_publish_req *p, struct zcfs_err *e)
{
	int lock = csi_lock(c, p->volume_id, e), r;

	if (lock < 0)
		return lock;
	r = do_publish(c, p, e);
	csi_unlock(c, p->volume_id, lock);
	return r;
}

int csi_unpublish(struct csi_ctx *c, const char *id, const char *target, bool remove_target,
		  struct zcfs_err *e)
{
	int lock = csi_lock(c, id, e), r;

	if (lock < 0)
		return lock;
	r = do_unpublish(c, id, target, remove_target, e);
	csi_unlock(c, id, lock);
	return r;
}

static json_object *usage_entry(uint64_t avail, uint64_t total, uint64_t used, const char *unit)
{
	json_object *u = json_object_new_object();

	json_object_object_add(u, "available", json_object_new_int64((int64_t)avail));
	json_object_object_add(u, "total", json_object_new_int64((int64_t)total));
	json_object_object_add(u, "used", json_object_new_int64((int64_t)used));
	json_object_object_add(u, "unit", json_object_new_string(unit));
	return u;
}

int csi_volume_stats(struct csi_ctx *c, const char *id, const char *path, json_object **ret,
		     struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL;
	json_object *o, *usage, *cond, *srv, *pid;
	const char *state;
	char msg[512] = "";
	bool abnormal = false;
	struct statvfs st;
	int r;

	r = zclient_volume_get(c->socket, id, &vol, e);
	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_NOT_FOUND, r, "volume '%s' does not exist", id);
	if (r < 0)
		return r;
	if (!zclient_volume_has_target(vol, path))
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "volume '%s' is not published at %s", id, path);
	o = json_object_new_object();
	usage = json_object_new_array();
	cond = json_object_new_object();
	if (!o || !usage || !cond) {
		json_object_put(o);
		json_object_put(usage);
		json_object_put(cond);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	json_object_object_add(o, "usage", usage);
	json_object_object_add(o, "volume_condition", cond);
	state = zclient_volume_str(vol, "state");
	if (!json_object_object_get_ex(vol, "server", &srv) || !json_object_object_get_ex(srv, "pid", &pid) ||
	    json_object_get_int64(pid) <= 0 || strcmp(state, "published")) {
		/* The server is down or being restarted: statvfs would wait for it. */
		abnormal = true;
		snprintf(msg, sizeof(msg), "zcfs server of volume '%s' is not running (state %s); zcfsd is restarting it",
			 id, *state ? state : "unknown");
	} else {
		r = csi_statvfs_bounded(path, CSI_STATS_TIMEOUT_MS, &st);
		if (r < 0) {
			abnormal = true;
			snprintf(msg, sizeof(msg), "statvfs %s: %s", path,
				 r == -ETIMEDOUT ? "no answer within 5 s (server hung)" : strerror(-r));
		} else {
			uint64_t f = st.f_frsize ? st.f_frsize : st.f_bsize;
			json_object_array_add(usage, usage_entry(st.f_bavail * f, st.f_blocks * f,
								 (st.f_blocks - st.f_bfree) * f, "BYTES"));
			json_object_array_add(usage, usage_entry(st.f_favail, st.f_files,
								 st.f_files - st.f_ffree, "INODES"));
			snprintf(msg, sizeof(msg), "volume '%s' is healthy (server pid %lld, data path %s because %s)",
				 id, (long long)json_object_get_int64(pid), zclient_volume_str(vol, "data_path_effective"),
				 zclient_volume_str(vol, "data_path_reason"));
		}
	}
	json_object_object_add(cond, "abnormal", json_object_new_boolean(abnormal));
	json_object_object_add(cond, "message", json_object_new_string(msg));
	*ret = o;
	return 0;
}
