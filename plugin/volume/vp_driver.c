/* The VolumeDriver endpoints on top of zcfsd. A volume is created in
 * zcfsd on Create, published at MOUNT_ROOT/TENANT/NAME while any caller ID
 * holds a Mount, unpublished when the last ID unmounts, and deleted (with
 * its storage) on Remove. IDs are a set: Docker sends one random ID per
 * container mount, Podman one constant ID and counts mounts itself, so a
 * repeated Mount of one ID is idempotent. zcfsd decides whether the tenant
 * may have the volume and whether the mountpoint is allowed. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "plugin/common/plugin_json.h"
#include "common/log.h"
#include "common/names.h"
#include "common/parse.h"
#include "common/walk_nofuse.h"
#include "plugin/common/statefile.h"
#include "vp.h"
#include "plugin/common/zclient.h"

struct req {
	const char *name;
	const char *id;
	json_object *opts;
};

static bool has_key(const char *const *keys, const char *key)
{
	for (; *keys; keys++)
		if (!strcmp(*keys, key))
			return true;
	return false;
}

/* Parses the fields of KEYS out of the body; others are ignored, as
 * Docker's own plugin helpers do (Docker adds fields, e.g. Labels). The
 * fields zcfs reads are checked strictly; Name must be a valid id. */
static int parse_req(json_object *o, const char *const *keys, bool need_name, struct req *q,
		     struct zcfs_err *e)
{
	memset(q, 0, sizeof(*q));
	if ((has_key(keys, "Name") && pj_string(o, "Name", need_name, &q->name, e) < 0) ||
	    (has_key(keys, "ID") && pj_string(o, "ID", false, &q->id, e) < 0) ||
	    (has_key(keys, "Opts") && pj_string_map(o, "Opts", &q->opts, e) < 0))
		return -EINVAL;
	if (q->name && !name_is_valid_id(q->name))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "volume name '%.140s' must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}", q->name);
	if (q->id && strlen(q->id) > VP_ID_MAX)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "ID longer than %d bytes", VP_ID_MAX);
	return 0;
}

static int check_opts(json_object *opts, struct zcfs_err *e)
{
	uint64_t sz;

	if (!opts)
		return 0;
	json_object_object_foreach(opts, k, val) {
		const char *s = json_object_get_string(val);
		if (!strcmp(k, "tenant")) {
			if (!name_is_valid_id(s))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "tenant '%.140s' is not a valid tenant name", s);
		} else if (!strcmp(k, "transport")) {
			if (strcmp(s, "auto") && strcmp(s, "devfuse") && strcmp(s, "uring"))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "transport must be auto, devfuse or uring");
		} else if (!strcmp(k, "size")) {
			if (parse_size(s, 1, UINT64_MAX, &sz) < 0)
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "size '%.64s' must be a byte count, optionally with K, M or G", s);
		} else if (!strcmp(k, "uid") || !strcmp(k, "gid")) {
			/* the volume root's owner, as in CSI's volume_context */
			if (parse_u64(s, 0, UINT32_MAX - 1, &sz) < 0)
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "%s '%.32s' must be a number from 0 to 4294967294", k, s);
		} else if (!strcmp(k, "mode")) {
			if (!*s || strlen(s) > 5 || strspn(s, "01234567") != strlen(s))
				return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
						 "mode '%.16s' must be octal permission bits such as 0770", s);
		} else {
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "unknown option '%.64s' (zcfs knows tenant, size, transport, uid, gid, mode)", k);
		}
	}
	return 0;
}

static const char *opt(json_object *opts, const char *key)
{
	json_object *s;

	return opts && json_object_object_get_ex(opts, key, &s) ? json_object_get_string(s) : NULL;
}

static json_object *ok_empty(void)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "Err", json_object_new_string(""));
	return o;
}

