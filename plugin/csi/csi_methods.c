/* Every CSI method by name, dispatched to its handler; the Identity
 * service and the Node service's information calls are answered here.
 * Methods a node-only driver without STAGE_UNSTAGE_VOLUME does not
 * implement answer UNIMPLEMENTED, as the spec requires. */
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

static int m_plugin_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	json_object *o;

	(void)c;
	if (pj_only_keys(req, NULL, no_fields, e) < 0)
		return -EINVAL;
	/* Node-only plugin: no CONTROLLER_SERVICE, no topology. */
	o = json_object_new_object();
	json_object_object_add(o, "capabilities", json_object_new_array());
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

/* No CO calls this: GetPluginCapabilities has no CONTROLLER_SERVICE.
 * csi-sanity v5.3.1 calls it anyway before every node spec (pkg/sanity/
 * node.go's BeforeEach asks for EXPAND_VOLUME unconditionally) and its
 * isControllerCapabilitySupported (controller.go) fails on
 * Expect(caps.GetCapabilities()).NotTo(BeNil()): an empty repeated field
 * has no wire form, so Go decodes the spec-correct empty list as nil and
 * every node spec fails (tried with t_csi_sanity: 23 of 26 failed in
 * that BeforeEach). One UNKNOWN entry (type 0, which offers nothing) is
 * the least answer that passes; a fixed csi-sanity takes either. */
static int m_controller_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const types[] = { "UNKNOWN", NULL };

	(void)c;
	return rpc_caps_response(req, types, resp, e);
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
	json_object_object_add(o, "max_volumes_per_node", json_object_new_int64(0));
	*resp = o;
	return 0;
}

static int m_node_caps(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const types[] = { "GET_VOLUME_STATS", "VOLUME_CONDITION",
					     "SINGLE_NODE_MULTI_WRITER", "VOLUME_MOUNT_GROUP", NULL };

	(void)c;
	return rpc_caps_response(req, types, resp, e);
}

static int m_publish(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	struct csi_publish_req p;
	int r;

	r = csi_parse_publish(req, &p, e);
	if (r == 0)
		r = csi_publish(c, &p, e);
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

	r = csi_parse_unpublish(req, &id, &target, e);
	if (r == 0)
		r = csi_unpublish(c, id, target, true, e);
	if (r < 0)
		return r;
	*resp = json_object_new_object();
	return 0;
}

static int m_stats(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	const char *id, *path;
	int r;

	r = csi_parse_stats(req, &id, &path, e);
	if (r < 0)
		return r;
	return csi_volume_stats(c, id, path, resp, e);
}

static int m_unimplemented(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	(void)c;
	(void)req;
	(void)resp;
	return zcfs_fail(e, ZCFS_UNIMPLEMENTED, -ENOSYS,
			 "not implemented: zcfs-csi is a node-only driver without STAGE_UNSTAGE_VOLUME or EXPAND_VOLUME");
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
