/* FUSE-over-io_uring transport: one queue per possible CPU (the kernel's
 * num_possible_cpus(), qid = CPU), each a pinned thread with its own ring,
 * plus one /dev/fuse reader for what never takes the ring (INIT, FORGET,
 * INTERRUPT, requests sent before the ring is ready). When the kernel does
 * not offer FUSE_OVER_IO_URING or refuses REGISTER, it keeps serving over
 * /dev/fuse with enough readers -- unless io_uring was asked for
 * explicitly, which makes that a fatal error. */
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "daemon/serve/sandbox/caps.h"
#include "common/log.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "transport.h"
#include "uring_geometry.h"
#include "uring_ringmem.h"
#include "uring_queue.h"
#include "uring_rings.h"
#include "uring_zerocopy.h"

#define ENABLE_URING_PARAM "/sys/module/fuse/parameters/enable_uring"

struct uring_transport {
	struct uring_geometry g;
	struct uring_queue *queues;
	struct devfuse_pool *pool;	/* INIT, FORGET, INTERRUPT */
	struct devfuse_pool *fallback;	/* everything, once the ring is off */
	bool queues_ok;			/* set up and waiting for REGISTER */
	bool offered;			/* kernel offered FUSE_OVER_IO_URING */
	uint64_t offered_flags;		/* everything INIT offered */
	struct uring_ext_plan plan;	/* 7.46 pools / zero-copy, decided at INIT */
	struct ringmem *rm;		/* --ring-memfd */
};

static const char *errname(int r)
{
	const char *n = strerrorname_np(-r);

	return n ? n : "unknown";
}

int transport_uring_probe(char *reason, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen(ENABLE_URING_PARAM, "re");
	size_t cqes_off;
	char v[8] = "";
	int r;

	if (!f) {
		snprintf(reason, len, "kernel has no FUSE-over-io_uring (no %s)", ENABLE_URING_PARAM);
		return -EOPNOTSUPP;
	}
	if (!fgets(v, sizeof(v), f) || v[0] != 'Y') {
		snprintf(reason, len, "enable_uring=N");
		return -EOPNOTSUPP;
	}
	r = uring_probe_layout(2, &cqes_off);
	if (r < 0) {
		snprintf(reason, len, "no SQE128 io_uring: %s", strerror(-r));
		return -EOPNOTSUPP;
	}
	return 0;
}

static void wake_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, DEVFUSE_WAKE_SIGNAL);
}

/* Readers are created with the wake signal unblocked; every other thread
 * (the caller, the queues) keeps it blocked. */
