/* The system-call side of buffer pools and zero-copy (protocol 7.46):
 * fixed-buffer table, ADD_QUEUE / ADD_BUFPOOL on the queue ring, pool
 * buffers per request (their READ_FIXED / WRITE_FIXED: uring_payload.c),
 * and giving up CAP_SYS_ADMIN once the rings are registered. Decisions
 * and arithmetic are in uring_bufpool.c. */
#ifndef ZCFS_URING_ZEROCOPY_H
#define ZCFS_URING_ZEROCOPY_H

#include "uring_ring.h"

/* On the queue thread, before its REGISTERs: lay out for the geometry
 * decided at INIT and, when q->ext asks for it, register the fixed-buffer
 * table, ADD_QUEUE and ADD_BUFPOOL -- unless in_kernel: the kernel's queue
 * exists in that form already (a successor on holder rings whose entries
 * were registered), then only the pool's mirror. Logs the step that failed. */
int zerocopy_queue_setup(struct uring_queue *q, bool in_kernel) _must_check_;
/* Logs what the queue served zero-copy and through its pool (any thread). */
void zerocopy_log_counts(const struct uring_queue *q);
void zerocopy_queue_free(struct uring_queue *q);
/* Rewrites a REGISTER / COMMIT_AND_FETCH SQE of a pool queue in the 7.46
 * form (page slot, URING_CMD_FIXED + pool index). */
void zerocopy_prep_cmd(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe,
		       uint32_t op);
/* A request arrived in e on a pool queue: sets e->pkind and e->payload
 * (its pool buffer, or NULL). -EPROTO when the kernel's offset or flags
 * make no sense. */
int zerocopy_take_payload(struct uring_queue *q, struct uring_entry *e, uint32_t opcode) _must_check_;
/* The reply is written: the pool buffer goes back. */
void zerocopy_put_payload(struct uring_queue *q, struct uring_entry *e);

/* Whether the calling thread has cap in its effective set. */
bool zerocopy_thread_has_cap(int cap);
/* Whether pinning `bytes` more through io_uring registration fits
 * RLIMIT_MEMLOCK (or CAP_IPC_LOCK makes the limit moot). */
bool zerocopy_memlock_allows(uint64_t bytes);
/* Drops CAP_SYS_ADMIN from the calling thread (caps_drop_self); the
 * whole process: caps_drop_sys_admin() in caps.h. */
int zerocopy_caps_drop_thread(void) _must_check_;

#endif
