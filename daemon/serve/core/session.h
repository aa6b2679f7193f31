/* A FUSE session: one mounted connection, its negotiated parameters, the
 * inode table, and the request type every transport hands to dispatch. */
#ifndef ZCFS_SESSION_H
#define ZCFS_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/uio.h>
#include "kernel/zcfs_fuse_abi.h"
#include "options.h"
#include "daemon/common/util.h"

struct zcfs_req;
struct zcfs_session;
struct inode_table;
struct handle_table;
struct resume_index;
struct zcfs_stats;
struct broker_client;
struct zcfs_quota;

/* How a transport sends a reply: out header + iov payload. */
typedef int (*zcfs_reply_fn)(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt);
/* How a transport may answer a READ straight from the backing file
 * (size bytes of fd at off) without the server copying the data: 1 when
 * it replied, 0 when it did not and the caller reads and replies itself. */
typedef int (*zcfs_reply_fd_fn)(struct zcfs_req *req, int fd, uint64_t off, size_t size);

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
	void *tctx;		/* transport's per-request context */
	uint64_t start_ns;	/* when it was decoded, for the latency figure */
	bool replied;
};

/* Transport interface: /dev/fuse and io_uring sit behind it. */
struct zcfs_transport_ops {
	const char *name;
	/* Start serving (spawn threads). Called once, before INIT arrives. */
	int (*start)(struct zcfs_session *se);
	/* Called by the INIT handler to learn which INIT flags to add. */
	uint64_t (*init_flags)(struct zcfs_session *se, uint64_t offered);
	/* Called after the INIT reply was written. */
	int (*after_init)(struct zcfs_session *se);
	/* Stop threads and free resources; safe after a failed start. */
	void (*stop)(struct zcfs_session *se);
};

struct zcfs_session {
	const struct zcfs_options *opts;
	int fuse_fd;
	int root_fd;		/* O_PATH of SOURCE */
	uint64_t root_dev;
	struct inode_table *inodes;
	struct handle_table *handles;
	/* Cache policy, from --cache */
	double entry_timeout;
	double attr_timeout;
	bool keep_cache;
	const struct zcfs_transport_ops *transport;
	void *transport_priv;
	char transport_desc[160];	/* for the one init log line */
	char transport_reason[96];	/* why this transport was chosen */

	/* Negotiated at INIT */
	uint32_t proto_minor;
	uint64_t conn_flags;
	uint32_t max_write;
	uint32_t max_pages;
	size_t bufsize;		/* bytes of one /dev/fuse read buffer */
	atomic_bool initialized;
	/* --resume: requests read before session_resume() has assumed the
	 * predecessor's INIT wait here instead of failing (a restarted
	 * server's readers find requests queued while it was down). */
	pthread_mutex_t init_lock;
	pthread_cond_t init_cond;
	atomic_bool passthrough_on;	/* negotiated and not refused yet */
	struct broker_client *broker;	/* --broker-fd: zcfsd registers backing files */

	bool xattr_owner;	/* --ownership=xattr */
	struct resume_index *resume;	/* set with --resume */
	struct zcfs_stats *stats;	/* counters shared with zcfsd (--stats-fd), or NULL */
	struct zcfs_quota *quota;	/* --quota-bytes, or NULL */
	struct zcfs_prune *prune;	/* FUSE_NOTIFY_PRUNE under fd pressure, or NULL */
	uid_t server_uid;

	atomic_bool exiting;
	int exit_status;
	pthread_t main_thread;
	int nthreads;
};

/* Decode a request whose fixed argument and payload come separately (ring
 * layout) or back to back (/dev/fuse: pass body as arg, NULL data).
 * Fills req's arg/data from the opcode's table; -EINVAL/-EPROTO on bad
 * lengths. */
int req_decode(struct zcfs_req *req, const struct fuse_in_header *in, const void *arg,
	       size_t arg_len, const void *data, size_t data_len, bool contiguous) _must_check_;
/* Decode a contiguous /dev/fuse message of n bytes. */
int req_decode_devfuse(struct zcfs_req *req, const void *buf, size_t n) _must_check_;
/* Run the handler; always leaves the request answered (or unanswered for
 * opcodes that take no reply). */
void session_dispatch(struct zcfs_req *req);
const char *fuse_opcode_name(uint32_t opcode);
/* Fixed argument size for opcode, -1 if unknown. */
int fuse_opcode_arg_size(uint32_t opcode);

int reply_err(struct zcfs_req *req, int error);
int reply_buf(struct zcfs_req *req, const void *buf, size_t len);
int reply_iov(struct zcfs_req *req, const struct iovec *iov, int iovcnt);
void reply_none(struct zcfs_req *req);
/* A transport sent a successful reply with len payload bytes by other
 * means (reply_fd): count it and mark the request answered. */
void reply_sent(struct zcfs_req *req, size_t len);

/* --resume: take the connection as already initialized (INIT was the
 * previous server's) and start the transport's post-INIT work. */
int session_resume(struct zcfs_session *se) _must_check_;

/* Marks the session as done (unmounted or fatal) and wakes main. */
void session_exit(struct zcfs_session *se, int status);
/* The status session_exit() recorded (0 before any). */
int session_exit_status(struct zcfs_session *se);

/* Marks the session initialized and releases the requests waiting for it. */
void session_set_initialized(struct zcfs_session *se);
/* Waits until the session is initialized or exiting; true if initialized. */
bool session_wait_initialized(struct zcfs_session *se);

/* Takes the next string from req->data at *off; -EINVAL unless it is NUL
 * terminated inside the payload. */
int req_next_string(struct zcfs_req *req, size_t *off, const char **ret) _must_check_;

#endif