static int start_readers(struct zcfs_session *se, int n, bool splice_reads, struct devfuse_pool **pool)
{
	sigset_t set, old;
	int r;

	wake_signal_set(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, &old);
	r = devfuse_pool_start(se, n, splice_reads, pool);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static void stop_queues(struct uring_transport *t)
{
	unsigned i;

	if (!t->queues)
		return;
	for (i = 0; i < t->g.nr_queues; i++)
		uring_queue_stop(&t->queues[i]);
	free(t->queues);
	t->queues = NULL;
	t->queues_ok = false;
	ringmem_detach(t->rm);
	t->rm = NULL;
}

/* Serve on /dev/fuse from now on; `why` ends up in the init log line. */
static int fall_back(struct zcfs_session *se, struct uring_transport *t, const char *why,
		     bool free_queues)
{
	int n = MAX(se->nthreads, 1), r = 0;

	if (se->opts->transport == ZCFS_TRANSPORT_URING) {
		log_err("--transport=uring: io_uring cannot be used: %s", why);
		return -EOPNOTSUPP;
	}
	/* Queues with registered entries must keep serving: the kernel may
	 * still route requests to them. */
	if (free_queues)
		stop_queues(t);
	t->queues_ok = false;
	if (n > 1)
		r = start_readers(se, n - 1, true, &t->fallback);
	if (r < 0)
		log_err("starting /dev/fuse readers: %s", strerror(-r));
	snprintf(se->transport_desc, sizeof(se->transport_desc),
		 "transport=devfuse threads=%d reason=%s", n, why);
	return r;
}

static int start_queues(struct zcfs_session *se, struct uring_transport *t, const char **step)
{
	bool holder = se->opts->holder_rings >= 0;
	unsigned i, n;
	int r = 0, k;

	t->queues = calloc(t->g.nr_queues, sizeof(*t->queues));
	if (!t->queues)
		return -ENOMEM;
	if (se->opts->ring_memfd >= 0 && !t->rm) {
		/* On holder rings the holder mapped it first: only ever at
		 * its address. */
		r = ringmem_attach(se->opts->ring_memfd, &t->g, se->opts->resume || holder,
				   se->opts->standby_fd >= 0 || holder, &t->rm);
		if (r < 0) {
			*step = "ring-memfd";
			return r;
		}
	}
	for (n = 0; n < t->g.nr_queues && r == 0; n++) {
		t->queues[n].rm = t->rm;
		t->queues[n].rings = holder ? &uring_rings_holder : &uring_rings_own;
		if (holder)
			t->queues[n].holder_fd = se->opts->holder_rings + (int)n;
		t->queues[n].ext = &t->plan;	/* read once asked to register */
		r = uring_queue_spawn(&t->queues[n], se, &t->g, n);
	}
	/* Wait for every spawned thread, even after a failure. */
	for (i = 0; i < n; i++) {
		k = uring_queue_wait_setup(&t->queues[i]);
		if (k < 0 && r == 0) {
			r = k;
			*step = t->queues[i].setup_step;
		}
	}
	return r;
}

/* What is really pinned: every ring, what mlock accepted (headers and
 * payloads, or the headers alone beside an unpinned pool), and a
 * registered pool (the registration pins it, locked or not). */
static uint64_t locked_bytes(const struct uring_transport *t)
{
	uint64_t sum = 0, pool = bufpool_bytes(t->g.payload_bufs, t->g.payload_size);
	unsigned i;

	for (i = 0; i < t->g.nr_queues; i++) {
		const struct uring_queue *q = &t->queues[i];
		sum += uring_ring_bytes(&t->g) + (q->locked ? uring_queue_lock_bytes(&t->g) : 0);
		if (q->pool_fixed && !q->locked)
			sum += pool;
	}
	return sum;
}

static int uring_start(struct zcfs_session *se)
{
	struct uring_transport *t = calloc(1, sizeof(*t));
	const char *step = NULL;
	sigset_t set;
	char why[80];
	int r;

	if (!t)
		return -ENOMEM;
	se->transport_priv = t;
	wake_signal_set(&set);
	r = devfuse_wake_signal_install();
	if (r < 0)
		return r;
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -errno;
	r = uring_geometry_for_session(&t->g, se);
	/* Queues first: INIT may arrive as soon as a reader runs, and it
	 * must know whether the ring can be offered. */
	if (r == 0)
		r = start_queues(se, t, &step);
	/* Every ring exists now (restricted) and no request was read yet:
	 * from here on no thread may create one (sandbox.h). */
	if (se->opts->sandbox) {
		int k = sandbox_seal_rings();
		if (k < 0) {
			log_err("sandbox: sealing io_uring ring creation: %s", strerror(-k));
			return k;
		}
	}
	if (r < 0) {
		snprintf(why, sizeof(why), "ring_setup_failed:%s:%s", step ? step : "sizing",
			 errname(r));
		r = fall_back(se, t, why, true);
	} else {
		t->queues_ok = true;
		snprintf(se->transport_desc, sizeof(se->transport_desc),
			 "transport=uring queues=%u depth=%u pinned=%llu%s reason=%s", t->g.nr_queues,
			 t->g.depth, (unsigned long long)locked_bytes(t),
			 se->opts->holder_rings >= 0 ? " rings=holder" : "",
			 se->transport_reason[0] ? se->transport_reason : "requested");
	}
	if (r == 0)
		r = start_readers(se, 1, false, &t->pool);
	return r;
}

static uint64_t uring_init_flags(struct zcfs_session *se, uint64_t offered)
{
	struct uring_transport *t = se->transport_priv;

	t->offered = (offered & FUSE_OVER_IO_URING) != 0;
	t->offered_flags = offered;
	if (!t->queues_ok || !t->offered)
		return 0;
	/* Echo the pool capability: whether the kernel requires it is
	 * unconfirmed, and a kernel without pools ignores it. */
	return FUSE_OVER_IO_URING |
	       (se->opts->buffer_pool != ZCFS_BUFPOOL_OFF ? FUSE_HAS_IO_URING_BUFPOOL : 0);
}

static const char *pool_word(const struct uring_ext_plan *p)
{
	return !p->pool ? "off" : p->registered ? "registered" : "unregistered";
}

/* A successor (--resume) on a connection whose queues a predecessor set
 * up: the kernel keeps their form (zero-copy, the pool and its address)
 * and refuses stock entries on a pool queue, so the recorded form is
 * taken over rather than decided again. 1 when there was one, 0 when not,
 * -EPROTO when the memfd records a form this mapping cannot hold. */
static int adopt_recorded(const struct zcfs_session *se, struct uring_transport *t, unsigned *pool_bufs)
{
	struct uring_ext_plan *p = &t->plan;
	unsigned f = 0, n = 0;
	int r;

	if (!se->opts->resume || !t->rm || !t->rm->recovering)
		return 0;
	r = ringmem_get_ext(t->rm, &f, &n);
	if (r < 0)
		log_err("--ring-memfd records queues of a form it cannot hold: pool of %u buffers (flags "
			"0x%x), room for %u per queue: not serving this connection", n, f,
			ringmem_pool_room(t->rm));
	if (r <= 0)
		return r;
	memset(p, 0, sizeof(*p));
	p->adopted = true;
	p->pool = f & RINGMEM_EXT_POOL;
	p->registered = f & RINGMEM_EXT_REGISTERED;
	p->zero_copy = f & RINGMEM_EXT_ZERO_COPY;
	snprintf(p->pool_reason, sizeof(p->pool_reason), "%s", "resumed");
	snprintf(p->zc_reason, sizeof(p->zc_reason), "%s", "resumed");
	*pool_bufs = n;
	return 1;
}

/* The first server of a connection: what its queues will be, for every
 * later one (ringmem_set_ext), before the kernel is told. */
static void record_plan(struct uring_transport *t, unsigned pool_bufs)
{
	const struct uring_ext_plan *p = &t->plan;

	if (t->rm)
		ringmem_set_ext(t->rm, (p->pool ? RINGMEM_EXT_POOL : 0) |
				(p->registered ? RINGMEM_EXT_REGISTERED : 0) |
				(p->zero_copy ? RINGMEM_EXT_ZERO_COPY : 0), p->pool ? pool_bufs : 0);
}

/* Decides pools and zero-copy from the INIT offer and logs the one line
 * that says what runs and why; -EOPNOTSUPP when a demanded mode cannot
 * be had (the caller ends the server). */
static int plan_extensions(struct zcfs_session *se, struct uring_transport *t, bool ring_on)
{
	const struct zcfs_options *o = se->opts;
	unsigned pool_bufs = o->pool_buffers ? o->pool_buffers : o->queue_depth;
	struct uring_ext_facts f = {
		.ring_on = ring_on,
		/* Negotiated minor: a kernel newer than the protocol we
		 * speak is treated at our level. */
		.minor = se->proto_minor,
		.offered = t->offered_flags,
		.cap_sys_admin = zerocopy_thread_has_cap(CAP_SYS_ADMIN),
		/* With the thread list kept open (caps_prepare) a sandboxed
		 * server can drop it; with a broker passthrough needs no
		 * CAP_SYS_ADMIN in the server. */
		.sandbox = o->sandbox && !caps_drop_ready(),
		.passthrough = o->passthrough && o->broker_fd < 0,
		.holder_rings = o->holder_rings >= 0,
		.memlock_ok = zerocopy_memlock_allows((uint64_t)t->g.nr_queues *
						      bufpool_bytes(pool_bufs, t->g.payload_size)),
	};
	int r = ring_on ? adopt_recorded(se, t, &pool_bufs) : 0;

	if (r < 0)
		return r;	/* logged: a successor must not lay out what cannot fit */
	r = r ? 0 : uring_ext_decide(o->buffer_pool, o->zero_copy, &f, &t->plan);
	if (r == 0 && ring_on && !o->resume)
		record_plan(t, pool_bufs);
	if (r < 0) {
		log_err("--buffer-pool/--zero-copy cannot be had: bufpool=%s reason=%s zero_copy=%s "
			"zc_reason=%s", pool_word(&t->plan), t->plan.pool_reason,
			t->plan.zero_copy ? "on" : "off", t->plan.zc_reason);
		return r;
	}
	log_info("uring data path: bufpool=%s reason=%s pool_buffers=%u zero_copy=%s zc_reason=%s",
		 pool_word(&t->plan), t->plan.pool_reason, t->plan.pool ? pool_bufs : 0,
		 t->plan.zero_copy ? "on" : "off", t->plan.zc_reason);
	if (!ring_on)
		return 0;
	if (t->plan.pool)
		uring_geometry_set_pool(&t->g, pool_bufs);
	else
		uring_geometry_set_stock(&t->g);
	/* An unregistered pool is not pinned (the kernel copies into it by
	 * its user address): only the headers are locked. A registered one
	 * is pinned by the registration. */
	t->g.pool_unpinned = t->plan.pool && !t->plan.registered;
	return 0;
}

/* A zcfsd server holds CAP_SYS_ADMIN for zero-copy only: without it in
 * the plan, nothing needs it from here on. */
static int drop_if_no_zero_copy(struct zcfs_session *se, const struct uring_transport *t)
{
	char why[96];

	if (t->plan.zero_copy || !caps_only_for_zero_copy(se->opts))
		return 0;
	snprintf(why, sizeof(why), "zero-copy unavailable: %s", t->plan.zc_reason[0] ?
		 t->plan.zc_reason : "ring_not_used");
	return caps_drop_sys_admin(why);
}

/* Runs on the /dev/fuse reader right after the INIT reply: REGISTER is
 * refused with -EAGAIN before the kernel has processed that reply. */
static int uring_after_init(struct zcfs_session *se)
{
	struct uring_transport *t = se->transport_priv;
	char why[64];
	unsigned i;
	int r = 0, k;

	r = plan_extensions(se, t, t->queues_ok && t->offered);
	k = drop_if_no_zero_copy(se, t);
	if (r == 0 && k < 0)
		r = k;	/* a server that cannot drop it must not serve */
	if (r < 0 || !t->queues_ok)
		return r;
	if (!t->offered)
		return fall_back(se, t, "kernel_did_not_offer_FUSE_OVER_IO_URING", true);
	for (i = 0; i < t->g.nr_queues; i++)
		uring_queue_request_register(&t->queues[i]);
	for (i = 0; i < t->g.nr_queues; i++) {
		k = uring_queue_wait_register(&t->queues[i]);
		if (k < 0 && r == 0)
			r = k;
	}
	/* Registered or refused, the rings need CAP_SYS_ADMIN no longer. */
	if (t->plan.zero_copy) {
		k = caps_drop_sys_admin("after ring registration");
		if (k < 0)
			return k;
	}
	if (r < 0 && ((t->plan.pool && se->opts->buffer_pool != ZCFS_BUFPOOL_AUTO) ||
		      (t->plan.zero_copy && se->opts->zero_copy == ZCFS_ZEROCOPY_ON)))
		return r;	/* demanded, and the kernel refused: logged by the queue */
	if (r < 0) {
		snprintf(why, sizeof(why), "register_failed:%s", errname(r));
		return fall_back(se, t, why, false);
	}
	if (t->plan.pool)
		snprintf(se->transport_desc, sizeof(se->transport_desc),
			 "transport=uring queues=%u depth=%u pinned=%llu bufpool=%s zero_copy=%s reason=%.40s",
			 t->g.nr_queues, t->g.depth, (unsigned long long)locked_bytes(t),
			 pool_word(&t->plan), t->plan.zero_copy ? "on" : "off",
			 se->transport_reason[0] ? se->transport_reason : "requested");
	/* Every request takes the ring now: the reader carries FORGET and
	 * INTERRUPT alone, and batches FORGETs. */
	devfuse_pool_batch_forgets(t->pool);
	return 0;
}

/* The readers only leave read() on a request or a dead connection. Once
 * the ring carries every request, neither may come: the connection can
 * outlive us (lazy unmount with open files, zcfsd's dup kept for a
 * restart). So stop() interrupts them instead of waiting for an abort. */
static void uring_stop(struct zcfs_session *se)
{
	struct uring_transport *t = se->transport_priv;

	if (!t)
		return;
	stop_queues(t);
	devfuse_pool_interrupt(t->pool);
	devfuse_pool_interrupt(t->fallback);
	devfuse_pool_stop(t->pool);
	devfuse_pool_stop(t->fallback);
	free(t);
	se->transport_priv = NULL;
}

/* How long the queues together may take to fill their idle entries:
 * zcfsd kills a server not gone 5 s after it asked (lifecycle/restart.c). */
#define HANDOVER_WAIT_MS 3000

/* Milliseconds of HANDOVER_WAIT_MS left since T0 (CLOCK_MONOTONIC). */
static int handover_left_ms(const struct timespec *t0)
{
	struct timespec now;
	long long spent;

	clock_gettime(CLOCK_MONOTONIC, &now);
	spent = (long long)(now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
	return spent >= HANDOVER_WAIT_MS ? 0 : (int)(HANDOVER_WAIT_MS - spent);
}

/* Planned restart: every queue holds what it has (uring_queue.h); only
 * with the ring memfd can a successor find those requests. One deadline
 * for all the queues: each waiting 3 s of its own made an idle volume's
 * server (nothing cached to kick its entries full) take 3 s per queue, past
 * zcfsd's 5 s on two CPUs, so the hand-over ended in a SIGKILL. */
static int uring_hand_over(struct zcfs_session *se)
{
	struct uring_transport *t = se->transport_priv;
	unsigned i, held = 0;
	struct timespec t0;
	int r = 0, k;

	if (!t || !t->queues_ok)
		return 0;	/* on /dev/fuse: RESEND replays what was read */
	if (!t->rm)
		return -EOPNOTSUPP;
	/* On holder rings each queue just stops reaping (holder_park, uring_rings_holder.c): its
	 * idle entries stay the holder's, nothing needs filling. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < t->g.nr_queues; i++)
		uring_queue_request_handover(&t->queues[i]);
	for (i = 0; i < t->g.nr_queues; i++) {
		k = uring_queue_wait_handover(&t->queues[i], handover_left_ms(&t0));
		if (k < 0 && r == 0)
			r = k;
		held += t->queues[i].held;
	}
	log_info("hand-over: %u %s for the successor%s", held,
		 se->opts->holder_rings >= 0 ? "requests wait in the holder's rings" : "ring entries hold requests",
		 r < 0 ? ", some entries stayed idle" : "");
	return r;
}

static void uring_log_counts(struct zcfs_session *se)
{
	const struct uring_transport *t = se->transport_priv;
	unsigned i;

	for (i = 0; t && t->queues && i < t->g.nr_queues; i++)
		zerocopy_log_counts(&t->queues[i]);
}

const struct zcfs_transport_ops transport_uring = {
	.name = "uring",
	.start = uring_start,
	.init_flags = uring_init_flags,
	.after_init = uring_after_init,
	.stop = uring_stop,
	.hand_over = uring_hand_over,
	.log_counts = uring_log_counts,
};
