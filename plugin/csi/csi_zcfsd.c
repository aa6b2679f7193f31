/* The one volume.create that zcfs-csi sends zcfsd, for NodePublishVolume
 * (a volume made at its first publish) and CreateVolume alike. */
#include <errno.h>
#include <stdint.h>
#include "csi.h"
#include "plugin/common/zclient.h"

/* zcfsd's volume.create for volume NAME: what P asks for (tenant,
 * transport, root owner and mode; zcfsd checks them against the policy)
 * and SIZE (0: the tenant's default_quota). */
int csi_zcfsd_create(struct csi_ctx *c, const char *name, const struct csi_publish_req *p,
		     uint64_t size, json_object **vol, struct zcfs_err *e)
{
	_cleanup_json_ json_object *res = NULL, *params = json_object_new_object();
	json_object *v;
	int r;

	if (!params)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_object_object_add(params, "id", json_object_new_string(name));
	if (p->tenant)
		json_object_object_add(params, "tenant", json_object_new_string(p->tenant));
	if (p->transport)
		json_object_object_add(params, "transport", json_object_new_string(p->transport));
	if (size)
		json_object_object_add(params, "size", json_object_new_int64((int64_t)size));
	if (p->has_uid)
		json_object_object_add(params, "uid", json_object_new_int64(p->uid));
	if (p->has_gid)
		json_object_object_add(params, "gid", json_object_new_int64(p->gid));
	if (p->has_mode)
		json_object_object_add(params, "mode", json_object_new_int64(p->mode));
	if (p->ephemeral)	/* deleted after its last target (csi_node.c) */
		json_object_object_add(params, "note", json_object_new_string(CSI_EPHEMERAL_NOTE));
	r = zcfs_call(c->socket, "volume.create", params, &res, e);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(res, "volume", &v))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no volume for %s", name);
	*vol = json_object_get(v);
	return 0;
}
