/* CreateVolume, DeleteVolume and ValidateVolumeCapabilities of the
 * Controller service. zcfs volumes are node-local: every node's zcfs-csi
 * serves the Controller service for its own node, next to an
 * external-provisioner started with --node-deployment, which sends it
 * only the PVCs scheduled there. CreateVolume makes the zcfsd volume on
 * this node at once (name = zcfsd id, idempotent by name) and answers the
 * id NAME@NODE with the topology of this node; DeleteVolume removes it
 * with its data once nothing has it published. */
#include <inttypes.h>
#include <string.h>
#include "csi.h"
#include "common/names.h"
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

int csi_parse_range(json_object *req, int64_t *req_b, int64_t *lim_b, struct zcfs_err *e)
{
	json_object *range;

	*req_b = *lim_b = 0;
	if (pj_object(req, "capacity_range", false, &range, e) < 0)
		return -EINVAL;
	return range ? parse_range(range, req_b, lim_b, e) : 0;
}

/* volume_capabilities: required, each one a capability NodePublishVolume
 * accepts; *unsupported (when not NULL) gets the first refusal instead of
 * failing (ValidateVolumeCapabilities answers it as a message). */
static int check_capabilities(json_object *req, char *unsupported, size_t len, struct zcfs_err *e)
{
	struct csi_publish_req p;
	json_object *caps;
	int r;

	if (!json_object_object_get_ex(req, "volume_capabilities", &caps) ||
	    !json_object_is_type(caps, json_type_array) || json_object_array_length(caps) == 0)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capabilities is required");
	for (size_t i = 0; i < json_object_array_length(caps); i++) {
		json_object *vc = json_object_array_get_idx(caps, i);
		struct zcfs_err e2 = { 0 };
		memset(&p, 0, sizeof(p));
		p.capability = json_object_new_object();
		if (!p.capability)
			return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		if (!json_object_is_type(vc, json_type_object))
			r = zcfs_fail(&e2, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capabilities[%zu] must be an object", i);
		else
			r = csi_parse_capability(vc, &p, &e2);
		csi_publish_req_done(&p);
		if (r < 0 && unsupported) {
			snprintf(unsupported, len, "%s", e2.msg);
			return 0;
		}
		if (r < 0)
			return zcfs_fail(e, e2.code, r, "%s", e2.msg);
	}
	return 0;
}

/* The size to create: required_bytes (or limit_bytes alone), raised to
 * zcfsd's 4 KiB least; 0 without a range (the tenant's default_quota,
 * checked against the capacity by zcfsd's answer below). */
static uint64_t size_of_range(int64_t req_b, int64_t lim_b)
{
	uint64_t s = (uint64_t)(req_b ? req_b : lim_b);

	return s && s < 4096 ? 4096 : s;
}

/* An existing volume answers the same request again when it is TENANT's
 * (the resolved one: with no parameters.tenant, the node's only tenant);
 * another size or tenant is ALREADY_EXISTS. */
static int check_same(const char *name, json_object *vol, const char *tenant, int64_t req_b,
		      int64_t lim_b, struct zcfs_err *e)
{
	json_object *sz = NULL;
	uint64_t size;

	json_object_object_get_ex(vol, "size", &sz);
	size = (uint64_t)json_object_get_int64(sz);
	if (strcmp(zclient_volume_str(vol, "tenant"), tenant))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST, "volume '%s' exists for tenant '%s', not '%s'",
				 name, zclient_volume_str(vol, "tenant"), tenant);
	if ((req_b && size != 0 && size < (uint64_t)req_b) || (lim_b && (size == 0 || size > (uint64_t)lim_b)))
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "volume '%s' exists with size %" PRIu64 ", outside capacity_range %" PRId64 "..%" PRId64,
				 name, size, req_b, lim_b);
	return 0;
}

/* Room for a new volume of SIZE: tenant T's volume count and capacity
 * (tenant.list), as GetCapacity reports them. */
