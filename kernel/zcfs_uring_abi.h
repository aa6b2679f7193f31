/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * FUSE-over-io_uring ABI as zcfs speaks it: the uring_cmd sub-commands, the
 * 80-byte command area of a 128-byte SQE, and the 288-byte header of every
 * ring entry; plus the buffer-pool / zero-copy extension of the 7.3 line
 * (protocol 7.46).
 *
 * Provenance: the values are those of Linux 6.14-6.18
 * (include/uapi/linux/fuse.h, fs/fuse/dev_uring.c) and of the buffer-pool
 * series kernel/patches.md names; the declarations and names are ours. Debian
 * 12's <linux/fuse.h> (7.38) has none of it. Kernel names that are plain
 * macros are guarded so a newer system header wins; the kernel's enums and
 * structs get zcfs_ names so both can coexist.
 */
#ifndef ZCFS_URING_ABI_H
#define ZCFS_URING_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <linux/fuse.h>
#include "zcfs_fuse_abi.h"

/* sqe->cmd_op of an IORING_OP_URING_CMD on the /dev/fuse fd. */
enum zcfs_uring_cmd_op {
	ZCFS_URING_CMD_INVALID = 0,
	/* Hand one entry (iov[0] header, iov[1] payload) to queue qid. */
	ZCFS_URING_CMD_REGISTER = 1,
	/* Commit the reply held in the entry, then wait for the next request. */
	ZCFS_URING_CMD_COMMIT_AND_FETCH = 2,
	/* 7.46 buffer pools: create queue qid (optionally zero-copy) ... */
	ZCFS_URING_CMD_ADD_QUEUE = 3,
	/* ... and give it a payload pool before its first REGISTER. */
	ZCFS_URING_CMD_ADD_BUFPOOL = 4,
};

/* A FUSE command needs 128-byte SQEs; its area starts at byte 48. */
#define ZCFS_URING_SQE_SIZE 128
#define ZCFS_URING_CMD_AREA_OFF 48
#define ZCFS_URING_CMD_AREA_SZ 80
/* REGISTER's sqe->len: exactly two iovecs (header, payload). */
#define ZCFS_URING_REGISTER_IOVS 2

/* Stock command area content (24 bytes). */
struct zcfs_uring_cmd_req {
	uint64_t flags;		/* stock: ignored, keep 0 */
	uint64_t commit_id;	/* COMMIT_AND_FETCH: ent_in_out.commit_id echoed */
	uint16_t qid;		/* 0 .. nr_queues-1 (= CPU number) */
	uint8_t padding[6];
};
_Static_assert(sizeof(struct zcfs_uring_cmd_req) == 24, "cmd_req is 24 bytes");
_Static_assert(offsetof(struct zcfs_uring_cmd_req, flags) == 0, "cmd_req.flags @0");
_Static_assert(offsetof(struct zcfs_uring_cmd_req, commit_id) == 8, "cmd_req.commit_id @8");
_Static_assert(offsetof(struct zcfs_uring_cmd_req, qid) == 16, "cmd_req.qid @16");
_Static_assert(sizeof(struct zcfs_uring_cmd_req) <= ZCFS_URING_CMD_AREA_SZ, "fits the cmd area");

/* 7.46 command area (40 bytes): the old padding is followed by a union. */
struct zcfs_uring_cmd_req_v46 {
	uint64_t flags;		/* ADD_QUEUE: FUSE_URING_ZERO_COPY; else 0 */
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
	union {
		struct {
			uint64_t uaddr;		/* ADD_BUFPOOL: pool memory */
			uint32_t len;		/* pool bytes (n x max payload) */
			uint32_t reserved;	/* must be 0 */
		} bufpool;
		uint16_t ent_zero_copy_buf_index;	/* REGISTER: entry's page slot */
	};
};
_Static_assert(sizeof(struct zcfs_uring_cmd_req_v46) == 40, "v46 cmd_req is 40 bytes");
_Static_assert(offsetof(struct zcfs_uring_cmd_req_v46, qid) == 16, "v46 qid @16");
_Static_assert(offsetof(struct zcfs_uring_cmd_req_v46, bufpool.uaddr) == 24, "bufpool.uaddr @24");
_Static_assert(offsetof(struct zcfs_uring_cmd_req_v46, bufpool.len) == 32, "bufpool.len @32");
_Static_assert(offsetof(struct zcfs_uring_cmd_req_v46, bufpool.reserved) == 36, "bufpool.reserved @36");
_Static_assert(offsetof(struct zcfs_uring_cmd_req_v46, ent_zero_copy_buf_index) == 24,
	       "ent_zero_copy_buf_index @24");
