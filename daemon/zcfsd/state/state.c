/* STATE_DIR/state.json: every volume, its targets and its server, so a
 * restarted zcfsd can take over. Replaced with write_file_atomic: a
 * crash leaves the old or the new file, never half of one. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include "common/fileio.h"
#include "common/log.h"
#include "common/names.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/broker/broker.h"
#include "state.h"

/* The data path a server reported in its "serving ..." log line: seen
 * by zcfsd as it drained the log (server/srvlog.c), or, for a server
 * re-adopted after a zcfsd restart, searched for in the first 64 KiB of
 * its log files (rotated one first). */
static void effective_path(struct zcfsd *d, const struct zcfsd_volume *v, char *buf, size_t len)
{
	static const char *const suffix[] = { ".1", "" };

	buf[0] = '\0';
	if (v->log.served_transport[0]) {
		snprintf(buf, len, "%s", v->log.served_transport);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
		_cleanup_free_ char *path = NULL, *line = NULL;
		_cleanup_fclose_ FILE *f = NULL;
		size_t cap = 0, seen = 0;
		ssize_t n;

		if (asprintf(&path, "%s/logs/%s.log%s", d->state_dir, v->id, suffix[i]) < 0 ||
		    !(f = fopen(path, "re")))
			continue;
		while (seen < 65536 && (n = getline(&line, &cap, f)) > 0) {
			const char *p = strstr(line, " transport=");
			seen += (size_t)n;
			if (p && strstr(line, "serving "))
				snprintf(buf, len, "%.*s", (int)strcspn(p + 11, " \n"), p + 11);
		}
	}
}

/* Pinned bytes with and without a buffer pool, and what the running
 * server says it locked and with which pool (its serving line). */
static json_object *pinned_layouts_json(struct zcfsd *d, const struct zcfsd_volume *v,
					const struct policy_tenant *t)
{
	json_object *o = json_object_new_object();
	uint64_t stock, pool;

	zcfsd_pinned_layouts(d, v, t, &stock, &pool);
	json_object_object_add(o, "stock", json_object_new_int64((int64_t)stock));
	json_object_object_add(o, "pool_unregistered", json_object_new_int64((int64_t)pool));
	if (v->srv.pid && v->log.served_bufpool[0]) {
		json_object_object_add(o, "server", json_object_new_int64((int64_t)v->log.served_pinned));
		json_object_object_add(o, "server_bufpool", json_object_new_string(v->log.served_bufpool));
	}
	return o;
}

/* The client's notes (model.h): "note", and "target_notes" {target:
 * note} of the targets that have one; absent when none. */
static void notes_json(const struct zcfsd_volume *v, json_object *o)
{
	json_object *tn = NULL;

	if (v->note)
		json_object_object_add(o, "note", json_object_new_string(v->note));
	for (size_t i = 0; i < v->n_targets; i++) {
		if (!v->target_notes || !v->target_notes[i])
			continue;
		if (!tn)
			tn = json_object_new_object();
		json_object_object_add(tn, v->targets[i], json_object_new_string(v->target_notes[i]));
	}
	if (tn)
		json_object_object_add(o, "target_notes", tn);
}

