/* The standard process_* metrics of the Prometheus client libraries, for
 * the process itself (zcfsd, zcfs-csi, the volume plugin; names, types and
 * units as the client libraries define them), from
 * /proc/self: CPU seconds, resident and virtual memory, open and maximum
 * fds, start time. A figure /proc does not give is left out, never 0. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "fileio.h"
#include "opmetrics.h"

/* Fields of /proc/self/stat after "(comm)": utime stime (14, 15),
 * starttime (22), vsize (23), rss in pages (24). */
struct proc_stat {
	unsigned long long utime, stime, starttime, vsize;
	long long rss;
};

static int read_proc_stat(struct proc_stat *ps)
{
	char buf[1024], *p;
	size_t n;
	FILE *f = fopen("/proc/self/stat", "re");

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* comm may hold spaces and parentheses */
	if (!p)
		return -EINVAL;
	/* field 3 (state) onwards */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d "
		   "%llu %llu %lld", &ps->utime, &ps->stime, &ps->starttime, &ps->vsize, &ps->rss) != 5)
		return -EINVAL;
	return 0;
}

/* /proc/stat btime: the boot time in Unix seconds. */
static int boot_time(long long *ret)
{
	char line[256];
	FILE *f = fopen("/proc/stat", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", ret) == 1) {
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

static long open_fds(void)
{
	long n = dir_count_entries("/proc/self/fd");

	return n < 0 ? n : n - 1;	/* the directory's own fd */
}

void metrics_write_process(FILE *f)
{
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
	struct proc_stat ps;
	struct rlimit rl;
	long long btime;

	if (read_proc_stat(&ps) == 0 && tck > 0) {
		fprintf(f, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
			   "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
			(double)(ps.utime + ps.stime) / (double)tck);
		fprintf(f, "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
			   "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes %llu\n",
			ps.vsize);
		if (page > 0 && ps.rss >= 0)
			fprintf(f, "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
				   "# TYPE process_resident_memory_bytes gauge\n"
				   "process_resident_memory_bytes %lld\n", ps.rss * page);
		if (boot_time(&btime) == 0)
			fprintf(f, "# HELP process_start_time_seconds Start time of the process since unix epoch "
				   "in seconds.\n# TYPE process_start_time_seconds gauge\n"
				   "process_start_time_seconds %.2f\n",
				(double)btime + (double)ps.starttime / (double)tck);
	}
	if (fds >= 0)
		fprintf(f, "# HELP process_open_fds Number of open file descriptors.\n"
			   "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n", fds);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		fprintf(f, "# HELP process_max_fds Maximum number of open file descriptors.\n"
			   "# TYPE process_max_fds gauge\nprocess_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
	/* -1: unlimited, as the Go client writes it */
	if (getrlimit(RLIMIT_AS, &rl) == 0)
		fprintf(f, "# HELP process_virtual_memory_max_bytes Maximum amount of virtual memory available "
			   "in bytes.\n# TYPE process_virtual_memory_max_bytes gauge\n"
			   "process_virtual_memory_max_bytes %lld\n",
			rl.rlim_cur == RLIM_INFINITY ? -1LL : (long long)rl.rlim_cur);
}
