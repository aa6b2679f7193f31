/* The plugins' common zcfsd calls and volume-object readers. */
#include <string.h>
#include "plugin_json.h"
#include "zclient.h"

int zclient_call_id(const char *socket_path, const char *method, const char *id, json_object **ret,
		    struct zcfs_err *e)
{
	_cleanup_json_ json_object *p = json_object_new_object();

	if (!p)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_object_object_add(p, "id", json_object_new_string(id));
	return zcfs_call(socket_path, method, p, ret, e);
}

int zclient_volume_get(const char *socket_path, const char *id, json_object **vol, struct zcfs_err *e)
{
	_cleanup_json_ json_object *res = NULL;
	struct zcfs_err e2 = { 0 };
	json_object *v;
	int r;

	*vol = NULL;
	r = zclient_call_id(socket_path, "volume.get", id, &res, &e2);
	if (r == -EREMOTEIO && e2.code == ZCFS_NOT_FOUND)
		return -ENOENT;
	if (r < 0) {
		if (e->code == ZCFS_OK)
			*e = e2;
		return r;
	}
	if (!json_object_object_get_ex(res, "volume", &v) || !json_object_is_type(v, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no volume for %s", id);
	*vol = json_object_get(v);
	return 0;
}

bool zclient_volume_has_target(json_object *vol, const char *target)
{
	json_object *t;

	if (!json_object_object_get_ex(vol, "targets", &t) || !json_object_is_type(t, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(t); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(t, i)), target))
			return true;
	return false;
}

size_t zclient_volume_n_targets(json_object *vol)
{
	json_object *t;

	if (!json_object_object_get_ex(vol, "targets", &t) || !json_object_is_type(t, json_type_array))
		return 0;
	return json_object_array_length(t);
}

const char *zclient_volume_str(json_object *vol, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(vol, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}
