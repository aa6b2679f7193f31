/* A request's parameters as the methods read them (methods.c,
 * volume_params.c): a string, and no key that is not expected. */
#include "common/zcfs_proto.h"
#include "protocol.h"

const char *zcfsd_param_string(json_object *params, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(params, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

int zcfsd_only_params(json_object *params, const char *const *allowed, struct zcfs_err *e)
{
	const char *key = zcfs_json_unknown_key(params, allowed);

	if (key)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "unknown parameter '%.64s'", key);
	return 0;
}

int zcfsd_note_param(json_object *params, const char **note, struct zcfs_err *e)
{
	json_object *n;
	int r;

	*note = NULL;
	if (!json_object_object_get_ex(params, "note", &n))
		return 0;
	r = zcfsd_note_check(n);
	if (r == -EINVAL)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, r, "params.note must be a string");
	if (r == -E2BIG)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, r, "params.note is %d bytes, more than %d",
				 json_object_get_string_len(n), ZCFSD_NOTE_MAX);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, r, "params.note must not contain a NUL byte");
	*note = json_object_get_string(n);
	return 0;
}
