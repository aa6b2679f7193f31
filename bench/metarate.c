/*
 * metarate: small-file metadata rates for the zcfs benchmark.
 *
 *   metarate [-n FILES] [-p PROCS] DIR
 *
 * PROCS processes (default 2) each get their own directory DIR/p<i> and run
 * three phases in lock step:
 *   create  open(O_CREAT|O_EXCL|O_WRONLY) + close of FILES empty files
 *   stat    stat() of each of them
 *   unlink  unlink() of each of them
 * Every phase starts on a process-shared barrier; its wall time runs from
 * the first process starting until the last one has finished, so a rate is
 * (PROCS * FILES) / wall seconds across all of them.  Prints one JSON object on stdout; exits non-zero on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 256

enum { PHASE_CREATE, PHASE_STAT, PHASE_UNLINK, NPHASES };
static const char *const phase_name[NPHASES] = { "create", "stat", "unlink" };

struct shared {
	pthread_barrier_t barrier;
	/* Per process and phase: when it started and finished its share. */
	double start[MAX_PROCS][NPHASES];
	double end[MAX_PROCS][NPHASES];
	int failed;
	char error[256];
};

static struct shared *sh;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: metarate [-n FILES] [-p PROCS] DIR\n");
	exit(2);
}

static long parse_count(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > max)
		usage();
	return v;
}

static void record_error(const char *what, const char *path)
{
	int e = errno;

	if (!__atomic_exchange_n(&sh->failed, 1, __ATOMIC_SEQ_CST))
		snprintf(sh->error, sizeof(sh->error), "%s %s: %s", what, path, strerror(e));
}

static int run_phase(int phase, int dfd, const char *dir, long n)
{
	char name[32];
	struct stat st;
	long i;
	int fd;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%07ld", i);
		switch (phase) {
		case PHASE_CREATE:
			fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0) {
				record_error("create", dir);
				return -1;
			}
			if (close(fd) < 0) {
				record_error("close", dir);
				return -1;
			}
			break;
		case PHASE_STAT:
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				record_error("stat", dir);
				return -1;
			}
			break;
		case PHASE_UNLINK:
			if (unlinkat(dfd, name, 0) < 0) {
				record_error("unlink", dir);
				return -1;
			}
			break;
		}
	}
	return 0;
}

static void child(long idx, const char *dir, long n)
{
	int dfd, phase, failed = 0;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		record_error("open", dir);
		failed = 1;
	}
	for (phase = 0; phase < NPHASES; phase++) {
		pthread_barrier_wait(&sh->barrier); /* start */
		sh->start[idx][phase] = now();
		if (!failed && !__atomic_load_n(&sh->failed, __ATOMIC_SEQ_CST))
			failed = run_phase(phase, dfd, dir, n) < 0;
		sh->end[idx][phase] = now();
		pthread_barrier_wait(&sh->barrier); /* end */
	}
	_exit(failed ? 1 : 0);
}

/* The shared record and its process-shared barrier: nprocs workers + us. */
static int setup_shared(long nprocs)
{
	pthread_barrierattr_t ba;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("metarate: mmap");
		return -1;
	}
	memset(sh, 0, sizeof(*sh));
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	if (pthread_barrier_init(&sh->barrier, &ba, (unsigned)nprocs + 1) != 0) {
		fprintf(stderr, "metarate: pthread_barrier_init failed\n");
		return -1;
	}
	return 0;
}

/* BASE/pN for each worker, then the workers, each in its own directory. */
static int start_workers(const char *base, long nprocs, long nfiles, pid_t *pids)
{
	char path[4096];
	long p;

	for (p = 0; p < nprocs; p++) {
		snprintf(path, sizeof(path), "%s/p%ld", base, p);
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "metarate: mkdir %s: %s\n", path, strerror(errno));
			return -1;
		}
	}

	for (p = 0; p < nprocs; p++) {
		snprintf(path, sizeof(path), "%s/p%ld", base, p);
		pids[p] = fork();
		if (pids[p] < 0) {
			/* Children already started wait on the barrier forever:
			 * kill them rather than leave them behind. */
			perror("metarate: fork");
			while (--p >= 0)
				kill(pids[p], SIGKILL);
			return -1;
		}
		if (pids[p] == 0)
			child(p, path, nfiles);
	}
	return 0;
}

/* The parent only paces the phases; the wall time of a phase is from
 * the first process starting to the last one finishing, taken by the
 * workers themselves (the parent may be scheduled late on a busy box). */
static void pace_phases(long nprocs, double *secs)
{
	int phase;
	long p;

	for (phase = 0; phase < NPHASES; phase++) {
		double first, last;

		pthread_barrier_wait(&sh->barrier);
		pthread_barrier_wait(&sh->barrier);
		first = sh->start[0][phase];
		last = sh->end[0][phase];
		for (p = 1; p < nprocs; p++) {
			if (sh->start[p][phase] < first)
				first = sh->start[p][phase];
			if (sh->end[p][phase] > last)
				last = sh->end[p][phase];
		}
		secs[phase] = last - first;
	}
}

int main(int argc, char **argv)
{
	long nfiles = 5000, nprocs = 2, p;
	double secs[NPHASES];
	char path[4096];
	const char *base;
	static pid_t pids[MAX_PROCS];
	int opt, phase, status, rc = 0;

	while ((opt = getopt(argc, argv, "n:p:h")) != -1) {
		switch (opt) {
		case 'n': nfiles = parse_count(optarg, 100000000L); break;
		case 'p': nprocs = parse_count(optarg, MAX_PROCS); break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	base = argv[optind];

	if (setup_shared(nprocs) < 0 || start_workers(base, nprocs, nfiles, pids) < 0)
		return 1;
	pace_phases(nprocs, secs);

	for (p = 0; p < nprocs; p++) {
		if (waitpid(pids[p], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	}
	for (p = 0; p < nprocs; p++) {
		snprintf(path, sizeof(path), "%s/p%ld", base, p);
		rmdir(path);
	}
	if (rc || sh->failed) {
		fprintf(stderr, "metarate: %s\n", sh->error[0] ? sh->error : "a worker failed");
		return 1;
	}

	printf("{\"procs\": %ld, \"files_per_proc\": %ld", nprocs, nfiles);
	for (phase = 0; phase < NPHASES; phase++) {
		double ops = (double)(nprocs * nfiles);

		printf(", \"%s\": {\"ops\": %.0f, \"seconds\": %.6f, \"ops_per_s\": %.1f}",
		       phase_name[phase], ops, secs[phase],
		       secs[phase] > 0 ? ops / secs[phase] : 0.0);
	}
	printf("}\n");
	return 0;
}
