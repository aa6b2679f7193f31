/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * The Landlock ABI zcfs's sandbox uses, beyond what Debian 12's
 * <linux/landlock.h> declares. Values are the kernel's
 * (include/uapi/linux/landlock.h, ABIs 1-6), names are ours (LL_*), so a
 * newer system header does not clash.
 */
#ifndef ZCFS_LANDLOCK_ABI_H
#define ZCFS_LANDLOCK_ABI_H

#include <stdint.h>
#include <linux/landlock.h>

/* Debian 12's uapi headers stop at Landlock ABI 2; the kernel may offer
 * more. Bits and the grown ruleset attribute are defined here so the
 * ruleset can use whatever the running kernel supports. */
#define LL_FS_EXECUTE     (1ULL << 0)
#define LL_FS_WRITE_FILE  (1ULL << 1)
#define LL_FS_READ_FILE   (1ULL << 2)
#define LL_FS_V1_ALL      ((1ULL << 13) - 1)	/* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER       (1ULL << 13)		/* ABI 2 */
#define LL_FS_TRUNCATE    (1ULL << 14)		/* ABI 3 */
#define LL_FS_IOCTL_DEV   (1ULL << 15)		/* ABI 5 */
#define LL_NET_BIND_TCP   (1ULL << 0)		/* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)	/* ABI 6 */
#define LL_SCOPE_SIGNAL   (1ULL << 1)
#define LL_RULE_PATH_BENEATH 1

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#endif
