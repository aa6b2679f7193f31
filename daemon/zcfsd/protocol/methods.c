/* The control methods: argument checks and JSON results around the
 * volume mechanics in lifecycle/ and mounts/. */
#include <string.h>
#include <unistd.h>
#include "common/log.h"
#include "common/names.h"
#include "common/parse.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/mounts/rootown.h"
#include "daemon/zcfsd/state/state.h"
#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "protocol.h"

bool zcfsd_peer_manages(const struct zcfsd_peer *p, const struct policy_tenant *t)
{
	if (p->uid == 0)
		return true;
	for (size_t i = 0; i < t->n_admin_uids; i++)
		if (t->admin_uids[i] == p->uid)
			return true;
	for (size_t i = 0; i < t->n_admin_gids; i++) {
		if (t->admin_gids[i] == p->gid)
			return true;
		for (size_t j = 0; j < p->n_groups; j++)
			if (t->admin_gids[i] == p->groups[j])
				return true;
	}
	return false;
}

/* A volume's tenant as the peer may see it: one it manages (a volume of a
 * tenant no longer in the policy: root only). */
bool zcfsd_peer_manages_volume(struct zcfsd *d, const struct zcfsd_peer *p, const struct zcfsd_volume *v)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);

	return p->uid == 0 || (t && zcfsd_peer_manages(p, t));
}

static int denied(struct zcfs_err *e, const struct zcfsd_peer *p, const char *tenant)
{
	return zcfs_fail(e, ZCFS_PERMISSION_DENIED, -EPERM,
			 "uid %u may not manage tenant '%s' (not in its admin_uids/admin_gids)",
			 (unsigned)p->uid, tenant);
}

/* The volume named by params.id; codes for a bad or unknown id, or a
 * volume of a tenant the peer does not manage. */
static struct zcfsd_volume *volume_param(struct zcfsd *d, const struct zcfsd_peer *p,
					 json_object *params, struct zcfs_err *e)
{
	const char *id = zcfsd_param_string(params, "id");
	struct zcfsd_volume *v;

	if (!id || !name_is_valid_id(id)) {
		zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			  "params.id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
		return NULL;
	}
	v = zcfsd_volume_find(d, id);
	if (!v) {
		zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no volume '%s'", id);
	} else if (!zcfsd_peer_manages_volume(d, p, v)) {
		denied(e, p, v->tenant);
		v = NULL;
	}
	return v;
}

/* volume_param for the methods that change what is mounted: not while
 * an unpublish or a publish's wait for its server (lifecycle/unpublish.c,
 * lifecycle/publish_wait.c) of the volume is under way. */
static struct zcfsd_volume *idle_volume_param(struct zcfsd *d, const struct zcfsd_peer *p,
					      json_object *params, struct zcfs_err *e)
{
	struct zcfsd_volume *v = volume_param(d, p, params, e);

	return v && (zcfsd_unpublishing(v, e) || zcfsd_publishing(v, e) || zcfsd_deleting(v, e)) ?
		NULL : v;
}

static json_object *wrap_volume(struct zcfsd *d, struct zcfsd_volume *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "volume", zcfsd_volume_json(d, v, false));
	return o;
}

static json_object *m_create(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	struct zcfsd_volume_spec spec;
	struct zcfsd_volume *v;

	if (zcfsd_volume_spec_parse(d, params, &spec, e) < 0)
		return NULL;
	if (!zcfsd_peer_manages(p, spec.tenant)) {
		denied(e, p, spec.tenant->name);
		return NULL;
	}
	if (zcfsd_volume_create(d, &spec, &v, e) < 0)
		return NULL;
	return wrap_volume(d, v);
}

/* The answer of a publish or unpublish that went on in the event loop,
 * sent to the client that asked when the operation is over. */
static uint64_t defer_answer(const void *peer, const char *method)
{
	return zcfsd_control_defer(peer, method);
}

static void volume_answer(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token,
			  const struct zcfs_err *e)
{
	zcfsd_control_complete(d, token, e->code == ZCFS_OK ? wrap_volume(d, v) : NULL, e);
}

