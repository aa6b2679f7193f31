/* Every CSI method by name, dispatched to its handler; the Identity
 * service, the capability calls and NodeGetInfo are answered here, and
 * the node methods resolve a volume id to this node's zcfsd volume.
 * NodeStageVolume and NodeUnstageVolume (no STAGE_UNSTAGE_VOLUME) answer
 * UNIMPLEMENTED, as the spec requires. */
#include <string.h>
#include "csi.h"
#include "csi_method_list.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/zclient.h"

static const char *const no_fields[] = { NULL };

static json_object *rpc_cap(const char *type)
{
	json_object *c = json_object_new_object(), *rpc = json_object_new_object();

	json_object_object_add(rpc, "type", json_object_new_string(type));
	json_object_object_add(c, "rpc", rpc);
	return c;
}

static int m_plugin_info(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *o, *man;

	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	o = json_object_new_object();
	man = json_object_new_object();
	json_object_object_add(o, "name", json_object_new_string(CSI_DRIVER_NAME));
	json_object_object_add(o, "vendor_version", json_object_new_string(CSI_VENDOR_VERSION));
	json_object_object_add(man, "zcfsd_socket", json_object_new_string(c->socket));
	json_object_object_add(o, "manifest", man);
	*resp = o;
	return 0;
}

static json_object *plugin_cap(const char *kind, const char *type)
{
	json_object *c = json_object_new_object(), *t = json_object_new_object();

	json_object_object_add(t, "type", json_object_new_string(type));
	json_object_object_add(c, kind, t);
	return c;
}

static int m_plugin_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *o, *a;

	(void)c;
	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	/* The Controller service of this node's volumes, their topology
	 * (one node each), and online expansion. */
	o = json_object_new_object();
	a = json_object_new_array();
	json_object_array_add(a, plugin_cap("service", "CONTROLLER_SERVICE"));
	json_object_array_add(a, plugin_cap("service", "VOLUME_ACCESSIBILITY_CONSTRAINTS"));
	json_object_array_add(a, plugin_cap("volume_expansion", "ONLINE"));
	json_object_object_add(o, "capabilities", a);
	*resp = o;
	return 0;
}

static int m_probe(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *o;
	int r;

	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	/* Healthy = zcfsd answers; an unreachable daemon is an error (the
	 * liveness probe fails), not ready=false. */
	r = zcfs_call(c->socket, "status", NULL, NULL, e);
	if (r < 0)
		return r;
	o = json_object_new_object();
	json_object_object_add(o, "ready", json_object_new_boolean(true));
	*resp = o;
	return 0;
}

/* A ControllerGetCapabilities / NodeGetCapabilities answer: one RPC
 * capability of each of TYPES (NULL-terminated). */
static int rpc_caps_response(json_object *req, const char *const *types, json_object **resp,
			     struct zcfs_err *e)
{
	json_object *o, *a;

	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	o = json_object_new_object();
	a = json_object_new_array();
	for (; *types; types++)
		json_object_array_add(a, rpc_cap(*types));
	json_object_object_add(o, "capabilities", a);
	*resp = o;
	return 0;
}

static int m_controller_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const types[] = { "CREATE_DELETE_VOLUME", "LIST_VOLUMES", "GET_CAPACITY",
					     "EXPAND_VOLUME", NULL };

	(void)c;
	return rpc_caps_response(req, types, resp, e);
}

/* max_volumes_per_node: what the policy lets this node hold (the sum of
 * its tenants' max_volumes); 0 (the CO decides) when zcfsd cannot say. */
static int64_t node_max_volumes(struct csi_ctx *c)
{
	_cleanup_json_ json_object *res = NULL;
	struct zcfs_err ign = { 0 };
	json_object *ts, *x;
	int64_t n = 0;

	if (zcfs_call(c->socket, "tenant.list", NULL, &res, &ign) < 0 ||
	    !json_object_object_get_ex(res, "tenants", &ts) || !json_object_is_type(ts, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(ts); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(ts, i), "max_volumes", &x))
			n += json_object_get_int64(x);
	return n;
}

