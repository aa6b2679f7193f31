/* Where a zcfs volume lives: its data is under one node's storage_root,
 * so a provisioned volume's CSI id carries its node ("NAME@NODE", NAME
 * being zcfsd's id), its topology is that node alone
 * ({topology.csi.zcfs.io/node: NODE}), and a node refuses another node's
 * volume by name instead of creating an empty one. Plain ids (static PVs,
 * inline ephemeral volumes) keep meaning "this node's volume NAME". No
 * I/O here. */
#include <string.h>
#include "csi.h"
#include "common/names.h"
#include "plugin/common/plugin_json.h"

static bool node_is_valid(const char *n, size_t len)
{
	if (!len || len > CSI_NODE_ID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", n[i]))
			return false;
	return true;
}

int csi_volref_parse(const char *what, const char *id, struct csi_volref *ref, struct zcfs_err *e)
{
	const char *at = id ? strchr(id, '@') : NULL;
	size_t n = at ? (size_t)(at - id) : id ? strlen(id) : 0;

	memset(ref, 0, sizeof(*ref));
	if (!id)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s is required", what);
	if (n < sizeof(ref->name))
		memcpy(ref->name, id, n);
	if (n >= sizeof(ref->name) || !name_is_valid_id(ref->name) ||
	    (at && !node_is_valid(at + 1, strlen(at + 1))))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "%s '%.140s' must be NAME or NAME@NODE, NAME matching "
				 "[A-Za-z0-9][A-Za-z0-9._-]{0,127}, NODE [A-Za-z0-9._-]{1,%d}",
				 what, id, CSI_NODE_ID_MAX);
	ref->node = at ? at + 1 : NULL;
	return 0;
}

int csi_volref_local(struct csi_ctx *c, const char *id, struct csi_volref *ref, struct zcfs_err *e)
{
	int r = csi_volref_parse("volume_id", id, ref, e);

	if (r < 0 || !ref->node || (c->node_id && !strcmp(ref->node, c->node_id)))
		return r;
	return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EXDEV,
			 "volume '%s' was provisioned on node '%s' and its data lives there; this is node "
			 "'%s', which has no copy (schedule the pod on '%s', as its PV's nodeAffinity says)",
			 ref->name, ref->node, c->node_id ? c->node_id : "", ref->node);
}

int csi_volume_id_of(struct csi_ctx *c, const char *name, char *buf, size_t len, struct zcfs_err *e)
{
	if (!c->node_id || !node_is_valid(c->node_id, strlen(c->node_id)))
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EINVAL,
				 "node id '%.64s' cannot name a volume's node: set --node-id to [A-Za-z0-9._-]{1,%d}",
				 c->node_id ? c->node_id : "", CSI_NODE_ID_MAX);
	if ((size_t)snprintf(buf, len, "%s@%s", name, c->node_id) >= len)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENAMETOOLONG, "volume id too long");
	return 0;
}

json_object *csi_topology_of(const char *node)
{
	json_object *t = json_object_new_object(), *seg = json_object_new_object();

	json_object_object_add(seg, CSI_TOPOLOGY_KEY, json_object_new_string(node ? node : ""));
	json_object_object_add(t, "segments", seg);
	return t;
}

/* Whether topology T (a Topology object) names this node. */
static bool names_us(struct csi_ctx *c, json_object *t)
{
	json_object *seg, *n;

	return json_object_object_get_ex(t, "segments", &seg) &&
	       json_object_object_get_ex(seg, CSI_TOPOLOGY_KEY, &n) && json_object_is_type(n, json_type_string) &&
	       c->node_id && !strcmp(json_object_get_string(n), c->node_id);
}

bool csi_topology_is_other_node(struct csi_ctx *c, json_object *t)
{
	json_object *seg, *n;

	return t && json_object_object_get_ex(t, "segments", &seg) &&
	       json_object_object_get_ex(seg, CSI_TOPOLOGY_KEY, &n) && !names_us(c, t);
}

int csi_check_accessibility(struct csi_ctx *c, json_object *req, struct zcfs_err *e)
{
	json_object *list = NULL;
	size_t n;

	/* requisite decides when given, else preferred; neither: anywhere */
	if (!req || (!json_object_object_get_ex(req, "requisite", &list) &&
		     !json_object_object_get_ex(req, "preferred", &list)))
		return 0;
	if (!json_object_is_type(list, json_type_array))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "accessibility_requirements: requisite/preferred must be lists of topologies");
	n = json_object_array_length(list);
	for (size_t i = 0; i < n; i++)
		if (names_us(c, json_object_array_get_idx(list, i)))
			return 0;
	return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EXDEV,
			 "accessibility_requirements do not include this node '%s' (%s=%s): a zcfs volume "
			 "is created on the node whose zcfs-csi serves the request; its external-provisioner "
			 "must run with --node-deployment", c->node_id ? c->node_id : "", CSI_TOPOLOGY_KEY,
			 c->node_id ? c->node_id : "");
}
