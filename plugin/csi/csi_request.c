/* CSI request parsing: snake_case fields of csi.proto v1.9.0, strict
 * (unknown fields are INVALID_ARGUMENT, see docs/orchestrators.md), and
 * the zcfs keys of volume_context. No I/O here: the fuzz target drives it. */
#include <string.h>
#include "csi.h"
#include "common/parse.h"
#include "plugin/common/plugin_json.h"
#include "common/names.h"

static const char *const mode_names[] = {
	[CSI_MODE_UNKNOWN] = "UNKNOWN",
	[CSI_MODE_SINGLE_NODE_WRITER] = "SINGLE_NODE_WRITER",
	[CSI_MODE_SINGLE_NODE_READER_ONLY] = "SINGLE_NODE_READER_ONLY",
	[CSI_MODE_MULTI_NODE_READER_ONLY] = "MULTI_NODE_READER_ONLY",
	[CSI_MODE_MULTI_NODE_SINGLE_WRITER] = "MULTI_NODE_SINGLE_WRITER",
	[CSI_MODE_MULTI_NODE_MULTI_WRITER] = "MULTI_NODE_MULTI_WRITER",
	[CSI_MODE_SINGLE_NODE_SINGLE_WRITER] = "SINGLE_NODE_SINGLE_WRITER",
	[CSI_MODE_SINGLE_NODE_MULTI_WRITER] = "SINGLE_NODE_MULTI_WRITER",
};

const char *csi_access_mode_name(int mode)
{
	return mode >= 0 && (size_t)mode < ARRAY_SIZE(mode_names) ? mode_names[mode] : "UNKNOWN";
}

void csi_publish_req_done(struct csi_publish_req *p)
{
	if (p->capability)
		json_object_put(p->capability);
	p->capability = NULL;
}

int csi_check_volume_id(const char *what, const char *id, struct zcfs_err *e)
{
	struct csi_volref ref;

	return csi_volref_parse(what, id, &ref, e);
}

int csi_check_target(const char *what, const char *path, struct zcfs_err *e)
{
	if (!path)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s is required", what);
	if (!path_is_normalized_absolute(path) || !strcmp(path, "/"))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "%s '%.256s' must be an absolute path without '.', '..', '//' or a trailing '/'",
				 what, path);
	return 0;
}

static int parse_mode(json_object *am, int *ret, struct zcfs_err *e)
{
	static const char *const keys[] = { "mode", NULL };
	json_object *m;
	int64_t i;

	if (pj_only_keys(am, "volume_capability.access_mode", keys, e) < 0)
		return -EINVAL;
	if (!json_object_object_get_ex(am, "mode", &m))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capability.access_mode.mode is required");
	if (json_object_is_type(m, json_type_int)) {
		i = json_object_get_int64(m);
		if (i >= 1 && i < (int64_t)ARRAY_SIZE(mode_names)) {
			*ret = (int)i;
			return 0;
		}
	} else if (pj_is_clean_string(m)) {
		for (size_t k = 1; k < ARRAY_SIZE(mode_names); k++)
			if (!strcmp(mode_names[k], json_object_get_string(m))) {
				*ret = (int)k;
				return 0;
			}
	}
	return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			 "volume_capability.access_mode.mode '%.64s' is not a supported access mode",
			 json_object_get_string(m));
}

/* A uid or gid: decimal, 0 to 4294967294 (-1 is "no change" to chown). */
static int parse_id(const char *what, const char *s, uint32_t *ret, struct zcfs_err *e)
{
	uint64_t v;

	if (parse_u64(s, 0, UINT32_MAX - 1, &v) < 0)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "%s '%.32s' must be a number from 0 to 4294967294", what, s);
	*ret = (uint32_t)v;
	return 0;
}

/* The mount access type: fs_type "" / zcfs / fuse.zcfs; mount_flags only
 * "ro"; volume_mount_group a gid (VOLUME_MOUNT_GROUP: the pod's fsGroup). */
static int parse_mount(json_object *mnt, bool *ro, json_object *cap, struct csi_publish_req *p,
		       struct zcfs_err *e)
{
	static const char *const keys[] = { "fs_type", "mount_flags", "volume_mount_group", NULL };
	json_object *flags, *fa;
	const char *fs, *grp;