static int m_node_info(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *o;

	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	if (!c->node_id || !*c->node_id || strlen(c->node_id) > 256)
		return zcfs_fail(e, ZCFS_INTERNAL, -EINVAL,
				 "no usable node id: set --node-id or $ZCFS_NODE_ID (at most 256 bytes)");
	o = json_object_new_object();
	json_object_object_add(o, "node_id", json_object_new_string(c->node_id));
	json_object_object_add(o, "max_volumes_per_node", json_object_new_int64(node_max_volumes(c)));
	json_object_object_add(o, "accessible_topology", csi_topology_of(c->node_id));
	*resp = o;
	return 0;
}

static int m_node_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const types[] = { "GET_VOLUME_STATS", "VOLUME_CONDITION", "EXPAND_VOLUME",
					     "SINGLE_NODE_MULTI_WRITER", "VOLUME_MOUNT_GROUP", NULL };

	(void)c;
	return rpc_caps_response(req, types, resp, e);
}

static int m_publish(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	struct csi_publish_req p;
	struct csi_volref ref;
	int r;

	r = csi_parse_publish(req, &p, e);
	if (r == 0)
		r = csi_volref_local(c, p.volume_id, &ref, e);
	if (r == 0) {
		/* NAME@NODE: CreateVolume made it; it is never created here */
		p.provisioned = ref.node != NULL;
		p.volume_id = ref.name;
		r = csi_publish(c, &p, e);
	}
	csi_publish_req_done(&p);
	if (r < 0)
		return r;
	*resp = json_object_new_object();
	return 0;
}

static int m_unpublish(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	const char *id, *target;
	int r;

	struct csi_volref ref;

	r = csi_parse_unpublish(req, &id, &target, e);
	if (r == 0) {
		struct zcfs_err e2 = { 0 };
		r = csi_volref_local(c, id, &ref, &e2);
		/* another node's volume is not published here: done */
		if (r == -EXDEV) {
			*resp = json_object_new_object();
			return 0;
		}
		if (r < 0)
			return zcfs_fail(e, e2.code, r, "%s", e2.msg);
	}
	if (r == 0)
		r = csi_unpublish(c, ref.name, target, true, e);
	if (r < 0)
		return r;
	*resp = json_object_new_object();
	return 0;
}

static int m_stats(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	const char *id, *path;
	int r;

	struct csi_volref ref;

	r = csi_parse_stats(req, &id, &path, e);
	if (r == 0)
		r = csi_volref_parse("volume_id", id, &ref, e);
	if (r < 0)
		return r;
	if (ref.node && strcmp(ref.node, c->node_id ? c->node_id : ""))
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "volume '%s' is on node '%s', not here", ref.name, ref.node);
	return csi_volume_stats(c, ref.name, path, resp, e);
}

static int m_unimplemented(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	(void)c;
	(void)req;
	(void)resp;
	return zcfs_fail(e, ZCFS_UNIMPLEMENTED, -ENOSYS,
			 "not implemented: zcfs-csi has no STAGE_UNSTAGE_VOLUME (a FUSE volume is mounted per target)");
}

#define CSI_METHOD_ENTRY(svc, name, msg, fn, inl) { #name, fn },
static const struct {
	const char *name;
	int (*fn)(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e);
} methods[] = {
	CSI_METHODS(CSI_METHOD_ENTRY)
};
#undef CSI_METHOD_ENTRY

static int find_method(const char *method, struct zcfs_err *e)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			return (int)i;
	return zcfs_fail(e, ZCFS_UNIMPLEMENTED, -ENOSYS, "unknown CSI method '%.64s'", method);
}

int csi_handle_json(struct csi_ctx *c, const char *method, json_object *req, json_object **resp,
		    struct zcfs_err *e)
{
	int i = find_method(method, e);

	*resp = NULL;
	if (i < 0)
		return i;
	return methods[i].fn(c, req, resp, e);
}

int csi_handle(struct csi_ctx *c, const char *method, const char *body, size_t len,
	       json_object **resp, struct zcfs_err *e)
{
	_cleanup_json_ json_object *req = NULL;
	int i = find_method(method, e);

	*resp = NULL;
	if (i < 0)
		return i;
	if (len > CSI_REQUEST_MAX)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EFBIG, "request larger than %d bytes",
				 CSI_REQUEST_MAX);
	if (pj_parse_object(body, len, true, &req, e) < 0)
		return -EINVAL;
	return methods[i].fn(c, req, resp, e);
}
