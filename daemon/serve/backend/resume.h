/* Serving a live connection after a restart (--resume): zcfsd restarts a
 * dead server on the same /dev/fuse connection. The kernel already ran
 * INIT and still names inodes by node id and open files by fh; node ids
 * are inode numbers (inode.c), so the new server finds them by walking
 * SOURCE once, and re-opens files the kernel names by an unknown fh. */
#ifndef ZCFS_RESUME_H
#define ZCFS_RESUME_H

#include "handle.h"
#include "inode.h"
#include "daemon/serve/core/session.h"

struct resume_index;

int resume_index_new(struct resume_index **ret) _must_check_;
void resume_index_free(struct resume_index *ri);

/* The inode behind a node id the previous server handed out; -ESTALE if
 * it is no longer under SOURCE (deleted, or on another file system). */
int resume_find_inode(struct zcfs_session *se, uint64_t nodeid, struct zcfs_inode **ret) _must_check_;

/* A handle for an fh the previous server handed out, opened afresh on
 * nodeid (a directory stream when dir is true; open_flags for files). */
int resume_adopt_handle(struct zcfs_session *se, uint64_t nodeid, uint64_t fh, int open_flags,
			bool dir, struct zcfs_handle **ret) _must_check_;

#endif
