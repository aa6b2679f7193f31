/* volume.create's parameters: every field checked against the policy into
 * a zcfsd_volume_spec before anything is made (lifecycle/create.c). */
#include <string.h>
#include "common/names.h"
#include "common/parse.h"
#include "daemon/zcfsd/budget/budget.h"
#include "protocol.h"

static int parse_geometry(json_object *params, struct zcfsd_volume_spec *s, struct zcfs_err *e)
{
	json_object *x;

	if (json_object_object_get_ex(params, "queue_depth", &x)) {
		int64_t i = json_object_get_int64(x);
		if (!json_object_is_type(x, json_type_int) || i < 1 || i > 1024)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "params.queue_depth must be an integer from 1 to 1024");
		s->queue_depth = (uint32_t)i;
	}
	if (json_object_object_get_ex(params, "max_write", &x)) {
		uint64_t mw = 0;
		int64_t i = json_object_get_int64(x);
		bool ok = json_object_is_type(x, json_type_int) ? (mw = (uint64_t)i, i >= 0) :
			  json_object_is_type(x, json_type_string) &&
			  parse_size(json_object_get_string(x), 0, UINT64_MAX, &mw) == 0;
		if (!ok || mw < 4096 || mw > (16u << 20) || mw % 4096)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "params.max_write must be a multiple of 4K from 4K to 16M");
		s->max_write = (uint32_t)mw;
	}
	return 0;
}

static int parse_transport(json_object *params, struct zcfsd_volume_spec *s, struct zcfs_err *e)
{
	const char *tr;
	json_object *x;

	if (!json_object_object_get_ex(params, "transport", &x))
		return 0;
	tr = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
	if (!strcmp(tr, "auto"))
		s->transport = POLICY_TRANSPORT_AUTO;
	else if (!strcmp(tr, "devfuse"))
		s->transport = POLICY_TRANSPORT_DEVFUSE;
	else if (!strcmp(tr, "uring"))
		s->transport = POLICY_TRANSPORT_URING;
	else
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "params.transport must be auto, devfuse or uring");
	if (s->transport == POLICY_TRANSPORT_URING && !s->tenant->io_uring)
		return zcfs_fail(e, ZCFS_PERMISSION_DENIED, -EPERM,
				 "tenant '%s' may not use io_uring (data_paths.io_uring)", s->tenant->name);
	return 0;
}

/* ring_holder: the io_uring rings are a holder process's, so a server's
 * death cancels no request (docs/supervision.md, "Ring holder"). Only
 * where the volume really runs on io_uring, and without zero-copy or a
 * registered pool (a holder's rings take no registered buffers; an
 * unregistered pool where the kernel has pools). Not given: the
 * tenant's data_paths.ring_holder. */
static int parse_ring_holder(json_object *params, struct zcfsd_volume_spec *s, struct zcfs_err *e)
{
	json_object *x;

	if (!json_object_object_get_ex(params, "ring_holder", &x)) {
		/* The tenant's default (data_paths.ring_holder), for the
		 * volumes that run on io_uring. */
		s->ring_holder = s->tenant->ring_holder && zcfsd_uses_uring(s->transport, s->tenant);
		return 0;
	}
	if (!json_object_is_type(x, json_type_boolean))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.ring_holder must be a boolean");
	s->ring_holder = json_object_get_boolean(x);
	if (s->ring_holder && !zcfsd_uses_uring(s->transport, s->tenant))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "params.ring_holder needs the io_uring transport: volume '%s' would run "
				 "on /dev/fuse (transport %s, tenant '%s'), which loses nothing at a "
				 "server kill without a holder", s->id, policy_transport_name(s->transport),
				 s->tenant->name);
	return 0;
}

static int parse_size_param(json_object *params, struct zcfsd_volume_spec *s, struct zcfs_err *e)
{
	json_object *x;

	if (json_object_object_get_ex(params, "read_only", &x)) {
		if (!json_object_is_type(x, json_type_boolean))
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.read_only must be a boolean");
		s->read_only = json_object_get_boolean(x);
	}
	s->size = s->tenant->default_quota;
	if (json_object_object_get_ex(params, "size", &x)) {
		int64_t i = json_object_get_int64(x);
		bool ok = json_object_is_type(x, json_type_int) ? (s->size = (uint64_t)i, i >= 0) :
			  json_object_is_type(x, json_type_string) &&
			  parse_size(json_object_get_string(x), 0, UINT64_MAX, &s->size) == 0;
		if (!ok || (s->size && s->size < 4096) || s->size > (1ULL << 60))
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "params.size must be a byte count from 4K (or a size like 10G), "
					 "0 for no limit");
	}
	return 0;
}

/* The tenant named by params.tenant, or the only one of a single-tenant node. */
static int parse_tenant(struct zcfsd *d, json_object *params, struct zcfsd_volume_spec *s,
			struct zcfs_err *e)
{
	const char *tenant = zcfsd_param_string(params, "tenant");

	if (tenant)
		s->tenant = policy_find_tenant(d->policy, tenant);
	else if (json_object_object_get_ex(params, "tenant", NULL))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.tenant must be a string");
	else if (d->policy->n_tenants == 1)
		s->tenant = &d->policy->tenants[0];	/* single-tenant node: implied */
	else
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "params.tenant is required (the policy has %zu tenants)",
				 d->policy->n_tenants);
	if (!s->tenant)
		return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no tenant '%s' in the policy", tenant);
	return 0;
}

int zcfsd_volume_spec_parse(struct zcfsd *d, json_object *params, struct zcfsd_volume_spec *s,
			    struct zcfs_err *e)
{
	static const char *const keys[] = { "id", "tenant", "queue_depth", "max_write", "transport",
					    "read_only", "size", "uid", "gid", "mode", "ring_holder", "note", NULL };
	int r;

	*s = (struct zcfsd_volume_spec){
		.queue_depth = d->policy->queue_depth,
		.max_write = d->policy->max_write,
		.transport = d->policy->transport,
	};
	r = zcfsd_only_params(params, keys, e);
	if (r < 0)
		return r;
	s->id = zcfsd_param_string(params, "id");
	if (!s->id || !name_is_valid_id(s->id))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "params.id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
	r = parse_tenant(d, params, s, e);
	if (r >= 0)
		r = parse_geometry(params, s, e);
	if (r >= 0)
		r = parse_transport(params, s, e);
	if (r >= 0)
		r = parse_size_param(params, s, e);
	if (r >= 0)
		r = parse_ring_holder(params, s, e);
	if (r >= 0)
		r = zcfsd_note_param(params, &s->note, e);
	if (r < 0)
		return r;
	/* Not given: what the default geometry picks for this node's CPUs. */
	zcfsd_resolve_geometry(d->ncpus, zcfsd_uses_uring(s->transport, s->tenant), &s->queue_depth,
			       &s->max_write);
	if (zcfsd_root_owner_params(params, &s->owner, e) < 0)
		return -EINVAL;
	return 0;
}
