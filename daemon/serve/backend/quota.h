/* Volume size limit (--quota-bytes): the blocks allocated under SOURCE
 * are counted once at start and then kept current from the requests that
 * change them, because this server is the only writer of its volume.
 * Writes beyond the limit get a short count, then ENOSPC, as on a full
 * file system; STATFS reports the limit as the volume's size. With limit
 * 0 (--count-inodes alone) only the inodes are kept current, so STATFS
 * reports the volume's own inodes in use; nothing else is counted or
 * limited (no per-write fstat; kernel passthrough stays possible). */
#ifndef ZCFS_QUOTA_H
#define ZCFS_QUOTA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "common/util.h"

struct zcfs_session;
struct zcfs_inode;
struct fuse_kstatfs;

struct zcfs_quota {
	uint64_t limit;			/* bytes; 0: inodes counted, nothing limited */
	/* zcfsd's word on the size (zcfs_stats.h quota_bytes), or NULL: the
	 * limit is the larger of the two, so an online resize grows it at
	 * once and nothing written there can shrink it. */
	const uint64_t *live;
	_Atomic int64_t used;		/* bytes allocated (st_blocks * 512) */
	_Atomic int64_t reserved;	/* bytes of writes in flight, not counted yet */
	_Atomic int64_t inodes;		/* inodes under SOURCE, its root included */
};

/* Bytes allocated to the tree under dirfd (*ret) and its inodes
 * (*inodes, may be NULL), hard-linked inodes once. */
int quota_scan(int dirfd, uint64_t *ret, uint64_t *inodes) _must_check_;

/* The limit enforced now (see live above); 0: none. */
uint64_t quota_limit(const struct zcfs_quota *q);
/* The shared counters' quota_bytes as the live size channel. */
void quota_set_live(struct zcfs_session *se, const uint64_t *live);
/* Sets se->quota up from a scan of SOURCE. */
int quota_init(struct zcfs_session *se, uint64_t limit) _must_check_;
/* A size limit is enforced (--quota-bytes), not only inodes counted. */
bool quota_limits(const struct zcfs_session *se);
void quota_free(struct zcfs_session *se);

/* Before writing *len bytes at off to fd: 0 (maybe with *len shortened
 * to what still fits), or -ENOSPC when nothing fits. Overwrites inside a
 * fully allocated file always fit. What it holds for the write (*held)
 * counts against the limit until quota_unreserve(), so writes in flight
 * together cannot overshoot it: recount first, then unreserve. */
int quota_reserve(struct zcfs_session *se, int fd, uint64_t off, size_t *len,
		  uint64_t *held) _must_check_;
void quota_unreserve(struct zcfs_session *se, uint64_t held);

/* After inode's allocation may have changed (fd: any descriptor of it):
 * charges or refunds the difference to what was last seen. */
void quota_recount(struct zcfs_session *se, struct zcfs_inode *inode, int fd);
/* The same for the inode an open file handle belongs to. */
void quota_recount_fh(struct zcfs_session *se, uint64_t fh);

/* A new inode of `blocks` 512-byte blocks appeared under parent. */
void quota_charge_new(struct zcfs_session *se, struct zcfs_inode *parent, uint64_t blocks);
/* A new name (hard link) of an inode appeared under parent. */
void quota_link_new(struct zcfs_session *se, struct zcfs_inode *parent);

/* Before unlinking or replacing NAME in parent: what it holds, so that
 * quota_removed() can refund it once the removal succeeded. */
struct quota_victim {
	bool valid;
	struct stat st;
};
void quota_victim_get(struct zcfs_session *se, int parent_fd, const char *name,
		      struct quota_victim *v);
void quota_removed(struct zcfs_session *se, struct zcfs_inode *parent, const struct quota_victim *v);

/* An open file whose last name is gone gives its blocks back at release. */
void quota_release(struct zcfs_session *se, int fd);

/* Fits the backing file system's figures to the limit; the inodes in
 * use are the volume's own (the backing file system's free ones stay),
 * with or without a limit. */
void quota_statfs(struct zcfs_session *se, struct fuse_kstatfs *st);

#endif