static int do_create(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	_cleanup_json_ json_object *vol = NULL, *res = NULL, *opts = NULL;
	_cleanup_free_ char *mp = NULL;
	struct zcfs_err ign = { 0 };
	_cleanup_json_ json_object *params = NULL;
	json_object *ent, *x;
	const char *tenant;
	int r;

	if (check_opts(q->opts, e) < 0)
		return -EINVAL;
	if (q->opts ? json_object_deep_copy(q->opts, &opts, NULL) < 0 : !(opts = json_object_new_object()))
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	ent = vp_registry_get(v, q->name);
	if (ent) {
		json_object *old = NULL;
		json_object_object_get_ex(ent, "opts", &old);
		if (!json_object_equal(old, opts))
			return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST, "volume '%s' exists with other options",
					 q->name);
		*resp = ok_empty();
		return 0;
	}
	r = zclient_volume_get(v->socket, q->name, &vol, e);
	if (r == 0)
		return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
				 "zcfsd already has a volume '%s' that this plugin did not create", q->name);
	if (r != -ENOENT)
		return r;
	params = json_object_new_object();
	json_object_object_add(params, "id", json_object_new_string(q->name));
	if (opt(opts, "tenant"))
		json_object_object_add(params, "tenant", json_object_new_string(opt(opts, "tenant")));
	if (opt(opts, "transport"))
		json_object_object_add(params, "transport", json_object_new_string(opt(opts, "transport")));
	if (opt(opts, "size"))	/* validated by parse_opts */
		json_object_object_add(params, "size", json_object_new_string(opt(opts, "size")));
	for (const char *const *k = (const char *const[]){ "uid", "gid", NULL }; *k; k++) {
		uint64_t id;
		if (opt(opts, *k) && parse_u64(opt(opts, *k), 0, UINT32_MAX - 1, &id) == 0)
			json_object_object_add(params, *k, json_object_new_int64((int64_t)id));
	}
	if (opt(opts, "mode"))	/* octal; zcfsd checks the range */
		json_object_object_add(params, "mode", json_object_new_string(opt(opts, "mode")));
	r = zcfs_call(v->socket, "volume.create", params, &res, e);
	if (r < 0)
		return r;
	tenant = json_object_object_get_ex(res, "volume", &x) ? zclient_volume_str(x, "tenant") : "";
	if (!name_is_valid_id(tenant) || asprintf(&mp, "%s/%s/%s", v->mount_root, tenant, q->name) < 0) {
		r = zcfs_fail(e, ZCFS_INTERNAL, -EPROTO, "zcfsd sent no usable tenant for '%s'", q->name);
		goto undo;
	}
	ent = json_object_new_object();
	json_object_object_add(ent, "tenant", json_object_new_string(tenant));
	json_object_object_add(ent, "mountpoint", json_object_new_string(mp));
	json_object_object_add(ent, "opts", json_object_get(opts));
	json_object_object_add(ent, "ids", json_object_new_array());
	json_object_object_add(ent, "created_at", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(vp_registry_volumes(v), q->name, ent);
	r = vp_registry_save(v, e);
	if (r < 0) {
		json_object_object_del(vp_registry_volumes(v), q->name);
		goto undo;
	}
	*resp = ok_empty();
	return 0;
undo:
	(void)zclient_call_id(v->socket, "volume.delete", q->name, NULL, &ign);
	return r;
}

static int do_remove(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *ent = vp_registry_get(v, q->name), *ids;
	_cleanup_free_ char *mp = NULL;
	int r;

	if (!ent) {
		*resp = ok_empty();	/* already gone */
		return 0;
	}
	ids = vp_entry_ids(ent);
	if (json_object_array_length(ids) > 0)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
				 "volume '%s' is mounted (%zu caller IDs); unmount it first", q->name,
				 json_object_array_length(ids));
	r = zclient_call_id(v->socket, "volume.delete", q->name, NULL, e);
	if (r < 0)
		return r;
	mp = strdup(vp_entry_str(ent, "mountpoint"));
	json_object_object_del(vp_registry_volumes(v), q->name);
	r = vp_registry_save(v, e);
	if (r < 0)
		return r;
	/* The directory zcfsd created to mount on; its parents walked
	 * without symlinks or FUSE directories, like zcfs-csi's targets. */
	r = mp ? rmdir_nofollow(mp) : 0;
	if (r < 0)
		log_debug("event=mountpoint-left mountpoint=%s error=\"%s\"", mp, strerror(-r));
	*resp = ok_empty();
	return 0;
}