json_object *zcfsd_volume_json(struct zcfsd *d, const struct zcfsd_volume *v, bool for_state)
{
	json_object *o = json_object_new_object(), *t = json_object_new_array(), *s;

	json_object_object_add(o, "id", json_object_new_string(v->id));
	json_object_object_add(o, "tenant", json_object_new_string(v->tenant));
	json_object_object_add(o, "queue_depth", json_object_new_int64(v->queue_depth));
	json_object_object_add(o, "max_write", json_object_new_int64(v->max_write));
	json_object_object_add(o, "transport", json_object_new_string(policy_transport_name(v->transport)));
	json_object_object_add(o, "read_only", json_object_new_boolean(v->read_only));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)v->size));
	json_object_object_add(o, "size_enforcement", json_object_new_string(zcfsd_size_enf_name(v->size_enf)));
	if (v->projid)
		json_object_object_add(o, "project_id", json_object_new_int64(v->projid));
	if (!for_state && v->size_enf == ZCFSD_SIZE_SERVER && v->size_why[0])
		json_object_object_add(o, "size_enforcement_reason", json_object_new_string(v->size_why));
	for (size_t i = 0; i < v->n_targets; i++)
		json_object_array_add(t, json_object_new_string(v->targets[i]));
	json_object_object_add(o, "targets", t);
	notes_json(v, o);
	json_object_object_add(o, "conn", json_object_new_int64(v->n_targets ? v->conn : 0));
	json_object_object_add(o, "pinned", json_object_new_int64((int64_t)(v->n_targets ? v->pinned : 0)));
	s = json_object_new_object();
	json_object_object_add(s, "pid", json_object_new_int64(v->srv.pid));
	json_object_object_add(s, "starttime", json_object_new_int64((int64_t)v->srv.starttime));
	json_object_object_add(s, "started_at", json_object_new_int64(v->srv.started_at));
	json_object_object_add(s, "restarts", json_object_new_int64(v->srv.restarts));
	json_object_object_add(o, "server", s);
	if (v->fallback[0])
		json_object_object_add(o, "fallback", json_object_new_string(v->fallback));
	if (v->ring_holder) {
		json_object *h = json_object_new_object();
		json_object_object_add(o, "ring_holder", json_object_new_boolean(true));
		json_object_object_add(h, "pid", json_object_new_int64(v->holder.pid));
		json_object_object_add(h, "starttime", json_object_new_int64((int64_t)v->holder.starttime));
		json_object_object_add(h, "rings", json_object_new_int64(v->holder.rings));
		json_object_object_add(o, "holder", h);
	}
	if (!for_state) {
		const struct policy_tenant *ten = policy_find_tenant(d->policy, v->tenant);
		_cleanup_free_ char *storage = NULL;
		char eff[32], why[256];
		const char *state = zcfsd_volume_state(v);
		json_object_object_add(o, "state", json_object_new_string(state));
		if (zcfsd_storage_path(d, v, &storage) == 0)
			json_object_object_add(o, "storage", json_object_new_string(storage));
		/* What the server was asked for, and what it reports using. */
		json_object_object_add(o, "data_path", json_object_new_string(
			ten && zcfsd_volume_uses_uring(v, ten) ? policy_transport_name(v->transport) : "devfuse"));
		zcfsd_data_path_reason(v, ten, why, sizeof(why));
		json_object_object_add(o, "data_path_reason", json_object_new_string(why));
		effective_path(d, v, eff, sizeof(eff));
		/* File data bypasses the server: that is the path the data takes. */
		if (eff[0] && v->broker && v->broker->state == ZCFSD_PT_ON)
			strncat(eff, "+passthrough", sizeof(eff) - strlen(eff) - 1);
		if (v->srv.pid && eff[0])
			json_object_object_add(o, "data_path_effective", json_object_new_string(eff));
		json_object_object_add(o, "pinned_layouts", pinned_layouts_json(d, v, ten));
		json_object_object_add(o, "passthrough", zcfsd_broker_json(v->broker, ten && ten->passthrough));
		json_object_object_add(o, "uptime_s", json_object_new_int64(
			v->srv.pid ? zcfsd_wall() - v->srv.started_at : 0));
		json_object_object_add(o, "pid", json_object_new_int64(v->srv.pid));
		json_object_object_add(o, "restarts", json_object_new_int64(v->srv.restarts));
		json_object_object_add(o, "stalls", json_object_new_int64(v->stalls));
		if (v->ring_holder)
			json_object_object_add(o, "holder_pid", json_object_new_int64(v->holder.pid));
		if (v->detached_reason)
			json_object_object_add(o, "last_error", json_object_new_string(v->detached_reason));
	}
	return o;
}

