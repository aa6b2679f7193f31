/* GetCapacity and ListVolumes: what this node's zcfsd says about the
 * tenant a StorageClass names (tenant.list) and its volumes (volume.list).
 * external-provisioner --enable-capacity publishes GetCapacity per node
 * and StorageClass as CSIStorageCapacity objects, so the scheduler only
 * picks a node a new volume fits on. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "csi.h"
#include "common/parse.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/zclient.h"

int csi_tenant_get(struct csi_ctx *c, const char *tenant, json_object **ret, struct zcfs_err *e)
{
	_cleanup_json_ json_object *res = NULL;
	json_object *ts, *t, *n;
	size_t count;
	int r = zcfs_call(c->socket, "tenant.list", NULL, &res, e);

	if (r < 0)
		return r;
	if (!json_object_object_get_ex(res, "tenants", &ts) || !json_object_is_type(ts, json_type_array))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no tenants");
	count = json_object_array_length(ts);
	if (!tenant && count != 1)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "parameters.tenant is required: the policy has %zu tenants", count);
	for (size_t i = 0; i < count; i++) {
		t = json_object_array_get_idx(ts, i);
		if (!tenant || (json_object_object_get_ex(t, "name", &n) && !strcmp(json_object_get_string(n), tenant))) {
			*ret = json_object_get(t);
			return 0;
		}
	}
	return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "tenant '%s' is not in this node's policy", tenant);
}

static int64_t tenant_int(json_object *t, const char *key, int64_t def)
{
	json_object *x;

	return json_object_object_get_ex(t, key, &x) ? json_object_get_int64(x) : def;
}

/* What a new volume of tenant T may still have on this node: 0 once its
 * max_volumes are there, else its capacity (storage free less committed
 * sizes); with transport uring, 0 when its memlock budget is spent. */
static int64_t capacity_of(json_object *t, const struct csi_publish_req *p)
{
	if (tenant_int(t, "volumes", 0) >= tenant_int(t, "max_volumes", 0))
		return 0;
	if (p->transport && !strcmp(p->transport, "uring") && tenant_int(t, "memlock_free", 0) <= 0)
		return 0;
	return tenant_int(t, "capacity_available", 0);
}

int csi_get_capacity(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_capabilities", "parameters", "accessible_topology",
					    "mutable_parameters", NULL };
	_cleanup_json_ json_object *t = NULL;
	struct csi_publish_req p;
	json_object *params, *unused, *topo, *o;
	int64_t avail;

	memset(&p, 0, sizeof(p));
	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string_map(req, "parameters", &params, e) < 0 ||
	    pj_string_map(req, "mutable_parameters", &unused, e) < 0 ||
	    pj_object(req, "accessible_topology", false, &topo, e) < 0 ||
	    csi_parse_volume_attrs(params, "parameters", NULL, &p, e) < 0)
		return -EINVAL;
	o = json_object_new_object();
	if (csi_topology_is_other_node(c, topo)) {
		/* another node's segment: nothing of it is here */
		json_object_object_add(o, "available_capacity", json_object_new_int64(0));
		*resp = o;
		return 0;
	}
	if (csi_tenant_get(c, p.tenant, &t, e) < 0) {
		json_object_put(o);
		return -EINVAL;
	}
	avail = capacity_of(t, &p);
	json_object_object_add(o, "available_capacity", json_object_new_int64(avail));
	json_object_object_add(o, "maximum_volume_size", json_object_new_int64(avail));
	json_object_object_add(o, "minimum_volume_size", json_object_new_int64(4096));
	*resp = o;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	json_object *const *x = a, *const *y = b;

	return strcmp(zclient_volume_str(*x, "id"), zclient_volume_str(*y, "id"));
}

static json_object *list_entry(struct csi_ctx *c, json_object *vol)
{
	json_object *en = json_object_new_object(), *v = json_object_new_object(), *topo = json_object_new_array();
	json_object *sz = NULL;
	char id[CSI_NODE_ID_MAX + 136];
	struct zcfs_err ign = { 0 };

	if (csi_volume_id_of(c, zclient_volume_str(vol, "id"), id, sizeof(id), &ign) < 0)
		snprintf(id, sizeof(id), "%s", zclient_volume_str(vol, "id"));
	json_object_object_get_ex(vol, "size", &sz);
	json_object_array_add(topo, csi_topology_of(c->node_id));
	json_object_object_add(v, "volume_id", json_object_new_string(id));
	json_object_object_add(v, "capacity_bytes", json_object_new_int64(json_object_get_int64(sz)));
	json_object_object_add(v, "accessible_topology", topo);
	json_object_object_add(en, "volume", v);
	return en;
}

/* ListVolumes: this node's zcfsd volumes by id, as NAME@NODE; the
 * token is the index of the next entry (a bad one: ABORTED). */
int csi_list_volumes(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e)
{
	static const char *const keys[] = { "max_entries", "starting_token", NULL };
	_cleanup_json_ json_object *res = NULL;
	json_object *vols, *x, *o, *entries;
	const char *tok;
	uint64_t start = 0;
	int64_t max = 0;
	size_t n, i;
	int r;

	if (pj_only_keys(req, NULL, keys, e) < 0 || pj_string(req, "starting_token", false, &tok, e) < 0)
		return -EINVAL;
	if (json_object_object_get_ex(req, "max_entries", &x))
		max = json_object_get_int64(x);
	if (max < 0)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "max_entries must not be negative");
	r = zcfs_call(c->socket, "volume.list", NULL, &res, e);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(res, "volumes", &vols) || !json_object_is_type(vols, json_type_array))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no volumes");
	n = json_object_array_length(vols);
	if (tok && *tok && (parse_u64(tok, 0, n, &start) < 0))
		return zcfs_fail(e, ZCFS_ABORTED, -EINVAL, "starting_token '%.64s' is not one this plugin gave", tok);
	json_object_array_sort(vols, by_id);
	o = json_object_new_object();
	entries = json_object_new_array();
	for (i = start; i < n && (!max || i < start + (uint64_t)max); i++)
		json_object_array_add(entries, list_entry(c, json_object_array_get_idx(vols, i)));
	json_object_object_add(o, "entries", entries);
	if (i < n) {
		char next[24];
		snprintf(next, sizeof(next), "%zu", i);
		json_object_object_add(o, "next_token", json_object_new_string(next));
	}
	*resp = o;
	return 0;
}
