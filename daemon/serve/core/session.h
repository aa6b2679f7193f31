/* A FUSE session: one mounted connection, its negotiated parameters, the
 * inode table, the transport interface, and the session's life (exit,
 * INIT). The request type and its decode/dispatch/reply are the message
 * layer's (fuse/fuse_msg.h). */
#ifndef ZCFS_SESSION_H
#define ZCFS_SESSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include "kernel/zcfs_fuse_abi.h"
#include "options.h"
#include "common/util.h"

struct zcfs_session;
struct inode_table;
struct handle_table;
struct resume_index;
struct zcfs_stats;
struct broker_client;
struct zcfs_quota;

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
	/* Planned restart (optional): stop answering and leave every request
	 * the kernel gave us where a successor (--resume) finds it; then the
	 * process exits. 0 when nothing can be lost by exiting now. */
	int (*hand_over)(struct zcfs_session *se);
	/* Logs what it counted (optional): a server leaving zcfsd's
	 * connection ends without stop(). */
	void (*log_counts)(struct zcfs_session *se);
};

/* When each step of the start ended (wall_us(), 0: not reached), logged
 * with "serving" (bench/notes/supervision.md, "Where a restart's stall goes"). */
enum zcfs_start_step {
	START_MAIN,		/* main() entered: exec and dynamic linking before */
	START_SOURCE,		/* options, SOURCE opened, its mount attributes */
	START_TABLES,		/* inode/handle tables, quota count */
	START_CONFINE,		/* counters, privileges, sandbox */
	START_TRANSPORT,	/* prune thread, transport (rings, readers) */
	START_STANDBY,		/* --standby-fd: waiting for the predecessor to leave */
	START_SERVING,		/* INIT answered or assumed, rings registered */
	START_STEPS
};

struct zcfs_session {
	const struct zcfs_options *opts;
	int64_t start_us[START_STEPS];
	int fuse_fd;
	int root_fd;		/* O_PATH of SOURCE */
	int proc_fd_dir;	/* O_PATH of our /proc/self/fd, > 0; else none */
	uint64_t root_dev;
	struct inode_table *inodes;
	struct handle_table *handles;
	/* Cache policy, from --cache */
	double entry_timeout;
	double attr_timeout;
	bool keep_cache;
	unsigned long backing_atime;	/* source_mount_atime_flags() of SOURCE */
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
	const uint64_t *size_channel;	/* its quota_bytes when the memfd has it (online resize) */
	struct zcfs_quota *quota;	/* --quota-bytes, or NULL */
	struct zcfs_prune *prune;	/* FUSE_NOTIFY_PRUNE under fd pressure, or NULL */
	uid_t server_uid;

	/* --standby-fd until session_go(): the transport's threads exist but
	 * none reads the connection (the predecessor still serves it). */
	atomic_bool standby;
	atomic_int ready_fd;	/* --ready-fd until session_ready() has used it, then -1 */
	atomic_bool exiting;
	int exit_status;
	int wake_fd;		/* eventfd main waits on; session_exit() writes it; -1: none */
	int nthreads;
};

/* Marks the session as done (unmounted or fatal) and wakes main. */
void session_exit(struct zcfs_session *se, int status);
/* The status session_exit() recorded (0 before any). */
int session_exit_status(struct zcfs_session *se);

/* Marks the session initialized and releases the requests waiting for it. */
void session_set_initialized(struct zcfs_session *se);
/* Waits until the session is initialized or exiting; true if initialized. */
bool session_wait_initialized(struct zcfs_session *se);
/* A standby's readers wait here before their first read: true once
 * session_go() let them, false when the session ends first. */
bool session_wait_go(struct zcfs_session *se);
void session_go(struct zcfs_session *se);
/* Serving (INIT answered, or assumed on --resume, and the transport's
 * post-INIT work done): writes 'R' to --ready-fd and closes it, once. */
void session_ready(struct zcfs_session *se);

#endif
