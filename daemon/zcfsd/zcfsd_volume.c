/* Volume mechanics: create, publish (storage dir, mount, server), bind
 * further targets, unpublish, delete. Every request path is checked
 * before anything changes; a failing step undoes the earlier ones. */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <cap-ng.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "daemon/common/bdi.h"
#include "daemon/common/log.h"
#include "daemon/common/max_read.h"
#include "daemon/common/mountinfo.h"
#include "daemon/common/parse.h"
#include "zcfsd.h"
#include "zcfsd_rootown.h"

struct zcfsd_volume *zcfsd_volume_find(struct zcfsd *d, const char *id)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (!strcmp(v->id, id))
			return v;
	return NULL;
}

void zcfsd_volume_free(struct zcfsd_volume *v)
{
	if (!v)
		return;
	zcfsd_stats_release(v);
	zcfsd_ringfd_release(v);
	for (size_t i = 0; i < v->n_targets; i++)
		free(v->targets[i]);
	free(v->targets);
	free(v->id);
	free(v->tenant);
	safe_close(v->fuse_fd);
	safe_close(v->srv.pidfd);
	free(v);
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

static int ensure_storage(const struct policy_tenant *t, const char *id, bool *created,
			  struct zcfsd_err *e);
static void remove_storage_dir(const struct policy_tenant *t, const char *id);
static int open_storage(const struct policy_tenant *t, const char *id);

int zcfsd_volume_create(struct zcfsd *d, json_object *params, struct zcfsd_volume **ret,
			struct zcfsd_err *e)
{
	static const char *const keys[] = { "id", "tenant", "queue_depth", "max_write", "transport",
					    "read_only", "size", "uid", "gid", "mode", NULL };
	struct zcfsd_root_owner owner;
	bool owned, created_storage = false;
	const struct policy_tenant *t = NULL;
	struct zcfsd_volume *v, *old;
	const char *id, *tenant, *tr;
	json_object *x;
	uint32_t depth = d->policy->queue_depth, max_write = d->policy->max_write;
	enum policy_transport transport = d->policy->transport;
	uint64_t size;
	bool ro = false;
	int r;

	r = zcfsd_only_params(params, keys, e);
	if (r < 0)
		return r;
	id = zcfsd_param_string(params, "id");
	if (!id || !name_is_valid_id(id))
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				  "params.id must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}");
	tenant = zcfsd_param_string(params, "tenant");
	if (tenant)
		t = policy_find_tenant(d->policy, tenant);
	else if (json_object_object_get_ex(params, "tenant", NULL))
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.tenant must be a string");
	else if (d->policy->n_tenants == 1)
		t = &d->policy->tenants[0];	/* single-tenant node: implied */
	else
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				  "params.tenant is required (the policy has %zu tenants)",
				  d->policy->n_tenants);
	if (!t)
		return zcfsd_fail(e, ZCFS_NOT_FOUND, -ENOENT, "no tenant '%s' in the policy", tenant);
	if (json_object_object_get_ex(params, "queue_depth", &x)) {
		int64_t i = json_object_get_int64(x);
		if (!json_object_is_type(x, json_type_int) || i < 1 || i > 1024)
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					  "params.queue_depth must be an integer from 1 to 1024");
		depth = (uint32_t)i;
	}
	if (json_object_object_get_ex(params, "max_write", &x)) {
		uint64_t mw = 0;
		int64_t i = json_object_get_int64(x);
		bool ok = json_object_is_type(x, json_type_int) ? (mw = (uint64_t)i, i >= 0) :
			  json_object_is_type(x, json_type_string) &&
			  parse_size(json_object_get_string(x), 0, UINT64_MAX, &mw) == 0;
		if (!ok || mw < 4096 || mw > (16u << 20) || mw % 4096)
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					  "params.max_write must be a multiple of 4K from 4K to 16M");
		max_write = (uint32_t)mw;
	}
	if (json_object_object_get_ex(params, "transport", &x)) {
		tr = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
		if (!strcmp(tr, "auto"))
			transport = POLICY_TRANSPORT_AUTO;
		else if (!strcmp(tr, "devfuse"))
			transport = POLICY_TRANSPORT_DEVFUSE;
		else if (!strcmp(tr, "uring"))
			transport = POLICY_TRANSPORT_URING;
		else
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					  "params.transport must be auto, devfuse or uring");
		if (transport == POLICY_TRANSPORT_URING && !t->io_uring)
			return zcfsd_fail(e, ZCFS_PERMISSION_DENIED, -EPERM,
					  "tenant '%s' may not use io_uring (data_paths.io_uring)", t->name);
	}
	if (json_object_object_get_ex(params, "read_only", &x)) {
		if (!json_object_is_type(x, json_type_boolean))
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.read_only must be a boolean");
		ro = json_object_get_boolean(x);
	}
	size = t->default_quota;
	if (json_object_object_get_ex(params, "size", &x)) {
		int64_t i = json_object_get_int64(x);
		bool ok = json_object_is_type(x, json_type_int) ? (size = (uint64_t)i, i >= 0) :
			  json_object_is_type(x, json_type_string) &&
			  parse_size(json_object_get_string(x), 0, UINT64_MAX, &size) == 0;
		if (!ok || (size && size < 4096) || size > (1ULL << 60))
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					  "params.size must be a byte count from 4K (or a size like 10G), "
					  "0 for no limit");
	}

	/* Not given: what the default geometry picks for this node's CPUs. */
	zcfsd_resolve_geometry(d->ncpus, zcfsd_uses_uring(transport, t), &depth, &max_write);
	if (zcfsd_root_owner_params(params, &owner, e) < 0)
		return -EINVAL;
	owned = owner.has_uid || owner.has_gid || owner.has_mode;

	old = zcfsd_volume_find(d, id);
	if (old && owned) {
		_cleanup_close_ int dfd = open_storage(t, id);
		if (dfd < 0 || !zcfsd_root_owner_matches(dfd, &owner, -1))
			return zcfsd_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
					  "volume '%s' exists with another owner or mode of its root", id);
	}
	if (old) {
		/* CreateVolume is idempotent: the same request succeeds again. */
		if (strcmp(old->tenant, t->name) || old->queue_depth != depth ||
		    old->max_write != max_write || old->transport != transport || old->read_only != ro ||
		    old->size != size)
			return zcfsd_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
					  "volume '%s' exists with other parameters", id);
		*ret = old;
		return 0;
	}
	if (zcfsd_tenant_volume_count(d, t->name) >= t->max_volumes)
		return zcfsd_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
				  "tenant '%s' already has %u volumes (max_volumes)", t->name,
				  t->max_volumes);
	if (owned) {
		/* the record is in place before any server reads the root */
		_cleanup_close_ int dfd = -1;
		r = ensure_storage(t, id, &created_storage, e);
		if (r < 0)
			return r;
		dfd = open_storage(t, id);
		r = dfd < 0 ? zcfsd_fail(e, ZCFS_INTERNAL, dfd, "storage of '%s': %s", id, strerror(-dfd)) :
			      zcfsd_root_owner_apply(dfd, &owner, -1, e);
		if (r < 0) {
			if (created_storage)
				remove_storage_dir(t, id);
			return r;
		}
	}
	v = calloc(1, sizeof(*v));
	if (!v || !(v->id = strdup(id)) || !(v->tenant = strdup(t->name))) {
		if (created_storage)
			remove_storage_dir(t, id);
		if (v) {
			v->fuse_fd = v->srv.pidfd = -1;
			zcfsd_volume_free(v);
		}
		return zcfsd_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	v->fuse_fd = -1;
	v->srv.pidfd = -1;
	v->queue_depth = depth;
	v->max_write = max_write;
	v->transport = transport;
	v->read_only = ro;
	v->size = size;
	v->next = d->volumes;
	d->volumes = v;
	r = zcfsd_state_save(d);
	if (r < 0) {
		d->volumes = v->next;
		zcfsd_volume_free(v);
		if (created_storage)
			remove_storage_dir(t, id);
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "saving state: %s", strerror(-r));
	}
	if (owned)
		log_info("event=volume-root volume=%s uid=%s%u gid=%s%u mode=%s%o", id,
			 owner.has_uid ? "" : "~", (unsigned)owner.uid, owner.has_gid ? "" : "~",
			 (unsigned)owner.gid, owner.has_mode ? "" : "~", (unsigned)owner.mode);
	log_info("event=volume-create volume=%s tenant=%s queue_depth=%u max_write=%u transport=%s size=%llu",
		 id, t->name, depth, max_write, policy_transport_name(transport), (unsigned long long)size);
	*ret = v;
	return 0;
}