	if (pj_only_keys(mnt, "volume_capability.mount", keys, e) < 0 ||
	    pj_string(mnt, "fs_type", false, &fs, e) < 0 ||
	    pj_string(mnt, "volume_mount_group", false, &grp, e) < 0)
		return -EINVAL;
	if (fs && strcmp(fs, "zcfs") && strcmp(fs, "fuse.zcfs"))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume_capability.mount.fs_type '%.64s' is not supported (zcfs volumes are FUSE; use \"\" or \"zcfs\")",
				 fs);
	if (grp) {
		if (parse_id("volume_capability.mount.volume_mount_group", grp, &p->mount_group, e) < 0)
			return -EINVAL;
		p->has_group = true;
		/* another group on the same target is another capability */
		json_object_object_add(cap, "volume_mount_group", json_object_new_int64(p->mount_group));
	}
	fa = json_object_new_array();
	if (!fa)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_object_object_add(cap, "mount_flags", fa);
	if (json_object_object_get_ex(mnt, "mount_flags", &flags) && !json_object_is_type(flags, json_type_null)) {
		if (!json_object_is_type(flags, json_type_array))
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "volume_capability.mount.mount_flags must be an array of strings");
		for (size_t i = 0; i < json_object_array_length(flags); i++) {
			json_object *f = json_object_array_get_idx(flags, i);
			if (!pj_is_clean_string(f))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "volume_capability.mount.mount_flags must be an array of strings");
			if (strcmp(json_object_get_string(f), "ro"))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "mount flag '%.64s' is not supported (zcfsd chooses the mount options; only \"ro\" is accepted)",
						 json_object_get_string(f));
			/* once: "ro" twice is the same capability, and the
			 * record stays small (a note zcfsd keeps: at most 4 KiB) */
			if (!*ro)
				json_object_array_add(fa, json_object_new_string("ro"));
			*ro = true;
		}
	}
	/* equivalent spellings compare equal in the target's note */
	json_object_object_add(cap, "fs_type", json_object_new_string("zcfs"));
	return 0;
}

static int parse_capability(json_object *vc, struct csi_publish_req *p, struct zcfs_err *e)
{
	static const char *const keys[] = { "block", "mount", "access_mode", NULL };
	json_object *blk, *mnt, *am;
	bool ro = false;

	if (pj_only_keys(vc, "volume_capability", keys, e) < 0 ||
	    pj_object(vc, "block", false, &blk, e) < 0 || pj_object(vc, "mount", false, &mnt, e) < 0 ||
	    pj_object(vc, "access_mode", true, &am, e) < 0)
		return -EINVAL;
	if (blk && mnt)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume_capability: block and mount are mutually exclusive");
	if (blk)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume_capability.block is not supported: zcfs volumes are filesystems (use mount)");
	if (!mnt)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "volume_capability.mount is required");
	if (parse_mode(am, &p->access_mode, e) < 0 || parse_mount(mnt, &ro, p->capability, p, e) < 0)
		return -EINVAL;
	if (p->access_mode == CSI_MODE_SINGLE_NODE_READER_ONLY ||
	    p->access_mode == CSI_MODE_MULTI_NODE_READER_ONLY)
		ro = true;
	p->readonly = p->readonly || ro;
	json_object_object_add(p->capability, "access_type", json_object_new_string("mount"));
	json_object_object_add(p->capability, "access_mode",
			       json_object_new_string(csi_access_mode_name(p->access_mode)));
	return 0;
}

