/* Memlock budget maths: how many bytes a volume pins (the sizing
 * zcfs-serve allocates with, daemon/common/uring_sizing.c), how much of
 * its tenant's budget is in use, and which queue depth would still fit. */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include "daemon/common/log.h"
#include "daemon/common/parse.h"
#include "daemon/common/uring_sizing.h"
#include "zcfsd.h"

bool zcfsd_uses_uring(enum policy_transport t, const struct policy_tenant *tenant)
{
	/* auto may end on io_uring, so it is charged like uring. */
	return tenant->io_uring && t != POLICY_TRANSPORT_DEVFUSE;
}

/* What v's servers lay out: the one sizing of daemon/common, fed what
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

int zcfsd_pinned_bytes(struct zcfsd *d, const struct zcfsd_volume *v,
		       const struct policy_tenant *t, uint64_t *ret)
{
	*ret = zcfsd_uses_uring(v->transport, t) ? pinned_for(d->ncpus, v->queue_depth, v->max_write) : 0;
	return 0;
}

uint64_t zcfsd_tenant_used(struct zcfsd *d, const char *tenant)
{
	uint64_t used = 0;

	for (struct zcfsd_volume *v = d->volumes; v; v = v->next)
		if (v->n_targets && !strcmp(v->tenant, tenant))
			used += v->pinned;
	return used;
}
