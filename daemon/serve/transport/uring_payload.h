/* How a queue's entries hold request payloads and move READ/WRITE data,
 * chosen once per queue when it registers (after INIT), behind one small
 * table so the entries' state machine (uring_entry.c) has no branch on it:
 *   stock      one buffer per entry; backing pread/pwrite (IORING_OP_READ/
 *              WRITE, or inline where the backing fs refuses RWF_NOWAIT)
 *              straight into / out of it; the kernel copies to the client
 *   pool       7.46 buffer pools: a pool buffer per request, same I/O
 *   zero_copy  7.46 + zero-copy: READ_FIXED/WRITE_FIXED between the
 *              backing file and the client's pages, pool buffers for the rest
 * Every READ and WRITE takes the one path of fuse/file_io.h around it. */
#ifndef ZCFS_URING_PAYLOAD_H
#define ZCFS_URING_PAYLOAD_H

#include <liburing.h>
#include <stddef.h>
#include <stdint.h>

struct uring_queue;
struct uring_entry;

struct uring_payload_ops {
	const char *name;
	/* Puts a REGISTER / COMMIT_AND_FETCH SQE in this mode's form. */
	void (*prep_cmd)(struct uring_queue *q, struct uring_entry *e, struct io_uring_sqe *sqe, uint32_t op);
	/* A request arrived in e: sets e->payload (its buffer, or NULL) and
	 * e->pkind. -EPROTO when the kernel's offset or flags make no sense. */
	int (*take)(struct uring_queue *q, struct uring_entry *e, uint32_t opcode);
	/* Moves e's READ/WRITE data (e->io begun): an SQE that completes as
	 * UD_BACKING_READ/WRITE, or done inline (its reply already sent). */
	int (*start_io)(struct uring_queue *q, struct uring_entry *e);
	/* e's reply (error, len bytes in e->payload) is written: the last
	 * touches before its commit. */
	void (*finish_reply)(struct uring_queue *q, struct uring_entry *e, int error, size_t len);
};

extern const struct uring_payload_ops uring_payload_stock;
extern const struct uring_payload_ops uring_payload_pool;
extern const struct uring_payload_ops uring_payload_zero_copy;

/* The table for what q registered with (zerocopy_queue_setup). */
const struct uring_payload_ops *uring_payload_for(const struct uring_queue *q);
/* e holds a READ or WRITE: begins it (file_io_begin), moves its data;
 * every failure is answered. */
void uring_payload_serve_io(struct uring_queue *q, struct uring_entry *e);
/* Its backing I/O completed with res (bytes or -errno): ends and answers it. */
void uring_payload_io_done(struct uring_queue *q, struct uring_entry *e, int res);

#endif
