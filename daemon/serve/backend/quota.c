/* Volume size limit: counting, reserving and refunding allocated blocks;
 * without a limit (--count-inodes) only the inodes are counted. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "handle.h"
#include "inode.h"
#include "common/log.h"
#include "quota.h"
#include "daemon/serve/core/session.h"
#include "source_walk.h"
#include "kernel/zcfs_fuse_abi.h"

/* Inodes with more than one link, met once per name by the scan; summed
 * once each after sorting. */
struct linked {
	ino_t ino;
	uint64_t blocks;
};

struct scan {
	uint64_t blocks, inodes;
	struct linked *links;
	size_t nlinks, cap;
};

static int add_linked(struct scan *s, const struct stat *st)
{
	if (s->nlinks == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct linked *v = realloc(s->links, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->links = v;
		s->cap = cap;
	}
	s->links[s->nlinks++] = (struct linked){ .ino = st->st_ino, .blocks = (uint64_t)st->st_blocks };
	return 0;
}

static int linked_cmp(const void *a, const void *b)
{
	ino_t x = ((const struct linked *)a)->ino, y = ((const struct linked *)b)->ino;
	return x < y ? -1 : x > y;
}

/* Directories and single-link files count where met; inodes with more
 * links once, after the walk. */
static int scan_entry(const struct source_entry *e, void *ctx)
{
	struct scan *s = ctx;

	if (!S_ISDIR(e->st->st_mode) && e->st->st_nlink > 1)
		return add_linked(s, e->st);
	s->blocks += (uint64_t)e->st->st_blocks;
	s->inodes++;
	return SOURCE_WALK_NEXT;
}

int quota_scan(int dirfd, uint64_t *ret, uint64_t *inodes)
{
	struct scan s = { .inodes = 1 };	/* the root */
	struct stat st;
	int r;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	s.blocks = (uint64_t)st.st_blocks;
	r = source_walk(dirfd, scan_entry, &s);
	if (r == 0) {
		if (s.nlinks)
			qsort(s.links, s.nlinks, sizeof(*s.links), linked_cmp);
		for (size_t i = 0; i < s.nlinks; i++)
			if (i == 0 || s.links[i].ino != s.links[i - 1].ino) {
				s.blocks += s.links[i].blocks;
				s.inodes++;
			}
		*ret = s.blocks * 512;
		if (inodes)
			*inodes = s.inodes;
	}
	free(s.links);
	return r;
}

int quota_init(struct zcfs_session *se, uint64_t limit)
{
	struct zcfs_quota *q;
	uint64_t used, inodes;
	int r;

	r = quota_scan(se->root_fd, &used, &inodes);
	if (r < 0)
		return r;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->limit = limit;
	q->live = se->size_channel;	/* mapped before, or set when it is */
	atomic_store(&q->used, (int64_t)used);
	atomic_store(&q->inodes, (int64_t)inodes);
	se->quota = q;
	if (!limit) {
		log_info("quota: no limit, counting inodes: %llu in use", (unsigned long long)inodes);
		return 0;
	}
	log_info("quota: limit=%llu bytes, %llu in use%s", (unsigned long long)limit,
		 (unsigned long long)used, used > limit ? " (over the limit: writes that allocate fail)" : "");
	return 0;
}

void quota_free(struct zcfs_session *se)
{
	free(se->quota);
	se->quota = NULL;
}

bool quota_limits(const struct zcfs_session *se)
{
	return se->quota && se->quota->limit;
}

uint64_t quota_limit(const struct zcfs_quota *q)
{
	uint64_t live;

	if (!q->limit || !q->live)
		return q->limit;
	live = __atomic_load_n(q->live, __ATOMIC_ACQUIRE);
	return live > q->limit ? live : q->limit;
}

void quota_set_live(struct zcfs_session *se, const uint64_t *live)
{
	if (se->quota)
		se->quota->live = live;
}

static uint64_t quota_room(const struct zcfs_quota *q)
{
	int64_t used = atomic_load(&q->used) + atomic_load(&q->reserved);
	uint64_t limit = quota_limit(q);

	return used < 0 ? limit : (uint64_t)used >= limit ? 0 : limit - (uint64_t)used;
}

int quota_reserve(struct zcfs_session *se, int fd, uint64_t off, size_t *len, uint64_t *held)
{
	struct zcfs_quota *q = se->quota;
	int64_t want = (int64_t)*len;
	uint64_t room;
	struct stat st;

	*held = 0;
	if (!quota_limits(se) || *len == 0)
		return 0;
	/* Claim first, then look: two writes cannot both take the last room. */
	if (atomic_fetch_add(&q->reserved, want) + want + atomic_load(&q->used) <= (int64_t)quota_limit(q)) {
		*held = (uint64_t)want;
		return 0;
	}
	atomic_fetch_sub(&q->reserved, want);
	/* Rewriting data that is already allocated costs nothing. */
	if (fstat(fd, &st) == 0 && off + *len <= (uint64_t)st.st_size &&
	    (uint64_t)st.st_blocks * 512 >= (uint64_t)st.st_size)
		return 0;
	room = quota_room(q);
	if (room == 0)
		return -ENOSPC;
	if (room < *len)
		*len = (size_t)room;
	atomic_fetch_add(&q->reserved, (int64_t)*len);
	*held = *len;
	return 0;
}

void quota_unreserve(struct zcfs_session *se, uint64_t held)
{
	if (se->quota && held)
		atomic_fetch_sub(&se->quota->reserved, (int64_t)held);
}

static void charge(struct zcfs_quota *q, int64_t bytes)
{
	if (bytes)
		atomic_fetch_add(&q->used, bytes);
}

void quota_recount(struct zcfs_session *se, struct zcfs_inode *inode, int fd)
{
	struct stat st;
	uint64_t old;

	if (!quota_limits(se) || !inode || fstat(fd, &st) < 0)
		return;
	old = atomic_exchange(&inode->blocks, (uint64_t)st.st_blocks);
	charge(se->quota, ((int64_t)st.st_blocks - (int64_t)old) * 512);
}

void quota_recount_fh(struct zcfs_session *se, uint64_t fh)
{
	struct zcfs_handle *h;
	struct zcfs_inode *inode;

	if (!quota_limits(se))
		return;
	h = handle_get(se->handles, fh);
	inode = h && h->fd >= 0 ? inode_get(se->inodes, h->nodeid) : NULL;
	if (!inode)
		return;
	quota_recount(se, inode, h->fd);
	inode_put(se->inodes, inode);
}

void quota_charge_new(struct zcfs_session *se, struct zcfs_inode *parent, uint64_t blocks)
{
	if (!se->quota)
		return;
	atomic_fetch_add(&se->quota->inodes, 1);
	if (!se->quota->limit)
		return;
	charge(se->quota, (int64_t)blocks * 512);
	/* The new name may have grown the directory. */
	if (parent)
		quota_recount(se, parent, parent->fd);
}

void quota_link_new(struct zcfs_session *se, struct zcfs_inode *parent)
{
	if (parent)
		quota_recount(se, parent, parent->fd);	/* the directory may grow */
}

void quota_victim_get(struct zcfs_session *se, int parent_fd, const char *name, struct quota_victim *v)
{
	v->valid = se->quota && fstatat(parent_fd, name, &v->st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Takes the blocks last charged for (dev, ino) back from its inode, or
 * `fallback` when the inode is not in the table. */
static uint64_t take_blocks(struct zcfs_session *se, dev_t dev, ino_t ino, uint64_t fallback)
{
	uint64_t nodeid = inode_nodeid_for(se->inodes, dev, ino);
	struct zcfs_inode *inode = nodeid ? inode_get(se->inodes, nodeid) : NULL;
	uint64_t blocks = fallback;

	if (inode && inode->dev == dev && inode->ino == ino)
		blocks = atomic_exchange(&inode->blocks, 0);
	if (inode)
		inode_put(se->inodes, inode);
	return blocks;
}

void quota_removed(struct zcfs_session *se, struct zcfs_inode *parent, const struct quota_victim *v)
{
	if (!se->quota)
		return;
	/* The last name of a file or a directory frees its blocks (an open
	 * file keeps them until release, which then finds nothing left). */
	if (v->valid && (S_ISDIR(v->st.st_mode) || v->st.st_nlink <= 1)) {
		if (se->quota->limit)
			charge(se->quota, -(int64_t)take_blocks(se, v->st.st_dev, v->st.st_ino,
								(uint64_t)v->st.st_blocks) * 512);
		/* gone from the volume's count with its last name, as df -i
		 * shows it once an open file is released */
		atomic_fetch_sub(&se->quota->inodes, 1);
	}
	if (parent)
		quota_recount(se, parent, parent->fd);
}

void quota_release(struct zcfs_session *se, int fd)
{
	struct stat st;

	if (!quota_limits(se) || fd < 0 || fstat(fd, &st) < 0 || st.st_nlink > 0)
		return;
	/* Written after its last name went: refund what that added. */
	charge(se->quota, -(int64_t)take_blocks(se, st.st_dev, st.st_ino, 0) * 512);
}

void quota_statfs(struct zcfs_session *se, struct fuse_kstatfs *st)
{
	uint64_t frsize = st->frsize ? st->frsize : st->bsize, room, used;
	int64_t n;

	if (!se->quota)
		return;
	n = atomic_load(&se->quota->inodes);
	used = n > 0 ? (uint64_t)n : 0;
	st->files = used + st->ffree;
	if (!se->quota->limit || !frsize)
		return;	/* no size: the blocks are the backing file system's */
	st->blocks = quota_limit(se->quota) / frsize;
	room = quota_room(se->quota) / frsize;
	if (st->bfree > room)
		st->bfree = room;
	if (st->bavail > room)
		st->bavail = room;
}
