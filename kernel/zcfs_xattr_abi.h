/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * getxattrat(2) (Linux 6.13), which Debian 12's headers and libseccomp
 * 2.5 predate: an extended attribute of a file named relative to a
 * directory fd, which may be an O_PATH handle. Values are the kernel's
 * (include/uapi/linux/xattr.h, the generic syscall table: the same
 * number on x86_64 and arm64), names are ours.
 */
#ifndef ZCFS_XATTR_ABI_H
#define ZCFS_XATTR_ABI_H

#include <stdint.h>

#define ZCFS_NR_getxattrat 464

struct zcfs_xattr_args {
	uint64_t value;		/* buffer address, 0 to ask for the size */
	uint32_t size;
	uint32_t flags;		/* 0 */
};

#endif
