/* The FUSE message layer: the request every transport hands over, its
 * bounds-checked decode and dispatch to the handlers (fuse_msg.c), the
 * replies (req_io.c; the message write itself and notifications:
 * core/fuse_wire.h). */
#ifndef ZCFS_FUSE_MSG_H
#define ZCFS_FUSE_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "kernel/zcfs_fuse_abi.h"
#include "daemon/serve/core/fuse_wire.h"
#include "daemon/serve/core/session.h"
#include "common/util.h"

struct zcfs_req;

/* How a transport sends a reply: out header + iov payload. */
typedef int (*zcfs_reply_fn)(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt);
/* How a transport may answer a READ straight from the backing file
 * (size bytes of fd at off) without the server copying the data: 1 when
 * it replied, 0 when it did not and the caller reads and replies itself. */
typedef int (*zcfs_reply_fd_fn)(struct zcfs_req *req, int fd, uint64_t off, size_t size);
/* How a transport serves an opcode the table marks async (READ, WRITE)
 * itself, moving its data off the dispatching thread: it begins and ends
 * it through file_io.h and answers it, failures included. */
typedef void (*zcfs_serve_async_fn)(struct zcfs_req *req);

/* One request, as decoded from whichever transport carried it. Pointers
 * are into transport-owned buffers that live until the reply is sent. */
struct zcfs_req {
	struct zcfs_session *se;
	struct fuse_in_header in;
	const void *arg;	/* the opcode's fixed argument struct */
	size_t arg_len;
	const void *data;	/* what follows it: names, write data */
	size_t data_len;
	void *outbuf;		/* transport buffer a reply payload may be built in */
	size_t outbuf_size;
	zcfs_reply_fn reply;
	zcfs_reply_fd_fn reply_fd;	/* NULL: the transport has no such path */
	zcfs_serve_async_fn serve_async;	/* NULL: async opcodes run their handler */
	void *tctx;		/* transport's per-request context */
	uint64_t start_ns;	/* when it was decoded, for the latency figure */
	bool replied;
};

/* Decode a request whose fixed argument and payload come separately (ring
 * layout) or back to back (/dev/fuse: pass body as arg, NULL data).
 * Fills req's arg/data from the opcode's table; -EINVAL/-EPROTO on bad
 * lengths. */
int req_decode(struct zcfs_req *req, const struct fuse_in_header *in, const void *arg,
	       size_t arg_len, const void *data, size_t data_len, bool contiguous) _must_check_;
/* Decode a contiguous /dev/fuse message of n bytes. */
int req_decode_devfuse(struct zcfs_req *req, const void *buf, size_t n) _must_check_;
/* Run the handler, or the transport's serve_async for an async opcode;
 * always leaves the request answered (or unanswered for opcodes that take
 * no reply; an async one once its data has moved). */
void session_dispatch(struct zcfs_req *req);
const char *fuse_opcode_name(uint32_t opcode);
/* Fixed argument size for opcode, -1 if unknown. */
int fuse_opcode_arg_size(uint32_t opcode);

/* req_io.c: what the handlers, the dispatcher and the transports use of
 * a request (its payload's strings, the replies, counted). */
/* The request's start, for its latency figure (when counters are on). */
void req_start_clock(struct zcfs_req *req);
int reply_err(struct zcfs_req *req, int error);
int reply_buf(struct zcfs_req *req, const void *buf, size_t len);
int reply_iov(struct zcfs_req *req, const struct iovec *iov, int iovcnt);
void reply_none(struct zcfs_req *req);
/* A transport sent a successful reply with len payload bytes by other
 * means (reply_fd): count it and mark the request answered. */
void reply_sent(struct zcfs_req *req, size_t len);

/* Takes the next string from req->data at *off; -EINVAL unless it is NUL
 * terminated inside the payload. */
int req_next_string(struct zcfs_req *req, size_t *off, const char **ret) _must_check_;

#endif
