/* Buffer pools and zero-copy on FUSE-over-io_uring (protocol 7.46, the
 * buffer-pool series merged for Linux 7.3; ../shared/docs/fuse-uring-abi.md
 * section 2.4). Everything here is bookkeeping without system calls, so it
 * is unit-tested without the patched kernel:
 *
 *  - which extensions a queue runs with, decided from the INIT offer, the
 *    options and the process's privileges (uring_ext_decide), with the
 *    reason for every "off";
 *  - the command area of ADD_QUEUE, ADD_BUFPOOL, REGISTER and
 *    COMMIT_AND_FETCH in the 40-byte 7.46 form;
 *  - the mirror of a queue's pool: the kernel picks a buffer per request
 *    and reports its byte offset, we check the offset and that no two
 *    entries hold one buffer at once, and count use;
 *  - what a delivered request's payload is: nothing, a pool buffer, or
 *    client pages reachable only with READ_FIXED / WRITE_FIXED;
 *  - the fixed-buffer table: pool at index 0, entry i's page slot at i+1
 *    (the layout of the series' userspace drafts);
 *  - the FOPEN_IO_URING_ZERO_COPY mark in OPEN/CREATE replies. */
#ifndef ZCFS_URING_BUFPOOL_H
#define ZCFS_URING_BUFPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "daemon/serve/core/options.h"
#include "common/util.h"
#include "kernel/zcfs_uring_abi.h"

/* ---- decision ------------------------------------------------------- */

/* What the server knows when it decides, right after INIT. */
struct uring_ext_facts {
	bool ring_on;		/* the io_uring transport serves this connection */
	uint32_t minor;		/* FUSE minor the kernel offered in INIT */
	uint64_t offered;	/* INIT flags | flags2 << 32 the kernel offered */
	bool cap_sys_admin;	/* effective now (ADD_QUEUE ZERO_COPY checks it) */
	bool sandbox;		/* sandboxed without its thread list: could not drop it */
	bool passthrough;	/* passthrough without a broker keeps CAP_SYS_ADMIN for every open */
	bool memlock_ok;	/* registering the pools fits RLIMIT_MEMLOCK (or CAP_IPC_LOCK) */
	bool holder_rings;	/* a ring holder's rings: they refuse buffer registration */
};

struct uring_ext_plan {
	bool pool;		/* ADD_BUFPOOL on every queue */
	bool registered;	/* the pool is fixed buffer 0, commands carry URING_CMD_FIXED */
	bool zero_copy;		/* ADD_QUEUE with FUSE_URING_ZERO_COPY, page slots registered */
	bool adopted;		/* a successor's: the queues exist in the kernel in this form */
	char pool_reason[64];	/* why pool is as it is (one token, for the log line) */
	char zc_reason[64];
};

/* Fills plan. 0, or -EOPNOTSUPP when a mode given as on/registered is
 * unavailable (plan's reasons say why; the caller makes that fatal). */
int uring_ext_decide(enum zcfs_bufpool_mode pool_mode, enum zcfs_zerocopy_mode zc_mode,
		     const struct uring_ext_facts *f, struct uring_ext_plan *plan) _must_check_;

/* ---- command area (80 bytes at SQE offset 48) ------------------------ */

void uring_cmd_add_queue(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, bool zero_copy);
/* -EINVAL for an empty pool, -EOVERFLOW when len does not fit the u32. */
int uring_cmd_add_bufpool(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint64_t uaddr,
			  uint64_t len) _must_check_;
/* zc_slot: the entry's fixed-buffer slot on a zero-copy queue, else 0. */
void uring_cmd_register(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint16_t zc_slot);
void uring_cmd_commit(uint8_t area[ZCFS_URING_CMD_AREA_SZ], uint16_t qid, uint64_t commit_id);

/* ---- fixed-buffer table -------------------------------------------- */

#define URING_FIXED_POOL_INDEX 0u
static inline unsigned uring_fixed_entry_slot(unsigned entry) { return entry + 1; }
static inline unsigned uring_fixed_table_size(unsigned depth) { return depth + 1; }

/* ---- pool mirror ---------------------------------------------------- */

struct bufpool {
	unsigned nbufs;
	size_t buf_size;	/* = the ring's max payload (kernel rule) */
	uint64_t *busy;		/* bitmap, one bit per buffer */
	unsigned in_use;
	unsigned peak;
	uint64_t claims;	/* requests that got a buffer */
	uint64_t refused;	/* offsets that were out of range or double-held */
};

int bufpool_init(struct bufpool *p, unsigned nbufs, size_t buf_size) _must_check_;
void bufpool_done(struct bufpool *p);
/* Bytes of pool memory (what ADD_BUFPOOL's len says). */
uint64_t bufpool_bytes(unsigned nbufs, size_t buf_size);
/* The kernel's choice: the lowest free buffer; -ENOBUFS when none (the
 * kernel then keeps the request queued). Used by tests and to cross-check. */
int bufpool_alloc(struct bufpool *p, unsigned *id) _must_check_;
/* The kernel reported offset for a request with payload: -EPROTO when it
 * is not a buffer's start, -EBUSY when another entry holds that buffer. */
int bufpool_claim(struct bufpool *p, uint32_t offset, unsigned *id) _must_check_;
/* The entry committed its reply: the buffer goes back. -EINVAL if it was
 * not held. */
int bufpool_release(struct bufpool *p, unsigned id) _must_check_;
static inline uint64_t bufpool_offset(const struct bufpool *p, unsigned id)
{
	return (uint64_t)id * p->buf_size;
}

/* ---- delivered requests -------------------------------------------- */

enum uring_payload_kind {
	URING_PAYLOAD_NONE,	/* no buffer: offset 0 means nothing, reply has no payload */
	URING_PAYLOAD_COPY,	/* args and reply in the pool buffer at `offset` */
	URING_PAYLOAD_ZC_READ,	/* READ: data goes to the pages with READ_FIXED */
	URING_PAYLOAD_ZC_WRITE,	/* WRITE: data comes from the pages with WRITE_FIXED;
				 * write_out still returns through a pool buffer */
};

/* Whether a reply to opcode may carry payload (out args). */
bool uring_op_reply_has_payload(uint32_t opcode);
/* Classifies a delivery; -EPROTO for ENT_ZERO_COPY where it cannot be. */
int uring_classify_payload(uint32_t opcode, uint64_t ent_flags, uint32_t payload_sz, bool zc_queue,
			   enum uring_payload_kind *kind) _must_check_;
/* Whether this payload kind has a pool buffer at ent_in_out.offset. */
static inline bool uring_payload_has_buffer(enum uring_payload_kind k)
{
	return k == URING_PAYLOAD_COPY || k == URING_PAYLOAD_ZC_WRITE;
}

/* Adds FOPEN_IO_URING_ZERO_COPY to an OPEN/CREATE reply payload (built
 * by ops_file.c) unless it is a passthrough open. 1 when marked, 0 when
 * not applicable, -EINVAL when the payload is too short for its opcode. */
int uring_mark_zero_copy_open(uint32_t opcode, void *payload, size_t len) _must_check_;

#endif
