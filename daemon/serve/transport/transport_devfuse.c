/* /dev/fuse transport: one reader thread per CPU, each on its own cloned
 * fd (a request must be answered on the fd it was read from), replies
 * with one writev of header + payload. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <sys/uio.h>
#include "devfuse_splice.h"
#include "hugebuf.h"
#include "common/log.h"
#include "daemon/serve/fuse/fuse_msg.h"
#include "transport.h"

#define WRITE_DATA_OFFSET (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))
/* Smallest READ answered by splice: below it the extra syscalls cost
 * more than the copy they save (fio direct reads, 2 jobs: 4 KiB -15%,
 * 16 KiB -9%, 32 KiB even, 64 KiB +14%, 128 KiB +27%, 1 MiB +25%). */
#define SPLICE_READ_MIN (64u << 10)
/* How long a reader that only carries FORGETs waits after one before it
 * reads again (devfuse_pool_batch_forgets). */
#define FORGET_BATCH_NS 1000000L

struct devfuse_worker {
	struct zcfs_session *se;
	struct devfuse_pool *pool;
	pthread_t thread;
	bool started;
	int fd;
	char *inbuf;		/* inbuf_base shifted so WRITE data is page aligned */
	char *inbuf_base;	/* inbuf_map bytes on huge pages */
	size_t inbuf_map;
	size_t inbuf_size;
	void *outbuf;
	size_t outbuf_size;
	struct splice_pipe pipe;
	/* In read() or a FORGET pause, where DEVFUSE_WAKE_SIGNAL may land;
	 * never while a request is served (its backing calls could fail
	 * with EINTR). */
	atomic_bool waiting;
};

struct devfuse_pool {
	int nworkers;
	struct devfuse_worker *workers;
	atomic_bool batch_forgets;
	atomic_bool stopping;	/* devfuse_pool_interrupt: read no other request */
};

static int devfuse_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	struct devfuse_worker *w = req->tctx;

	int r = fuse_msg_write(w->fd, req->in.unique, error, iov, iovcnt);

	/* ENOENT: the request was interrupted and is gone. */
	if (r < 0 && r != -ENOENT)
		log_debug("reply to unique=%llu failed: %s", (unsigned long long)req->in.unique,
			  strerror(-r));
	return r;
}

static int devfuse_reply_fd(struct zcfs_req *req, int fd, uint64_t off, size_t size)
{
	struct devfuse_worker *w = req->tctx;
	size_t sent;
	int r;

	if (size < SPLICE_READ_MIN)
		return 0;
	r = splice_reply_read(&w->pipe, w->fd, req->in.unique, fd, off, size, &sent);
	if (r > 0)
		reply_sent(req, sent);
	return r;
}

/* The kernel hands a reader every FORGET it has queued in one
 * BATCH_FORGET, but a reader waiting in read() is woken for each one
 * alone: one wake-up and two context switches per unlinked or evicted
 * inode, on the CPU of the client that dropped it. Pausing after a
 * FORGET lets the next ones queue up. Only for a pool that carries
 * nothing else that waits (the io_uring transport's, once its queues
 * are registered: FORGET and INTERRUPT, which op_interrupt ignores);
 * EINTR (devfuse_pool_interrupt) ends the pause. */
static void forget_pause(void)
{
	struct timespec ts = { .tv_nsec = FORGET_BATCH_NS };

	(void)nanosleep(&ts, NULL);
}