int csi_parse_capability(json_object *vc, struct csi_publish_req *p, struct zcfs_err *e)
{
	return parse_capability(vc, p, e);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int csi_parse_volume_attrs(json_object *map, const char *what, const char *const *extra,
			   struct csi_publish_req *p, struct zcfs_err *e)
{
	if (!map)
		return 0;
	json_object_object_foreach(map, key, val) {
		const char *const *x;
		const char *s;
		for (x = extra; x && *x && strcmp(*x, key); x++)
			;
		if (x && *x)
			continue;	/* the caller's own key */
		if (!pj_is_clean_string(val))
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s['%.64s'] must be a string",
					 what, key);
		s = json_object_get_string(val);
		if (!strcmp(key, "tenant")) {
			if (!name_is_valid_id(s))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s.tenant '%.140s' is not a valid tenant name", what, s);
			p->tenant = s;
		} else if (!strcmp(key, "transport")) {
			if (strcmp(s, "auto") && strcmp(s, "devfuse") && strcmp(s, "uring"))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s.transport must be auto, devfuse or uring", what);
			p->transport = s;
		} else if (!strcmp(key, "size")) {
			if (parse_size(s, 1, UINT64_MAX, &p->size) < 0)
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s.size '%.64s' must be a byte count, optionally with K, M or G",
						 what, s);
		} else if (!strcmp(key, "uid") || !strcmp(key, "gid")) {
			char name[80];
			snprintf(name, sizeof(name), "%s.%s", what, key);
			if (parse_id(name, s, !strcmp(key, "uid") ? &p->uid : &p->gid, e) < 0)
				return -EINVAL;
			if (!strcmp(key, "uid"))
				p->has_uid = true;
			else
				p->has_gid = true;
		} else if (!strcmp(key, "mode")) {
			unsigned m = 0;
			size_t n = strlen(s);
			if (!n || n > 5 || strspn(s, "01234567") != n)
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s.mode '%.16s' must be octal permission bits such as 0770", what, s);
			for (const char *c = s; *c; c++)
				m = m * 8 + (unsigned)(*c - '0');
			if (m > 07777)
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s.mode '%.16s' is above 07777",
						 what, s);
			p->mode = m;
			p->has_mode = true;
		} else if (!strcmp(key, "csi.storage.k8s.io/ephemeral")) {
			if (strcmp(s, "true") && strcmp(s, "false"))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s['csi.storage.k8s.io/ephemeral'] must be \"true\" or \"false\"",
						 what);
			p->ephemeral = !strcmp(s, "true");
		} else if (!has_prefix(key, "csi.storage.k8s.io/") &&
			   !has_prefix(key, "storage.kubernetes.io/") &&
			   !has_prefix(key, "kubernetes.io/")) {
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "%s: unknown key '%.64s' (zcfs knows tenant, size, transport, uid, gid, mode)",
					 what, key);
		}
	}
	return 0;
}

int csi_parse_publish(json_object *req, struct csi_publish_req *p, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "publish_context", "staging_target_path",
					    "target_path", "volume_capability", "readonly", "secrets",
					    "volume_context", NULL };
	json_object *vc, *ctx, *unused;
	const char *staging;

	memset(p, 0, sizeof(*p));
	p->remove_target = true;
	p->capability = json_object_new_object();
	if (!p->capability)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	if (pj_only_keys(req, NULL, keys, e) < 0 ||
	    pj_string(req, "volume_id", true, &p->volume_id, e) < 0 ||
	    csi_check_volume_id("volume_id", p->volume_id, e) < 0 ||
	    pj_string(req, "target_path", true, &p->target_path, e) < 0 ||
	    csi_check_target("target_path", p->target_path, e) < 0 ||
	    pj_string(req, "staging_target_path", false, &staging, e) < 0 ||
	    pj_bool(req, "readonly", false, &p->readonly, e) < 0 ||
	    pj_string_map(req, "publish_context", &unused, e) < 0 ||
	    pj_string_map(req, "secrets", &unused, e) < 0 ||
	    pj_string_map(req, "volume_context", &ctx, e) < 0 ||
	    pj_object(req, "volume_capability", true, &vc, e) < 0)
		return -EINVAL;
	if (parse_capability(vc, p, e) < 0 ||
	    csi_parse_volume_attrs(ctx, "volume_context", NULL, p, e) < 0)
		return -EINVAL;
	json_object_object_add(p->capability, "readonly", json_object_new_boolean(p->readonly));
	json_object_object_add(p->capability, "ephemeral", json_object_new_boolean(p->ephemeral));
	return 0;
}

int csi_parse_unpublish(json_object *req, const char **volume_id, const char **target,
			struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "target_path", NULL };

	if (pj_only_keys(req, NULL, keys, e) < 0 ||
	    pj_string(req, "volume_id", true, volume_id, e) < 0 ||
	    csi_check_volume_id("volume_id", *volume_id, e) < 0 ||
	    pj_string(req, "target_path", true, target, e) < 0 ||
	    csi_check_target("target_path", *target, e) < 0)
		return -EINVAL;
	return 0;
}

/* volume_path is any non-empty string: one that is not a target of the
 * volume is NOT_FOUND (csi_volume_stats), the spec's answer. */
int csi_parse_stats(json_object *req, const char **volume_id, const char **path, struct zcfs_err *e)
{
	static const char *const keys[] = { "volume_id", "volume_path", "staging_target_path", NULL };
	const char *staging;

	if (pj_only_keys(req, NULL, keys, e) < 0 ||
	    pj_string(req, "volume_id", true, volume_id, e) < 0 ||
	    csi_check_volume_id("volume_id", *volume_id, e) < 0 ||
	    pj_string(req, "volume_path", true, path, e) < 0 ||
	    pj_string(req, "staging_target_path", false, &staging, e) < 0)
		return -EINVAL;
	return 0;
}
