/* The volume model: lookup, lifetime, targets, where its storage lives. */
#include <string.h>
#include "common/util.h"
#include "model.h"

struct zcfsd_volume *zcfsd_volume_find(struct zcfsd *d, const char *id)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (!strcmp(v->id, id))
			return v;
	return NULL;
}

struct zcfsd_volume *zcfsd_volume_alloc(void)
{
	struct zcfsd_volume *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->fuse_fd = -1;
	v->srv.pidfd = -1;
	v->stats_fd = -1;
	v->ring_fd = -1;
	return v;
}

void zcfsd_volume_free(struct zcfsd_volume *v)
{
	if (!v)
		return;
	if (v->sup_free)
		v->sup_free(v);	/* server/'s record: its log, standby, holder */
	zcfsd_stats_release(v);
	zcfsd_ringfd_release(v);
	for (size_t i = 0; i < v->n_targets; i++) {
		free(v->targets[i]);
		free(v->target_notes[i]);
	}
	free(v->targets);
	free(v->target_notes);
	free(v->note);
	free(v->id);
	free(v->tenant);
	safe_close(v->fuse_fd);
	safe_close(v->srv.pidfd);
	free(v);
}

void zcfsd_changed(struct zcfsd *d)
{
	zcfsd_deadline_arm(d, &d->changed, zcfsd_now_ms());
}

size_t zcfsd_tenant_volume_count(struct zcfsd *d, const char *tenant)
{
	size_t n = 0;

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		n += !strcmp(v->tenant, tenant);
	return n;
}

int zcfsd_storage_path(struct zcfsd *d, const struct zcfsd_volume *v, char **ret)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);

	if (!t)
		return -ENOENT;
	return asprintf(ret, "%s/%s", t->storage_root, v->id) < 0 ? -ENOMEM : 0;
}

int zcfsd_volume_add_target(struct zcfsd_volume *v, const char *target, const char *note)
{
	char **n = realloc(v->targets, (v->n_targets + 1) * sizeof(*n));
	char *t, *nn = NULL;

	if (!n)
		return -ENOMEM;
	v->targets = n;
	n = realloc(v->target_notes, (v->n_targets + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	v->target_notes = n;
	t = strdup(target);
	if (!t || (note && !(nn = strdup(note)))) {
		free(t);
		return -ENOMEM;
	}
	v->targets[v->n_targets] = t;
	v->target_notes[v->n_targets] = nn;
	v->n_targets++;
	return 0;
}

int zcfsd_volume_set_target_note(struct zcfsd_volume *v, size_t i, const char *note)
{
	char *n = strdup(note);

	if (!n)
		return -ENOMEM;
	free(v->target_notes[i]);
	v->target_notes[i] = n;
	return 0;
}

void zcfsd_volume_remove_target(struct zcfsd_volume *v, size_t i)
{
	free(v->targets[i]);
	free(v->target_notes[i]);
	memmove(&v->targets[i], &v->targets[i + 1], (v->n_targets - i - 1) * sizeof(char *));
	memmove(&v->target_notes[i], &v->target_notes[i + 1], (v->n_targets - i - 1) * sizeof(char *));
	v->n_targets--;
}

struct zcfsd_volume *zcfsd_target_owner(struct zcfsd *d, const char *target, size_t *idx)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		for (size_t i = 0; i < v->n_targets; i++)
			if (!strcmp(v->targets[i], target)) {
				*idx = i;
				return v;
			}
	return NULL;
}

const char *zcfsd_volume_state(const struct zcfsd_volume *v)
{
	if (!v->n_targets)
		return "created";
	if (v->pubwait)
		return "publishing";
	if (!v->srv.pid)
		return "restarting";
	return v->stalled ? "stalled" : "published";
}

const char *zcfsd_size_enf_name(enum zcfsd_size_enf e)
{
	switch (e) {
	case ZCFSD_SIZE_SERVER: return "server-count";
	case ZCFSD_SIZE_PROJECT: return "project-quota";
	default: return "none";
	}
}