/* Opens a directory by PATH refusing any symlink on the way. */
static int open_nofollow(const char *path, uint64_t flags)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return RET_NERRNO((int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how)));
}

/* Control characters would split log lines and the status table; a
 * component longer than NAME_MAX or a path beyond PATH_MAX can never be
 * a mount point (and made mkdir answer INTERNAL). */
static int check_path_shape(const char *target, struct zcfsd_err *e)
{
	size_t comp = 0, i;

	for (i = 0; target[i]; i++) {
		unsigned char ch = (unsigned char)target[i];
		if (ch < 0x20 || ch == 0x7f)
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					  "target contains a control character (byte %zu)", i);
		comp = ch == '/' ? 0 : comp + 1;
		if (comp > NAME_MAX)
			return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -ENAMETOOLONG,
					  "target has a component longer than %d bytes", NAME_MAX);
	}
	if (i >= PATH_MAX)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -ENAMETOOLONG,
				  "target longer than %d bytes", PATH_MAX - 1);
	return 0;
}

static int check_target_string(const struct policy_tenant *t, const char *target,
			       struct zcfsd_err *e)
{
	if (!target)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.target is required");
	if (check_path_shape(target, e) < 0)
		return -EINVAL;
	if (!path_is_normalized_absolute(target))
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				  "target '%s' is not a normalized absolute path", target);
	for (size_t i = 0; i < t->n_prefixes; i++)
		if (path_is_under(target, t->prefixes[i]))
			return 0;
	return zcfsd_fail(e, ZCFS_PERMISSION_DENIED, -EPERM,
			  "target '%s' is not under any allowed_target_prefixes of tenant '%s'", target,
			  t->name);
}

