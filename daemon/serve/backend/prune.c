/* FUSE_NOTIFY_PRUNE when the inode table nears RLIMIT_NOFILE (prune.h).
 * The notification is written from a thread of its own: evicting an
 * inode can wait for its dirty pages to be written back, i.e. for
 * requests that the serving threads must stay free to answer. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <time.h>
#include "daemon/serve/sandbox/caps.h"
#include "inode.h"
#include "common/log.h"
#include "prune.h"
#include "daemon/serve/core/fuse_wire.h"
#include "kernel/zcfs_fuse_abi.h"

#define PRUNE_BATCH 512
#define PRUNE_MIN_MINOR 45

struct zcfs_prune {
	struct zcfs_session *se;
	size_t high, low;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t below;		/* the table fell below high (prune_forgot) */
	atomic_uint waiters;		/* requests in prune_wait */
	bool wanted, stop;
	atomic_bool unsupported;	/* read by request threads (prune_wait) */
	time_t last_log;
	uint64_t ids[PRUNE_BATCH];
};

void prune_marks(size_t nofile, size_t *high, size_t *low)
{
	/* The inodes held are the kernel's cache of the volume: prune late
	 * and a little. Bursts past the limit (a READDIRPLUS reply takes
	 * dozens at once) wait for the pruning (prune_wait). */
	*high = nofile - nofile / 8;
	*low = nofile - nofile / 4;
}

/* ms from now, for pthread_cond_timedwait (CLOCK_REALTIME). */
static void deadline_ms(struct timespec *until, long ms)
{
	clock_gettime(CLOCK_REALTIME, until);
	until->tv_nsec += ms * 1000000L;
	until->tv_sec += until->tv_nsec / 1000000000L;
	until->tv_nsec %= 1000000000L;
}

/* Waits ms for FORGETs to come in; false when asked to stop. */
static bool pause_ms(struct zcfs_prune *p, long ms)
{
	struct timespec until;
	bool stop;

	deadline_ms(&until, ms);
	pthread_mutex_lock(&p->lock);
	if (!p->stop)
		(void)pthread_cond_timedwait(&p->cond, &p->lock, &until);
	stop = p->stop;
	pthread_mutex_unlock(&p->lock);
	return !stop;
}

static int ask_kernel(struct zcfs_prune *p, size_t n)
{
	struct zcfs_notify_prune_out out = { .count = (uint32_t)n };
	struct iovec iov[2] = { { .iov_base = &out, .iov_len = sizeof(out) },
				{ .iov_base = p->ids, .iov_len = n * sizeof(p->ids[0]) } };

	return fuse_notify(p->se, ZCFS_FUSE_NOTIFY_PRUNE, iov, 2);
}

static void prune_round(struct zcfs_prune *p)
{
	struct zcfs_session *se = p->se;
	size_t before = inode_table_count(se->inodes), asked = 0, n, batches;
	time_t now = time(NULL);
	int r = 0;

	if (!atomic_load(&se->initialized) || atomic_load(&p->unsupported))
		return;
	if (se->proto_minor < PRUNE_MIN_MINOR) {
		atomic_store(&p->unsupported, true);
		log_warn("%zu inodes held, near the descriptor limit, but the kernel (FUSE 7.%u) cannot "
			 "be asked to forget any (FUSE_NOTIFY_PRUNE needs 7.%d): raise RLIMIT_NOFILE",
			 before, se->proto_minor, PRUNE_MIN_MINOR);
		return;
	}
	/* Until below the low mark; what the kernel keeps is in use (or in a
	 * reply it has not taken in yet), so a few sweeps at most. */
	for (batches = 0; batches <= 4 * (before / PRUNE_BATCH + 1) &&
			  inode_table_count(se->inodes) > p->low; batches++) {
		n = inode_prune_candidates(se->inodes, p->ids, PRUNE_BATCH);
		if (!n)
			break;
		r = ask_kernel(p, n);
		if (r < 0)
			break;
		asked += n;
		/* The evicted inodes' FORGETs are queued: let them in. */
		if (!pause_ms(p, 2))
			return;
	}
	if (r == -ENOSYS || r == -EINVAL) {
		atomic_store(&p->unsupported, true);
		log_warn("FUSE_NOTIFY_PRUNE refused by the kernel (%s): inodes are kept until the "
			 "kernel forgets them", strerror(-r));
	} else if (r < 0) {
		log_warn("FUSE_NOTIFY_PRUNE: %s", strerror(-r));
	}
	log_debug("prune round: %zu inodes before, asked %zu, %zu after", before, asked,
		  inode_table_count(se->inodes));
	if (now - p->last_log >= 10) {
		p->last_log = now;
		log_info("descriptor pressure: %zu inodes held (prune above %zu): asked the kernel to "
			 "forget %zu unused, %zu held now", before, p->high, asked,
			 inode_table_count(se->inodes));
	}
}

static void *prune_main(void *arg)
{
	struct zcfs_prune *p = arg;

	(void)pthread_setname_np(pthread_self(), "zcfs-prune");
	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		if (!p->wanted) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		/* A wakeup during the round asks for another one: a request
		 * may be waiting for descriptors (prune_wait). */
		p->wanted = false;
		pthread_mutex_unlock(&p->lock);
		prune_round(p);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int prune_start(struct zcfs_session *se, struct zcfs_prune **ret)
{
	struct zcfs_prune *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	struct rlimit rl;
	int r;

	if (!p)
		return -ENOMEM;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		rl.rlim_cur = 1 << 20;
	prune_marks((size_t)rl.rlim_cur, &p->high, &p->low);
	p->se = se;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->below, NULL);
	/* No signal for this thread (process-directed ones must reach main's
	 * signalfd) but the per-thread CAP_SYS_ADMIN drop. */
	sigfillset(&all);
	caps_keep_drop_signal(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = -pthread_create(&p->thread, NULL, prune_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		pthread_cond_destroy(&p->below);
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return r;
	}
	*ret = p;
	return 0;
}

void prune_check(struct zcfs_prune *p, size_t inodes)
{
	if (!p || inodes <= p->high)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->wanted) {
		p->wanted = true;
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
}

void prune_forgot(struct zcfs_prune *p, size_t inodes)
{
	if (!p || inodes >= p->high)
		return;
	/* Pairs with the fence in prune_wait: either it sees the count this
	 * FORGET lowered, or this sees it waiting. */
	atomic_thread_fence(memory_order_seq_cst);
	if (!atomic_load(&p->waiters))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->below);
	pthread_mutex_unlock(&p->lock);
}

int prune_wait(struct zcfs_prune *p)
{
	struct timespec until;
	int r = 0;

	if (!p || atomic_load(&p->unsupported))
		return -EMFILE;
	prune_check(p, SIZE_MAX);
	deadline_ms(&until, 50);
	pthread_mutex_lock(&p->lock);
	atomic_fetch_add(&p->waiters, 1);
	atomic_thread_fence(memory_order_seq_cst);
	while (inode_table_count(p->se->inodes) >= p->high && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&p->below, &p->lock, &until);
	atomic_fetch_sub(&p->waiters, 1);
	pthread_mutex_unlock(&p->lock);
	return inode_table_count(p->se->inodes) < p->high ? 0 : -EMFILE;
}

void prune_stop(struct zcfs_prune *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->below);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
