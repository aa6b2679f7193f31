/* The transports zcfs-serve can run on, and the /dev/fuse reader threads
 * every transport keeps for what the ring does not carry. */
#ifndef ZCFS_TRANSPORT_H
#define ZCFS_TRANSPORT_H

#include <signal.h>
#include "daemon/serve/core/session.h"

extern const struct zcfs_transport_ops transport_devfuse;

/* /dev/fuse readers, usable by other transports: nthreads threads on
 * cloned fds of se->fuse_fd; splice_reads: give each a pipe for spliced
 * READ replies (not needed where READs travel on io_uring). */
struct devfuse_pool;
int devfuse_pool_start(struct zcfs_session *se, int nthreads, bool splice_reads,
		       struct devfuse_pool **ret) _must_check_;
void devfuse_pool_stop(struct devfuse_pool *pool);
/* The signal that interrupts a reader's read() (EINTR): its handler is
 * installed without SA_RESTART by devfuse_wake_signal_install (-errno);
 * threads that are not readers keep it blocked. */
#define DEVFUSE_WAKE_SIGNAL (SIGRTMIN + 3)
int devfuse_wake_signal_install(void);
/* Ends the readers without cutting a request: each finishes the request
 * it holds and reads no other; one waiting in read() (or in a FORGET
 * pause) is woken by DEVFUSE_WAKE_SIGNAL, sent again every 20 ms until
 * it is gone (it may land just before the read begins); joins them. For
 * a connection that stays alive (no ENODEV comes): the end of an
 * io_uring session, a planned hand-over. NULL-safe; devfuse_pool_stop
 * frees the pool afterwards. */
void devfuse_pool_interrupt(struct devfuse_pool *pool);
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
