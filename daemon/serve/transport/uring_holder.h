/* A server on a ring holder's rings (--holder-rings, common/
 * ring_holder.h): the holder's SQPOLL thread issues every FUSE command, so
 * a server that dies cancels none of them; its successor maps the same
 * rings and resumes each entry from the bookkeeping in the ring memfd
 * (struct ringmem_slot): the generation of the entry's last command (also
 * in its CQE's user_data), its SQ position, whether a server took its CQE
 * and finished its reply, and the request as delivered. */
#ifndef ZCFS_URING_HOLDER_H
#define ZCFS_URING_HOLDER_H

#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include "uring_ringmem.h"

struct zcfs_uring_req_header;
struct zcfs_options;

/* What a successor does with one entry (holder_take_decide). */
enum holder_take {
	HOLDER_TAKE_REGISTER,		/* nothing of it in the kernel: REGISTER afresh */
	HOLDER_TAKE_WAIT,		/* its command is in the kernel: its CQE comes */
	HOLDER_TAKE_RESUBMIT,		/* written but never published: write it again */
	HOLDER_TAKE_RECOMMIT,		/* its reply is complete: commit it (again) */
	HOLDER_TAKE_SERVE_SAVED,	/* taken, not answered: serve it from the saved copy */
	HOLDER_TAKE_SERVE_HEADER,	/* delivered to an earlier holder's entry, never taken */
	HOLDER_TAKE_DEAD,		/* its command failed for good */
};

/* Pure: the action for slot s, given the holder's current epoch, the SQ
 * tail the kernel sees and the commit id in the entry's header. Entries
 * whose last command went to an earlier holder (dead: its rings, and with
 * them every command, are gone) are recovered like a server-owned ring's:
 * by commit id, from the saved copy or the header. */
enum holder_take holder_take_decide(const struct ringmem_slot *s, uint64_t epoch, uint32_t sq_ktail,
				    uint64_t hdr_commit_id);
const char *holder_take_name(enum holder_take t);

/* Maps the holder's ring FD with its parameters P (from the memfd) into
 * RING, positioned at the SQ tail the kernel sees. -errno; -EPROTO when P
 * is not an SQPOLL + SQE128 ring. */
int holder_ring_map(int fd, const struct io_uring_params *p, struct io_uring *ring) _must_check_;
uint32_t holder_sq_ktail(const struct io_uring *ring);

/* Before an SQE of the entry is published: its new generation (for the
 * user_data), recorded with its position and command. */
uint64_t holder_note_cmd(struct ringmem_slot *s, uint64_t epoch, uint32_t pos, uint32_t cmd_op,
			 uint64_t commit_id);
/* A CQE with generation bits UD_GEN of the entry: true (and recorded as
 * taken with RES) when it is the entry's current command and no server
 * consumed it yet; false for a CQE a dead predecessor had handled. */
bool holder_take_cqe(struct ringmem_slot *s, uint64_t ud_gen, int32_t res);
/* The request just taken, kept as delivered; its reply is complete. */
void holder_save_request(struct ringmem_slot *s, const struct zcfs_uring_req_header *h,
			 const void *payload);
void holder_replied(struct ringmem_slot *s);
/* Puts back what a reply may have overwritten (SERVE_SAVED). */
void holder_restore_request(const struct ringmem_slot *s, struct zcfs_uring_req_header *h,
			    void *payload);

/* The holder role (zcfs-serve --ring-holder, uring_holder_role.c): creates
 * and enables the rings, then sleeps under a seccomp filter that allows
 * nothing but sleeping and exiting. Returns only on a failure: the exit
 * status. */
int uring_holder_run(const struct zcfs_options *o);

#endif