static json_object *m_publish(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	const struct zcfsd_answer a = { defer_answer, p, volume_answer };
	static const char *const keys[] = { "id", "target", "read_only", "mount_group", "note", NULL };
	struct zcfsd_volume *v;
	json_object *ro = NULL;
	const char *note;
	int64_t group;
	int r;

	if (zcfsd_only_params(params, keys, e) < 0 || !(v = idle_volume_param(d, p, params, e)) ||
	    zcfsd_mount_group_param(params, &group, e) < 0 || zcfsd_note_param(params, &note, e) < 0)
		return NULL;
	if (json_object_object_get_ex(params, "read_only", &ro) && !json_object_is_type(ro, json_type_boolean)) {
		zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.read_only must be a boolean");
		return NULL;
	}
	r = zcfsd_volume_publish(d, v, zcfsd_param_string(params, "target"),
				 ro && json_object_get_boolean(ro), group, note, &a, e);
	if (r != 0)	/* failed, or answered once the server serves */
		return NULL;
	return wrap_volume(d, v);
}

static json_object *m_unpublish(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { "id", "target", NULL };
	const struct zcfsd_answer a = { defer_answer, p, volume_answer };
	struct zcfsd_volume *v;
	int r;

	if (zcfsd_only_params(params, keys, e) < 0 || !(v = idle_volume_param(d, p, params, e)))
		return NULL;
	r = zcfsd_unpublish_begin(d, v, zcfsd_param_string(params, "target"), &a, e);
	if (r != 0)
		return NULL;	/* failed, or answered when done (lifecycle/unpublish.c) */
	return wrap_volume(d, v);
}

/* Planned restart of the volume's server: answered once asked; the new
 * server's pid shows in volume.get. */
static json_object *m_restart(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			      struct zcfs_err *e)
{
	static const char *const keys[] = { "id", NULL };
	struct zcfsd_volume *v;

	if (zcfsd_only_params(params, keys, e) < 0 || !(v = idle_volume_param(d, p, params, e)) ||
	    zcfsd_volume_restart(d, v, e) < 0)
		return NULL;
	return wrap_volume(d, v);
}

/* volume.resize {id, size}: grow a volume, published or not. */
static json_object *m_resize(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { "id", "size", NULL };
	struct zcfsd_volume *v;
	json_object *x;
	uint64_t size = 0;
	bool ok;

	if (zcfsd_only_params(params, keys, e) < 0 || !(v = volume_param(d, p, params, e)))
		return NULL;
	ok = json_object_object_get_ex(params, "size", &x);
	if (ok && json_object_is_type(x, json_type_int))
		ok = json_object_get_int64(x) > 0 && (size = (uint64_t)json_object_get_int64(x));
	else
		ok = ok && json_object_is_type(x, json_type_string) &&
		     parse_size(json_object_get_string(x), 1, UINT64_MAX, &size) == 0;
	if (!ok || size < 4096 || size > (1ULL << 60)) {
		zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			  "params.size must be a byte count from 4K (or a size like 10G), at most 2^60");
		return NULL;
	}
	if (zcfsd_volume_resize(d, v, size, e) < 0)
		return NULL;
	return wrap_volume(d, v);
}

static json_object *deleted(bool yes)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "deleted", json_object_new_boolean(yes));
	return o;
}

/* V is gone (freed right after) when E is OK: not looked at. */
static void delete_answer(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token,
			  const struct zcfs_err *e)
{
	(void)v;
	zcfsd_control_complete(d, token, e->code == ZCFS_OK ? deleted(true) : NULL, e);
}

/* Answered when the storage is removed (lifecycle/delete.c). */
static json_object *m_delete(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { "id", NULL };
	const struct zcfsd_answer a = { defer_answer, p, delete_answer };
	struct zcfsd_volume *v;
	int r;

	if (zcfsd_only_params(params, keys, e) < 0)
		return NULL;
	v = idle_volume_param(d, p, params, e);
	if (!v && e->code != ZCFS_NOT_FOUND)
		return NULL;
	if (!v) {
		/* DeleteVolume is idempotent: an unknown volume is deleted. */
		e->code = ZCFS_OK;
		return deleted(false);
	}
	r = zcfsd_volume_delete(d, v, &a, e);
	return r == 0 ? deleted(true) : NULL;	/* failed, or answered when done */
}

static json_object *m_get(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { "id", NULL };
	struct zcfsd_volume *v;

	if (zcfsd_only_params(params, keys, e) < 0 || !(v = volume_param(d, p, params, e)))
		return NULL;
	return wrap_volume(d, v);
}

/* What the peer manages: the volumes and tenants it may see. */
static json_object *volumes_array(struct zcfsd *d, const struct zcfsd_peer *p)
{
	json_object *a = json_object_new_array();

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (zcfsd_peer_manages_volume(d, p, v))
			json_object_array_add(a, zcfsd_volume_json(d, v, false));
	return a;
}