/* O_PATH fd of the target directory; creates the last component when
 * only it is missing (*created tells the caller to remove it on error). */
static int open_target(const char *target, bool *created, struct zcfsd_err *e)
{
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int pfd = -1;
	const char *leaf;
	int fd;

	*created = false;
	fd = open_nofollow(target, O_PATH | O_DIRECTORY);
	if (fd >= 0)
		return fd;
	if (fd == -ELOOP || fd == -EXDEV)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, fd, "target '%s' contains a symlink", target);
	if (fd == -ENOTDIR)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, fd, "target '%s' is not a directory", target);
	if (fd != -ENOENT)
		return zcfsd_fail(e, ZCFS_INTERNAL, fd, "target '%s': %s", target, strerror(-fd));
	parent = strdup(target);
	if (!parent)
		return zcfsd_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	leaf = strrchr(target, '/') + 1;
	parent[leaf - target - 1 > 0 ? leaf - target - 1 : 1] = '\0';
	pfd = open_nofollow(parent, O_PATH | O_DIRECTORY);
	if (pfd == -ELOOP || pfd == -EXDEV)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, pfd, "target '%s' contains a symlink", target);
	if (pfd < 0)
		return zcfsd_fail(e, ZCFS_NOT_FOUND, pfd, "target's parent %s: %s", parent, strerror(-pfd));
	if (mkdirat(pfd, leaf, 0750) < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, -errno, "mkdir %s: %m", target);
	*created = true;
	fd = RET_NERRNO(openat(pfd, leaf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0) {
		(void)unlinkat(pfd, leaf, AT_REMOVEDIR);
		*created = false;
		return zcfsd_fail(e, ZCFS_INTERNAL, fd, "open %s: %s", target, strerror(-fd));
	}
	return fd;
}

static int mkdir_p(const char *path, mode_t mode)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return mkdir(p, mode) < 0 && errno != EEXIST ? -errno : 0;
}

/* The server runs as the tenant (no supplementary groups) and opens
 * STORAGE_ROOT/ID by path: every existing directory above it must let
 * the tenant search it, or the server dies at start with EACCES. Mode bits only
 * (an ACL that grants more is not seen: the error then names a directory
 * that does work, which the operator can tell from its ACL). */