int zcfsd_state_save(struct zcfsd *d)
{
	_cleanup_close_ int dfd = -1;
	json_object *root = json_object_new_object(), *vols = json_object_new_array();
	const char *text;
	int r;

	json_object_object_add(root, "version", json_object_new_int(1));
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		json_object_array_add(vols, zcfsd_volume_json(d, v, true));
	json_object_object_add(root, "volumes", vols);
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY);
	dfd = open(d->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = dfd < 0 ? -errno : write_file_atomic(dfd, "state.json", text, strlen(text), true, 0600);
	json_object_put(root);
	return r;
}

/* The loader refuses what zcfsd would not have written instead of
 * guessing: a volume read with a made-up queue depth, transport or target
 * list would be re-adopted, restarted or torn down on wrong facts, and a
 * record silently skipped would vanish from the next save while its mount
 * and server live on. zcfsd then exits before touching any mount or
 * server; the message names the file, the volume and the field. */
struct state_ctx {
	const char *path;
	size_t idx;
};

static int state_bad(const struct state_ctx *c, const char *field, const char *problem)
{
	char where[48] = "";

	if (c->idx != SIZE_MAX)
		snprintf(where, sizeof(where), "volumes[%zu].", c->idx);
	log_err("event=state-invalid path=%s field=%s%s problem=\"%s\" "
		"action=\"not starting; zcfsd will not guess: restore or fix the file, or move it aside "
		"(the volumes it lists are then not re-adopted; their mounts and servers are left alone)\"",
		c->path, where, field, problem);
	return -EBADMSG;
}

/* An integer field in MIN..MAX; no strings, doubles or booleans. */
static int get_int(const struct state_ctx *c, json_object *o, const char *key, int64_t min,
		   int64_t max, int64_t *ret)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return state_bad(c, key, "missing or not an integer");
	*ret = json_object_get_int64(v);
	if (*ret < min || *ret > max)
		return state_bad(c, key, "out of range");
	return 0;
}

static const char *get_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A ring holder volume's "ring_holder" and "holder" (absent: none). */
static int load_holder(const struct state_ctx *c, json_object *o, struct zcfsd_volume *v)
{
	json_object *rh, *h;
	int64_t pid, st, rings;
	int r;

	if (!json_object_object_get_ex(o, "ring_holder", &rh))
		return 0;
	if (!json_object_is_type(rh, json_type_boolean))
		return state_bad(c, "ring_holder", "not a boolean");
	v->ring_holder = json_object_get_boolean(rh);
	if (!v->ring_holder)
		return 0;
	if (!json_object_object_get_ex(o, "holder", &h) || !json_object_is_type(h, json_type_object))
		return state_bad(c, "holder", "missing or not an object");
	if ((r = get_int(c, h, "pid", 0, INT32_MAX, &pid)) < 0 ||
	    (r = get_int(c, h, "starttime", 0, INT64_MAX, &st)) < 0 ||
	    (r = get_int(c, h, "rings", 0, 1024, &rings)) < 0)
		return r;
	v->holder.pid = (pid_t)pid;
	v->holder.starttime = (unsigned long long)st;
	v->holder.rings = (unsigned)rings;
	return 0;
}

/* "size_enforcement" and "project_id" (absent in state written before
 * project quotas: counted by the server, no project). */
static int load_size(const struct state_ctx *c, json_object *o, struct zcfsd_volume *v)
{
	const char *enf = get_string(o, "size_enforcement");
	int64_t id = 0;
	int r;

	if (json_object_object_get_ex(o, "project_id", NULL) &&
	    (r = get_int(c, o, "project_id", 1, UINT32_MAX, &id)) < 0)
		return r;
	v->projid = (uint32_t)id;
	v->size_enf = v->size ? ZCFSD_SIZE_SERVER : ZCFSD_SIZE_NONE;
	if (!enf)
		return json_object_object_get_ex(o, "size_enforcement", NULL) ?
		       state_bad(c, "size_enforcement", "not a string") : 0;
	if (!strcmp(enf, zcfsd_size_enf_name(ZCFSD_SIZE_PROJECT)) && v->size && v->projid)
		v->size_enf = ZCFSD_SIZE_PROJECT;
	else if (strcmp(enf, zcfsd_size_enf_name(v->size_enf)))
		return state_bad(c, "size_enforcement", "not what its size and project_id allow");
	return 0;
}