static json_object *with_mountpoint(const char *mp)
{
	json_object *o = ok_empty();

	json_object_object_add(o, "Mountpoint", json_object_new_string(mp));
	return o;
}

/* The target zcfsd mounts on for the registry's mountpoint MP (a path
 * under mount_root as this plugin sees it): the same path, or in a
 * managed plugin the same place under the host's path of mount_root. */
static int target_of(struct vp *v, const char *mp, char **ret, struct zcfs_err *e)
{
	size_t n = strlen(v->mount_root);

	if (!v->host_mount_root)
		*ret = strdup(mp);
	else if (strncmp(mp, v->mount_root, n) || mp[n] != '/')
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EXDEV,
				 "mountpoint %s is not under the mount root %s", mp, v->mount_root);
	else if (asprintf(ret, "%s%s", v->host_mount_root, mp + n) < 0)
		*ret = NULL;
	return *ret ? 0 : zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
}

/* volume.publish at the mountpoint. Its parent MOUNT_ROOT/TENANT is made
 * here (zcfsd creates only the last component) and removed again when
 * zcfsd refuses: a failed Mount changes nothing. */
static int publish(struct vp *v, const char *name, json_object *ent, struct zcfs_err *e)
{
	_cleanup_free_ char *dir = NULL, *made = NULL, *target = NULL;
	_cleanup_json_ json_object *params = NULL;
	int r;

	r = target_of(v, vp_entry_str(ent, "mountpoint"), &target, e);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", v->mount_root, vp_entry_str(ent, "tenant")) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	r = mkdir_p_undoable(dir, 0755, &made);
	if (r < 0) {
		rmdir_created(dir, made);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "mkdir %s: %s", dir, strerror(-r));
	}
	params = json_object_new_object();
	if (!params) {
		rmdir_created(dir, made);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	json_object_object_add(params, "id", json_object_new_string(name));
	json_object_object_add(params, "target", json_object_new_string(target));
	r = zcfs_call(v->socket, "volume.publish", params, NULL, e);
	if (r < 0)
		rmdir_created(dir, made);
	return r;
}

static int unpublish(struct vp *v, const char *name, json_object *ent, struct zcfs_err *e)
{
	_cleanup_json_ json_object *params = NULL;
	_cleanup_free_ char *target = NULL;
	int r;

	r = target_of(v, vp_entry_str(ent, "mountpoint"), &target, e);
	if (r < 0)
		return r;
	params = json_object_new_object();
	json_object_object_add(params, "id", json_object_new_string(name));
	json_object_object_add(params, "target", json_object_new_string(target));
	return zcfs_call(v->socket, "volume.unpublish", params, NULL, e);
}

static int do_mount(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *ent = vp_registry_get(v, q->name);
	bool first, added;
	int r;

	if (!ent)
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no such volume '%s'", q->name);
	if (!q->id)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "ID is required");
	first = json_object_array_length(vp_entry_ids(ent)) == 0;
	/* Always ask zcfsd: publishing the same target again is a no-op for
	 * it, and it re-mounts what a restart without re-adoption lost. */
	r = publish(v, q->name, ent, e);
	if (r < 0)
		return r;
	added = vp_entry_add_id(ent, q->id);
	if (added && (r = vp_registry_save(v, e)) < 0) {
		vp_entry_del_id(ent, q->id);
		if (first) {
			struct zcfs_err ign = { 0 };
			(void)unpublish(v, q->name, ent, &ign);
		}
		return r;
	}
	*resp = with_mountpoint(vp_entry_str(ent, "mountpoint"));
	return 0;
}

static int do_unmount(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *ent = vp_registry_get(v, q->name);
	int r;

	if (!ent || !q->id || !vp_entry_has_id(ent, q->id)) {
		*resp = ok_empty();	/* nothing held by this caller */
		return 0;
	}
	if (json_object_array_length(vp_entry_ids(ent)) == 1) {
		r = unpublish(v, q->name, ent, e);
		if (r < 0)
			return r;
	}
	vp_entry_del_id(ent, q->id);
	r = vp_registry_save(v, e);
	if (r < 0)
		return r;
	*resp = ok_empty();
	return 0;
}

static const char *mounted_at(json_object *ent)
{
	return json_object_array_length(vp_entry_ids(ent)) ? vp_entry_str(ent, "mountpoint") : "";
}

