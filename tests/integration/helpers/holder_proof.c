/* Proof for bench/notes/supervision.md, "What 6.18 loses on an io_uring server
 * kill": FUSE-over-io_uring ring entries submitted through an SQPOLL ring
 * that a separate holder process owns survive SIGKILLs of the server.
 *
 *   holder_proof MOUNTPOINT BACKING_FILE KILLS [CLIENTS]
 *
 * The supervisor (this process, root) opens /dev/fuse, mounts MOUNTPOINT
 * and starts:
 *  - a holder (uid 65534, no capabilities) that maps the ring memfd and
 *    creates one SQPOLL|SQE128 ring per possible CPU, disabled, registers
 *    /dev/fuse as fixed file 0, restricts the ring to IORING_OP_URING_CMD
 *    with IOSQE_FIXED_FILE required and no registration op, enables it
 *    and sleeps; its sq threads (iou-sqp-PID) issue every command;
 *  - a server (uid 65534) that maps the ring memfd at the holder's address
 *    and the holder's rings (ring fds taken with pidfd_getfd), writes SQEs,
 *    reaps CQEs and serves a one-file filesystem backed by BACKING_FILE;
 *  - CLIENTS processes (default 4, alternating CPUs) doing 4 KiB
 *    pwrite + pread + compare + stat on MOUNTPOINT/f (O_DIRECT-like:
 *    FOPEN_DIRECT_IO), counting every error.
 * Then it SIGKILLs the server KILLS times (every 100-400 ms), each time
 * writes FUSE_NOTIFY_RESEND and starts a successor at once, which takes
 * the rings over (per-entry bookkeeping in the memfd, see struct pslot).
 * KILLS 0 with HOLDER_RUN_MS=N: N ms of load and no kill (the cost).
 * Prints one line of counts; exit 0 iff no client error, no verify error
 * and no hung client. Not part of zcfs: a measurement harness. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>
#include "kernel/zcfs_uring_abi.h"

/* daemon/serve/sandbox/sandbox.h's (its other headers clash with
 * <linux/fuse.h>): RING_FD restricted to URING_CMD on fixed files, enabled. */
int sandbox_restrict_holder_ring(int ring_fd);

#define NQ_MAX 8
#define DEPTH 4
#define PAYLOAD (64 * 1024)
#define HDR_SZ 512
#define SAVE_SZ 256
#define MAX_WRITE (64 * 1024)
#define FILE_SIZE (1024 * 1024)
#define UID_TENANT 65534

/* Per entry, written by the server that drives it, read by a successor. */
struct pslot {
	_Atomic uint64_t gen;	/* generation of the entry's last command (SQE written) */
	uint32_t pos;		/* its SQ position: published iff before the SQ tail */
	uint32_t pad;
	uint64_t commit_id;	/* what that command committed (0: REGISTER) */
	_Atomic uint64_t taken;	/* generation whose completion a server consumed */
	int32_t taken_res;
	uint32_t psz;		/* payload bytes of the request taken */
	_Atomic uint64_t replied;	/* generation whose reply is complete in the buffers */
	struct fuse_in_header in;	/* the request's header as delivered (a reply overwrites it) */
	uint8_t psave[SAVE_SZ];	/* the payload's first bytes as delivered */
};

struct counters {
	_Atomic uint64_t ops, errors, verify, stats;
	_Atomic uint64_t held, recommit, resubmit, stale, registered, served, devfuse;
	_Atomic uint64_t cmd_err, cq_at_attach;
	_Atomic int stop;
	_Atomic int done[64];
};

struct phdr {
	uint64_t magic;
	uint64_t addr;
	uint64_t size;
	uint32_t nq;
	_Atomic uint32_t initialized;
	_Atomic uint32_t holder_ready;
	int ring_fd[NQ_MAX];
	struct io_uring_params params[NQ_MAX];
};

#define MAGIC 0x7a63667370726f66ULL
#define META_SZ (64 * 1024)

static struct phdr *H;
static struct counters *C;
static unsigned nq;
static int fuse_fd = -1, backing_fd = -1;
static int ring_fds[NQ_MAX];
static bool baseline;	/* HOLDER_OFF=1: each server owns its rings, as zcfs-serve today */	/* the supervisor's (and its servers') fds of the holder's rings */
static size_t mem_size;