static int check_tenant_traverse(const struct policy_tenant *t, struct zcfsd_err *e)
{
	_cleanup_free_ char *p = strdup(t->storage_root);
	struct stat st;
	char *s;

	if (!p)
		return zcfsd_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	for (s = p;; s++) {
		char c = *s;
		mode_t need;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (stat(*p ? p : "/", &st) == 0 && S_ISDIR(st.st_mode)) {
			need = st.st_uid == t->uid ? S_IXUSR : st.st_gid == t->gid ? S_IXGRP : S_IXOTH;
			if (!(st.st_mode & need))
				return zcfsd_fail(e, ZCFS_FAILED_PRECONDITION, -EACCES,
						  "tenant '%s' (uid %u) cannot reach its storage_root %s: "
						  "directory %s (mode %04o, owner %u:%u) denies it search "
						  "permission; fix: chmod o+x %s (or move storage_root)",
						  t->name, (unsigned)t->uid, t->storage_root, *p ? p : "/",
						  (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
						  (unsigned)st.st_gid, *p ? p : "/");
		}
		*s = c;
		if (!c)
			return 0;
	}
}

/* STORAGE_ROOT/ID, owned by the tenant, 0700. The root itself is kept
 * root:TENANT_GID 0710: the tenant's servers reach their volumes, no
 * other host user reaches anything below it, whatever modes clients give
 * the files inside (a client's chmod 1777 of the volume root lands on the
 * storage dir itself). */
static int ensure_storage(const struct policy_tenant *t, const char *id, bool *created,
			  struct zcfsd_err *e)
{
	_cleanup_close_ int rfd = -1, vfd = -1;
	int r;

	*created = false;
	/* Before making anything: what is missing is made 0711 (reachable). */
	r = check_tenant_traverse(t, e);
	if (r < 0)
		return r;
	r = mkdir_p(t->storage_root, 0711);
	if (r < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "storage_root %s: %s", t->storage_root, strerror(-r));
	rfd = open_nofollow(t->storage_root, O_RDONLY | O_DIRECTORY);
	if (rfd < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, rfd, "storage_root %s: %s", t->storage_root,
				  strerror(-rfd));
	if (fchown(rfd, 0, t->gid) < 0 || fchmod(rfd, 0710) < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, -errno, "storage_root %s: %m", t->storage_root);
	if (mkdirat(rfd, id, 0700) == 0)
		*created = true;
	else if (errno != EEXIST)
		return zcfsd_fail(e, ZCFS_INTERNAL, -errno, "mkdir %s/%s: %m", t->storage_root, id);
	vfd = RET_NERRNO(openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (vfd < 0 || fchown(vfd, t->uid, t->gid) < 0 || fchmod(vfd, 0700) < 0) {
		r = vfd < 0 ? vfd : -errno;
		if (*created)
			(void)unlinkat(rfd, id, AT_REMOVEDIR);
		*created = false;
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "storage %s/%s: %s", t->storage_root, id,
				  strerror(-r));
	}
	return 0;
}

/* The storage directory STORAGE_ROOT/ID (no symlink followed), or -errno. */
static int open_storage(const struct policy_tenant *t, const char *id)
{
	_cleanup_close_ int rfd = open_nofollow(t->storage_root, O_PATH | O_DIRECTORY);

	if (rfd < 0)
		return rfd;
	return RET_NERRNO(openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

static void remove_storage_dir(const struct policy_tenant *t, const char *id)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/%s", t->storage_root, id) >= 0)
		(void)rmdir(p);
}

static int add_target(struct zcfsd_volume *v, const char *target)
{
	char **n = realloc(v->targets, (v->n_targets + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	v->targets = n;
	n[v->n_targets] = strdup(target);
	if (!n[v->n_targets])
		return -ENOMEM;
	v->n_targets++;
	return 0;
}

static void remove_target(struct zcfsd_volume *v, size_t i)
{
	free(v->targets[i]);
	memmove(&v->targets[i], &v->targets[i + 1], (v->n_targets - i - 1) * sizeof(char *));
	v->n_targets--;
}

static struct zcfsd_volume *target_owner(struct zcfsd *d, const char *target, size_t *idx)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		for (size_t i = 0; i < v->n_targets; i++)
			if (!strcmp(v->targets[i], target)) {
				*idx = i;
				return v;
			}
	return NULL;
}

/* Deepest queue up to v's that fits FREE_BYTES at v's max_write. */
static uint32_t fitting_depth(struct zcfsd *d, const struct zcfsd_volume *v, uint64_t free_bytes)
{
	return MIN(MIN(v->queue_depth, 1024u), zcfsd_depth_that_fits(d->ncpus, v->max_write, free_bytes));
}

/* What zcfsd can hand out as RLIMIT_MEMLOCK: anything with
 * CAP_SYS_RESOURCE, else no more than its own hard limit. */
static uint64_t node_memlock_limit(void)
{
	struct rlimit rl;

	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_RESOURCE) ||
	    getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
		return UINT64_MAX;
	return rl.rlim_max;
}

static int check_budget(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			uint64_t *pinned, struct zcfsd_err *e)
{
	uint64_t used = zcfsd_tenant_used(d, t->name), free_bytes, node = node_memlock_limit();
	uint64_t node_free = node > used ? node - used : 0;
	bool node_bound;
	uint32_t fits;
	char hint[96];
	int r;

	r = zcfsd_pinned_bytes(d, v, t, pinned);
	if (r < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "computing pinned memory: %s", strerror(-r));
	free_bytes = t->memlock_budget > used ? t->memlock_budget - used : 0;
	/* The server's RLIMIT_MEMLOCK is the tenant's total: it must be
	 * settable, or the server could not pin what it was granted. */
	node_bound = node_free < free_bytes;
	if (node_bound)
		free_bytes = node_free;
	if (*pinned <= free_bytes)
		return 0;
	fits = fitting_depth(d, v, free_bytes);
	if (fits)
		snprintf(hint, sizeof(hint), "queue_depth=%u would fit", fits);
	else
		snprintf(hint, sizeof(hint), "no queue depth fits (queue_depth=0)");
	if (node_bound)
		return zcfsd_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
				  "node memlock limit: volume '%s' needs %llu bytes pinned "
				  "(queue_depth=%u, max_write=%u, %u queues) but zcfsd can grant tenant '%s' "
				  "only %llu more (its hard RLIMIT_MEMLOCK is %llu and it lacks "
				  "CAP_SYS_RESOURCE); %s",
				  v->id, (unsigned long long)*pinned, v->queue_depth, v->max_write,
				  d->ncpus, t->name, (unsigned long long)free_bytes,
				  (unsigned long long)node, hint);
	return zcfsd_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
			  "tenant '%s' memlock budget: volume '%s' needs %llu bytes pinned "
			  "(queue_depth=%u, max_write=%u, %u queues) but %llu of %llu are free; %s%s",
			  t->name, v->id, (unsigned long long)*pinned, v->queue_depth, v->max_write,
			  d->ncpus, (unsigned long long)free_bytes,
			  (unsigned long long)t->memlock_budget, hint,
			  fits ? "" : ": unpublish a volume or raise memlock_budget");
}

