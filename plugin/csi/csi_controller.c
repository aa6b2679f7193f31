/* CreateVolume and DeleteVolume of the Controller service, which zcfs-csi
 * does not advertise (no CONTROLLER_SERVICE: a zcfs volume lives on the
 * node that publishes it, and NodePublishVolume creates it there from its
 * volume_context). csi-sanity v5.3.1 creates the volumes of its node specs
 * through them anyway, so they exist with these meanings: CreateVolume
 * checks the request and answers a volume whose id is its name and whose
 * volume_context carries the parameters (and the size asked for); nothing
 * is created until the first publish. DeleteVolume deletes the zcfs volume
 * of that id on this node, if there is one and it is not published. */
#include <inttypes.h>
#include <string.h>
#include "csi.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/zclient.h"

/* capacity_range's bytes: both >= 0, required <= limit when a limit is set. */
static int parse_range(json_object *range, int64_t *req_b, int64_t *lim_b, struct zcfs_err *e)
{
	static const char *const range_keys[] = { "required_bytes", "limit_bytes", NULL };
	json_object *v;

	if (pj_only_keys(range, "capacity_range", range_keys, e) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(range, "required_bytes", &v))
		*req_b = json_object_get_int64(v);
	if (json_object_object_get_ex(range, "limit_bytes", &v))
		*lim_b = json_object_get_int64(v);
	if (*req_b < 0 || *lim_b < 0 || (*lim_b && *req_b > *lim_b))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -ERANGE,
				 "capacity_range: required_bytes %" PRId64 " and limit_bytes %" PRId64 " do not fit",
				 *req_b, *lim_b);
	return 0;
}

/* volume_capabilities: required, each one a capability NodePublishVolume accepts. */
static int check_capabilities(json_object *req, struct zcfs_err *e)
{
	struct csi_publish_req p;
	json_object *caps;
	int r;

	if (!json_object_object_get_ex(req, "volume_capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_array) || json_object_array_length(caps) == 0)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capabilities is required");
	for (size_t i = 0; i < json_object_array_length(caps); i++) {
		json_object *vc = json_object_array_get_idx(caps, i);
		memset(&p, 0, sizeof(p));
		p.capability = json_object_new_object();
		if (!p.capability)
			return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		if (!json_object_is_type(vc, json_type_object))
			r = zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capabilities[%zu] must be an object", i);
		else
			r = csi_parse_capability(vc, &p, e);
		csi_publish_req_done(&p);
		if (r < 0)
			return r;
	}
	return 0;
}

int csi_create_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "name", "capacity_range", "volume_capabilities", "parameters",
					    "secrets", "volume_content_source", "accessibility_requirements",
					    "mutable_parameters", NULL };
	json_object *params, *unused, *range, *src, *o, *vol, *ctx;
	struct csi_publish_req p;
	const char *name;
	int64_t req_b = 0, lim_b = 0;
	char sz[32];
	int r;

	(void)c;
	memset(&p, 0, sizeof(p));
	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "name", true, &name, e) < 0 ||
	    csi_check_volume_id("name", name, e) < 0 || pj_string_map(req, "parameters", &params, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0 ||
	    pj_object(req, "capacity_range", false, &range, e) < 0 ||
	    pj_object(req, "volume_content_source", false, &src, e) < 0)
		return -EINVAL;
	if (src)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume_content_source is not supported (zcfs has no snapshots or clones)");
	r = range ? parse_range(range, &req_b, &lim_b, e) : 0;
	if (r == 0)
		r = check_capabilities(req, e);
	if (r < 0)
		return r;
	memset(&p, 0, sizeof(p));
	if (csi_parse_volume_attrs(params, "parameters", NULL, &p, e) < 0)
		return -EINVAL;
	if (p.ephemeral)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "an ephemeral volume is not created by CreateVolume");
	o = json_object_new_object();
	vol = json_object_new_object();
	ctx = params ? json_object_get(params) : json_object_new_object();
	if (!o || !vol || !ctx) {
		json_object_put(o);
		json_object_put(vol);
		json_object_put(ctx);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	if (!p.size && (req_b || lim_b)) {
		/* the size travels to NodePublishVolume in the context */
		snprintf(sz, sizeof(sz), "%" PRId64, req_b ? req_b : lim_b);
		if (params) {
			json_object_put(ctx);
			ctx = json_object_new_object();
			json_object_object_foreach(params, k, val)
				json_object_object_add(ctx, k, json_object_get(val));
		}
		json_object_object_add(ctx, "size", json_object_new_string(sz));
		p.size = (uint64_t)(req_b ? req_b : lim_b);
	}
	json_object_object_add(vol, "volume_id", json_object_new_string(name));
	json_object_object_add(vol, "capacity_bytes", json_object_new_int64((int64_t)p.size));
	json_object_object_add(vol, "volume_context", ctx);
	json_object_object_add(o, "volume", vol);
	*resp = o;
	return 0;
}

int csi_delete_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "secrets", NULL };
	_cleanup_json_ json_object *vol = NULL;
	json_object *unused;
	const char *id;
	int lock, r;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "volume_id", true, &id, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0)
		return -EINVAL;
	/* an id zcfs could never have made does not exist: success */
	if (csi_check_volume_id("volume_id", id, &(struct zcfs_err){ 0 }) < 0) {
		*resp = json_object_new_object();
		return 0;
	}
	lock = csi_record_lock(c, id, e);
	if (lock < 0)
		return lock;
	r = zclient_volume_get(c->socket, id, &vol, e);
	if (r == -ENOENT)
		r = 0;
	else if (r == 0 && zclient_volume_n_targets(vol) > 0)
		r = zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY, "volume '%s' is still published", id);
	else if (r == 0)
		r = zclient_call_id(c->socket, "volume.delete", id, NULL, e);
	if (r == 0)
		r = csi_record_remove(c, id, e);
	csi_record_unlock(c, id, lock);
	if (r < 0)
		return r;
	*resp = json_object_new_object();
	return 0;
}