static int do_path(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *ent = vp_registry_get(v, q->name);

	if (!ent)
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no such volume '%s'", q->name);
	*resp = with_mountpoint(mounted_at(ent));
	return 0;
}

/* Status: the registry's view plus what zcfsd reports (the volume's
 * state, its server and data path) — or why zcfsd could not be asked. */
static json_object *status_of(struct vp *v, const char *name, json_object *ent)
{
	static const char *const fields[] = { "state", "data_path", "data_path_effective", "data_path_reason", "storage",
					      "transport", NULL };
	_cleanup_json_ json_object *vol = NULL;
	json_object *st = json_object_new_object(), *x, *opts;
	struct zcfs_err e = { 0 };
	int r;

	json_object_object_add(st, "tenant", json_object_new_string(vp_entry_str(ent, "tenant")));
	if (json_object_object_get_ex(ent, "opts", &opts) && opt(opts, "size"))
		json_object_object_add(st, "size", json_object_new_string(opt(opts, "size")));
	json_object_object_add(st, "mounts", json_object_new_int64(
		(int64_t)json_object_array_length(vp_entry_ids(ent))));
	r = zclient_volume_get(v->socket, name, &vol, &e);
	if (r == -ENOENT) {
		json_object_object_add(st, "state", json_object_new_string("missing in zcfsd"));
		return st;
	}
	if (r < 0) {
		json_object_object_add(st, "zcfsd", json_object_new_string(e.msg));
		return st;
	}
	for (const char *const *f = fields; *f; f++)
		if (*zclient_volume_str(vol, *f))
			json_object_object_add(st, *f, json_object_new_string(zclient_volume_str(vol, *f)));
	if (json_object_object_get_ex(vol, "pid", &x))
		json_object_object_add(st, "server_pid", json_object_get(x));
	if (json_object_object_get_ex(vol, "restarts", &x))
		json_object_object_add(st, "restarts", json_object_get(x));
	return st;
}

/* The volume object of Get and List: Name, Mountpoint and, when the
 * registry has it, CreatedAt as RFC 3339 UTC (Docker parses it with
 * time.RFC3339 and shows 0001-01-01T00:00:00Z without it). */
static json_object *volume_object(const char *name, json_object *ent)
{
	json_object *vo = json_object_new_object(), *c;
	char when[sizeof("9999-12-31T23:59:59Z") + 8];
	struct tm tm;
	time_t t;

	json_object_object_add(vo, "Name", json_object_new_string(name));
	json_object_object_add(vo, "Mountpoint", json_object_new_string(mounted_at(ent)));
	if (json_object_object_get_ex(ent, "created_at", &c) && json_object_is_type(c, json_type_int) &&
	    (t = (time_t)json_object_get_int64(c)) > 0 && gmtime_r(&t, &tm) &&
	    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) > 0)
		json_object_object_add(vo, "CreatedAt", json_object_new_string(when));
	return vo;
}

static int do_get(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *ent = vp_registry_get(v, q->name), *vo;

	if (!ent)
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no such volume '%s'", q->name);
	vo = volume_object(q->name, ent);
	json_object_object_add(vo, "Status", status_of(v, q->name, ent));
	*resp = ok_empty();
	json_object_object_add(*resp, "Volume", vo);
	return 0;
}

static int do_list(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *a = json_object_new_array();

	(void)q;
	(void)e;
	json_object_object_foreach(vp_registry_volumes(v), name, ent)
		json_object_array_add(a, volume_object(name, ent));
	*resp = ok_empty();
	json_object_object_add(*resp, "Volumes", a);
	return 0;
}

static int do_activate(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *a = json_object_new_array();

	(void)v;
	(void)q;
	(void)e;
	json_object_array_add(a, json_object_new_string("VolumeDriver"));
	*resp = json_object_new_object();
	json_object_object_add(*resp, "Implements", a);
	return 0;
}

static int do_capabilities(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e)
{
	json_object *c = json_object_new_object();

	(void)v;
	(void)q;
	(void)e;
	json_object_object_add(c, "Scope", json_object_new_string("local"));
	*resp = json_object_new_object();
	json_object_object_add(*resp, "Capabilities", c);
	return 0;
}

