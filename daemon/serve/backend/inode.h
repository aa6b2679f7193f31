/* The inode table: kernel node ids <-> backing inodes held open as O_PATH
 * handles, keyed by (st_dev, st_ino). Every name a request carries is
 * resolved relative to one of these handles, never as a path string. */
#ifndef ZCFS_INODE_H
#define ZCFS_INODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include "common/ownership.h"
#include "common/util.h"

struct zcfs_inode {
	uint64_t nodeid;
	int fd;			/* O_PATH | O_NOFOLLOW handle on the backing inode */
	dev_t dev;
	ino_t ino;
	uint64_t nlookup;	/* references the kernel holds (LOOKUP minus FORGET) */
	uint32_t refs;		/* in-flight requests using the inode */
	/* Ownership record (xattr mode), guarded by the table lock. */
	bool ovr_loaded;
	bool ovr_present;	/* the backing inode carries a record */
	struct ovr_stat ovr;
	int backing_id;		/* kernel passthrough id, 0 if none */
	_Atomic uint64_t blocks;	/* st_blocks last charged to the quota */
	uint32_t opens;		/* open handles using backing_id */
	struct zcfs_inode *next_by_key;
	struct zcfs_inode *next_by_id;
};

struct inode_table;

/* Creates the table with SOURCE's handle as the root (node id 1); takes
 * ownership of root_fd only on success. */
int inode_table_new(int root_fd, struct inode_table **ret) _must_check_;
void inode_table_free(struct inode_table *t);

/* Reference to the inode with this node id, or NULL: -ESTALE for callers. */
struct zcfs_inode *inode_get(struct inode_table *t, uint64_t nodeid);
void inode_put(struct inode_table *t, struct zcfs_inode *inode);

/* Finds or inserts the inode for (st->st_dev, st->st_ino) and counts one
 * kernel lookup. Consumes fd (closed when the inode already existed).
 * Returns a referenced inode in *ret. */
int inode_lookup_insert(struct inode_table *t, int fd, const struct stat *st,
			struct zcfs_inode **ret) _must_check_;
/* The stable node id of inode (dev, ino) on SOURCE's file system, 0 if it
 * has none; and back, 0 if nodeid is not such an id. */
uint64_t inode_nodeid_for(struct inode_table *t, dev_t dev, ino_t ino);
ino_t inode_ino_for(struct inode_table *t, uint64_t nodeid);

/* Drops n kernel lookups; frees the inode when nothing refers to it. */
void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n);

/* For an inode found again after a restart: the kernel's count of
 * lookups is unknown, so keep it for the rest of the session. */
void inode_pin_lookups(struct inode_table *t, struct zcfs_inode *i);

/* Serializes read-modify-write of an inode's ownership record. */
void inode_lock(struct inode_table *t);
void inode_unlock(struct inode_table *t);
size_t inode_table_count(struct inode_table *t);
/* Up to max node ids of inodes no request is using (never the root, nor
 * pinned ones), sweeping on from where the previous call stopped. */
size_t inode_prune_candidates(struct inode_table *t, uint64_t *ids, size_t max);

#endif
