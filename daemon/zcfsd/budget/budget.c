/* Memlock budget maths: how many bytes a volume pins (the sizing
 * zcfs-serve allocates with, common/uring_sizing.c), how much of
 * its tenant's budget is in use, and which queue depth would still fit. */
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <cap-ng.h>
#include <sys/wait.h>
#include "common/log.h"
#include "common/parse.h"
#include "common/uring_sizing.h"
#include "budget.h"

/* What v's servers lay out: the one sizing of common, fed what
 * zcfsd passes them (--queue-depth, --max-write, --buffer-pool=auto
 * budgeting a pool of queue_depth buffers). */
static uint64_t pinned_for(unsigned ncpus, uint32_t depth, uint32_t max_write)
{
	struct uring_geometry g;

	uring_geometry_init(&g, ncpus, depth, max_write, max_write / 4096, 4096, URING_DEFAULT_CQES_OFF);
	uring_geometry_allow_pool(&g, depth);
	return uring_pinned_bytes(&g);
}

void zcfsd_resolve_geometry(unsigned ncpus, bool uring, uint32_t *depth, uint32_t *max_write)
{
	const struct uring_sizing s = { .ncpus = ncpus, .depth = *depth, .max_write = *max_write,
					.page_size = 4096, .cqes_off = URING_DEFAULT_CQES_OFF };
	struct uring_geometry g;

	if (uring) {
		uring_geometry_choose(&g, &s);
		*depth = g.depth;
		*max_write = g.max_write;
	}
	if (!*depth)
		*depth = URING_PREFERRED_DEPTH;
	if (!*max_write)
		*max_write = URING_PREFERRED_MAX_WRITE;
}

uint32_t zcfsd_depth_that_fits(unsigned ncpus, uint32_t max_write, uint64_t free_bytes)
{
	uint32_t depth;

	for (depth = 1024; depth > 0; depth--)
		if (pinned_for(ncpus, depth, max_write) <= free_bytes)
			break;
	return depth;
}

unsigned zcfsd_possible_cpus(void)
{
	unsigned n;

	if (uring_possible_cpus(&n) < 0)
		n = (unsigned)MAX(1L, sysconf(_SC_NPROCESSORS_CONF));
	return n;
}

/* Runs ARGV (no shell) and returns its stdout (truncated to LEN) in BUF. */
static int run_capture(char *const argv[], char *buf, size_t len)
{
	int p[2], status, r = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		safe_close(p[0]);
		safe_close(p[1]);
		return r;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(p[1], STDOUT_FILENO);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	safe_close(p[1]);
	while ((size_t)got < len - 1 && (n = read(p[0], buf + got, len - 1 - (size_t)got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		got += n;
	}
	buf[got] = '\0';
	safe_close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		r = -EIO;
	return r;
}

bool zcfsd_serve_has_option(const char *serve_bin, const char *option)
{
	char *argv[] = { (char *)serve_bin, "--help", NULL };
	char buf[16384];

	return run_capture(argv, buf, sizeof(buf)) == 0 && strstr(buf, option);
}

/* A ring holder volume has two rings per queue: the holder's (FUSE
 * commands) and the server's own (backing I/O, its wait); both are
 * locked memory of the tenant's uid. */
static uint64_t holder_rings_extra(unsigned ncpus, uint32_t depth, uint32_t max_write)
{
	struct uring_geometry g;

	uring_geometry_init(&g, ncpus, depth, max_write, max_write / 4096, 4096, URING_DEFAULT_CQES_OFF);
	return (uint64_t)ncpus * uring_ring_bytes(&g);
}

int zcfsd_pinned_bytes(struct zcfsd *d, const struct zcfsd_volume *v,
		       const struct policy_tenant *t, uint64_t *ret)
{
	*ret = 0;
	if (!zcfsd_volume_uses_uring(v, t))
		return 0;
	*ret = pinned_for(d->ncpus, v->queue_depth, v->max_write);
	if (v->ring_holder)
		*ret += holder_rings_extra(d->ncpus, v->queue_depth, v->max_write);
	return 0;
}

void zcfsd_pinned_layouts(struct zcfsd *d, const struct zcfsd_volume *v, const struct policy_tenant *t,
			  uint64_t *stock, uint64_t *pool)
{
	struct uring_geometry g;
	uint64_t extra;

	*stock = *pool = 0;
	if (!t || !zcfsd_volume_uses_uring(v, t))
		return;
	extra = v->ring_holder ? holder_rings_extra(d->ncpus, v->queue_depth, v->max_write) : 0;
	uring_geometry_init(&g, d->ncpus, v->queue_depth, v->max_write, v->max_write / 4096, 4096,
			    URING_DEFAULT_CQES_OFF);
	*stock = uring_pinned_bytes(&g) + extra;
	g.pool_unpinned = true;
	uring_geometry_set_pool(&g, v->queue_depth);
	*pool = uring_pinned_bytes(&g) + extra;
}

uint64_t zcfsd_tenant_used(struct zcfsd *d, const char *tenant)
{
	uint64_t used = 0;

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->n_targets && !strcmp(v->tenant, tenant))
			used += v->pinned;
	return used;
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

/* Whether this kernel can run FUSE-over-io_uring for a server of the
 * tenant's uid; if not, why in REASON. Cheap: two files, no probe mount. */
static bool kernel_refuses_uring(char *reason, size_t len)
{
	char buf[8] = "";
	_cleanup_close_ int fd = open("/sys/module/fuse/parameters/enable_uring", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0) {
		snprintf(reason, len, "kernel: no FUSE-over-io_uring (no fuse.enable_uring parameter)");
		return true;
	}
	if (buf[0] != 'Y') {
		snprintf(reason, len, "kernel: fuse.enable_uring is N");
		return true;
	}
	safe_close(fd);
	fd = open("/proc/sys/kernel/io_uring_disabled", O_RDONLY | O_CLOEXEC);
	memset(buf, 0, sizeof(buf));
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && buf[0] != '0') {
		snprintf(reason, len, "kernel: io_uring_disabled is %c", buf[0]);
		return true;
	}
	return false;
}

/* The check itself: 0, or RESOURCE_EXHAUSTED in E with a short REASON
 * (what did not fit) for transport auto's fallback. */
static int budget_fit(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		      uint64_t *pinned, char *reason, size_t len, struct zcfs_err *e)
{
	uint64_t used = zcfsd_tenant_used(d, t->name), free_bytes, node = node_memlock_limit();
	uint64_t node_free = node > used ? node - used : 0;
	bool node_bound;
	uint32_t fits;
	char hint[96];
	int r;

	r = zcfsd_pinned_bytes(d, v, t, pinned);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "computing pinned memory: %s", strerror(-r));
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
	snprintf(reason, len, "%s: io_uring needs %llu bytes pinned, %llu free",
		 node_bound ? "RLIMIT_MEMLOCK" : "memlock budget", (unsigned long long)*pinned,
		 (unsigned long long)free_bytes);
	if (node_bound)
		return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
				 "node memlock limit: volume '%s' needs %llu bytes pinned "
				 "(queue_depth=%u, max_write=%u, %u queues) but zcfsd can grant tenant '%s' "
				 "only %llu more (its hard RLIMIT_MEMLOCK is %llu and it lacks "
				 "CAP_SYS_RESOURCE); %s",
				 v->id, (unsigned long long)*pinned, v->queue_depth, v->max_write,
				 d->ncpus, t->name, (unsigned long long)free_bytes,
				 (unsigned long long)node, hint);
	return zcfs_fail(e, ZCFS_RESOURCE_EXHAUSTED, -EDQUOT,
			 "tenant '%s' memlock budget: volume '%s' needs %llu bytes pinned "
			 "(queue_depth=%u, max_write=%u, %u queues) but %llu of %llu are free; %s%s",
			 t->name, v->id, (unsigned long long)*pinned, v->queue_depth, v->max_write,
			 d->ncpus, (unsigned long long)free_bytes,
			 (unsigned long long)t->memlock_budget, hint,
			 fits ? "" : ": unpublish a volume or raise memlock_budget");
}