static const char *const k_none[] = { NULL };
static const char *const k_name[] = { "Name", NULL };
static const char *const k_create[] = { "Name", "Opts", NULL };
static const char *const k_mount[] = { "Name", "ID", NULL };

static const struct {
	const char *path;
	const char *const *keys;
	bool need_name;
	int (*fn)(struct vp *v, struct req *q, json_object **resp, struct zcfs_err *e);
} endpoints[] = {
	{ "/Plugin.Activate", k_none, false, do_activate },
	{ "/VolumeDriver.Create", k_create, true, do_create },
	{ "/VolumeDriver.Remove", k_name, true, do_remove },
	{ "/VolumeDriver.Mount", k_mount, true, do_mount },
	{ "/VolumeDriver.Unmount", k_mount, true, do_unmount },
	{ "/VolumeDriver.Path", k_name, true, do_path },
	{ "/VolumeDriver.Get", k_name, true, do_get },
	{ "/VolumeDriver.List", k_none, false, do_list },
	{ "/VolumeDriver.Capabilities", k_none, false, do_capabilities },
};

const char *vp_endpoint_path(size_t i)
{
	return i < ARRAY_SIZE(endpoints) ? endpoints[i].path : NULL;
}

int vp_handle_code(struct vp *v, const char *endpoint, const char *body, size_t len, json_object **resp,
		   enum zcfs_code *code)
{
	_cleanup_json_ json_object *o = NULL;
	struct zcfs_err e = { 0 };
	struct req q = { 0 };
	size_t i;
	int r = -EINVAL;

	*resp = NULL;
	for (i = 0; i < ARRAY_SIZE(endpoints); i++)
		if (!strcmp(endpoints[i].path, endpoint))
			break;
	if (i == ARRAY_SIZE(endpoints))
		zcfs_fail(&e, ZCFS_UNIMPLEMENTED, -ENOSYS, "unknown endpoint '%.64s'", endpoint);
	else if (len > VP_BODY_MAX)
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EFBIG, "request body larger than %d bytes", VP_BODY_MAX);
	else if (pj_parse_object(body, len, true, &o, &e) == 0 &&
		 parse_req(o, endpoints[i].keys, endpoints[i].need_name, &q, &e) == 0) {
		zcfs_call_set_budget_ms(v->zcfsd_budget_ms ? v->zcfsd_budget_ms : VP_ZCFSD_BUDGET_MS);
		pthread_mutex_lock(&v->lock);
		r = endpoints[i].fn(v, &q, resp, &e);
		pthread_mutex_unlock(&v->lock);
		zcfs_call_set_budget_ms(0);
	}
	*code = r == 0 ? ZCFS_OK : e.code ? e.code : ZCFS_INTERNAL;
	if (r == 0)
		return 200;
	if (*resp)
		json_object_put(*resp);
	*resp = json_object_new_object();
	{
		char msg[600];
		snprintf(msg, sizeof(msg), "%s: %s", zcfs_code_name(e.code ? e.code : ZCFS_INTERNAL), e.msg);
		json_object_object_add(*resp, "Err", json_object_new_string(msg));
	}
	return 500;
}

int vp_handle(struct vp *v, const char *endpoint, const char *body, size_t len, json_object **resp)
{
	enum zcfs_code code;

	return vp_handle_code(v, endpoint, body, len, resp, &code);
}

int vp_init(struct vp *v, const char *socket, const char *state_dir, const char *mount_root,
	    struct zcfs_err *e)
{
	memset(v, 0, sizeof(*v));
	v->socket = socket;
	v->state_dir = state_dir;
	v->mount_root = mount_root;
	pthread_mutex_init(&v->lock, NULL);
	if (!path_is_normalized_absolute(mount_root) || !strcmp(mount_root, "/"))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "mount root '%s' must be a normalized absolute path", mount_root);
	return vp_registry_load(v, e);
}

void vp_done(struct vp *v)
{
	if (v->reg)
		json_object_put(v->reg);
	v->reg = NULL;
	free(v->host_mount_root);
	v->host_mount_root = NULL;
	pthread_mutex_destroy(&v->lock);
}
