/* What the running kernel can do for zcfs, found by doing: a throwaway
 * FUSE mount on a scratch directory whose FUSE_INIT request is read (the
 * protocol minor and flags the kernel offers) and never answered, plus an
 * SQE128 io_uring setup and the module parameters. kernel_verdicts() turns
 * those facts into one verdict per data path; it is pure, so tests feed it
 * facts of kernels we do not have. Only system calls of libc: this file is
 * linked into every zcfs program. */
#ifndef ZCFS_KERNEL_PROBE_H
#define ZCFS_KERNEL_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include "util.h"

struct kernel_facts {
	char release[65];	/* uname -r */
	int devfuse_err;	/* 0, or -errno opening /dev/fuse */
	int mount_err;		/* 0, or -errno of the scratch mount / INIT read */
	bool init_read;		/* an INIT request was read */
	uint32_t major, minor;	/* as offered in fuse_init_in */
	uint64_t offered;	/* flags | flags2 << 32 */
	int enable_uring;	/* -1: no such parameter, 0: N, 1: Y */
	int io_uring_disabled;	/* kernel.io_uring_disabled, -1 if absent */
	int sqe128_err;		/* 0, or -errno of io_uring_setup(SQE128) */
	bool cap_sys_admin;	/* effective in the probing thread */
	bool cap_ipc_lock;
	uint64_t memlock_limit;	/* RLIMIT_MEMLOCK soft, UINT64_MAX = unlimited */
	uint64_t default_pinned;	/* bytes the default geometry pins (caller's figure) */
};

enum kernel_path {
	KPATH_DEVFUSE,
	KPATH_URING,
	KPATH_BUFPOOL,
	KPATH_ZEROCOPY,
	KPATH_PASSTHROUGH,
	KPATH_COUNT,
};

enum kernel_status { KSTATUS_SUPPORTED, KSTATUS_NOT_SUPPORTED, KSTATUS_DISABLED };

struct kernel_verdict {
	enum kernel_status status;
	char why[256];		/* empty when supported */
};

/* Fills f by probing (mounting needs CAP_SYS_ADMIN; without it
 * mount_err says so). Cleans up the scratch mount in every case.
 * default_pinned is left to the caller. */
void kernel_probe_run(struct kernel_facts *f);
void kernel_verdicts(const struct kernel_facts *f, struct kernel_verdict v[KPATH_COUNT]);
const char *kernel_path_name(enum kernel_path p);
const char *kernel_status_name(enum kernel_status s);

#endif
