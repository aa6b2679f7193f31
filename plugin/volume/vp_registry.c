/* The plugin's registry, STATE_DIR/volumes.json:
 *   {"volumes": {NAME: {"tenant", "mountpoint", "opts": {...},
 *                       "ids": [caller IDs holding a mount], "created_at"}}}
 * written by write-to-temp + fsync + rename after every change. */
#include <string.h>
#include "plugin/common/plugin_json.h"
#include "common/names.h"
#include "plugin/common/statefile.h"
#include "vp.h"

int vp_registry_load(struct vp *v, struct zcfs_err *e)
{
	json_object *reg = NULL, *vols;
	int r;

	r = mkdir_p(v->state_dir, 0700);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "state dir %s: %s", v->state_dir, strerror(-r));
	r = sf_read_json(v->state_dir, VP_REGISTRY_FILE, VP_REGISTRY_MAX, &reg);
	if (r == -ENOENT) {
		reg = json_object_new_object();
		if (!reg)
			return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
		json_object_object_add(reg, "volumes", json_object_new_object());
	} else if (r < 0) {
		return zcfs_fail(e, ZCFS_INTERNAL, r, "registry %s/%s: %s", v->state_dir, VP_REGISTRY_FILE,
				 r == -EBADMSG ? "not a JSON object" : strerror(-r));
	} else if (!json_object_object_get_ex(reg, "volumes", &vols) ||
		   !json_object_is_type(vols, json_type_object)) {
		json_object_put(reg);
		return zcfs_fail(e, ZCFS_INTERNAL, -EBADMSG, "registry %s/%s has no \"volumes\" object",
				 v->state_dir, VP_REGISTRY_FILE);
	} else {
		/* Every entry must be usable; a damaged one stops the start. */
		json_object_object_foreach(vols, name, ent) {
			json_object *ids;
			if (!name_is_valid_id(name) || !json_object_is_type(ent, json_type_object) ||
			    !*vp_entry_str(ent, "tenant") ||
			    !path_is_normalized_absolute(vp_entry_str(ent, "mountpoint")) ||
			    !json_object_object_get_ex(ent, "ids", &ids) ||
			    !json_object_is_type(ids, json_type_array)) {
				r = zcfs_fail(e, ZCFS_INTERNAL, -EBADMSG,
					      "registry %s/%s: entry '%.128s' is damaged", v->state_dir,
					      VP_REGISTRY_FILE, name);
				json_object_put(reg);
				return r;
			}
		}
	}
	if (v->reg)
		json_object_put(v->reg);
	v->reg = reg;
	return 0;
}

int vp_registry_save(struct vp *v, struct zcfs_err *e)
{
	int r = sf_write_json(v->state_dir, VP_REGISTRY_FILE, v->reg);

	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "saving registry %s/%s: %s", v->state_dir,
				 VP_REGISTRY_FILE, strerror(-r));
	return 0;
}

json_object *vp_registry_volumes(struct vp *v)
{
	json_object *vols = NULL;

	json_object_object_get_ex(v->reg, "volumes", &vols);
	return vols;
}

json_object *vp_registry_get(struct vp *v, const char *name)
{
	json_object *ent = NULL;

	if (!json_object_object_get_ex(vp_registry_volumes(v), name, &ent))
		return NULL;
	return ent;
}

const char *vp_entry_str(json_object *entry, const char *key)
{
	json_object *s;

	if (!json_object_object_get_ex(entry, key, &s) || !json_object_is_type(s, json_type_string))
		return "";
	return json_object_get_string(s);
}

json_object *vp_entry_ids(json_object *entry)
{
	json_object *ids = NULL;

	json_object_object_get_ex(entry, "ids", &ids);
	return ids;
}

bool vp_entry_has_id(json_object *entry, const char *id)
{
	json_object *ids = vp_entry_ids(entry);

	for (size_t i = 0; ids && i < json_object_array_length(ids); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(ids, i)), id))
			return true;
	return false;
}

bool vp_entry_add_id(json_object *entry, const char *id)
{
	if (vp_entry_has_id(entry, id))
		return false;
	json_object_array_add(vp_entry_ids(entry), json_object_new_string(id));
	return true;
}

bool vp_entry_del_id(json_object *entry, const char *id)
{
	json_object *ids = vp_entry_ids(entry);

	for (size_t i = 0; ids && i < json_object_array_length(ids); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(ids, i)), id)) {
			json_object_array_del_idx(ids, i, 1);
			return true;
		}
	return false;
}
