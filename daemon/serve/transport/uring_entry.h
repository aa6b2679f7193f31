/* The entries' state machine of an io_uring queue: a FUSE command
 * (REGISTER / COMMIT_AND_FETCH) goes out, its completion brings a request,
 * the request is decoded and answered, and its reply commits it and
 * fetches the next. Who owns the rings the commands go on is the queue's
 * ring-ownership table (uring_rings.h), how payloads move its payload
 * table (uring_payload.h): this file has no branch on either. */
#ifndef ZCFS_URING_ENTRY_H
#define ZCFS_URING_ENTRY_H

#include "uring_queue.h"

/* Puts e's command op (REGISTER, COMMIT_AND_FETCH) on the command ring;
 * submitted with the next submit. -EBUSY when the SQ stays full. */
int uring_entry_submit(struct uring_queue *q, struct uring_entry *e, uint32_t op) _must_check_;
/* A request landed in e (ENT_IN_SERVER): decodes and answers it. */
void uring_entry_serve(struct uring_queue *q, struct uring_entry *e);
/* After a submit: the COMMITs it carried are the kernel's now, so a
 * successor must not serve those requests again (ring memfd). */
void uring_entry_clear_submitted(struct uring_queue *q);
/* Handles every completion in ring. */
void uring_entry_reap(struct uring_queue *q, struct io_uring *ring);
/* One completion of q's own ring (also q->on_cqe). */
void uring_entry_cqe(struct uring_queue *q, const struct io_uring_cqe *cqe);

#endif