/* transport auto: the best path that fits. io_uring when the kernel
 * runs it and its pinned memory fits, else /dev/fuse (nothing pinned),
 * with the reason kept in v->fallback. Only an explicit uring fails. */
int zcfsd_budget_check(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       uint64_t *pinned, struct zcfs_err *e)
{
	struct zcfs_err e2 = { 0 };
	char reason[sizeof(v->fallback)];
	bool is_auto = v->transport == POLICY_TRANSPORT_AUTO && t->io_uring;
	int r;

	v->fallback[0] = '\0';
	*pinned = 0;
	if (is_auto && kernel_refuses_uring(reason, sizeof(reason)))
		r = -EOPNOTSUPP;
	else
		r = budget_fit(d, v, t, pinned, reason, sizeof(reason), &e2);
	if (r == 0)
		return 0;
	if (!is_auto || (r != -EDQUOT && r != -EOPNOTSUPP))
		return zcfs_fail(e, e2.code, r, "%s", e2.msg);
	snprintf(v->fallback, sizeof(v->fallback), "%s", reason);
	*pinned = 0;
	log_warn("event=transport-fallback volume=%s tenant=%s transport=auto data_path=devfuse reason=\"%s\"",
		 v->id, t->name, v->fallback);
	return 0;
}

bool zcfsd_volume_uses_uring(const struct zcfsd_volume *v, const struct policy_tenant *t)
{
	return !v->fallback[0] && zcfsd_uses_uring(v->transport, t);
}

void zcfsd_data_path_reason(const struct zcfsd_volume *v, const struct policy_tenant *t,
			    char *buf, size_t len)
{
	if (v->fallback[0])
		snprintf(buf, len, "transport auto fell back to /dev/fuse: %s", v->fallback);
	else if (!t || !t->io_uring)
		snprintf(buf, len, "tenant may not use io_uring (data_paths.io_uring)");
	else if (v->transport == POLICY_TRANSPORT_DEVFUSE)
		snprintf(buf, len, "transport devfuse asked for");
	else if (v->transport == POLICY_TRANSPORT_URING)
		snprintf(buf, len, "transport uring asked for");
	else if (v->n_targets)
		snprintf(buf, len, "transport auto: io_uring fits (%llu bytes pinned)",
			 (unsigned long long)v->pinned);
	else
		snprintf(buf, len, "transport auto: decided at the first publish");
}
