/* zcfs-serve --sandbox: no_new_privs, a Landlock ruleset confined to the
 * volume's SOURCE tree, a seccomp allowlist that kills the process on
 * anything else, and the io_uring opcode allowlist for the rings (seccomp
 * cannot see SQE opcodes). docs/security.md explains every choice. */
#ifndef ZCFS_SANDBOX_H
#define ZCFS_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include "common/util.h"

struct io_uring;

struct sandbox_config {
	int root_fd;		/* O_PATH fd of SOURCE: the only tree left writable */
	bool dev_fuse;		/* may open /dev/fuse (FUSE_DEV_IOC_CLONE readers) */
	bool backing_ioctls;	/* FUSE_DEV_IOC_BACKING_OPEN/CLOSE itself (passthrough, no broker) */
	bool broker;		/* sendmsg/recvmsg on broker_fd only (zcfsd's passthrough broker) */
	int broker_fd;
	bool rings;		/* io_uring rings come after sandbox_apply(), then sandbox_seal_rings() */
};

/* What sandbox_apply() did, for the one log line. */
struct sandbox_report {
	int landlock_abi;	/* > 0: ruleset of that ABI in force; else -errno */
	char landlock_why[96];	/* why Landlock is off, when it is */
	unsigned nr_syscalls;	/* syscalls the seccomp filter allows */
};

/* Confines the calling process, which must still be single-threaded
 * (Landlock and a filter loaded without TSYNC reach only the calling
 * thread and its future children). Order: PR_SET_NO_NEW_PRIVS, Landlock
 * (skipped with a reason when the kernel lacks it), seccomp. Returns 0, or
 * -EBUSY if other threads exist, or another -errno; after a failure past
 * no_new_privs the process is partly confined and must not serve. */
int sandbox_apply(const struct sandbox_config *c, struct sandbox_report *rep) _must_check_;

/* The parts alone, for tests and the probe. */
int sandbox_landlock(const struct sandbox_config *c, char *why, size_t len) _must_check_;
int sandbox_seccomp(const struct sandbox_config *c, unsigned *nr_allowed) _must_check_;

/* After the last ring exists (each restricted with sandbox_restrict_ring):
 * a second filter, synchronized to every thread of the process, that kills
 * it on io_uring_setup and on seccomp. A ring made after this point could
 * run any opcode (SOCKET, CONNECT, SENDMSG...) behind seccomp's back.
 * Idempotent; returns 0 or -errno (-EBUSY: a thread was left out). */
int sandbox_seal_rings(void) _must_check_;
bool sandbox_rings_sealed(void);

/* Registers the io_uring allowlist on RING, which must have been created
 * with IORING_SETUP_R_DISABLED, and enables it. Call it from the thread
 * that will submit (IORING_SETUP_SINGLE_ISSUER binds the ring to the task
 * that enables it), after io_uring_register_files/_ring_fd. SQE opcodes:
 * URING_CMD, READ, WRITE, READ_FIXED, WRITE_FIXED, NOP, POLL_ADD; SQE
 * flags: IOSQE_FIXED_FILE; register ops after enabling: files, buffers
 * (also the sparse table and its updates) and ring fds (register and
 * unregister). Returns 0 or -errno. */
int sandbox_restrict_ring(struct io_uring *ring) _must_check_;

/* The ring holder (sandbox_holder.c): RING_FD, created with
 * IORING_SETUP_R_DISABLED, restricted to IORING_OP_URING_CMD with
 * IOSQE_FIXED_FILE required and no registration op, then enabled; and the
 * holder's own filter once its rings run: pause, signal return, exit
 * (anything else kills it). -errno. */
int sandbox_restrict_holder_ring(int ring_fd) _must_check_;
int sandbox_holder_seccomp(void) _must_check_;

#endif
