/* The ring and memory of one io_uring queue, below its entry state machine
 * (uring_entry.h): what the payload and zero-copy files need from the queue
 * (SQEs, FUSE command SQEs, a command waited for, the buffer layout) and
 * nothing of its entries, so every call in the folder points down to here.
 * All of it runs on the queue thread. */
#ifndef ZCFS_URING_RING_H
#define ZCFS_URING_RING_H

#include "uring_queue.h"

/* A cleared SQE of q's own ring, or NULL. */
struct io_uring_sqe *uring_queue_sqe(struct uring_queue *q);
/* A zeroed SQE holding the FUSE io_uring command op on the /dev/fuse fd
 * of the ring that carries q's FUSE commands (q->cmd_ring: fixed file 0
 * when registered); NULL when the SQ stays full. */
struct io_uring_sqe *uring_queue_fuse_cmd_sqe(struct uring_queue *q, uint32_t op);
/* Submits sqe on q's own ring and waits for its completion (others that
 * arrive meanwhile go to q->on_cqe, handled as usual); its res. */
int uring_queue_run_sync(struct uring_queue *q, struct io_uring_sqe *sqe) _must_check_;
/* (Re)lays out q->mem for the geometry's current payload layout: headers,
 * then one payload buffer per entry or the pool. Only while no entry is
 * registered (set-up, and zerocopy_queue_setup after INIT). */
int uring_queue_layout(struct uring_queue *q) _must_check_;
/* Creates q's own SQE128 ring, the cheapest completion mode the kernel
 * takes (disabled when sandboxed: sandbox.c enables it). */
int uring_queue_ring_create(struct uring_queue *q) _must_check_;
/* The poll of q's eventfd (wake-ups: register, hand-over, stop). */
int uring_queue_arm_wake(struct uring_queue *q) _must_check_;

#endif
