/* zcfs-serve --ring-holder (see uring_holder.h, common/ring_holder.h):
 * run by zcfsd as the tenant, before a volume's first server, with the fuse
 * fd (--fd) and the ring memfd (--ring-memfd). It maps the memfd (at the
 * address an earlier holder or server of the connection used, so requests
 * their entries hold stay answerable), creates one SQPOLL | SQE128 ring per
 * queue, disabled, registers the fuse fd as fixed file 0, restricts the
 * ring (URING_CMD on a fixed file, no registration op) and enables it,
 * publishes the ring parameters in the memfd and the ring fds at
 * ZCFS_HOLDER_RING_FD + q, closes everything else, says ready on stdout
 * and sleeps under a seccomp filter that allows nothing but that. Its sq
 * threads issue the servers' commands. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "common/log.h"
#include "common/ring_holder.h"
#include "daemon/serve/core/options.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "uring_geometry.h"
#include "uring_holder.h"
#include "uring_ringmem.h"

/* How long an sq thread polls after the last SQE before it sleeps (0 would
 * be the kernel's 1 s of spinning): each sleep costs the next submission a
 * wakeup, each ms of polling a CPU's ms. Measured in the proof harness: 1,
 * 10 and 1000 ms give the same throughput. */
#define HOLDER_SQ_IDLE_MS 1

static int holder_ring(const struct uring_geometry *g, unsigned qid, int fuse_fd,
		       struct io_uring_params *out, int *ring_fd)
{
	struct io_uring_params p;
	struct io_uring ring;
	int r = -EINVAL;

	/* The sq thread on the queue's CPU where it can be (SQ_AFF fails
	 * for an offline CPU: then unpinned). */
	for (int aff = 1; aff >= 0 && r == -EINVAL; aff--) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQE128 | IORING_SETUP_R_DISABLED |
			  (aff ? IORING_SETUP_SQ_AFF : 0);
		p.sq_thread_cpu = qid;
		p.sq_thread_idle = HOLDER_SQ_IDLE_MS;
		r = io_uring_queue_init_params(g->ring_entries, &ring, &p);
	}
	if (r < 0)
		return r;
	r = io_uring_register_files(&ring, &fuse_fd, 1);
	if (r == 0)
		r = sandbox_restrict_holder_ring(ring.ring_fd);
	if (r == 0 && dup2(ring.ring_fd, ZCFS_HOLDER_RING_FD + (int)qid) < 0)
		r = -errno;
	if (r < 0) {
		io_uring_queue_exit(&ring);
		return r;
	}
	/* The ring lives on in the fd at its number; this mapping is not
	 * needed (the servers map their own). */
	io_uring_queue_exit(&ring);
	*out = p;
	*ring_fd = ZCFS_HOLDER_RING_FD + (int)qid;
	return 0;
}

static int holder_geometry(const struct zcfs_options *o, struct uring_geometry *g)
{
	size_t cqes_off = URING_DEFAULT_CQES_OFF;
	long page = sysconf(_SC_PAGESIZE);
	unsigned ncpu;
	int r = uring_possible_cpus(&ncpu);

	if (r == 0)
		r = uring_probe_layout(o->queue_depth + 1, &cqes_off);
	if (r < 0)
		return r;
	uring_geometry_for_options(g, o, ncpu, page > 0 ? (size_t)page : 4096, cqes_off);
	return g->nr_queues > ZCFS_HOLDER_RINGS_MAX ? -E2BIG : 0;
}

static int holder_setup(const struct zcfs_options *o, unsigned *nrings, uint64_t *epoch)
{
	struct uring_geometry g;
	struct ringmem *rm = NULL;
	const char *step = "geometry";
	int r, fd;

	r = holder_geometry(o, &g);
	if (r == 0) {
		step = "ring memfd";
		r = ringmem_attach(o->ring_memfd, &g, true, false, &rm);
	}
	if (r == 0) {
		/* Pages stay resident while no server runs (counted as the
		 * servers' buffers: the same pages). */
		if (mlock(rm->base, rm->size) < 0)
			log_info("ring holder: ring memory not locked: %m");
		*epoch = ringmem_holder_begin(rm);
	}
	for (unsigned q = 0; r == 0 && q < g.nr_queues; q++) {
		step = "ring";
		r = holder_ring(&g, q, o->fuse_fd, ringmem_holder_params(rm, q), &fd);
	}
	if (r < 0) {
		log_err("ring holder: %s: %s", step, strerror(-r));
		return r;
	}
	*nrings = g.nr_queues;
	/* The mapping stays (the sq threads reach the buffers through it);
	 * the fds go: the rings hold the fuse fd as their fixed file. */
	free(rm);
	return 0;
}

int uring_holder_run(const struct zcfs_options *o)
{
	uint64_t epoch = 0;
	unsigned n = 0;
	int null;

	/* Not ptrace-able by the tenant's other processes (the servers). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || holder_setup(o, &n, &epoch) < 0)
		return 1;
	(void)close(o->fuse_fd);
	(void)close(o->ring_memfd);
	printf("%s%u epoch=%llu\n", ZCFS_HOLDER_READY, n, (unsigned long long)epoch);
	fflush(stdout);
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0 ||
	    dup2(null, STDIN_FILENO) < 0)
		return 1;
	(void)close(null);
	if (sandbox_holder_seccomp() < 0)
		return 1;
	for (;;)
		pause();
}