_Static_assert(sizeof(struct zcfs_uring_cmd_req_v46) <= ZCFS_URING_CMD_AREA_SZ, "fits the cmd area");

/* Per-entry header areas (kernel names FUSE_URING_IN_OUT_HEADER_SZ and
 * FUSE_URING_OP_IN_OUT_SZ). */
#define ZCFS_URING_IN_OUT_HEADER_SZ 128
#define ZCFS_URING_OP_IN_OUT_SZ 128

/* Bookkeeping between kernel and server, at header offset 256. */
struct zcfs_uring_ent_in_out {
	uint64_t flags;		/* 7.46: FUSE_URING_ENT_ZERO_COPY on delivery */
	uint64_t commit_id;	/* kernel->server; echo it in COMMIT_AND_FETCH */
	uint32_t payload_sz;	/* bytes in the payload buffer, both ways */
	uint32_t offset;	/* stock: padding; 7.46: payload offset in the pool */
	uint64_t reserved;
};
_Static_assert(sizeof(struct zcfs_uring_ent_in_out) == 32, "ent_in_out is 32 bytes");
_Static_assert(offsetof(struct zcfs_uring_ent_in_out, commit_id) == 8, "commit_id @8");
_Static_assert(offsetof(struct zcfs_uring_ent_in_out, payload_sz) == 16, "payload_sz @16");
_Static_assert(offsetof(struct zcfs_uring_ent_in_out, offset) == 20, "offset @20");
_Static_assert(offsetof(struct zcfs_uring_ent_in_out, reserved) == 24, "reserved @24");

/* iov[0] of REGISTER: the kernel writes a request's headers here, the
 * server writes its fuse_out_header into in_out. */
struct zcfs_uring_req_header {
	uint8_t in_out[ZCFS_URING_IN_OUT_HEADER_SZ];	/* fuse_in_header / fuse_out_header */
	uint8_t op_in[ZCFS_URING_OP_IN_OUT_SZ];		/* the opcode's first argument */
	struct zcfs_uring_ent_in_out ring_ent_in_out;
};
_Static_assert(sizeof(struct zcfs_uring_req_header) == 288, "req_header is 288 bytes");
_Static_assert(offsetof(struct zcfs_uring_req_header, in_out) == 0, "in_out @0");
_Static_assert(offsetof(struct zcfs_uring_req_header, op_in) == 128, "op_in @128");
_Static_assert(offsetof(struct zcfs_uring_req_header, ring_ent_in_out) == 256, "ent_in_out @256");
_Static_assert(offsetof(struct zcfs_uring_req_header, ring_ent_in_out.commit_id) == 264,
	       "commit_id @264");
_Static_assert(offsetof(struct zcfs_uring_req_header, ring_ent_in_out.payload_sz) == 272,
	       "payload_sz @272");
_Static_assert(offsetof(struct zcfs_uring_req_header, ring_ent_in_out.offset) == 276,
	       "offset @276");
_Static_assert(sizeof(struct fuse_in_header) <= ZCFS_URING_IN_OUT_HEADER_SZ, "in header fits");
_Static_assert(sizeof(struct fuse_out_header) <= ZCFS_URING_IN_OUT_HEADER_SZ, "out header fits");

/* Payload rule: buffers at least max(8192, max_write, max_pages * page). */
#define ZCFS_FUSE_MIN_READ_BUFFER 8192

/* 7.46 buffer pools and zero-copy (reported 7.3 values, detect at runtime). */
#define ZCFS_FUSE_MINOR_BUFPOOL 46
#ifndef FUSE_HAS_IO_URING_BUFPOOL
#define FUSE_HAS_IO_URING_BUFPOOL (1ULL << 43)
#endif
/* ADD_QUEUE cmd_req.flags: the queue takes zero-copy requests
 * (CAP_SYS_ADMIN, else -EPERM). */
#ifndef FUSE_URING_ZERO_COPY
#define FUSE_URING_ZERO_COPY (1ULL << 0)
#endif
/* ent_in_out.flags on delivery: this request's pages are registered in the
 * entry's fixed-buffer slot, reachable only by READ/WRITE_FIXED. */
#ifndef FUSE_URING_ENT_ZERO_COPY
#define FUSE_URING_ENT_ZERO_COPY (1ULL << 0)
#endif
/* OPEN/CREATE reply: READ/WRITE of this file may use zero-copy. */
#ifndef FOPEN_IO_URING_ZERO_COPY
#define FOPEN_IO_URING_ZERO_COPY (1 << 8)
#endif

#endif