static void *devfuse_worker_main(void *arg)
{
	struct devfuse_worker *w = arg;
	struct zcfs_session *se = w->se;

	/* A standby's predecessor still reads the connection. */
	if (!session_wait_go(se))
		return NULL;
	while (!atomic_load(&se->exiting)) {
		struct zcfs_req req = { .se = se, .reply = devfuse_reply, .tctx = w,
					.outbuf = w->outbuf, .outbuf_size = w->outbuf_size,
					.reply_fd = w->pipe.slots ? devfuse_reply_fd : NULL };
		ssize_t n;
		int r;

		/* Waiting first, then the look at stopping: the interrupter
		 * sets stopping, then looks at waiting, so one of the two sees
		 * the other (seq_cst) and no read begins unwoken. */
		atomic_store(&w->waiting, true);
		if (atomic_load(&w->pool->stopping))
			break;
		n = read(w->fd, w->inbuf, w->inbuf_size);
		atomic_store(&w->waiting, false);

		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ENOENT)
				continue;
			if (errno == ENODEV) {
				/* Unmounted or aborted: the normal end. */
				session_exit(se, 0);
				break;
			}
			log_err("read /dev/fuse: %m");
			session_exit(se, 1);
			break;
		}
		r = req_decode_devfuse(&req, w->inbuf, (size_t)n);
		if (r < 0) {
			log_warn("malformed request (%zd bytes): %s", n, strerror(-r));
			if ((size_t)n >= sizeof(struct fuse_in_header))
				reply_err(&req, -EIO);
			continue;
		}
		session_dispatch(&req);
		if ((req.in.opcode == FUSE_FORGET || req.in.opcode == FUSE_BATCH_FORGET) &&
		    atomic_load(&w->pool->batch_forgets)) {
			atomic_store(&w->waiting, true);
			forget_pause();
			atomic_store(&w->waiting, false);
		}
	}
	atomic_store(&w->waiting, false);
	return NULL;
}

static int clone_fd(int master)
{
	uint32_t m = (uint32_t)master;
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, FUSE_DEV_IOC_CLONE, &m) < 0) {
		int r = -errno;
		safe_close(fd);
		return r;
	}
	return fd;
}

static void wake_handler(int sig)
{
	(void)sig;	/* only there to make read() fail with EINTR */
}

int devfuse_wake_signal_install(void)
{
	/* No SA_RESTART: the point is to interrupt read(). */
	struct sigaction sa = { .sa_handler = wake_handler };

	sigemptyset(&sa.sa_mask);
	return RET_NERRNO(sigaction(DEVFUSE_WAKE_SIGNAL, &sa, NULL));
}

static void wake_if_waiting(struct devfuse_worker *w)
{
	if (atomic_load(&w->waiting))
		pthread_kill(w->thread, DEVFUSE_WAKE_SIGNAL);
}

void devfuse_pool_interrupt(struct devfuse_pool *pool)
{
	int i;

	if (!pool)
		return;
	atomic_store(&pool->stopping, true);
	for (i = 0; i < pool->nworkers; i++)
		if (pool->workers[i].started)
			wake_if_waiting(&pool->workers[i]);
	for (i = 0; i < pool->nworkers; i++) {
		struct devfuse_worker *w = &pool->workers[i];
		struct timespec until;

		if (!w->started)
			continue;
		/* The signal can land between the reader's look at stopping
		 * and its read(): sent again after each 20 ms the join waited. */
		for (;;) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 20 * 1000000L;
			until.tv_sec += until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			if (pthread_timedjoin_np(w->thread, NULL, &until) != ETIMEDOUT)
				break;
			wake_if_waiting(w);
		}
		w->started = false;
	}
}

void devfuse_pool_batch_forgets(struct devfuse_pool *pool)
{
	if (pool)
		atomic_store(&pool->batch_forgets, true);
}

void devfuse_pool_stop(struct devfuse_pool *pool)
{
	int i;

	if (!pool)
		return;
	for (i = 0; i < pool->nworkers; i++) {
		struct devfuse_worker *w = &pool->workers[i];
		if (w->started) {
			/* A reader blocked in read() leaves on ENODEV once the
			 * connection is gone; the caller made sure it is. */
			pthread_join(w->thread, NULL);
		}
		if (w->fd != pool->workers[0].fd)
			safe_close(w->fd);
		if (w->inbuf_base)
			munmap(w->inbuf_base, w->inbuf_map);
		free(w->outbuf);
		splice_pipe_close(&w->pipe);
	}
	free(pool->workers);
	free(pool);
}