/* What GetCapacity needs: the free bytes the tenant may still commit to
 * volume sizes, and the sizes committed. */
static void add_capacity(struct zcfsd *d, const struct policy_tenant *t, json_object *o)
{
	uint64_t avail = 0, committed = 0;
	int r = zcfsd_tenant_capacity(d, t, &avail, &committed);

	json_object_object_add(o, "default_quota", json_object_new_int64((int64_t)t->default_quota));
	json_object_object_add(o, "size_committed", json_object_new_int64((int64_t)MIN(committed, (uint64_t)INT64_MAX)));
	if (r == 0)
		json_object_object_add(o, "capacity_available", json_object_new_int64((int64_t)avail));
}

static json_object *tenants_array(struct zcfsd *d, const struct zcfsd_peer *p)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < d->policy->n_tenants; i++) {
		const struct policy_tenant *t = &d->policy->tenants[i];
		json_object *o, *dp;
		uint64_t used;
		size_t published = 0;

		/* before anything is made for it: nothing to let go */
		if (!zcfsd_peer_manages(p, t))
			continue;
		o = json_object_new_object();
		dp = json_object_new_object();
		used = zcfsd_tenant_used(d, t->name);
		for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
			published += v->n_targets && !strcmp(v->tenant, t->name);
		json_object_object_add(o, "name", json_object_new_string(t->name));
		json_object_object_add(o, "uid", json_object_new_int64(t->uid));
		json_object_object_add(o, "gid", json_object_new_int64(t->gid));
		json_object_object_add(o, "memlock_budget", json_object_new_int64((int64_t)t->memlock_budget));
		json_object_object_add(o, "memlock_used", json_object_new_int64((int64_t)used));
		json_object_object_add(o, "memlock_free", json_object_new_int64(
			(int64_t)(t->memlock_budget > used ? t->memlock_budget - used : 0)));
		json_object_object_add(o, "volumes", json_object_new_int64(
			(int64_t)zcfsd_tenant_volume_count(d, t->name)));
		json_object_object_add(o, "volumes_published", json_object_new_int64((int64_t)published));
		json_object_object_add(o, "max_volumes", json_object_new_int64(t->max_volumes));
		json_object_object_add(o, "storage_root", json_object_new_string(t->storage_root));
		add_capacity(d, t, o);
		json_object_object_add(dp, "io_uring", json_object_new_boolean(t->io_uring));
		json_object_object_add(dp, "zero_copy", json_object_new_boolean(t->zero_copy));
		json_object_object_add(dp, "passthrough", json_object_new_boolean(t->passthrough));
		json_object_object_add(o, "data_paths", dp);
		json_object_array_add(a, o);
	}
	return a;
}

/* A method without parameters answering { KEY: ARRAY(d, p) }. */
static json_object *answer_array(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
				 struct zcfs_err *e, const char *key,
				 json_object *(*array)(struct zcfsd *, const struct zcfsd_peer *))
{
	static const char *const keys[] = { NULL };
	json_object *o;

	if (zcfsd_only_params(params, keys, e) < 0)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, key, array(d, p));
	return o;
}

static json_object *m_list(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	return answer_array(d, p, params, e, "volumes", volumes_array);
}

static json_object *m_tenants(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	return answer_array(d, p, params, e, "tenants", tenants_array);
}

/* The control socket's connections and what its limits closed. */
static json_object *control_json(struct zcfsd *d)
{
	const struct zcfsd_control_counts *k = zcfsd_control_counts(d);
	json_object *o = json_object_new_object();

	json_object_object_add(o, "connections", json_object_new_int64(zcfsd_control_clients(d)));
	json_object_object_add(o, "accepted", json_object_new_int64((int64_t)k->accepted));
	json_object_object_add(o, "evicted_uid_limit", json_object_new_int64(k->evicted_uid));
	json_object_object_add(o, "evicted_total_limit", json_object_new_int64(k->evicted_total));
	json_object_object_add(o, "dropped_idle", json_object_new_int64(k->dropped_idle));
	json_object_object_add(o, "dropped_request_timeout", json_object_new_int64(k->dropped_request));
	json_object_object_add(o, "dropped_answer_not_taken", json_object_new_int64(k->dropped_write));
	return o;
}

