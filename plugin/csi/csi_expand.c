/* ControllerExpandVolume and NodeExpandVolume: online growth through
 * zcfsd's volume.resize, which the running server enforces at once (no
 * restart; docs/control-protocol.md). external-resizer is a cluster-wide
 * controller, so the ControllerExpandVolume it sends may reach another
 * node's zcfs-csi: that one answers node_expansion_required and the
 * volume's own node grows it in NodeExpandVolume, which kubelet calls on
 * the node that has it published. */
#include <inttypes.h>
#include <string.h>
#include <sys/statvfs.h>
#include "csi.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/zclient.h"

static uint64_t vol_size(json_object *vol)
{
	json_object *sz = NULL;

	json_object_object_get_ex(vol, "size", &sz);
	return (uint64_t)json_object_get_int64(sz);
}

/* NAME grown to at least REQ_B bytes (never above LIM_B when set): *size
 * is what it is now. Under the volume's lock. */
static int grow(struct csi_ctx *c, const char *name, int64_t req_b, int64_t lim_b, uint64_t *size,
		struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL, *params = NULL, *res = NULL;
	json_object *v;
	int r = zclient_volume_get(c->socket, name, &vol, e);

	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_NOT_FOUND, r, "volume '%s' does not exist on node '%s'", name, c->node_id);
	if (r < 0)
		return r;
	*size = vol_size(vol);
	if (lim_b && *size > (uint64_t)lim_b)
		return zcfs_fail(e, ZCFS_OUT_OF_RANGE, -ERANGE, "volume '%s' is %" PRIu64 " bytes, above limit_bytes %" PRId64,
				 name, *size, lim_b);
	if (!req_b || *size >= (uint64_t)req_b)
		return 0;	/* as large already: done (a retried expand too) */
	params = json_object_new_object();
	json_object_object_add(params, "id", json_object_new_string(name));
	json_object_object_add(params, "size", json_object_new_int64(req_b));
	r = zcfs_call(c->socket, "volume.resize", params, &res, e);
	if (r < 0)
		return r;
	if (json_object_object_get_ex(res, "volume", &v))
		*size = vol_size(v);
	return 0;
}

static int locked_grow(struct csi_ctx *c, const char *name, int64_t req_b, int64_t lim_b, uint64_t *size,
		       struct zcfs_err *e)
{
	int lock = csi_lock(c, name, e), r;

	if (lock < 0)
		return lock;
	r = grow(c, name, req_b, lim_b, size, e);
	csi_unlock(c, name, lock);
	return r;
}

int csi_controller_expand(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "capacity_range", "secrets", "volume_capability", NULL };
	struct csi_volref ref;
	json_object *unused, *range, *o;
	const char *id;
	int64_t req_b, lim_b;
	uint64_t size;
	bool remote;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "volume_id", true, &id, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0 || pj_object(req, "capacity_range", true, &range, e) < 0 ||
	    csi_parse_range(req, &req_b, &lim_b, e) < 0 || csi_volref_parse("volume_id", id, &ref, e) < 0)
		return -EINVAL;
	if (!req_b && !lim_b)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "capacity_range needs required_bytes or limit_bytes");
	remote = ref.node && (!c->node_id || strcmp(ref.node, c->node_id));
	if (remote)
		size = (uint64_t)(req_b ? req_b : lim_b);	/* its own node grows it */
	else if (locked_grow(c, ref.name, req_b ? req_b : lim_b, lim_b, &size, e) < 0)
		return -EIO;
	o = json_object_new_object();
	json_object_object_add(o, "capacity_bytes", json_object_new_int64((int64_t)size));
	json_object_object_add(o, "node_expansion_required", json_object_new_boolean(remote));
	*resp = o;
	return 0;
}

int csi_node_expand(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "volume_path", "capacity_range", "staging_target_path",
					    "volume_capability", "secrets", NULL };
	_cleanup_json_ json_object *vol = NULL;
	struct csi_volref ref;
	json_object *unused, *o;
	const char *id, *path, *staging;
	int64_t req_b, lim_b;
	uint64_t size;
	struct statvfs st;
	int r;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "volume_id", true, &id, e) < 0 ||
	    pj_string(req, "volume_path", true, &path, e) < 0 ||
	    pj_string(req, "staging_target_path", false, &staging, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0 || csi_parse_range(req, &req_b, &lim_b, e) < 0 ||
	    csi_volref_local(c, id, &ref, e) < 0)
		return -EINVAL;
	r = zclient_volume_get(c->socket, ref.name, &vol, e);
	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_NOT_FOUND, r, "volume '%s' does not exist on node '%s'", ref.name, c->node_id);
	if (r < 0)
		return r;
	if (!zclient_volume_has_target(vol, path))
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "volume '%s' is not published at %.256s", ref.name, path);
	if (locked_grow(c, ref.name, req_b ? req_b : lim_b, lim_b, &size, e) < 0)
		return -EIO;
	/* what the pod's df shows: the server must have taken the size */
	r = csi_statvfs_bounded(path, CSI_STATS_TIMEOUT_MS, &st);
	if (r == 0 && size && (uint64_t)st.f_blocks * st.f_frsize + st.f_frsize <= size)
		return zcfs_fail(e, ZCFS_INTERNAL, -EAGAIN,
				 "volume '%s' is %" PRIu64 " bytes but its server still reports %" PRIu64
				 " (a server older than online resize: `zcfsctl volume restart %s` applies it)",
				 ref.name, size, (uint64_t)st.f_blocks * st.f_frsize, ref.name);
	o = json_object_new_object();
	json_object_object_add(o, "capacity_bytes", json_object_new_int64((int64_t)size));
	*resp = o;
	return 0;
}