static size_t queue_bytes(void)
{
	return (size_t)DEPTH * HDR_SZ + (size_t)DEPTH * 2 * sizeof(struct iovec) + 4096 +
	       (size_t)DEPTH * PAYLOAD;
}

static struct pslot *slot(unsigned q, unsigned i)
{
	return (struct pslot *)((char *)H + 4096) + q * DEPTH + i;
}

static char *qmem(unsigned q)
{
	return (char *)H + META_SZ + q * queue_bytes();
}

static struct zcfs_uring_req_header *ehdr(unsigned q, unsigned i)
{
	return (void *)(qmem(q) + i * HDR_SZ);
}

static struct iovec *eiov(unsigned q, unsigned i)
{
	return (struct iovec *)(qmem(q) + DEPTH * HDR_SZ) + 2 * i;
}

static char *epayload(unsigned q, unsigned i)
{
	return qmem(q) + DEPTH * HDR_SZ + 4096 + (size_t)i * PAYLOAD;
}

static void die(const char *what)
{
	fprintf(stderr, "holder_proof: %s: %s\n", what, strerror(errno));
	_exit(2);
}

static void drop_to_tenant(void)
{
	if (setgroups(0, NULL) < 0 || setresgid(UID_TENANT, UID_TENANT, UID_TENANT) < 0 ||
	    setresuid(UID_TENANT, UID_TENANT, UID_TENANT) < 0)
		die("drop uid");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("no_new_privs");
}

/* ---- holder ---------------------------------------------------------- */

static void holder_main(int memfd, unsigned idle_ms, bool aff)
{
	struct io_uring rings[NQ_MAX];
	unsigned q;
	void *p;

	drop_to_tenant();	/* before io_uring_setup: the sq thread keeps these creds */
	p = mmap(NULL, mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED)
		die("holder mmap");
	H = p;
	H->addr = (uint64_t)(uintptr_t)p;
	for (q = 0; q < nq; q++) {
		struct io_uring_params prm;
		unsigned i;

		memset(&prm, 0, sizeof(prm));
		prm.flags = IORING_SETUP_SQPOLL | IORING_SETUP_SQE128 | IORING_SETUP_R_DISABLED |
			    IORING_SETUP_CQSIZE | (aff ? IORING_SETUP_SQ_AFF : 0);
		prm.sq_thread_cpu = q;
		prm.sq_thread_idle = idle_ms;
		prm.cq_entries = 4 * DEPTH;
		int r = io_uring_queue_init_params(2 * DEPTH, &rings[q], &prm);
		if (r < 0) {
			errno = -r;
			die("holder io_uring_setup");
		}
		if (io_uring_register_files(&rings[q], &fuse_fd, 1) < 0)
			die("holder register files");
		/* The holder's own restrictions (zcfs-serve's code, linked in). */
		r = sandbox_restrict_holder_ring(rings[q].ring_fd);
		if (r < 0) {
			errno = -r;
			die("holder restrictions");
		}
		H->ring_fd[q] = rings[q].ring_fd;
		H->params[q] = prm;
		/* the iovecs REGISTER reads, in the holder's mm too */
		for (i = 0; i < DEPTH; i++) {
			eiov(q, i)[0] = (struct iovec){ ehdr(q, i), HDR_SZ };
			eiov(q, i)[1] = (struct iovec){ epayload(q, i), PAYLOAD };
		}
	}
	close(fuse_fd);		/* the rings' fixed files keep it */
	atomic_store(&H->holder_ready, 1);
	for (;;)
		pause();
}

/* ---- server ---------------------------------------------------------- */

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = ino == 1 ? 2 : 1;
	a->mode = ino == 1 ? (S_IFDIR | 0755) : (S_IFREG | 0666);
	a->size = ino == 1 ? 0 : FILE_SIZE;
	a->blksize = 4096;
}

/* Serves one request; the reply's payload goes to out (at most outcap).
 * READ data is read straight into out. Returns -errno or the payload
 * length; *noreply for FORGET and friends. */