static json_object *m_status(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { NULL };
	json_object *o, *dm;

	if (zcfsd_only_params(params, keys, e) < 0)
		return NULL;
	o = json_object_new_object();
	dm = json_object_new_object();
	json_object_object_add(dm, "pid", json_object_new_int64(getpid()));
	json_object_object_add(dm, "uptime_s", json_object_new_int64(zcfsd_wall() - d->started_at));
	json_object_object_add(dm, "policy", json_object_new_string(d->policy_path));
	json_object_object_add(dm, "state_dir", json_object_new_string(d->state_dir));
	json_object_object_add(dm, "possible_cpus", json_object_new_int64(d->ncpus));
	json_object_object_add(dm, "pinned_source", json_object_new_string("uring_sizing"));
	json_object_object_add(dm, "control", control_json(d));
	json_object_object_add(o, "daemon", dm);
	json_object_object_add(o, "tenants", tenants_array(d, p));
	json_object_object_add(o, "volumes", volumes_array(d, p));
	return o;
}

int zcfsd_policy_reload(struct zcfsd *d, struct zcfs_err *e)
{
	struct policy_errors errs = { 0 };
	struct policy *np = NULL;
	int r;

	r = policy_load(d->policy_path, &np, &errs);
	if (r < 0) {
		zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r, "policy %s not reloaded (%zu problems; first: %s)",
			  d->policy_path, errs.n, errs.n ? errs.msgs[0] : strerror(-r));
		for (size_t i = 0; i < errs.n; i++)
			log_err("event=policy-error %s", errs.msgs[i]);
		policy_errors_clear(&errs);
		return r;
	}
	policy_free(d->policy);
	d->policy = np;
	/* Running volumes keep running; report the ones that no longer fit. */
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (!policy_find_tenant(np, v->tenant))
			log_warn("event=volume-nonconforming volume=%s tenant=%s reason=tenant-removed",
				 v->id, v->tenant);
	log_info("event=policy-reload path=%s tenants=%zu", d->policy_path, np->n_tenants);
	return 0;
}

static json_object *m_reload(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			     struct zcfs_err *e)
{
	static const char *const keys[] = { NULL };
	json_object *o;

	if (zcfsd_only_params(params, keys, e) < 0)
		return NULL;
	/* It changes what every tenant may do: root's. */
	if (p->uid != 0) {
		zcfs_fail(e, ZCFS_PERMISSION_DENIED, -EPERM, "only root may reload the policy");
		return NULL;
	}
	if (zcfsd_policy_reload(d, e) < 0)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "tenants", json_object_new_int64((int64_t)d->policy->n_tenants));
	return o;
}

/* zcfsd re-execs itself (lifecycle/upgrade.c) once every published
 * volume has a running server; answered first. */
static json_object *m_upgrade(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			      struct zcfs_err *e)
{
	static const char *const keys[] = { NULL };
	const char *busy;
	json_object *o;

	if (zcfsd_only_params(params, keys, e) < 0)
		return NULL;
	/* The daemon of every tenant: root's, like policy.reload. */
	if (p->uid != 0) {
		zcfs_fail(e, ZCFS_PERMISSION_DENIED, -EPERM, "only root may upgrade zcfsd");
		return NULL;
	}
	if (zcfsd_upgrade_request(d, "control", e) < 0)
		return NULL;
	busy = zcfsd_upgrade_blocker(d);
	o = json_object_new_object();
	json_object_object_add(o, "pid", json_object_new_int64(getpid()));
	json_object_object_add(o, "binary", json_object_new_string(zcfsd_upgrade_binary(d)));
	if (busy)
		json_object_object_add(o, "waiting_for", json_object_new_string(busy));
	return o;
}

static const struct {
	const char *name;
	json_object *(*fn)(struct zcfsd *d, const struct zcfsd_peer *p, json_object *params,
			   struct zcfs_err *e);
} methods[] = {
	{ "volume.create", m_create },
	{ "volume.publish", m_publish },
	{ "volume.unpublish", m_unpublish },
	{ "volume.restart", m_restart },
	{ "volume.resize", m_resize },
	{ "volume.delete", m_delete },
	{ "volume.get", m_get },
	{ "volume.list", m_list },
	{ "tenant.list", m_tenants },
	{ "status", m_status },
	{ "policy.reload", m_reload },
	{ "daemon.upgrade", m_upgrade },
};

json_object *zcfsd_dispatch(struct zcfsd *d, const struct zcfsd_peer *peer, const char *method,
			    json_object *params, struct zcfs_err *e)
{
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, method))
			return methods[i].fn(d, peer, params, e);
	zcfs_fail(e, ZCFS_UNIMPLEMENTED, -ENOSYS, "unknown method '%.64s'", method);
	return NULL;
}