static int fd_path(int fd, char *buf, size_t len)
{
	return snprintf(buf, len, "/proc/self/fd/%d", fd) < (int)len ? 0 : -ENAMETOOLONG;
}

/* Sets or clears MOUNT_ATTR_RDONLY on MFD's mount only: the superblock
 * and the volume's other targets keep theirs (per-target read-only). */
static int set_mount_ro(int mfd, bool ro)
{
	struct mount_attr a = {
		.attr_set = ro ? MOUNT_ATTR_RDONLY : 0,
		.attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY,
	};

	return RET_NERRNO(mount_setattr(mfd, "", AT_EMPTY_PATH, &a, sizeof(a)));
}

/* The first target: a new fuse connection mounted on the target fd,
 * read-only for this target alone when RO asks for it. */
static int mount_fuse(struct zcfsd *d, struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		      bool uring, struct zcfsd_err *e)
{
	_cleanup_close_ int fuse_fd = -1, mfd = -1;
	char opts[256], tpath[64], source[160];
	int r;

	fuse_fd = RET_NERRNO(open("/dev/fuse", O_RDWR | O_CLOEXEC));
	if (fuse_fd < 0)
		return zcfsd_fail(e, ZCFS_UNAVAILABLE, fuse_fd, "open /dev/fuse: %s", strerror(-fuse_fd));
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,default_permissions,allow_other,max_read=%u",
		 fuse_fd, zcfs_mount_max_read(v->max_write, uring));
	snprintf(source, sizeof(source), "zcfs:%s", v->id);
	(void)fd_path(tfd, tpath, sizeof(tpath));
	/* Mounting on /proc/self/fd/N mounts on what we checked, even if
	 * a path component was swapped since. */
	if (mount(source, tpath, "fuse.zcfs", MS_NOSUID | MS_NODEV | (v->read_only ? MS_RDONLY : 0),
		  opts) < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, -errno, "mount %s: %m", target);
	r = zcfsd_mount_conn_at(target, &v->conn);
	if (r < 0) {
		(void)umount2(tpath, MNT_DETACH);
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "mount %s not found in mountinfo", target);
	}
	/* The server caches writes back (exclusive volume); without this its
	 * bdi keeps FUSE's strict 1% dirty share and throttles at a few MiB. */
	if (d->policy->dirty_limit) {
		r = bdi_set_max_bytes(0, v->conn, d->policy->dirty_limit);
		if (r < 0)
			log_warn("event=dirty-limit volume=%s conn=%u error=\"%s\"", v->id, v->conn, strerror(-r));
	}
	/* MS_RDONLY would make the superblock read-only, and with it every
	 * later bind: a read-only first target is a per-mount flag. Nobody
	 * has the target before publish returns, so setting it now is safe. */
	if (ro && !v->read_only) {
		mfd = open_nofollow(target, O_PATH | O_DIRECTORY);
		r = mfd < 0 ? mfd : set_mount_ro(mfd, true);
		if (r < 0) {
			(void)umount2(tpath, MNT_DETACH);
			return zcfsd_fail(e, ZCFS_INTERNAL, r, "making %s read-only: %s", target, strerror(-r));
		}
	}
	v->fuse_fd = TAKE_FD(fuse_fd);
	return 0;
}