int devfuse_pool_start(struct zcfs_session *se, int nthreads, bool splice_reads,
		       struct devfuse_pool **ret)
{
	struct devfuse_pool *pool;
	int i, r = 0;

	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	pool->workers = calloc((size_t)nthreads, sizeof(*pool->workers));
	if (!pool->workers) {
		free(pool);
		return -ENOMEM;
	}
	pool->nworkers = nthreads;
	for (i = 0; i < nthreads; i++) {
		pool->workers[i].fd = -1;
		pool->workers[i].pipe = (struct splice_pipe){ .rd = -1, .wr = -1 };
	}
	for (i = 0; i < nthreads && r == 0; i++) {
		struct devfuse_worker *w = &pool->workers[i];
		w->se = se;
		w->pool = pool;
		w->fd = i == 0 ? se->fuse_fd : clone_fd(se->fuse_fd);
		if (w->fd == -EACCES || w->fd == -EPERM) {
			/* /dev/fuse may be root-only (mode 0600): an unprivileged
			 * server's readers then share the inherited fd. */
			w->fd = se->fuse_fd;
		}
		if (w->fd < 0) {
			r = w->fd;
			break;
		}
		/* Copies between misaligned buffers and the page cache run at a
		 * fraction of the aligned speed (measured: pread into a buffer
		 * 16 bytes off a page was 75% of the server's CPU). So READ
		 * replies are built in a page-aligned buffer, and the request
		 * buffer is shifted so the data of a WRITE starts on a page.
		 * The kernel copies WRITE payloads into it page by page: on
		 * huge pages (hugebuf.c). Large READs are spliced, so outbuf
		 * mostly carries small replies and stays on small pages. */
		w->inbuf_size = se->bufsize;
		w->inbuf_map = ALIGN_UP(w->inbuf_size + 4096, HUGEBUF_ALIGN);
		w->inbuf_base = hugebuf_map(w->inbuf_map);
		if (w->inbuf_base == MAP_FAILED) {
			w->inbuf_base = NULL;
			r = -ENOMEM;
			break;
		}
		w->inbuf = w->inbuf_base + 4096 - WRITE_DATA_OFFSET;
		w->outbuf_size = se->max_write;
		w->outbuf = aligned_alloc(4096, w->outbuf_size);
		if (!w->outbuf) {
			r = -ENOMEM;
			break;
		}
		if (splice_reads) {
			int pr = splice_pipe_open(&w->pipe);
			if (pr < 0)
				log_debug("no pipe for spliced READ replies: %s", strerror(-pr));
		}
		r = -pthread_create(&w->thread, NULL, devfuse_worker_main, w);
		w->started = r == 0;
	}
	if (r < 0) {
		/* Threads already running block in read(); end the session so
		 * the caller aborts the connection and then stops the pool. */
		*ret = pool;
		return r;
	}
	*ret = pool;
	return 0;
}

static int devfuse_start(struct zcfs_session *se)
{
	struct devfuse_pool *pool = NULL;
	int r;

	/* Before the readers start: INIT may arrive at once and log it. */
	snprintf(se->transport_desc, sizeof(se->transport_desc),
		 "transport=devfuse threads=%d reason=%s", se->nthreads,
		 se->transport_reason[0] ? se->transport_reason : "requested");
	r = devfuse_wake_signal_install();
	if (r == 0)
		r = devfuse_pool_start(se, se->nthreads, true, &pool);
	se->transport_priv = pool;
	return r;
}

/* Planned restart (zcfsd's volume.restart): the readers finish what they
 * hold and read nothing more, so the successor finds every request not
 * yet read still queued in the kernel, and FUSE_NOTIFY_RESEND has nothing
 * of ours to replay (no request runs twice). */
static int devfuse_hand_over(struct zcfs_session *se)
{
	devfuse_pool_interrupt(se->transport_priv);
	return 0;
}

static void devfuse_stop(struct zcfs_session *se)
{
	devfuse_pool_stop(se->transport_priv);
	se->transport_priv = NULL;
}

const struct zcfs_transport_ops transport_devfuse = {
	.name = "devfuse",
	.start = devfuse_start,
	.stop = devfuse_stop,
	.hand_over = devfuse_hand_over,
};
