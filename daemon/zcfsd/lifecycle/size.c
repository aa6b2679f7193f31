/* How a volume's size is enforced: a project quota on its storage
 * directory when the storage root has them (the kernel refuses writes
 * past it on every path, so the server neither counts nor turns kernel
 * passthrough off), else its server counts (--quota-bytes). The project
 * id is recorded in state.json before it is set on the directory, and
 * set again with its limits at every publish and start-up: a crash
 * between the two leaves nothing unlimited for long. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "common/openat2.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/mounts/projquota.h"
#include "daemon/zcfsd/state/state.h"
#include "lifecycle.h"

/* Whether the directory DFD has no entries (EMPTY) ; -errno. */
static int dir_empty(int dfd, bool *empty)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;

	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		safe_close(fd);
		return -errno;
	}
	*empty = true;
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			*empty = false;
			break;
		}
	return 0;
}

/* An id no volume of this zcfsd has and nobody uses on FS. */
static uint32_t alloc_id(struct zcfsd *d, const struct zcfsd_pq_fs *fs)
{
	_cleanup_free_ uint32_t *used = NULL;
	uint32_t id = 0, from = ZCFSD_PROJID_MIN;
	size_t n = 0, cap = 0;

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		cap++;
	used = calloc(cap ? cap : 1, sizeof(*used));
	if (!used)
		return 0;
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->projid)
			used[n++] = v->projid;
	for (int tries = 0; tries < 256; tries++) {
		id = zcfsd_projid_pick(used, n, from);
		if (!id || !zcfsd_pq_id_busy(fs, id))
			return id;
		from = id + 1;
	}
	return 0;
}

/* A project id for V, in state.json before anything is set on disk. */
static int new_id(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfsd_pq_fs *fs)
{
	int r;

	v->projid = alloc_id(d, fs);
	if (!v->projid) {
		snprintf(v->size_why, sizeof(v->size_why), "no free project id in 0x%x..0x%x",
			 ZCFSD_PROJID_MIN, ZCFSD_PROJID_MAX);
		return -ENOSPC;
	}
	r = zcfsd_state_save(d);
	if (r < 0) {
		snprintf(v->size_why, sizeof(v->size_why), "saving state: %s", strerror(-r));
		v->projid = 0;
	}
	return r;
}

/* V's project id and limits on its directory DFD. PUBLISH: a publish's
 * (where a test may ask for a crash between the two). */
static int project_apply(const struct zcfsd_volume *v, const struct zcfsd_pq_fs *fs, int dfd,
			 bool publish)
{
	struct zcfsd_proj_limits l;
	int r = zcfsd_pq_assign(dfd, v->projid);

	/* t_zcfsd_projquota: zcfsd killed between the id and its limits. */
	if (r == 0 && publish && getenv("ZCFSD_TEST_KILL_AFTER_PROJID"))
		raise(SIGKILL);
	zcfsd_proj_limits_of(v->size, &l);
	return r < 0 ? r : zcfsd_pq_set_limits(fs, v->projid, &l);
}

static int project_on(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfsd_pq_fs *fs, int dfd)
{
	bool empty = false;
	int r;

	if (!v->projid) {
		r = dir_empty(dfd, &empty);
		if (r < 0 || !empty) {
			snprintf(v->size_why, sizeof(v->size_why), "its storage holds files from before "
				 "it had a project quota, which the server counts");
			return r < 0 ? r : -ENOTEMPTY;
		}
		r = new_id(d, v, fs);
		if (r < 0)
			return r;
	}
	r = project_apply(v, fs, dfd, true);
	if (r < 0)
		snprintf(v->size_why, sizeof(v->size_why), "project %u: setting its id or limits: %s",
			 v->projid, strerror(-r));
	return r;
}

/* The server counts: allowed unless the tenant requires the kernel. */
static int server_count(struct zcfsd_volume *v, const struct policy_tenant *t, struct zcfs_err *e)
{
	if (t->size_enforcement == POLICY_SIZE_KERNEL)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EOPNOTSUPP,
				 "tenant '%s' requires kernel-enforced volume sizes (size_enforcement: "
				 "kernel), but %s", t->name, v->size_why);
	v->size_enf = ZCFSD_SIZE_SERVER;
	log_info("event=size-enforcement volume=%s mode=server-count size=%llu reason=\"%s\" "
		 "effect=\"the server counts; no kernel passthrough\"", v->id,
		 (unsigned long long)v->size, v->size_why);
	return 0;
}