/* A further target: a detached clone of the first target's mount gets
 * this target's read-only flag (a clone inherits the first target's)
 * before it is attached, so it never appears with the wrong one. */
static int bind_target(struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		       struct zcfsd_err *e)
{
	_cleanup_close_ int sfd = -1, tree = -1;
	unsigned conn;
	int r;

	sfd = open_nofollow(v->targets[0], O_PATH | O_DIRECTORY);
	if (sfd < 0 || zcfsd_mount_conn_at(v->targets[0], &conn) < 0 || conn != v->conn)
		return zcfsd_fail(e, ZCFS_INTERNAL, -ENOENT, "volume %s is no longer mounted at %s",
				  v->id, v->targets[0]);
	tree = RET_NERRNO(open_tree(sfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
	if (tree < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, tree, "bind mount %s: open_tree: %s", target,
				  strerror(-tree));
	r = set_mount_ro(tree, ro);
	if (r < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, r, "bind mount %s: read-%s: %s", target,
				  ro ? "only" : "write", strerror(-r));
	if (move_mount(tree, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return zcfsd_fail(e, ZCFS_INTERNAL, -errno, "bind mount %s: %m", target);
	return 0;
}

/* Publishing a target again succeeds when it is what is asked for. The
 * kernel's per-mount flag is the record: it survives zcfsd restarts. */
static int check_same_target(const struct zcfsd_volume *v, const char *target, bool ro,
			     struct zcfsd_err *e)
{
	struct mountinfo_top m;

	if (mountinfo_top_at(target, &m) < 0 || strcmp(m.fstype, "fuse.zcfs") || m.read_only == ro)
		return 0;
	return zcfsd_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
			  "volume '%s' is already published at %s read-%s; asked read-%s", v->id, target,
			  m.read_only ? "only" : "write", ro ? "only" : "write");
}

/* Unmounts TARGET's mount of our connection (zcfsd_unmount.c: by mount
 * id, never by re-resolving the string). 0 once it is gone. */
static int unmount_target(struct zcfsd_volume *v, const char *target, bool lazy)
{
	const char **keep = calloc(v->n_targets ? v->n_targets : 1, sizeof(*keep));
	size_t n = 0;
	int r;

	if (!keep)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_targets; i++)
		if (strcmp(v->targets[i], target))
			keep[n++] = v->targets[i];
	r = zcfsd_unmount_target(v->conn, target, keep, n, lazy, v->id);
	free(keep);
	if (r < 0)
		log_err("event=unmount-failed volume=%s target=%s error=\"%s\"", v->id, target, strerror(-r));
	return r;
}

/* Waits a moment for a server that fails at once (bad source, bad
 * options), so publish can report it instead of a restart loop. */
static bool server_died_early(struct zcfsd_volume *v)
{
	struct pollfd p = { .fd = v->srv.pidfd, .events = POLLIN };

	return poll(&p, 1, 200) > 0;
}

int zcfsd_volume_publish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			 struct zcfsd_err *e)
{
	return zcfsd_volume_publish_ro(d, v, target, false, e);
}

int zcfsd_volume_publish_ro(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			    bool read_only, struct zcfsd_err *e)
{
	return zcfsd_volume_publish_group(d, v, target, read_only, -1, e);
}

int zcfsd_volume_publish_group(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			       bool read_only, int64_t mount_group, struct zcfsd_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	_cleanup_close_ int tfd = -1;
	struct zcfsd_volume *owner;
	bool created_target = false, created_storage = false, first = v->n_targets == 0;
	bool ro = read_only || v->read_only;	/* a read-only volume has no writable target */
	uint64_t pinned = 0;
	size_t idx;
	int r;

	if (!t)
		return zcfsd_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				  "tenant '%s' of volume '%s' is not in the policy any more", v->tenant, v->id);
	r = check_target_string(t, target, e);
	if (r < 0)
		return r;
	owner = target_owner(d, target, &idx);
	if (owner == v)
		return check_same_target(v, target, ro, e);	/* already done, if alike */
	if (owner)
		return zcfsd_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST, "target '%s' is used by volume '%s'",
				  target, owner->id);
	if (first) {
		r = check_budget(d, v, t, &pinned, e);
		if (r < 0)
			return r;
	}
	if (!first && mount_group >= 0) {
		/* the running server has read the root's record: it stays */
		_cleanup_close_ int dfd = open_storage(t, v->id);
		if (dfd < 0 || !zcfsd_root_owner_matches(dfd, NULL, mount_group))
			return zcfsd_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
					  "volume '%s' is published with another group on its root than mount_group %lld",
					  v->id, (long long)mount_group);
	}
	tfd = open_target(target, &created_target, e);
	if (tfd < 0)
		return tfd;
	if (!first) {
		r = bind_target(v, tfd, target, ro, e);
		if (r == 0 && (r = add_target(v, target)) < 0) {
			(void)umount2(target, UMOUNT_NOFOLLOW | MNT_DETACH);
			zcfsd_fail(e, ZCFS_INTERNAL, r, "out of memory");
		}
		goto out;
	}
	r = ensure_storage(t, v->id, &created_storage, e);
	if (r < 0)
		goto out;
	if (mount_group >= 0) {
		_cleanup_close_ int dfd = open_storage(t, v->id);
		r = dfd < 0 ? zcfsd_fail(e, ZCFS_INTERNAL, dfd, "storage of '%s': %s", v->id, strerror(-dfd)) :
			      zcfsd_root_owner_apply(dfd, NULL, mount_group, e);
		if (r < 0)
			goto out;
	}
	r = mount_fuse(d, v, tfd, target, ro, zcfsd_uses_uring(v->transport, t), e);
	if (r < 0)
		goto out;
	r = add_target(v, target);
	if (r < 0) {
		zcfsd_fail(e, ZCFS_INTERNAL, r, "out of memory");
		goto undo_mount;
	}
	v->pinned = pinned;	/* charged from here on: the spawn's rlimit counts it */
	v->srv.restarts = 0;
	v->srv.backoff_ms = 0;
	r = zcfsd_spawn_server(d, v, t, e);
	if (r < 0)
		goto undo_target;
	if (server_died_early(v)) {
		r = zcfsd_fail(e, ZCFS_INTERNAL, -ECHILD,
			       "zcfs-serve for volume '%s' exited at once; see %s/logs/%s.log",
			       v->id, d->state_dir, v->id);
		zcfsd_stop_server(d, v);
		goto undo_target;
	}
	goto out;
