/* Ring buffers a restarted server can take over (--ring-memfd).
 *
 * On 6.18, FUSE_NOTIFY_RESEND replays only the requests of /dev/fuse:
 * a request the kernel handed to a ring entry of a server that died
 * stays with that entry, and its caller waits until the connection ends.
 * But the kernel finds such a request again by its commit id on any
 * COMMIT_AND_FETCH of that queue, and copies the reply from the buffers
 * the entry registered, by their user address. So the buffers live in a
 * memfd that zcfsd keeps for the connection, and every server of the
 * volume maps it at the same address. A small table in it keeps, per
 * entry, the commit id it last committed: an entry header that carries
 * another id holds a request the kernel delivered (even one the dead
 * server never reaped). The successor serves those from the headers and
 * payloads still in the memfd and commits them with their commit ids,
 * which also puts the dead server's entries back to work. */
#ifndef ZCFS_URING_RINGMEM_H
#define ZCFS_URING_RINGMEM_H

#include <liburing.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "common/util.h"
#include "kernel/zcfs_uring_abi.h"

struct uring_geometry;

/* Bytes of a request's payload kept as delivered (a holder's rings): a
 * reply overwrites the start of the payload buffer, and no request whose
 * payload is longer than this has a reply longer than this (WRITE,
 * SETXATTR, RENAME, SYMLINK, LINK: at most a fuse_entry_out). */
#define RINGMEM_SAVE_BYTES 256

struct ringmem_slot {
	/* What the entry last committed, set once that COMMIT was submitted:
	 * a request committed but not yet marked is served twice (the kernel
	 * then refuses the second commit), as FUSE_NOTIFY_RESEND would. */
	_Atomic uint64_t done_id;
	/* Holder rings (uring_holder.h): the entry's last command, written
	 * before its SQE is published, and what a server did with it. */
	_Atomic uint64_t gen;		/* its generation (1, 2, ...; low bits in user_data) */
	uint64_t epoch;			/* the holder it went to (ringmem_holder_epoch) */
	uint32_t pos;			/* its SQ position: published iff before the SQ tail */
	uint32_t cmd_op;		/* REGISTER or COMMIT_AND_FETCH */
	uint64_t commit_id;		/* what a COMMIT_AND_FETCH commits */
	_Atomic uint64_t taken;		/* the generation whose CQE a server consumed */
	int32_t taken_res;
	uint32_t psz;			/* payload bytes of the request taken */
	_Atomic uint64_t replied;	/* the generation whose reply is complete in the buffers */
	struct iovec iov[2];		/* what REGISTER reads (in the holder's mm, same address) */
	struct fuse_in_header in;	/* the request's header as delivered */
	uint8_t psave[RINGMEM_SAVE_BYTES];
};

struct ringmem {
	int fd;
	void *base;		/* where the memfd is mapped, the same in every server */
	size_t size;
	size_t meta_bytes;	/* header + slot table, page aligned */
	size_t queue_bytes;	/* one queue's headers and payloads */
	unsigned nr_queues, depth;
	bool recovering;	/* mapped a predecessor's buffers of this connection */
	struct ringmem_slot *slots;	/* nr_queues * depth */
};

/* Maps the memfd for geometry g. With resume, takes over a predecessor's
 * mapping (same address, same geometry) and sets recovering; otherwise,
 * or when that is impossible (logged), starts afresh -- unless
 * take_only (a standby, whose predecessor still uses them): then the
 * error. */
int ringmem_attach(int fd, const struct uring_geometry *g, bool resume, bool take_only,
		   struct ringmem **ret) _must_check_;
void ringmem_detach(struct ringmem *rm);

/* Holder rings: the ring parameters of queue qid as the holder created
 * them (what a server needs to map the ring), and the holder's epoch: one
 * more with every holder of the connection, so a server knows which
 * entries' commands died with an earlier holder. */
struct io_uring_params *ringmem_holder_params(const struct ringmem *rm, unsigned qid);
uint64_t ringmem_holder_epoch(const struct ringmem *rm);
/* A new holder: the next epoch, returned. */
uint64_t ringmem_holder_begin(struct ringmem *rm);

/* The notify_unique of this server's next kick (uring_kick.c): even,
 * from 2^62 up, and never the same twice on one connection. Every server
 * of the connection draws from one counter in the memfd: a kick request
 * a dead server left in the kernel keeps its unique in the queue's hash,
 * and a successor's kick with the same unique would make the kernel
 * match the successor's commit to the wrong entry (fuse_request_find
 * finds the first request of that unique), cross-wiring ring buffers.
 * rm NULL (no --ring-memfd): a counter of this process, time-seeded. */
uint64_t ringmem_kick_unique(struct ringmem *rm);

/* The form of the kernel's queues on this connection, recorded by the
 * first server before its ADD_QUEUE / ADD_BUFPOOL (7.46): the queues,
 * their zero-copy mode and their pool (its user address: in this memfd)
 * outlive every server, so a successor registers entries of that form
 * and never the stock one, which the kernel refuses with -EINVAL and
 * then switches io_uring off for the connection for good. */
#define RINGMEM_EXT_RECORDED 1u
#define RINGMEM_EXT_POOL 2u
#define RINGMEM_EXT_REGISTERED 4u
#define RINGMEM_EXT_ZERO_COPY 8u
void ringmem_set_ext(struct ringmem *rm, unsigned flags, unsigned pool_bufs);
/* 1 with the recorded form, 0 when no server of this connection recorded
 * one, -EPROTO when what the memfd says cannot be (a pool of no buffers or
 * of more than ringmem_pool_room: laid out from the recorded count, it
 * would run past the queue's region into the next queue's headers or
 * past the mapping; zero-copy or a registered pool without a pool). The
 * memfd is the tenant's to write (a holder, an earlier server): nothing in
 * it is trusted without a bound. */
int ringmem_get_ext(const struct ringmem *rm, unsigned *flags, unsigned *pool_bufs) _must_check_;
/* Pool buffers one queue's region holds after its headers. */
unsigned ringmem_pool_room(const struct ringmem *rm);

/* A request a dead server's entry held (its commit id not marked done):
 * how far that server got, read from the header's in_out bytes. The
 * kernel delivers a fuse_in_header there and reads the fuse_out_header
 * of the reply from the same bytes, so a reply overwrites the request's
 * opcode with its error (0 or -errno) -- and its payload overwrites the
 * request's. uring_reply therefore first stores RINGMEM_OPCODE_REPLYING
 * in the opcode (ringmem_mark_replying), then the payload, then the out
 * header. Served again, a request whose reply was complete would be
 * answered for an opcode 0 (ENOSYS: a WRITE of writeback came back
 * ENOSYS and fdatasync(2) said so); one whose reply was half written
 * could be served from overwritten input (a WRITE's first bytes). */
enum ringmem_held {
	RINGMEM_HELD_REQUEST,	/* as delivered: serve it */
	RINGMEM_HELD_REPLYING,	/* the reply was being written: its input may be gone */
	RINGMEM_HELD_REPLIED,	/* the reply is complete in the buffers: commit it */
};
#define RINGMEM_OPCODE_REPLYING 0x7a637270u	/* no FUSE opcode, no -errno */
void ringmem_mark_replying(void *in_out);
enum ringmem_held ringmem_held_state(const void *in_out);

/* Queue qid's buffer region (headers, then payloads or the pool: room for
 * the larger of the two layouts). */
void *ringmem_queue_mem(const struct ringmem *rm, unsigned qid);
struct ringmem_slot *ringmem_slot(const struct ringmem *rm, unsigned qid, unsigned idx);

#endif