/* Opens the storage root and V's directory; probes the root. */
static int open_probe(const struct policy_tenant *t, const struct zcfsd_volume *v, int *rfd,
		      int *dfd, struct zcfsd_pq_fs *fs, char *why, size_t len)
{
	*rfd = open_nofollow(t->storage_root, O_RDONLY | O_DIRECTORY);
	if (*rfd < 0) {
		snprintf(why, len, "storage_root %s: %s", t->storage_root, strerror(-*rfd));
		return *rfd;
	}
	*dfd = zcfsd_storage_open(t, v->id);
	if (*dfd < 0) {
		snprintf(why, len, "storage %s/%s: %s", t->storage_root, v->id, strerror(-*dfd));
		return *dfd;
	}
	return zcfsd_pq_probe(*rfd, t->storage_root, fs, why, len);
}

int zcfsd_size_prepare(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       struct zcfs_err *e)
{
	_cleanup_close_ int rfd = -1, dfd = -1;
	struct zcfsd_pq_fs fs;
	int r;

	v->size_why[0] = '\0';
	/* What state.json says until decided (a crash in between: counted). */
	v->size_enf = v->size ? ZCFSD_SIZE_SERVER : ZCFSD_SIZE_NONE;
	if (!v->size)
		return 0;
	if (t->size_enforcement == POLICY_SIZE_SERVER) {
		char why[sizeof(v->size_why)];

		snprintf(v->size_why, sizeof(v->size_why), "the tenant's policy says size_enforcement: server");
		/* not both; a root without project quotas has none to take off,
		 * and the reason stays the policy */
		if (v->projid && open_probe(t, v, &rfd, &dfd, &fs, why, sizeof(why)) == 0)
			(void)zcfsd_pq_set_limits(&fs, v->projid, NULL);
		return server_count(v, t, e);
	}
	r = open_probe(t, v, &rfd, &dfd, &fs, v->size_why, sizeof(v->size_why));
	if (r == 0)
		r = project_on(d, v, &fs, dfd);
	if (r < 0)
		return server_count(v, t, e);
	v->size_enf = ZCFSD_SIZE_PROJECT;
	log_info("event=size-enforcement volume=%s mode=project-quota project_id=%u size=%llu "
		 "fs=%s effect=\"the kernel enforces it; the server does not count\"", v->id, v->projid,
		 (unsigned long long)v->size, fs.kind == ZCFSD_PQ_XFS ? "xfs" : "ext4");
	return 0;
}

void zcfsd_size_readopt(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
		_cleanup_close_ int rfd = -1, dfd = -1;
		struct zcfsd_pq_fs fs;
		char why[256];
		int r;

		if (!v->projid || !v->size || !t || t->size_enforcement == POLICY_SIZE_SERVER)
			continue;
		r = open_probe(t, v, &rfd, &dfd, &fs, why, sizeof(why));
		if (r == -ENOENT && dfd < 0)
			continue;	/* no storage yet: its first publish sets it */
		if (r == 0)
			r = project_apply(v, &fs, dfd, false);
		if (r < 0)
			log_err("event=size-readopt-failed volume=%s project_id=%u error=\"%s\"%s", v->id,
				v->projid, why, v->size_enf == ZCFSD_SIZE_PROJECT ?
				" effect=\"its size is not enforced until it is published again\"" : "");
		else
			log_info("event=size-readopt volume=%s project_id=%u size=%llu", v->id, v->projid,
				 (unsigned long long)v->size);
	}
}

void zcfsd_size_release(struct zcfsd_volume *v, const struct policy_tenant *t)
{
	_cleanup_close_ int rfd = -1;
	struct zcfsd_pq_fs fs;
	char why[256];
	int r;

	if (!v->projid)
		return;
	rfd = open_nofollow(t->storage_root, O_RDONLY | O_DIRECTORY);
	r = rfd < 0 ? rfd : zcfsd_pq_probe(rfd, t->storage_root, &fs, why, sizeof(why));
	if (r == 0)
		r = zcfsd_pq_set_limits(&fs, v->projid, NULL);
	if (r < 0)
		log_warn("event=project-release-failed volume=%s project_id=%u error=%s", v->id,
			 v->projid, strerror(-r));
}

int zcfsd_size_set_limit(struct zcfsd *d, struct zcfsd_volume *v, uint64_t new_size, struct zcfs_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	_cleanup_close_ int rfd = -1, dfd = -1;
	struct zcfsd_proj_limits l;
	struct zcfsd_pq_fs fs;
	char why[256] = "";
	int r;

	if (v->size_enf != ZCFSD_SIZE_PROJECT || !v->projid || !t || !new_size)
		return 0;	/* the server counts */
	r = open_probe(t, v, &rfd, &dfd, &fs, why, sizeof(why));
	zcfsd_proj_limits_of(new_size, &l);
	if (r == 0)
		r = zcfsd_pq_set_limits(&fs, v->projid, &l);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "volume '%s': project %u's limit: %s", v->id,
				 v->projid, why[0] ? why : strerror(-r));
	log_info("event=project-limit volume=%s project_id=%u size=%llu old_size=%llu", v->id, v->projid,
		 (unsigned long long)new_size, (unsigned long long)v->size);
	return 0;
}
