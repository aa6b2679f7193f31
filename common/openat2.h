/* The one openat2(2) wrapper: opens that refuse symlinks (and /proc
 * magic links) or stay beneath a directory, where a swapped path
 * component must not lead elsewhere. A walk that must not enter a FUSE
 * file system either: common/walk_nofuse.h. */
#ifndef ZCFS_OPENAT2_H
#define ZCFS_OPENAT2_H

#include <stdint.h>
#include <linux/openat2.h>
#include "util.h"

/* openat2(DIRFD, PATH) with FLAGS | O_CLOEXEC and RESOLVE (RESOLVE_*):
 * the fd, or -errno. */
int openat2_fd(int dirfd, const char *path, uint64_t flags, uint64_t resolve) _must_check_;

/* PATH (from the cwd, or absolute) opened with FLAGS, refusing any symlink
 * and magic link on the way: -ELOOP. */
int open_nofollow(const char *path, uint64_t flags) _must_check_;

#endif
