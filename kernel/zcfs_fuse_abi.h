/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * The FUSE kernel ABI zcfs speaks, beyond what Debian 12's <linux/fuse.h>
 * (protocol 7.38) declares: kernel 6.9+ passthrough and resend, 6.14+
 * io_uring, the buffer pools of the series in kernel/patches.md. Values
 * are the kernel's (include/uapi/linux/fuse.h), the text is ours. Every addition is guarded so a newer system header wins.
 */
#ifndef ZCFS_FUSE_ABI_H
#define ZCFS_FUSE_ABI_H

#include <stdint.h>
#include <linux/fuse.h>
#include <linux/ioctl.h>

/* Protocol we implement; the kernel picks min(ours, its own). 46 adds
 * the buffer pools (only used when the kernel offers them too); 45 is
 * what stock 6.18 speaks, assumed when resuming a connection. */
#define ZCFS_FUSE_MAJOR 7
#define ZCFS_FUSE_MINOR 46
#define ZCFS_FUSE_MINOR_STOCK 45

/* INIT flags (64-bit word: flags | flags2 << 32). */
#ifndef FUSE_DIRECT_IO_ALLOW_MMAP
#define FUSE_DIRECT_IO_ALLOW_MMAP (1ULL << 36)
#endif
#ifndef FUSE_PASSTHROUGH
#define FUSE_PASSTHROUGH (1ULL << 37)
#endif
#ifndef FUSE_NO_EXPORT_SUPPORT
#define FUSE_NO_EXPORT_SUPPORT (1ULL << 38)
#endif
#ifndef FUSE_HAS_RESEND
#define FUSE_HAS_RESEND (1ULL << 39)
#endif
#ifndef FUSE_ALLOW_IDMAP
#define FUSE_ALLOW_IDMAP (1ULL << 40)
#endif
#ifndef FUSE_OVER_IO_URING
#define FUSE_OVER_IO_URING (1ULL << 41)
#endif
#ifndef FUSE_REQUEST_TIMEOUT
#define FUSE_REQUEST_TIMEOUT (1ULL << 42)
#endif

#ifndef FOPEN_PASSTHROUGH
#define FOPEN_PASSTHROUGH (1 << 7)
#endif

#ifndef FUSE_NOTIFY_RESEND
#define FUSE_NOTIFY_RESEND 7
#endif
/* 7.45: ask the kernel to drop its dentries and inodes for these node ids
 * (those in use stay); each one it evicts comes back as a FORGET. */
#define ZCFS_FUSE_NOTIFY_PRUNE 9
struct zcfs_notify_prune_out {
	uint32_t count;		/* node ids (uint64_t) that follow */
	uint32_t padding;
	uint64_t spare;
};

/* Set by the kernel in the unique of a request replayed by RESEND. */
#define ZCFS_FUSE_UNIQUE_RESEND (1ULL << 63)

/* fuse_init_out as of 7.43 (64 bytes): Debian's copy stops at flags2. */
struct zcfs_init_out {
	uint32_t major;
	uint32_t minor;
	uint32_t max_readahead;
	uint32_t flags;
	uint16_t max_background;
	uint16_t congestion_threshold;
	uint32_t max_write;
	uint32_t time_gran;
	uint16_t max_pages;
	uint16_t map_alignment;
	uint32_t flags2;
	uint32_t max_stack_depth;
	uint16_t request_timeout;
	uint16_t unused[11];
};
_Static_assert(sizeof(struct zcfs_init_out) == 64, "fuse_init_out is 64 bytes");

/* fuse_open_out with the 7.40 backing_id in the former padding. */
struct zcfs_open_out {
	uint64_t fh;
	uint32_t open_flags;
	int32_t backing_id;
};
_Static_assert(sizeof(struct zcfs_open_out) == sizeof(struct fuse_open_out), "open_out size");

/* Kernel passthrough: register a backing file on the fuse connection. */
struct zcfs_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};

#define ZCFS_FUSE_DEV_IOC_MAGIC 229
#ifndef FUSE_DEV_IOC_CLONE
#define FUSE_DEV_IOC_CLONE _IOR(ZCFS_FUSE_DEV_IOC_MAGIC, 0, uint32_t)
#endif
#define ZCFS_FUSE_DEV_IOC_BACKING_OPEN _IOW(ZCFS_FUSE_DEV_IOC_MAGIC, 1, struct zcfs_backing_map)
#define ZCFS_FUSE_DEV_IOC_BACKING_CLOSE _IOW(ZCFS_FUSE_DEV_IOC_MAGIC, 2, uint32_t)

#endif
