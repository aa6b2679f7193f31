/* Ring buffers in a memfd that survives the server (see uring_ringmem.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/log.h"
#include "uring_geometry.h"
#include "uring_ringmem.h"

#define RINGMEM_MAGIC 0x7a6366732d72696eULL	/* "zcfs-rin" */
#define RINGMEM_VERSION 4	/* 2: kick_seq; 3: holder rings; 4: pools (ext) */

/* At offset 0 of the memfd, then the slot table, then each queue's
 * headers and payloads. */
struct ringmem_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nr_queues;
	uint64_t addr;		/* where the first server mapped it */
	uint64_t size;
	uint64_t queue_bytes;
	uint32_t depth;
	uint32_t header_size;
	uint64_t payload_size;
	_Atomic uint64_t kick_seq;	/* ringmem_kick_unique */
	_Atomic uint64_t holder_epoch;	/* ringmem_holder_begin */
	/* What the kernel's queues were set up with (ringmem_set_ext): a
	 * successor cannot add them again (ADD_QUEUE -EEXIST, ADD_BUFPOOL
	 * -EINVAL) and must register entries of the same form. */
	_Atomic uint32_t ext_flags;
	uint32_t pool_bufs;
};

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* The predecessor's mapping, at its address, if it is of this geometry. */
static int map_existing(struct ringmem *rm, const struct ringmem_header *want)
{
	struct ringmem_header h;
	void *p;

	if (pread(rm->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return -ENODATA;
	if (h.magic != RINGMEM_MAGIC || h.version != RINGMEM_VERSION || h.nr_queues != want->nr_queues ||
	    h.size != want->size || h.queue_bytes != want->queue_bytes || h.depth != want->depth ||
	    h.header_size != want->header_size || h.payload_size != want->payload_size)
		return -ESTALE;
	p = mmap((void *)(uintptr_t)h.addr, h.size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, rm->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	if (p != (void *)(uintptr_t)h.addr) {	/* kernels before 4.17 ignore the flag */
		munmap(p, h.size);
		return -EADDRINUSE;
	}
	rm->base = p;
	return 0;
}

/* Whether a server of this connection recorded pool queues. */
static bool pool_recorded(int fd)
{
	struct ringmem_header h;

	return pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == RINGMEM_MAGIC &&
	       h.version == RINGMEM_VERSION && (atomic_load(&h.ext_flags) & RINGMEM_EXT_POOL);
}

/* Kick uniques: 2^62 + 2 * seq, seq below 2^60. A fresh memfd starts at
 * a time-derived seq, so a connection whose ring buffers could not be
 * taken over does not reuse the uniques of kicks its earlier servers may
 * have left in the kernel. */
#define KICK_UNIQUE_BASE (1ULL << 62)
#define KICK_SEQ_MASK ((1ULL << 60) - 1)

static uint64_t kick_seq_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) >> 4;
}

uint64_t ringmem_kick_unique(struct ringmem *rm)
{
	static _Atomic uint64_t local_seq;	/* no memfd: this process's own */
	_Atomic uint64_t *seq = &local_seq;
	uint64_t zero = 0;

	if (rm)
		seq = &((struct ringmem_header *)rm->base)->kick_seq;
	else
		(void)atomic_compare_exchange_strong(&local_seq, &zero, kick_seq_seed());
	return KICK_UNIQUE_BASE + 2 * (atomic_fetch_add(seq, 1) & KICK_SEQ_MASK);
}

/* Where a fresh memfd goes: every later server must map it at the same
 * address (the kernel keeps the buffers' and the pool's user addresses),
 * and a successor's libraries, heap and stacks land wherever ASLR puts
 * them, mostly just below the stack (0x7f...). An address the first
 * server took among those collided in a successor now and then (its
 * MAP_FIXED_NOREPLACE failed: EEXIST), which left the dead server's
 * requests unanswered until a later successor happened to fit. So it
 * goes at 32 TiB + a random 1 GiB step below 64 TiB: far from the
 * program, heap and mmap areas of a 47-bit address space. */
static void *fresh_hint(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (void *)(uintptr_t)((32ULL << 40) + (((uint64_t)ts.tv_nsec ^ (uint64_t)getpid()) % 32768) * (1ULL << 30));
}

static int map_fresh(struct ringmem *rm, struct ringmem_header *h)
{
	void *p;

	if (ftruncate(rm->fd, 0) < 0 || ftruncate(rm->fd, (off_t)h->size) < 0)
		return -errno;
	p = mmap(fresh_hint(), h->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, rm->fd, 0);
	if (p == MAP_FAILED)
		p = mmap(NULL, h->size, PROT_READ | PROT_WRITE, MAP_SHARED, rm->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	h->addr = (uint64_t)(uintptr_t)p;
	atomic_init(&h->kick_seq, kick_seq_seed());
	memcpy(p, h, sizeof(*h));
	rm->base = p;
	return 0;
}

int ringmem_attach(int fd, const struct uring_geometry *g, bool resume, bool take_only,
		   struct ringmem **ret)
{
	struct ringmem_header h = { .magic = RINGMEM_MAGIC, .version = RINGMEM_VERSION };
	struct ringmem *rm = calloc(1, sizeof(*rm));
	int r = -ENODATA;

	if (!rm)
		return -ENOMEM;
	rm->fd = fd;
	rm->nr_queues = g->nr_queues;
	rm->depth = g->depth;
	/* Room for the pool layout too: it is decided at INIT, after this,
	 * and lives here so that every server has it at one address (the
	 * kernel keeps the pool's user address across servers). */
	rm->queue_bytes = (size_t)g->depth * g->header_size +
			  (size_t)MAX(g->payload_bufs, g->budget_payload_bufs) * g->payload_size;
	/* Header, slots, then the holder's ring parameters per queue. */
	rm->meta_bytes = page_up(sizeof(h) + (size_t)g->nr_queues * g->depth * sizeof(struct ringmem_slot) +
				 (size_t)g->nr_queues * sizeof(struct io_uring_params));
	rm->size = rm->meta_bytes + (size_t)g->nr_queues * rm->queue_bytes;
	h.nr_queues = g->nr_queues;
	h.size = rm->size;
	h.queue_bytes = rm->queue_bytes;
	h.depth = g->depth;
	h.header_size = (uint32_t)g->header_size;
	h.payload_size = g->payload_size;
	if (resume) {
		r = map_existing(rm, &h);
		if (r == 0)
			rm->recovering = true;
		else if (r != -ENODATA && pool_recorded(fd)) {
			/* The kernel copies into the pool at its recorded
			 * address: in a fresh mapping's process that may be
			 * anything. Better not serve; zcfsd starts another. */
			log_err("--ring-memfd: cannot map the previous server's ring buffers and pool at "
				"their address (%s): not serving this pool connection", strerror(-r));
			free(rm);
			return r;
		}
		else if (r == -ENODATA && !take_only)	/* a new connection's memfd: nothing to take */
			log_debug("--ring-memfd: empty, mapped afresh");
		else
			log_warn("--ring-memfd: cannot take over the previous server's ring buffers (%s); "
				 "requests its entries held stay unanswered", strerror(-r));
	}
	if (r < 0 && !take_only)
		r = map_fresh(rm, &h);
	if (r < 0) {
		free(rm);
		return r;
	}
	rm->slots = (struct ringmem_slot *)((char *)rm->base + sizeof(h));
	if (!rm->recovering)
		memset(rm->slots, 0, rm->meta_bytes - sizeof(h));
	*ret = rm;
	return 0;
}

void ringmem_detach(struct ringmem *rm)
{
	if (!rm)
		return;
	munmap(rm->base, rm->size);
	free(rm);
}

struct io_uring_params *ringmem_holder_params(const struct ringmem *rm, unsigned qid)
{
	return (struct io_uring_params *)(rm->slots + (size_t)rm->nr_queues * rm->depth) + qid;
}

uint64_t ringmem_holder_epoch(const struct ringmem *rm)
{
	return atomic_load(&((struct ringmem_header *)rm->base)->holder_epoch);
}

uint64_t ringmem_holder_begin(struct ringmem *rm)
{
	return atomic_fetch_add(&((struct ringmem_header *)rm->base)->holder_epoch, 1) + 1;
}

void *ringmem_queue_mem(const struct ringmem *rm, unsigned qid)
{
	return (char *)rm->base + rm->meta_bytes + (size_t)qid * rm->queue_bytes;
}

struct ringmem_slot *ringmem_slot(const struct ringmem *rm, unsigned qid, unsigned idx)
{
	return &rm->slots[(size_t)qid * rm->depth + idx];
}

void ringmem_set_ext(struct ringmem *rm, unsigned flags, unsigned pool_bufs)
{
	struct ringmem_header *h = rm->base;

	h->pool_bufs = pool_bufs;
	atomic_store(&h->ext_flags, flags | RINGMEM_EXT_RECORDED);
}

unsigned ringmem_pool_room(const struct ringmem *rm)
{
	const struct ringmem_header *h = rm->base;
	size_t hdrs = (size_t)rm->depth * h->header_size;

	/* map_existing checked these against this server's geometry. */
	if (!h->payload_size || rm->queue_bytes < hdrs)
		return 0;
	return (unsigned)MIN((rm->queue_bytes - hdrs) / h->payload_size, (size_t)UINT32_MAX);
}

int ringmem_get_ext(const struct ringmem *rm, unsigned *flags, unsigned *pool_bufs)
{
	const struct ringmem_header *h = rm->base;
	unsigned f = atomic_load(&h->ext_flags), n = h->pool_bufs;

	if (!(f & RINGMEM_EXT_RECORDED))
		return 0;
	*flags = f;		/* also when refused: for the caller's log line */
	*pool_bufs = n;
	if ((f & RINGMEM_EXT_POOL) ? n == 0 || n > ringmem_pool_room(rm)
				   : n != 0 || (f & (RINGMEM_EXT_REGISTERED | RINGMEM_EXT_ZERO_COPY)))
		return -EPROTO;
	return 1;
}

void ringmem_mark_replying(void *in_out)
{
	uint32_t op = RINGMEM_OPCODE_REPLYING;

	memcpy((char *)in_out + offsetof(struct fuse_in_header, opcode), &op, sizeof(op));
	/* Before any byte of the reply: a kill can land between any two. */
	atomic_thread_fence(memory_order_release);
}

enum ringmem_held ringmem_held_state(const void *in_out)
{
	uint32_t op;

	memcpy(&op, (const char *)in_out + offsetof(struct fuse_in_header, opcode), sizeof(op));
	if (op == RINGMEM_OPCODE_REPLYING)
		return RINGMEM_HELD_REPLYING;
	/* fuse_out_header.error sits where the opcode was: 0 or -errno */
	if (op == 0 || op >= (uint32_t)-4095)
		return RINGMEM_HELD_REPLIED;
	return RINGMEM_HELD_REQUEST;
}