static int handle(const struct fuse_in_header *in, const void *arg, const void *data, size_t dlen,
		  char *out, size_t outcap, bool *noreply)
{
	*noreply = false;
	switch (in->opcode) {
	case FUSE_LOOKUP: {
		struct fuse_entry_out e;
		const char *name = data;
		if (in->nodeid != 1 || dlen < 2 || strcmp(name, "f") != 0)
			return -ENOENT;
		memset(&e, 0, sizeof(e));
		e.nodeid = 2;
		fill_attr(&e.attr, 2);
		memcpy(out, &e, sizeof(e));
		return sizeof(e);
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out a;
		memset(&a, 0, sizeof(a));
		fill_attr(&a.attr, in->nodeid);
		memcpy(out, &a, sizeof(a));
		return sizeof(a);
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = { .fh = 1, .open_flags = FOPEN_DIRECT_IO };
		memcpy(out, &o, sizeof(o));
		return sizeof(o);
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = arg;
		size_t n = r->size < outcap ? r->size : outcap;
		ssize_t got = pread(backing_fd, out, n, (off_t)r->offset);
		return got < 0 ? -errno : (int)got;
	}
	case FUSE_WRITE: {
		const struct fuse_write_in *w = arg;
		struct fuse_write_out wo;
		ssize_t put;
		if (w->size > dlen)
			return -EIO;
		put = pwrite(backing_fd, data, w->size, (off_t)w->offset);
		if (put < 0)
			return -errno;
		memset(&wo, 0, sizeof(wo));
		wo.size = (uint32_t)put;
		memcpy(out, &wo, sizeof(wo));
		return sizeof(wo);
	}
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_FSYNC:
	case FUSE_RELEASEDIR:
		return 0;
	case FUSE_OPENDIR: {
		struct fuse_open_out o = { .fh = 2 };
		memcpy(out, &o, sizeof(o));
		return sizeof(o);
	}
	case FUSE_STATFS: {
		struct fuse_statfs_out s;
		memset(&s, 0, sizeof(s));
		s.st.bsize = 4096;
		s.st.namelen = 255;
		memcpy(out, &s, sizeof(s));
		return sizeof(s);
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		*noreply = true;
		return 0;
	default:
		return -ENOSYS;
	}
}

static size_t op_arg_size(uint32_t opcode)
{
	switch (opcode) {
	case FUSE_READ: return sizeof(struct fuse_read_in);
	case FUSE_WRITE: return sizeof(struct fuse_write_in);
	case FUSE_OPEN: case FUSE_OPENDIR: return sizeof(struct fuse_open_in);
	case FUSE_RELEASE: case FUSE_RELEASEDIR: return sizeof(struct fuse_release_in);
	case FUSE_FLUSH: return sizeof(struct fuse_flush_in);
	case FUSE_FSYNC: return sizeof(struct fuse_fsync_in);
	case FUSE_GETATTR: return sizeof(struct fuse_getattr_in);
	case FUSE_FORGET: return sizeof(struct fuse_forget_in);
	case FUSE_INTERRUPT: return sizeof(struct fuse_interrupt_in);
	case FUSE_BATCH_FORGET: return sizeof(struct fuse_batch_forget_in);
	default: return 0;
	}
}

static void do_init(void)
{
	static char buf[PAYLOAD + 8192];
	struct fuse_in_header *in = (void *)buf;
	struct fuse_init_in *ii = (void *)(in + 1);
	struct { struct fuse_out_header oh; struct fuse_init_out io; } rep;
	ssize_t n = read(fuse_fd, buf, sizeof(buf));

	if (n < (ssize_t)sizeof(*in) || in->opcode != FUSE_INIT)
		die("INIT read");
	memset(&rep, 0, sizeof(rep));
	rep.oh.len = sizeof(rep);
	rep.oh.unique = in->unique;
	rep.io.major = 7;
	rep.io.minor = ii->minor;
	rep.io.max_readahead = ii->max_readahead;
	rep.io.flags = FUSE_INIT_EXT | FUSE_MAX_PAGES | FUSE_ASYNC_READ;
	rep.io.flags2 = (uint32_t)(FUSE_OVER_IO_URING >> 32);
	rep.io.max_background = 16;
	rep.io.congestion_threshold = 12;
	rep.io.max_write = MAX_WRITE;
	rep.io.time_gran = 1;
	rep.io.max_pages = MAX_WRITE / 4096;
	if (write(fuse_fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		die("INIT reply");
	atomic_store(&H->initialized, 1);
}

static void *devfuse_reader(void *arg)
{
	static char buf[PAYLOAD + 8192];
	static char out[PAYLOAD + 4096];
	(void)arg;
	for (;;) {
		ssize_t n = read(fuse_fd, buf, sizeof(buf));
		struct fuse_in_header *in = (void *)buf;
		struct fuse_out_header *oh = (void *)out;
		size_t asz;
		bool noreply;
		int r;

		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;
		atomic_fetch_add(&C->devfuse, 1);
		asz = op_arg_size(in->opcode);
		r = handle(in, in + 1, (char *)(in + 1) + asz, (size_t)n - sizeof(*in) - asz,
			   out + sizeof(*oh), sizeof(out) - sizeof(*oh), &noreply);
		if (noreply)
			continue;
		oh->unique = in->unique;
		oh->error = r < 0 ? r : 0;
		oh->len = (uint32_t)(sizeof(*oh) + (r > 0 ? r : 0));
		if (write(fuse_fd, out, oh->len) < 0 && errno != ENOENT)
			fprintf(stderr, "devfuse reply: %s\n", strerror(errno));
	}
}

struct squeue {
	unsigned q;
	struct io_uring ring;
};

static void submit_cmd(struct squeue *sq, unsigned i, uint32_t op, uint64_t commit_id)
{
	struct pslot *s = slot(sq->q, i);
	uint32_t pos = sq->ring.sq.sqe_tail;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&sq->ring);
	struct zcfs_uring_cmd_req cmd;
	uint64_t gen = atomic_load(&s->gen) + 1;

	if (!sqe) {
		fprintf(stderr, "q%u: SQ full\n", sq->q);
		_exit(3);
	}
	memset(sqe, 0, ZCFS_URING_SQE_SIZE);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = 0;
	sqe->flags = IOSQE_FIXED_FILE;
	sqe->cmd_op = op;
	memset(&cmd, 0, sizeof(cmd));
	cmd.qid = (uint16_t)sq->q;
	if (op == ZCFS_URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)eiov(sq->q, i);
		sqe->len = 2;
	} else {
		cmd.commit_id = commit_id;
	}
	memcpy((char *)sqe + ZCFS_URING_CMD_AREA_OFF, &cmd, sizeof(cmd));
	sqe->user_data = gen << 16 | i;
	s->commit_id = op == ZCFS_URING_CMD_REGISTER ? 0 : commit_id;
	s->pos = pos;
	atomic_store_explicit(&s->gen, gen, memory_order_release);
}

/* Serve the request entry i holds and queue its COMMIT_AND_FETCH. With
 * restore, put back what a predecessor's reply may have overwritten. */
static void serve_entry(struct squeue *sq, unsigned i, bool restore)
{
	struct pslot *s = slot(sq->q, i);
	struct zcfs_uring_req_header *h = ehdr(sq->q, i);
	char *pl = epayload(sq->q, i);
	struct fuse_in_header in;
	struct fuse_out_header oh;
	uint64_t commit_id = h->ring_ent_in_out.commit_id;
	bool noreply;
	int r;

	if (restore) {
		in = s->in;
		memcpy(pl, s->psave, s->psz < SAVE_SZ ? s->psz : SAVE_SZ);
	} else {
		memcpy(&in, h->in_out, sizeof(in));
		s->in = in;
		s->psz = h->ring_ent_in_out.payload_sz;
		memcpy(s->psave, pl, s->psz < SAVE_SZ ? s->psz : SAVE_SZ);
	}
	r = handle(&in, h->op_in, pl, s->psz, pl, PAYLOAD, &noreply);
	atomic_fetch_add(&C->served, 1);
	oh.unique = in.unique;
	oh.error = r < 0 ? r : 0;
	oh.len = (uint32_t)(sizeof(oh) + (r > 0 ? r : 0));
	memcpy(h->in_out, &oh, sizeof(oh));
	h->ring_ent_in_out.payload_sz = r > 0 ? (uint32_t)r : 0;
	atomic_store_explicit(&s->replied, atomic_load(&s->taken), memory_order_release);
	submit_cmd(sq, i, ZCFS_URING_CMD_COMMIT_AND_FETCH, commit_id);
}

static void handle_cqe(struct squeue *sq, uint64_t ud, int res)
{
	unsigned i = ud & 0xffff;
	uint64_t gen = ud >> 16;
	struct pslot *s;

	if (i >= DEPTH)
		return;
	s = slot(sq->q, i);
	if (gen != atomic_load(&s->gen) || atomic_load(&s->taken) == gen) {
		atomic_fetch_add(&C->stale, 1);
		return;
	}
	s->taken_res = res;
	atomic_store_explicit(&s->taken, gen, memory_order_release);
	if (res == 0) {
		serve_entry(sq, i, false);
	} else if (baseline && res == -ENOENT && s->commit_id) {
		submit_cmd(sq, i, ZCFS_URING_CMD_REGISTER, 0);	/* it had been committed */
	} else {
		atomic_fetch_add(&C->cmd_err, 1);
		fprintf(stderr, "q%u entry %u: command failed: %s\n", sq->q, i, strerror(-res));
	}
}

/* Takes over queue q's holder ring where the predecessor left it. */
static void attach(struct squeue *sq)
{
	unsigned q = sq->q, i, tail;
	struct io_uring_params prm = H->params[q];

	memset(&sq->ring, 0, sizeof(sq->ring));
	if (baseline) {
		/* Today's design: the server's own ring; what the dead server's
		 * entries held stays with them, fresh entries on the buffers. */
		int r = io_uring_queue_init(2 * DEPTH, &sq->ring, IORING_SETUP_SQE128 | IORING_SETUP_COOP_TASKRUN);
		if (r < 0 || io_uring_register_files(&sq->ring, &fuse_fd, 1) < 0)
			die("baseline ring");
		for (i = 0; i < DEPTH; i++) {
			struct pslot *s = slot(q, i);
			uint64_t gen = atomic_load(&s->gen), hid = ehdr(q, i)->ring_ent_in_out.commit_id;
			bool took = gen && atomic_load(&s->taken) == gen && s->taken_res == 0;

			eiov(q, i)[0] = (struct iovec){ ehdr(q, i), HDR_SZ };
			eiov(q, i)[1] = (struct iovec){ epayload(q, i), PAYLOAD };
			if (took && atomic_load(&s->replied) == gen) {
				/* maybe committed already: ENOENT then, and a fresh REGISTER */
				atomic_fetch_add(&C->recommit, 1);
				submit_cmd(sq, i, ZCFS_URING_CMD_COMMIT_AND_FETCH, hid);
			} else if (took) {
				atomic_fetch_add(&C->held, 1);
				serve_entry(sq, i, true);
			} else if (gen && hid && hid != s->in.unique) {
				/* delivered, its CQE died with the ring */
				atomic_fetch_add(&C->held, 1);
				atomic_store(&s->taken, gen);
				serve_entry(sq, i, false);
			} else {
				submit_cmd(sq, i, ZCFS_URING_CMD_REGISTER, 0);
			}
		}
		return;
	}
	if (io_uring_queue_mmap(ring_fds[q], &prm, &sq->ring) < 0)
		die("io_uring_queue_mmap");
	tail = atomic_load_explicit((_Atomic unsigned *)sq->ring.sq.ktail, memory_order_acquire);
	sq->ring.sq.sqe_head = sq->ring.sq.sqe_tail = tail;
	/* deliveries no server was alive to reap: today's design loses these */
	atomic_fetch_add(&C->cq_at_attach, *sq->ring.cq.ktail - *sq->ring.cq.khead);
	for (i = 0; i < DEPTH; i++) {
		struct pslot *s = slot(q, i);
		uint64_t gen = atomic_load(&s->gen);

		if (gen == 0) {
			submit_cmd(sq, i, ZCFS_URING_CMD_REGISTER, 0);
			atomic_fetch_add(&C->registered, 1);
		} else if ((int32_t)(s->pos - tail) >= 0) {
			/* written, never published: the kernel never saw it */
			atomic_fetch_add(&C->resubmit, 1);
			submit_cmd(sq, i, s->commit_id ? ZCFS_URING_CMD_COMMIT_AND_FETCH
						       : ZCFS_URING_CMD_REGISTER, s->commit_id);
		} else if (atomic_load(&s->taken) == gen && s->taken_res == 0) {
			if (atomic_load(&s->replied) == gen) {
				atomic_fetch_add(&C->recommit, 1);
				submit_cmd(sq, i, ZCFS_URING_CMD_COMMIT_AND_FETCH,
					   ehdr(q, i)->ring_ent_in_out.commit_id);
			} else {
				atomic_fetch_add(&C->held, 1);
				serve_entry(sq, i, true);
			}
		}
		/* else: its command is in the kernel; its CQE will come */
	}
}

static void *queue_thread(void *arg)
{
	struct squeue *sq = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(sq->q, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
	attach(sq);
	for (;;) {
		struct io_uring_cqe *cqe;
		unsigned head, n = 0;
		int r = io_uring_submit_and_wait(&sq->ring, 1);

		if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			fprintf(stderr, "q%u: io_uring_enter: %s\n", sq->q, strerror(-r));
			_exit(4);
		}
		io_uring_for_each_cqe(&sq->ring, head, cqe) {
			handle_cqe(sq, cqe->user_data, cqe->res);
			n++;
		}
		io_uring_cq_advance(&sq->ring, n);
	}
	return NULL;
}

static void server_main(const char *backing)
{
	static struct squeue qs[NQ_MAX];
	pthread_t t;
	unsigned q;

	backing_fd = open(backing, O_RDWR);
	if (backing_fd < 0)
		die("backing open");
	drop_to_tenant();
	if (!atomic_load(&H->initialized))
		do_init();
	if (pthread_create(&t, NULL, devfuse_reader, NULL) != 0)
		die("reader");
	for (q = 0; q < nq; q++) {
		qs[q].q = q;
		if (pthread_create(&t, NULL, queue_thread, &qs[q]) != 0)
			die("queue thread");
	}
	for (;;)
		pause();
}

/* ---- clients --------------------------------------------------------- */

static void client_main(const char *mnt, unsigned id)
{
	char path[4096], buf[4096], back[4096];
	cpu_set_t set;
	uint64_t iter = 0;
	int fd = -1;

	CPU_ZERO(&set);
	CPU_SET(id % nq, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
	snprintf(path, sizeof(path), "%s/f", mnt);
	srand(id * 7919 + 1);
	while (!atomic_load(&C->stop)) {
		off_t off = (off_t)(((unsigned)rand() % (FILE_SIZE / 4096 / 8)) * 8 + id % 8) * 4096;
		struct stat st;
		ssize_t n;

		if (fd < 0) {
			fd = open(path, O_RDWR);
			if (fd < 0) {
				atomic_fetch_add(&C->errors, 1);
				fprintf(stderr, "client %u: open: %s\n", id, strerror(errno));
				usleep(10000);
				continue;
			}
		}
		memset(buf, (int)(iter & 0xff), sizeof(buf));
		memcpy(buf, &iter, sizeof(iter));
		memcpy(buf + 8, &id, sizeof(id));
		n = pwrite(fd, buf, sizeof(buf), off);
		if (n != (ssize_t)sizeof(buf)) {
			atomic_fetch_add(&C->errors, 1);
			fprintf(stderr, "client %u: pwrite: %zd %s\n", id, n, strerror(errno));
			continue;
		}
		n = pread(fd, back, sizeof(back), off);
		if (n != (ssize_t)sizeof(back)) {
			atomic_fetch_add(&C->errors, 1);
			fprintf(stderr, "client %u: pread: %zd %s\n", id, n, strerror(errno));
			continue;
		}
		if (memcmp(buf, back, sizeof(buf)) != 0) {
			atomic_fetch_add(&C->verify, 1);
			fprintf(stderr, "client %u: verify failed at %lld\n", id, (long long)off);
		}
		if ((iter & 7) == 0) {
			if (stat(path, &st) < 0) {
				atomic_fetch_add(&C->errors, 1);
				fprintf(stderr, "client %u: stat: %s\n", id, strerror(errno));
			} else {
				atomic_fetch_add(&C->stats, 1);
			}
		}
		atomic_fetch_add(&C->ops, 1);
		iter++;
	}
	if (fd >= 0)
		close(fd);
	atomic_store(&C->done[id], 1);
	_exit(0);
}

/* ---- supervisor ------------------------------------------------------ */

static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned a = 0, b = 0;

	if (!f || fscanf(f, "%u-%u", &a, &b) < 1)
		die("cpu/possible");
	fclose(f);
	return (b > a ? b : a) + 1;
}

static pid_t spawn_server(int memfd, const char *backing)
{
	pid_t pid = fork();
	void *p;

	if (pid < 0)
		die("fork");
	if (pid > 0)
		return pid;
	p = (void *)(uintptr_t)H->addr;
	if (p != (void *)H) {	/* the inherited mapping is elsewhere: map it where the holder has it */
		void *old = H;
		p = mmap(p, mem_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, memfd, 0);
		if (p != (void *)(uintptr_t)((struct phdr *)old)->addr)
			die("server mmap at the holder's address");
		munmap(old, mem_size);
		H = p;
	}
	server_main(backing);
	_exit(0);
}

static void msleep(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	const char *mnt, *backing;
	unsigned kills, nclients = 4, k, i, idle_ms = 10;
	int memfd, pidfd, hung = 0;
	unsigned conn_id = 0;
	pid_t holder, server, clients[64];
	struct fuse_out_header resend = { .len = sizeof(resend), .error = FUSE_NOTIFY_RESEND };
	char opts[256];
	bool aff = getenv("HOLDER_NO_AFF") == NULL;
	struct timespec t0, t1;

	if (argc < 4) {
		fprintf(stderr, "usage: holder_proof MOUNTPOINT BACKING_FILE KILLS [CLIENTS]\n");
		return 2;
	}
	mnt = argv[1];
	backing = argv[2];
	kills = (unsigned)atoi(argv[3]);
	if (argc > 4)
		nclients = (unsigned)atoi(argv[4]);
	baseline = getenv("HOLDER_OFF") != NULL;
	if (getenv("HOLDER_IDLE_MS"))
		idle_ms = (unsigned)atoi(getenv("HOLDER_IDLE_MS"));
	if (nclients > 64)
		nclients = 64;
	nq = possible_cpus();
	if (nq > NQ_MAX)
		nq = NQ_MAX;
	mem_size = META_SZ + nq * queue_bytes();
	C = mmap(NULL, sizeof(*C), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (C == MAP_FAILED)
		die("counters");
	memset(C, 0, sizeof(*C));
	{
		int bfd = open(backing, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (bfd < 0 || ftruncate(bfd, FILE_SIZE) < 0 || fchown(bfd, UID_TENANT, UID_TENANT) < 0)
			die("backing file");
		close(bfd);
	}
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0)
		die("/dev/fuse");
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fuse_fd);
	if (mount("holderproof", mnt, "fuse.holderproof", MS_NOSUID | MS_NODEV, opts) < 0)
		die("mount");
	memfd = memfd_create("holder-proof-ring", 0);
	if (memfd < 0 || ftruncate(memfd, (off_t)mem_size) < 0)
		die("memfd");
	/* The supervisor reads the header through its own mapping. */
	H = mmap(NULL, mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (H == MAP_FAILED)
		die("mmap");
	H->magic = MAGIC;
	H->nq = nq;
	H->size = mem_size;
	fflush(stdout);
	holder = fork();
	if (holder == 0) {
		munmap(H, mem_size);
		H = NULL;
		holder_main(memfd, idle_ms, aff);
	}
	for (i = 0; i < 500 && !atomic_load(&H->holder_ready); i++)
		msleep(10);
	if (!atomic_load(&H->holder_ready)) {
		fprintf(stderr, "holder not ready\n");
		kill(holder, SIGKILL);
		umount2(mnt, MNT_DETACH);
		return 2;
	}
	pidfd = (int)syscall(SYS_pidfd_open, holder, 0);
	for (i = 0; i < nq; i++) {
		ring_fds[i] = (int)syscall(SYS_pidfd_getfd, pidfd, H->ring_fd[i], 0);
		if (ring_fds[i] < 0)
			die("pidfd_getfd");
	}
	{
		/* restrictions are final: a second registration is refused */
		struct io_uring_restriction r = { .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ };
		long rr = syscall(SYS_io_uring_register, ring_fds[0], IORING_REGISTER_RESTRICTIONS, &r, 1);
		int e = errno;
		long rf = syscall(SYS_io_uring_register, ring_fds[0], IORING_REGISTER_FILES, &memfd, 1);
		int ef = errno;
		printf("re-register restrictions: %ld (%s); register files: %ld (%s)\n", rr,
		       rr < 0 ? strerror(e) : "ok", rf, rf < 0 ? strerror(ef) : "ok");
	}
	fflush(stdout);
	server = spawn_server(memfd, backing);
	{
		struct stat mst;
		if (stat(mnt, &mst) == 0)
			conn_id = minor(mst.st_dev);
	}
	for (i = 0; i < 500; i++) {
		struct stat st;
		char p[4096];
		snprintf(p, sizeof(p), "%s/f", mnt);
		if (stat(p, &st) == 0)
			break;
		msleep(10);
	}
	for (i = 0; i < nclients; i++) {
		clients[i] = fork();
		if (clients[i] == 0)
			client_main(mnt, i);
	}
	srand((unsigned)time(NULL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	msleep(300);
	for (k = 0; k < kills; k++) {
		int st;
		msleep(100 + (unsigned)rand() % 300);
		kill(server, SIGKILL);
		waitpid(server, &st, 0);
		if (write(fuse_fd, &resend, sizeof(resend)) != (ssize_t)sizeof(resend))
			fprintf(stderr, "resend: %s\n", strerror(errno));
		server = spawn_server(memfd, backing);
	}
	if (kills == 0 && getenv("HOLDER_RUN_MS"))	/* cost only: load, no kill */
		msleep((unsigned)atoi(getenv("HOLDER_RUN_MS")));
	msleep(500);
	atomic_store(&C->stop, 1);
	for (i = 0; i < 500; i++) {
		unsigned d = 0, j;
		for (j = 0; j < nclients; j++)
			d += atomic_load(&C->done[j]);
		if (d == nclients)
			break;
		msleep(10);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (i = 0; i < nclients; i++) {
		if (!atomic_load(&C->done[i])) {
			hung++;
			fprintf(stderr, "client %u hung\n", i);
		}
	}
	printf("kills=%u clients=%u seconds=%.1f ops=%llu stats=%llu client_errors=%llu verify_failures=%llu "
	       "hung=%d held=%llu recommit=%llu resubmit=%llu stale_cqes=%llu registered=%llu served=%llu "
	       "devfuse=%llu cmd_errors=%llu cq_at_attach=%llu mode=%s\n",
	       kills, nclients, (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)C->ops, (unsigned long long)C->stats,
	       (unsigned long long)C->errors, (unsigned long long)C->verify, hung,
	       (unsigned long long)C->held, (unsigned long long)C->recommit,
	       (unsigned long long)C->resubmit, (unsigned long long)C->stale,
	       (unsigned long long)C->registered, (unsigned long long)C->served,
	       (unsigned long long)C->devfuse, (unsigned long long)C->cmd_err,
	       (unsigned long long)C->cq_at_attach, baseline ? "server-rings" : "holder");
	fflush(stdout);
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	umount2(mnt, MNT_DETACH);
	if (conn_id) {
		/* releases clients stuck on requests a dead entry holds */
		char ap[128];
		int afd;
		snprintf(ap, sizeof(ap), "/sys/fs/fuse/connections/%u/abort", conn_id);
		afd = open(ap, O_WRONLY);
		if (afd >= 0) {
			if (write(afd, "1", 1) < 0)
				perror("abort");
			close(afd);
		}
	}
	for (i = 0; i < nclients; i++) {
		kill(clients[i], SIGKILL);
		waitpid(clients[i], NULL, 0);
	}
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	close(fuse_fd);
	return (C->errors || C->verify || hung) ? 1 : 0;
}
