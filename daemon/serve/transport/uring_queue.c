/* FUSE-over-io_uring queue thread (see uring_queue.h): sets up ring and
 * buffers on its CPU, then reaps completions and answers requests until
 * asked to stop. Its entries' state machine is uring_entry.c, who owns the
 * rings the FUSE commands go on is q->rings (uring_rings.h), how payloads
 * move q->pops (uring_payload.h). */
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include "common/log.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "uring_entry.h"
#include "uring_queue.h"
#include "uring_ring.h"
#include "uring_rings.h"
#include "uring_zerocopy.h"

static void report(struct uring_queue *q, bool *done, int *err, int r)
{
	pthread_mutex_lock(&q->lock);
	if (!*done) {
		*err = r;
		*done = true;
	}
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static int wait_report(struct uring_queue *q, bool *done, int *err)
{
	int r;

	pthread_mutex_lock(&q->lock);
	while (!*done)
		pthread_cond_wait(&q->cond, &q->lock);
	r = *err;
	pthread_mutex_unlock(&q->lock);
	return r;
}

/* Our ring, then the other one its owner has us reap (a holder's). */
static void reap(struct uring_queue *q)
{
	struct io_uring *more;

	uring_entry_reap(q, &q->ring);
	more = q->rings->more_cqes(q);
	if (more)
		uring_entry_reap(q, more);
}

static int register_entries(struct uring_queue *q)
{
	int r = q->rings->attach(q);

	q->registered = true;
	return r;
}

static int queue_setup(struct uring_queue *q)
{
	int r;

	q->setup_step = "eventfd";
	q->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->efd < 0)
		return -errno;
	q->setup_step = "mmap";
	r = uring_queue_layout(q);
	if (r < 0)
		return r;
	q->setup_step = "io_uring_setup";
	r = uring_queue_ring_create(q);
	if (r < 0)
		return r;
	q->setup_step = "io_uring_submit";
	q->fixed_fuse_fd = io_uring_register_files(&q->ring, &q->se->fuse_fd, 1) == 0;
	(void)io_uring_register_ring_fd(&q->ring);
	if (q->se->opts->sandbox) {
		q->setup_step = "io_uring_restrict";
		r = sandbox_restrict_ring(&q->ring);
		if (r < 0)
			return r;
	}
	r = q->rings->setup(q);
	if (r < 0)
		return r;
	q->setup_step = "io_uring_submit";
	r = uring_queue_arm_wake(q);
	if (r == 0) {
		r = io_uring_submit(&q->ring);
		r = r < 0 ? r : 0;
	}
	return r;
}

static void pin_to_cpu(struct uring_queue *q)
{
	char name[16];
	cpu_set_t set;
	int r;

	snprintf(name, sizeof(name), "zcfs-ring-%u", q->qid);
	(void)pthread_setname_np(pthread_self(), name);
	CPU_ZERO(&set);
	CPU_SET(q->qid, &set);
	r = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (r != 0)	/* possible but offline CPU: the queue just idles */
		log_debug("qid=%u: not pinned: %s", q->qid, strerror(r));
}

/* The wait: none when the owner says completions wait already; during a
 * hand-over at most 20 ms (kicks are retried without completions too). */
static int wait_completions(struct uring_queue *q)
{
	struct __kernel_timespec ts = { .tv_nsec = 20000000 };
	struct io_uring_cqe *cqe;
	int r;

	if (q->rings->flush(q))
		return io_uring_submit(&q->ring);
	if (!q->handing_over)
		return io_uring_submit_and_wait(&q->ring, 1);
	r = io_uring_submit_and_wait_timeout(&q->ring, &cqe, 1, &ts, NULL);
	return r == -ETIME ? 0 : r;
}

static void *queue_main(void *arg)
{
	struct uring_queue *q = arg;
	int r;

	pin_to_cpu(q);
	r = queue_setup(q);
	report(q, &q->setup_done, &q->setup_err, r);
	if (r < 0)
		return NULL;
	while (!atomic_load(&q->want_stop)) {
		r = wait_completions(q);
		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			log_err("qid=%u: io_uring_enter: %s", q->qid, strerror(-r));
			session_exit(q->se, 1);
			break;
		}
		if (q->n_clear && r >= 0)
			uring_entry_clear_submitted(q);
		reap(q);
		if (atomic_load(&q->want_register) && !q->registered)
			report(q, &q->register_done, &q->register_err, register_entries(q));
		if (atomic_load(&q->want_handover) && !q->handing_over)
			q->handing_over = true;
		if (q->handing_over && (r = q->rings->handover_step(q)) != 0)
			report(q, &q->handover_done, &q->handover_err, r < 0 ? r : 0);
	}
	/* Backing I/O writes into our buffers: let it land before they go. */
	while (q->backing_inflight > 0 && io_uring_submit_and_wait(&q->ring, 1) >= 0)
		reap(q);
	report(q, &q->register_done, &q->register_err, -ESHUTDOWN);
	return NULL;
}

static void wake(struct uring_queue *q)
{
	if (q->efd >= 0 && eventfd_write(q->efd, 1) < 0)
		log_debug("qid=%u: wake: %m", q->qid);
}

int uring_queue_spawn(struct uring_queue *q, struct zcfs_session *se,
		      const struct uring_geometry *g, unsigned qid)
{
	int r;

	q->se = se;
	q->g = g;
	q->qid = qid;
	q->efd = -1;
	q->pops = &uring_payload_stock;
	q->on_cqe = uring_entry_cqe;
	if (!q->rings)
		q->rings = &uring_rings_own;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	r = -pthread_create(&q->thread, NULL, queue_main, q);
	q->started = r == 0;
	return r;
}

int uring_queue_wait_setup(struct uring_queue *q)
{
	if (!q->started)
		return -ESRCH;
	return wait_report(q, &q->setup_done, &q->setup_err);
}

void uring_queue_request_register(struct uring_queue *q)
{
	atomic_store(&q->want_register, true);
	wake(q);
}

void uring_queue_request_handover(struct uring_queue *q)
{
	atomic_store(&q->want_handover, true);
	wake(q);
}

int uring_queue_wait_handover(struct uring_queue *q, int timeout_ms)
{
	struct timespec until;
	int r = 0;

	if (!q->started)
		return 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&q->lock);
	while (!q->handover_done && r == 0)
		r = pthread_cond_timedwait(&q->cond, &q->lock, &until);
	r = q->handover_done ? q->handover_err : -ETIMEDOUT;
	pthread_mutex_unlock(&q->lock);
	return r;
}

int uring_queue_wait_register(struct uring_queue *q)
{
	if (!q->started)
		return -ESRCH;
	return wait_report(q, &q->register_done, &q->register_err);
}

void uring_queue_stop(struct uring_queue *q)
{
	if (!q->g)
		return;		/* never spawned */
	if (q->started) {
		atomic_store(&q->want_stop, true);
		wake(q);
		pthread_join(q->thread, NULL);
		q->started = false;
	}
	if (q->ring_ok)
		io_uring_queue_exit(&q->ring);
	q->ring_ok = false;
	q->rings->release(q);
	zerocopy_queue_free(q);
	if (q->mem && !q->rm)
		munmap(q->mem, q->mem_size);
	q->mem = NULL;
	free(q->ents);
	q->ents = NULL;
	q->efd = safe_close(q->efd);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	q->g = NULL;
}
