/* The version every zcfs program reports with --version, and the FUSE
 * protocol the node's servers speak (7.ZCFS_FUSE_MINOR, falling back to
 * ZCFS_FUSE_MINOR_STOCK on kernels without buffer pools). */
#ifndef ZCFS_VERSION_H
#define ZCFS_VERSION_H

#include <stdio.h>
#include "kernel/zcfs_fuse_abi.h"

#define ZCFS_VERSION "0.1.0"

/* "PROG VERSION (FUSE protocol 7.N)" on stdout. */
static inline void zcfs_print_version(const char *prog)
{
	printf("%s %s (FUSE protocol %d.%d)\n", prog, ZCFS_VERSION, ZCFS_FUSE_MAJOR, ZCFS_FUSE_MINOR);
}

#endif