undo_target:
	remove_target(v, v->n_targets - 1);
undo_mount:
	(void)unmount_target(v, target, true);
	v->fuse_fd = safe_close(v->fuse_fd);
	v->pinned = 0;
out:
	if (r < 0) {
		if (created_storage)
			remove_storage_dir(t, v->id);
		if (created_target)
			(void)rmdir(target);
		return r;
	}
	v->detached_reason = NULL;
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	log_info("event=publish volume=%s target=%s targets=%zu conn=%u pinned=%llu read_only=%d", v->id,
		 target, v->n_targets, v->conn, (unsigned long long)v->pinned, ro);
	return 0;
}

int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy)
{
	int r;

	/* Acknowledged writes the kernel still caches (writeback) reach the
	 * storage before a busy mount's connection is aborted. */
	if (!lazy && v->n_targets && v->srv.pid) {
		r = zcfsd_syncfs_bounded(v->targets[0], 10000);
		if (r < 0)
			log_warn("event=sync-failed volume=%s error=\"%s\"", v->id, strerror(-r));
	}
	/* Binds first: the fuse mount at targets[0] goes last. A target
	 * whose mount cannot be removed stays recorded (so does the server
	 * and its budget), and a later unpublish tries again. */
	while (v->n_targets) {
		r = unmount_target(v, v->targets[v->n_targets - 1], lazy);
		if (r < 0 && !lazy)
			return r;
		remove_target(v, v->n_targets - 1);
	}
	/* Whatever else of the connection is mounted (a target moved, a
	 * bind made behind our back) goes too. */
	if (v->conn) {
		r = zcfsd_unmount_conn(v->conn, lazy, v->id);
		if (r < 0 && !lazy) {
			log_err("event=unmount-failed volume=%s conn=%u error=\"%s\" effect=\"stays published\"",
				v->id, v->conn, strerror(-r));
			return r;
		}
		/* Lazy (cleanup after a failure): never leave a live mount to a
		 * forgotten connection; aborting makes it answer ENOTCONN. */
		if (r < 0 && zcfsd_conn_exists(v->conn))
			(void)zcfsd_conn_abort(v->conn);
	}
	zcfsd_stop_server(d, v);
	zcfsd_ringfd_release(v);	/* the next publish is a new connection */
	v->pinned = 0;
	return 0;
}