static int check_room(struct csi_ctx *c, json_object *t, uint64_t size, struct zcfs_err *e)
{
	json_object *x;
	int64_t vols = 0, maxv = 0, avail = INT64_MAX;

	if (json_object_object_get_ex(t, "volumes", &x))
		vols = json_object_get_int64(x);
	if (json_object_object_get_ex(t, "max_volumes", &x))
		maxv = json_object_get_int64(x);
	if (json_object_object_get_ex(t, "capacity_available", &x))
		avail = json_object_get_int64(x);
	if (!size && json_object_object_get_ex(t, "default_quota", &x))
		size = (uint64_t)json_object_get_int64(x);
	if (vols >= maxv)
		return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
				 "tenant '%s' has %" PRId64 " of its max_volumes %" PRId64 " on node '%s'",
				 zclient_volume_str(t, "name"), vols, maxv, c->node_id);
	if (size > (uint64_t)avail)
		return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -ENOSPC,
				 "tenant '%s' has %" PRId64 " bytes of capacity left on node '%s', not %" PRIu64,
				 zclient_volume_str(t, "name"), avail, c->node_id, size);
	return 0;
}

static json_object *volume_answer(struct csi_ctx *c, const char *id, json_object *vol, json_object *params)
{
	json_object *o = json_object_new_object(), *v = json_object_new_object(), *ctx = json_object_new_object();
	json_object *topo = json_object_new_array(), *sz = NULL;

	json_object_object_get_ex(vol, "size", &sz);
	/* the context a later publish checks the volume against: no size,
	 * which a resize changes */
	json_object_object_foreach(params, k, val)
		if (strcmp(k, "size"))
			json_object_object_add(ctx, k, json_object_get(val));
	json_object_array_add(topo, csi_topology_of(c->node_id));
	json_object_object_add(v, "volume_id", json_object_new_string(id));
	json_object_object_add(v, "capacity_bytes", json_object_new_int64(json_object_get_int64(sz)));
	json_object_object_add(v, "volume_context", ctx);
	json_object_object_add(v, "accessible_topology", topo);
	json_object_object_add(o, "volume", v);
	return o;
}

static int parse_create(struct csi_ctx *c, json_object *req, const char **name, json_object **params,
			struct csi_publish_req *p, int64_t *req_b, int64_t *lim_b, struct zcfs_err *e)
{
	static const char *const keys[] = { "name", "capacity_range", "volume_capabilities", "parameters",
					    "secrets", "volume_content_source", "accessibility_requirements",
					    "mutable_parameters", NULL };
	json_object *unused, *src, *acc;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "name", true, name, e) < 0 ||
	    pj_string_map(req, "parameters", params, e) < 0 || pj_string_map(req, "secrets", &unused, e) < 0 ||
	    pj_string_map(req, "mutable_parameters", &unused, e) < 0 ||
	    pj_object(req, "volume_content_source", false, &src, e) < 0 ||
	    pj_object(req, "accessibility_requirements", false, &acc, e) < 0)
		return -EINVAL;
	if (!name_is_valid_id(*name))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "name '%.140s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", *name);
	if (src)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume_content_source is not supported (zcfs has no snapshots or clones)");
	if (unused && json_object_object_length(unused))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "mutable_parameters are not supported");
	if (csi_parse_range(req, req_b, lim_b, e) < 0 || check_capabilities(req, NULL, 0, e) < 0 ||
	    csi_check_accessibility(c, acc, e) < 0 ||
	    csi_parse_volume_attrs(*params, "parameters", NULL, p, e) < 0)
		return -EINVAL;
	if (p->ephemeral)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "an ephemeral volume is not created by CreateVolume");
	if (p->size)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "parameters.size: a provisioned volume's size is its capacity_range (the PVC's request)");
	return 0;
}

