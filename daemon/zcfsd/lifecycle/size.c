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
#include <unistd.h>
#include "common/log.h"
#include "common/openat2.h"
#include "common/parse.h"
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

/* The file system and state side of zcfsd_projid_claim for V's DFD. */
struct claim_ctx {
	struct zcfsd *d;
	struct zcfsd_volume *v;
	const struct zcfsd_pq_fs *fs;
	int dfd;
};

static bool claim_busy(void *p, uint32_t id)
{
	return zcfsd_pq_id_busy(((struct claim_ctx *)p)->fs, id);
}

static int claim_record(void *p, uint32_t id)
{
	struct claim_ctx *c = p;
	int r;

	c->v->projid = id;
	r = zcfsd_state_save(c->d);
	if (r < 0)
		snprintf(c->v->size_why, sizeof(c->v->size_why), "saving state: %s", strerror(-r));
	/* t_zcfsd_projquota: two zcfsd between the pick and the setting */
	const char *delay = getenv("ZCFSD_TEST_PROJID_DELAY_MS");
	uint64_t ms;

	if (r == 0 && delay && parse_u64(delay, 0, 5000, &ms) == 0)
		usleep((useconds_t)ms * 1000);
	return r;
}

static int claim_assign(void *p, uint32_t id)
{
	struct claim_ctx *c = p;

	return zcfsd_pq_assign(c->dfd, id);
}

static int claim_charged(void *p, uint32_t id, uint64_t *inodes)
{
	struct zcfsd_pq_usage u;
	int r = zcfsd_pq_get(((struct claim_ctx *)p)->fs, id, &u);

	*inodes = r == 0 ? u.inodes_used : 0;
	return r == -ENOENT || r == -ESRCH ? 0 : r;
}

/* A project id for V no volume of this zcfsd has and no other claimant
 * (another zcfsd of this node or of a node sharing the file system)
 * holds, in state.json before it is set on the directory DFD. */
static int new_id(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfsd_pq_fs *fs, int dfd)
{
	struct claim_ctx c = { .d = d, .v = v, .fs = fs, .dfd = dfd };
	const struct zcfsd_projid_ops ops = { .ctx = &c, .busy = claim_busy, .record = claim_record,
					      .assign = claim_assign, .charged = claim_charged };
	_cleanup_free_ uint32_t *used = NULL;
	uint32_t id = 0;
	size_t n = 0, cap = 1;
	int r;

	for (struct zcfsd_volume *o = d->volumes; o; o = o->next)
		cap++;
	used = calloc(cap, sizeof(*used));
	if (!used)
		return -ENOMEM;
	for (struct zcfsd_volume *o = d->volumes; o; o = o->next)
		if (o->projid && o != v)
			used[n++] = o->projid;
	/* two zcfsd that collided retry on different strides */
	r = zcfsd_projid_claim(used, n, 1 + (uint32_t)getpid() % 16, &ops, &id);
	if (r == -ENOSPC)
		snprintf(v->size_why, sizeof(v->size_why), "no free project id in 0x%x..0x%x",
			 ZCFSD_PROJID_MIN, ZCFSD_PROJID_MAX);
	else if (r < 0 && !v->size_why[0])
		snprintf(v->size_why, sizeof(v->size_why), "claiming a project id: %s", strerror(-r));
	if (r < 0)
		v->projid = 0;
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
		r = new_id(d, v, fs, dfd);
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
