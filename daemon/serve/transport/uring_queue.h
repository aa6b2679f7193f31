/* One FUSE-over-io_uring queue: a thread pinned to CPU qid that owns an
 * SQE128 io_uring, `depth` ring entries (header + payload buffer, mlocked)
 * and the backing I/O of the READs and WRITEs it receives. The thread
 * creates and drives its ring alone (single issuer); the controlling
 * thread talks to it through flags, an eventfd and a condition variable. */
#ifndef ZCFS_URING_QUEUE_H
#define ZCFS_URING_QUEUE_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include "daemon/serve/fuse/file_io.h"
#include "daemon/serve/fuse/fuse_msg.h"
#include "uring_bufpool.h"
#include "uring_geometry.h"
#include "uring_payload.h"
#include "kernel/zcfs_uring_abi.h"

enum uring_ent_state {
	ENT_IDLE,		/* not handed to the kernel yet */
	ENT_IN_KERNEL,		/* REGISTER / COMMIT_AND_FETCH queued */
	ENT_IN_SERVER,		/* holds a request we are answering */
	ENT_BACKING_IO,		/* its READ/WRITE runs on the backing file */
	ENT_DEAD,		/* ended by teardown or an error */
	ENT_HELD,		/* hand-over: holds a request its successor serves */
};

struct uring_queue;

struct uring_entry {
	struct uring_queue *q;
	uint32_t index;
	enum uring_ent_state state;
	uint32_t cmd_op;	/* last command, resubmitted on -EAGAIN/-EINTR */
	uint64_t commit_id;
	struct zcfs_uring_req_header *hdr;
	void *payload;
	struct iovec iov[ZCFS_URING_REGISTER_IOVS];	/* read by REGISTER at issue */
	struct zcfs_req req;
	/* Pool queues: what the current request's payload is, and the pool
	 * buffer it holds (-1: none); payload then points into the pool. */
	enum uring_payload_kind pkind;
	int pool_id;
	struct file_io io;	/* the READ/WRITE it moves data for (fuse/file_io.h) */
	bool clear_after_submit;	/* its COMMIT is queued: mark it done once submitted */
	uint64_t committed_id;	/* the commit id that COMMIT carries */
	bool recovered;		/* serving a request a dead predecessor held */
};

struct ringmem;
struct uring_rings_ops;

struct uring_queue {
	struct zcfs_session *se;
	const struct uring_geometry *g;
	unsigned qid;
	pthread_t thread;
	bool started;
	int efd;		/* wakes the thread: register, stop */
	struct io_uring ring;
	bool ring_ok;
	/* Who owns the ring the FUSE commands go on (uring_rings.h; own
	 * unless set before spawn), and that ring, from set-up on. */
	const struct uring_rings_ops *rings;
	struct io_uring *cmd_ring;
	bool fixed_fuse_fd;	/* /dev/fuse is cmd_ring's fixed file 0 */
	/* Completions of ring that a synchronous command's wait meets
	 * (uring_ring.h): the entries' handler, uring_entry.c. */
	void (*on_cqe)(struct uring_queue *q, const struct io_uring_cqe *cqe);
	void *mem;		/* headers, then payloads (or the pool) */
	struct ringmem *rm;	/* --ring-memfd: mem lives there, NULL otherwise */
	/* Holder rings (uring_rings_holder.c): the FUSE commands go on hring,
	 * a ring holder's ring mapped from holder_fd; ring, the queue's own,
	 * carries the backing I/O, the wake poll and a multishot poll of
	 * hring's fd, and the thread waits in it alone. */
	int holder_fd;
	struct io_uring hring;
	bool hring_ok;
	bool hpoll_armed;	/* the poll of hring's fd is in ring */
	uint64_t holder_epoch;	/* the holder's, read at REGISTER */
	bool holder_parked;	/* hand-over done: reaps nothing more */
	unsigned stale_cqes;	/* completions a dead predecessor had handled */
	unsigned n_clear;	/* entries with clear_after_submit */
	size_t mem_size;	/* as mapped: the layout may change before REGISTER */
	bool locked;		/* mem is mlocked (RLIMIT_MEMLOCK allowed it) */
	/* 7.46 extensions (uring_zerocopy.c): the transport's plan, read by
	 * the thread once asked to register; what this queue really runs. */
	const struct uring_ext_plan *ext;
	/* How entries hold payloads and move READ/WRITE data: stock until
	 * REGISTER, then what the queue registered with (uring_payload.h). */
	const struct uring_payload_ops *pops;
	bool pool_on;		/* ADD_BUFPOOL done: payloads come from pool */
	bool pool_fixed;	/* pool is fixed buffer 0: commands carry URING_CMD_FIXED */
	bool zero_copy;		/* ADD_QUEUE with FUSE_URING_ZERO_COPY done */
	bool table_registered;	/* the ring has a fixed-buffer table */
	struct bufpool pool;
	char *pool_base;
	/* Deliveries by payload kind (logged when the queue stops): what
	 * moved as pages (zero-copy), through a pool buffer, or the held
	 * zero-copy requests of a dead predecessor that had to be failed. */
	uint64_t n_zero_copy, n_pool, n_zc_lost;
	struct uring_entry *ents;
	unsigned dead;
	unsigned backing_inflight;
	int backing_nowait;	/* 0 unknown, 1 backing fs takes RWF_NOWAIT, -1 not */
	bool registered;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool setup_done;	/* under lock */
	int setup_err;
	const char *setup_step;	/* what failed, for the log line */
	bool register_done;	/* under lock */
	int register_err;
	atomic_bool want_register;
	atomic_bool want_stop;
	/* Hand-over (uring_queue_request_handover): the thread stops
	 * answering and holds what arrives until no entry is idle. */
	atomic_bool want_handover;
	bool handing_over;
	bool handover_done;	/* under lock */
	int handover_err;
	unsigned held;
	struct timespec last_kick;
};

/* Starts q's thread; it sets up ring and buffers on its CPU. */
int uring_queue_spawn(struct uring_queue *q, struct zcfs_session *se,
		      const struct uring_geometry *g, unsigned qid) _must_check_;
/* Waits until the thread has set up; its result. */
int uring_queue_wait_setup(struct uring_queue *q) _must_check_;
/* Asks the thread to REGISTER all entries (only after the INIT reply). */
void uring_queue_request_register(struct uring_queue *q);
/* Waits for the REGISTER submission; the first immediate failure. */
int uring_queue_wait_register(struct uring_queue *q) _must_check_;
/* Planned restart: asks the thread to stop answering, finish what it
 * serves and hold every request the kernel hands it (kicking itself to
 * fill idle entries), so that no entry is idle when the process exits:
 * an idle entry is where a request racing with the exit is lost
 * (docs/supervision.md). Waits at most timeout_ms: 0 when every entry
 * holds a request, -ETIMEDOUT. */
void uring_queue_request_handover(struct uring_queue *q);
int uring_queue_wait_handover(struct uring_queue *q, int timeout_ms) _must_check_;
/* Stops and joins the thread, frees ring and buffers. Safe on a queue
 * that never started; the connection should be gone already. */
void uring_queue_stop(struct uring_queue *q);

#endif