int csi_create_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL, *t = NULL, *empty = json_object_new_object();
	struct csi_publish_req p;
	json_object *params;
	const char *name;
	char id[CSI_NODE_ID_MAX + 136];
	int64_t req_b, lim_b;
	int lock, r;

	memset(&p, 0, sizeof(p));
	r = parse_create(c, req, &name, &params, &p, &req_b, &lim_b, e);
	if (r == 0)
		r = csi_volume_id_of(c, name, id, sizeof(id), e);
	if (r < 0)
		return r;
	/* The tenant first, then the name within it: a same-named volume of
	 * another tenant is not this request's to answer with. */
	r = csi_tenant_get(c, p.tenant, &t, e);
	if (r < 0)
		return r;
	p.tenant = zclient_volume_str(t, "name");	/* created for the tenant checked */
	lock = csi_lock(c, name, e);
	if (lock < 0)
		return lock;
	r = zclient_volume_get(c->socket, name, &vol, e);
	if (r == 0)
		r = check_same(name, vol, zclient_volume_str(t, "name"), req_b, lim_b, e);
	else if (r == -ENOENT && (r = check_room(c, t, size_of_range(req_b, lim_b), e)) == 0)
		r = csi_zcfsd_create(c, name, &p, size_of_range(req_b, lim_b), &vol, e);
	csi_unlock(c, name, lock);
	if (r < 0)
		return r;
	*resp = volume_answer(c, id, vol, params ? params : empty);
	return 0;
}

int csi_delete_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "secrets", NULL };
	_cleanup_json_ json_object *vol = NULL;
	struct csi_volref ref;
	json_object *unused;
	const char *id;
	int lock, r;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "volume_id", true, &id, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0)
		return -EINVAL;
	/* an id zcfs could never have made does not exist: success */
	if (csi_volref_parse("volume_id", id, &ref, &(struct zcfs_err){ 0 }) < 0) {
		*resp = json_object_new_object();
		return 0;
	}
	/* another node's volume is that node's to delete (its provisioner) */
	if (csi_volref_local(c, id, &ref, e) < 0)
		return -EXDEV;
	lock = csi_lock(c, ref.name, e);
	if (lock < 0)
		return lock;
	r = zclient_volume_get(c->socket, ref.name, &vol, e);
	if (r == -ENOENT)
		r = 0;
	else if (r == 0 && zclient_volume_n_targets(vol) > 0)
		r = zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY, "volume '%s' is still published", ref.name);
	else if (r == 0)
		r = zclient_call_id(c->socket, "volume.delete", ref.name, NULL, e);
	csi_unlock(c, ref.name, lock);
	if (r < 0)
		return r;
	*resp = json_object_new_object();
	return 0;
}

/* ValidateVolumeCapabilities: every capability NodePublishVolume takes
 * is confirmed (echoed); else no confirmation, and the message says why. */
int csi_validate_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "volume_context", "volume_capabilities", "parameters",
					    "secrets", "mutable_parameters", NULL };
	_cleanup_json_ json_object *vol = NULL;
	json_object *ctx, *params, *unused, *o, *conf, *caps;
	struct csi_volref ref;
	const char *id;
	char why[512] = "";
	int r;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "volume_id", true, &id, e) < 0 ||
	    pj_string_map(req, "volume_context", &ctx, e) < 0 || pj_string_map(req, "parameters", &params, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0 || pj_string_map(req, "mutable_parameters", &unused, e) < 0 ||
	    csi_volref_parse("volume_id", id, &ref, e) < 0 || check_capabilities(req, why, sizeof(why), e) < 0)
		return -EINVAL;
	if (ref.node && c->node_id && strcmp(ref.node, c->node_id))
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "volume '%s' is on node '%s', not on this node '%s'",
				 ref.name, ref.node, c->node_id);
	r = zclient_volume_get(c->socket, ref.name, &vol, e);
	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_NOT_FOUND, r, "volume '%s' does not exist on node '%s'", ref.name, c->node_id);
	if (r < 0)
		return r;
	o = json_object_new_object();
	if (why[0]) {
		json_object_object_add(o, "message", json_object_new_string(why));
	} else {
		conf = json_object_new_object();
		json_object_object_get_ex(req, "volume_capabilities", &caps);
		json_object_object_add(conf, "volume_capabilities", json_object_get(caps));
		if (ctx)
			json_object_object_add(conf, "volume_context", json_object_get(ctx));
		if (params)
			json_object_object_add(conf, "parameters", json_object_get(params));
		json_object_object_add(o, "confirmed", conf);
	}
	*resp = o;
	return 0;
}
