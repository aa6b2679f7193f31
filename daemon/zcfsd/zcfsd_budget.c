/* Memlock budget maths: how many bytes a volume pins, how much of its
 * tenant's budget is in use, and which queue depth would still fit. */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include "log.h"
#include "parse.h"
#include "zcfsd.h"

#define PAGE 4096ULL
static uint64_t page_align(uint64_t x) { return (x + PAGE - 1) & ~(PAGE - 1); }

/* One queue's ring: SQ of DEPTH 128-byte entries (FUSE commands need
 * SQE128), CQ of 2*DEPTH 32-byte entries plus the SQ index array and the
 * ring header page. */
uint64_t zcfsd_ring_overhead(uint32_t depth)
{
	return page_align((uint64_t)depth * 128) + page_align(PAGE + (uint64_t)depth * (2 * 32 + 4));
}

/* queues = possible CPUs; each entry pins one payload buffer of max_write
 * plus a header page. /dev/fuse pins nothing. */
uint64_t zcfsd_pinned_formula(bool uses_uring, unsigned ncpus, uint32_t depth, uint32_t max_write)
{
	if (!uses_uring)
		return 0;
	return (uint64_t)ncpus * ((uint64_t)depth * ((uint64_t)max_write + PAGE) +
				  zcfsd_ring_overhead(depth));
}

bool zcfsd_uses_uring(enum policy_transport t, const struct policy_tenant *tenant)
{
	/* auto may end on io_uring, so it is charged like uring. */
	return tenant->io_uring && t != POLICY_TRANSPORT_DEVFUSE;
}

uint32_t zcfsd_depth_that_fits(unsigned ncpus, uint32_t max_write, uint64_t free_bytes)
{
	uint32_t lo = 0, hi = 1024;

	/* pinned() grows with depth: find the largest depth that fits. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (zcfsd_pinned_formula(true, ncpus, mid, max_write) <= free_bytes)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

unsigned zcfsd_possible_cpus(void)
{
	_cleanup_fclose_ FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	char buf[256], *p;
	unsigned n = 0;

	if (!f || !fgets(buf, sizeof(buf), f))
		return (unsigned)MAX(1L, sysconf(_SC_NPROCESSORS_CONF));
	/* "0-3,8-11" */
	for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
		unsigned a, b;
		int k = sscanf(p, "%u-%u", &a, &b);
		if (k == 2 && b >= a)
			n += b - a + 1;
		else if (k == 1)
			n++;
	}
	return n ? n : 1;
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
	bool uring = zcfsd_uses_uring(v->transport, t);
	char depth[32], mw[32], tr[32], out[128];
	uint64_t x;

	if (!uring) {
		*ret = 0;
		return 0;
	}
	if (d->serve_prints_pinned) {
		char *argv[] = { (char *)d->serve_bin, "--print-pinned", tr, depth, mw, "/", "/", NULL };
		snprintf(tr, sizeof(tr), "--transport=%s", policy_transport_name(v->transport));
		snprintf(depth, sizeof(depth), "--queue-depth=%u", v->queue_depth);
		snprintf(mw, sizeof(mw), "--max-write=%u", v->max_write);
		if (run_capture(argv, out, sizeof(out)) == 0 && (out[strcspn(out, "\n")] = '\0', 1) &&
		    parse_u64(out, 0, UINT64_MAX, &x) == 0) {
			*ret = x;
			return 0;
		}
		log_warn("event=print-pinned-failed volume=%s fallback=formula", v->id);
	}
	*ret = zcfsd_pinned_formula(true, d->ncpus, v->queue_depth, v->max_write);
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