/* Absent in state written before zcfsd kept notes: none. */
static int load_notes(const struct state_ctx *c, json_object *o, struct zcfsd_volume *v)
{
	json_object *n, *tn;

	if (json_object_object_get_ex(o, "note", &n)) {
		if (zcfsd_note_check(n) < 0)
			return state_bad(c, "note", "not a string of at most 4096 bytes without a NUL");
		if (!(v->note = strdup(json_object_get_string(n))))
			return -ENOMEM;
	}
	if (!json_object_object_get_ex(o, "target_notes", &tn))
		return 0;
	if (!json_object_is_type(tn, json_type_object))
		return state_bad(c, "target_notes", "not an object");
	json_object_object_foreach(tn, target, note) {
		size_t i;
		for (i = 0; i < v->n_targets && strcmp(v->targets[i], target); i++)
			;
		if (i == v->n_targets || zcfsd_note_check(note) < 0)
			return state_bad(c, "target_notes", "a key not a target, or a value not a note");
		if (zcfsd_volume_set_target_note(v, i, json_object_get_string(note)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int load_holder_size(const struct state_ctx *c, json_object *o, struct zcfsd_volume *v)
{
	int r = load_holder(c, o, v);

	if (r >= 0)
		r = load_notes(c, o, v);
	return r < 0 ? r : load_size(c, o, v);
}

/* The checked array T of target paths, none with a note yet. */
static int load_targets(json_object *t, struct zcfsd_volume *v)
{
	size_t n = json_object_array_length(t);

	v->targets = calloc(n ? n : 1, sizeof(char *));
	v->target_notes = calloc(n ? n : 1, sizeof(char *));
	if (!v->targets || !v->target_notes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v->targets[i] = strdup(json_object_get_string(json_object_array_get_idx(t, i)));
		if (!v->targets[i])
			return -ENOMEM;
		v->n_targets++;
	}
	return 0;
}

static int load_volume(struct zcfsd *d, const struct state_ctx *c, json_object *o)
{
	struct zcfsd_volume *v;
	json_object *t, *s, *ro;
	const char *id, *tenant, *tr;
	int64_t qd, mw, conn, pinned, pid, st, sa, rs, size = 0;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return state_bad(c, "(volume)", "not an object");
	id = get_string(o, "id"), tenant = get_string(o, "tenant"), tr = get_string(o, "transport");
	if (!id || !name_is_valid_id(id))
		return state_bad(c, "id", "missing or not a valid volume id");
	if (zcfsd_volume_find(d, id))
		return state_bad(c, "id", "the same id twice");
	if (!tenant || !name_is_valid_id(tenant))
		return state_bad(c, "tenant", "missing or not a valid tenant name");
	if (!tr || (strcmp(tr, "auto") && strcmp(tr, "devfuse") && strcmp(tr, "uring")))
		return state_bad(c, "transport", "not auto, devfuse or uring");
	if (!json_object_object_get_ex(o, "read_only", &ro) || !json_object_is_type(ro, json_type_boolean))
		return state_bad(c, "read_only", "missing or not a boolean");
	if (!json_object_object_get_ex(o, "targets", &t) || !json_object_is_type(t, json_type_array))
		return state_bad(c, "targets", "missing or not an array");
	if (!json_object_object_get_ex(o, "server", &s) || !json_object_is_type(s, json_type_object))
		return state_bad(c, "server", "missing or not an object");
	if ((r = get_int(c, o, "queue_depth", 1, 1024, &qd)) < 0 ||
	    (r = get_int(c, o, "max_write", 4096, 16 << 20, &mw)) < 0 ||
	    (r = get_int(c, o, "conn", 0, UINT32_MAX, &conn)) < 0 ||
	    (r = get_int(c, o, "pinned", 0, INT64_MAX, &pinned)) < 0 ||
	    (r = get_int(c, s, "pid", 0, INT32_MAX, &pid)) < 0 ||
	    (r = get_int(c, s, "starttime", 0, INT64_MAX, &st)) < 0 ||
	    (r = get_int(c, s, "started_at", INT64_MIN, INT64_MAX, &sa)) < 0 ||
	    (r = get_int(c, s, "restarts", 0, UINT32_MAX, &rs)) < 0)
		return r;
	if (mw % 4096)
		return state_bad(c, "max_write", "not a multiple of 4096");
	/* Absent in state written before volumes had a size. */
	if (json_object_object_get_ex(o, "size", NULL) && (r = get_int(c, o, "size", 0, INT64_MAX, &size)) < 0)
		return r;
	for (size_t i = 0; i < json_object_array_length(t); i++) {
		json_object *p = json_object_array_get_idx(t, i);
		if (!json_object_is_type(p, json_type_string) ||
		    !path_is_normalized_absolute(json_object_get_string(p)))
			return state_bad(c, "targets", "an entry is not a normalized absolute path");
	}
	v = zcfsd_volume_alloc();
	if (!v)
		return -ENOMEM;
	v->id = strdup(id);
	v->tenant = strdup(tenant);
	v->queue_depth = (uint32_t)qd;
	v->max_write = (uint32_t)mw;
	v->transport = !strcmp(tr, "auto") ? POLICY_TRANSPORT_AUTO :
		       !strcmp(tr, "uring") ? POLICY_TRANSPORT_URING : POLICY_TRANSPORT_DEVFUSE;
	v->read_only = json_object_get_boolean(ro);
	v->size = (uint64_t)size;
	snprintf(v->fallback, sizeof(v->fallback), "%s", get_string(o, "fallback") ?: "");
	v->conn = (unsigned)conn;
	v->pinned = (uint64_t)pinned;
	v->srv.pid = (pid_t)pid;
	v->srv.starttime = (unsigned long long)st;
	v->srv.started_at = sa;
	v->srv.restarts = (unsigned)rs;
	r = v->id && v->tenant && load_targets(t, v) == 0 ? load_holder_size(c, o, v) : -ENOMEM;
	if (r < 0) {
		zcfsd_volume_free(v);
		return r;
	}
	v->next = d->volumes;
	d->volumes = v;
	return 0;
}

int zcfsd_state_load(struct zcfsd *d)
{
	_cleanup_free_ char *path = NULL;
	struct state_ctx c = { 0 };
	json_object *root, *vols, *ver;
	int r = 0;

	if (asprintf(&path, "%s/state.json", d->state_dir) < 0)
		return -ENOMEM;
	if (access(path, F_OK) < 0)
		return errno == ENOENT ? 0 : -errno;
	c.path = path;
	root = json_object_from_file(path);
	if (!root) {
		log_err("event=state-unreadable path=%s error=\"%s\" action=\"not starting; zcfsd will "
			"not guess: restore or fix the file, or move it aside (the volumes it lists are "
			"then not re-adopted; their mounts and servers are left alone)\"",
			path, json_util_get_last_err());
		return -EBADMSG;
	}
	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "version", &ver) || !json_object_is_type(ver, json_type_int) ||
	    json_object_get_int64(ver) != 1 ||
	    !json_object_object_get_ex(root, "volumes", &vols) || !json_object_is_type(vols, json_type_array)) {
		c.idx = SIZE_MAX;
		r = state_bad(&c, "(document)", "not {\"version\": 1, \"volumes\": [...]}");
	} else {
		/* Loaded in reverse so the list keeps the file's order. */
		for (size_t i = json_object_array_length(vols); r == 0 && i-- > 0;) {
			c.idx = i;
			r = load_volume(d, &c, json_object_array_get_idx(vols, i));
		}
	}
	json_object_put(root);
	if (r < 0) {
		/* All or nothing: a half-loaded list would be saved back. */
		while (d->volumes) {
			struct zcfsd_volume *v = d->volumes;
			d->volumes = v->next;
			zcfsd_volume_free(v);
		}
	}
	return r;
}
