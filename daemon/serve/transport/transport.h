/* The transports zcfs-serve can run on, and the /dev/fuse reader threads
 * every transport keeps for what the ring does not carry. */
#ifndef ZCFS_TRANSPORT_H
#define ZCFS_TRANSPORT_H

#include "daemon/serve/core/session.h"

extern const struct zcfs_transport_ops transport_devfuse;

/* /dev/fuse readers, usable by other transports: nthreads threads on
 * cloned fds of se->fuse_fd; splice_reads: give each a pipe for spliced
 * READ replies (not needed where READs travel on io_uring). */
struct devfuse_pool;
int devfuse_pool_start(struct zcfs_session *se, int nthreads, bool splice_reads,
		       struct devfuse_pool **ret) _must_check_;
void devfuse_pool_stop(struct devfuse_pool *pool);
/* Ends the readers of a connection that stays alive (no ENODEV comes)
 * once the session is exiting: sends each reader thread sig, whose
 * handler the caller installed without SA_RESTART and which only the
 * readers leave unblocked, so that read() fails with EINTR; joins them.
 * NULL-safe; devfuse_pool_stop frees the pool afterwards. */
void devfuse_pool_interrupt(struct devfuse_pool *pool, int sig);
/* From now on each reader pauses 1 ms after a FORGET or BATCH_FORGET, so
 * that the FORGETs queued meanwhile come in one BATCH_FORGET: for a pool
 * whose other requests (if any) no client waits for. NULL-safe. */
void devfuse_pool_batch_forgets(struct devfuse_pool *pool);

/* io_uring transport (FUSE-over-io_uring). */
extern const struct zcfs_transport_ops transport_uring;
/* 0 when this kernel and process can run the io_uring transport, else
 * -errno with a short reason for the log line. */
int transport_uring_probe(char *reason, size_t len);

#endif