int zcfsd_volume_unpublish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			   struct zcfsd_err *e)
{
	size_t i;
	int r;

	if (!target)
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.target is required");
	if (check_path_shape(target, e) < 0)
		return -EINVAL;
	if (!path_is_normalized_absolute(target))
		return zcfsd_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				  "target '%s' is not a normalized absolute path", target);
	for (i = 0; i < v->n_targets; i++)
		if (!strcmp(v->targets[i], target))
			break;
	if (i == v->n_targets)
		return 0;	/* not published there: nothing to do */
	if (v->n_targets == 1) {
		r = zcfsd_volume_teardown(d, v, false);
	} else {
		r = unmount_target(v, target, false);
		if (r == 0)
			remove_target(v, i);
	}
	if (r < 0)
		return zcfsd_fail(e, r == -ENOTUNIQ ? ZCFS_FAILED_PRECONDITION : ZCFS_UNAVAILABLE, r,
				  "target '%s' of volume '%s' could not be unmounted (%s); it stays "
				  "published, retry", target, v->id,
				  r == -ENOTUNIQ ? "moved, and other targets moved too" : strerror(-r));
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	log_info("event=unpublish volume=%s target=%s targets=%zu", v->id, target, v->n_targets);
	return 0;
}

/* rm -rf below DFD without following symlinks or crossing mounts. */
static int rm_rf_at(int dfd, const char *name, dev_t dev)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	struct stat st;
	int fd, r = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return RET_NERRNO(unlinkat(dfd, name, 0));
	if (st.st_dev != dev)
		return -EXDEV;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		safe_close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int k = rm_rf_at(dirfd(dir), de->d_name, dev);
		if (k < 0 && r == 0)
			r = k;
	}
	if (r == 0)
		r = RET_NERRNO(unlinkat(dfd, name, AT_REMOVEDIR));
	return r;
}

int zcfsd_volume_delete(struct zcfsd *d, struct zcfsd_volume *v, struct zcfsd_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	struct zcfsd_volume **pp;
	_cleanup_free_ char *logpath = NULL;
	int r;

	if (v->n_targets)
		return zcfsd_fail(e, ZCFS_FAILED_PRECONDITION, -EBUSY,
				  "volume '%s' is published at %s; unpublish it first", v->id,
				  v->targets[0]);
	if (t) {
		_cleanup_close_ int rfd = open_nofollow(t->storage_root, O_PATH | O_DIRECTORY);
		struct stat st;
		if (rfd >= 0 && fstat(rfd, &st) == 0) {
			r = rm_rf_at(rfd, v->id, st.st_dev);
			if (r < 0)
				return zcfsd_fail(e, ZCFS_INTERNAL, r, "removing %s/%s: %s",
						  t->storage_root, v->id, strerror(-r));
		}
	}
	for (pp = &d->volumes; *pp != v; pp = &(*pp)->next)
		;
	*pp = v->next;
	if (asprintf(&logpath, "%s/logs/%s.log", d->state_dir, v->id) >= 0)
		(void)unlink(logpath);
	log_info("event=volume-delete volume=%s tenant=%s", v->id, v->tenant);
	zcfsd_volume_free(v);
	r = zcfsd_state_save(d);
	if (r < 0)
		log_err("event=state-save-failed error=%s", strerror(-r));
	return 0;
}
