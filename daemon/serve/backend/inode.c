/* Two hash chains per inode (by key and by node id) under one mutex:
 * lookups are short and this machine has few cores, so one lock keeps
 * lookup counting and freeing obviously correct. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include "inode.h"
#include "kernel/zcfs_fuse_abi.h"

#define NBUCKETS 16384

/* Node ids of inodes on SOURCE's file system are their inode numbers
 * (root and inode 1 swapped, since the root must be 1), so a restarted
 * server can find what the kernel still names. Inodes on other file
 * systems under SOURCE get counter ids with the top bit set. */
#define FOREIGN_NODEID_BASE (1ULL << 63)

struct inode_table {
	pthread_mutex_t lock;
	uint64_t next_nodeid;
	dev_t root_dev;
	ino_t root_ino;
	size_t count;
	size_t prune_hand;	/* by_id bucket the next candidate sweep starts at */
	struct zcfs_inode *by_key[NBUCKETS];
	struct zcfs_inode *by_id[NBUCKETS];
};

static size_t key_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t)dev;
	return (size_t)(h >> 40) % NBUCKETS;
}

static size_t id_hash(uint64_t nodeid)
{
	return (size_t)((nodeid * 0x9E3779B97F4A7C15ULL) >> 40) % NBUCKETS;
}

static void table_link(struct inode_table *t, struct zcfs_inode *i)
{
	size_t k = key_hash(i->dev, i->ino), n = id_hash(i->nodeid);

	i->next_by_key = t->by_key[k];
	t->by_key[k] = i;
	i->next_by_id = t->by_id[n];
	t->by_id[n] = i;
	/* atomic: inode_table_count reads it without the lock */
	__atomic_fetch_add(&t->count, 1, __ATOMIC_RELAXED);
}

static void table_unlink(struct inode_table *t, struct zcfs_inode *i)
{
	struct zcfs_inode **p;

	for (p = &t->by_key[key_hash(i->dev, i->ino)]; *p; p = &(*p)->next_by_key)
		if (*p == i) {
			*p = i->next_by_key;
			break;
		}
	for (p = &t->by_id[id_hash(i->nodeid)]; *p; p = &(*p)->next_by_id)
		if (*p == i) {
			*p = i->next_by_id;
			break;
		}
	__atomic_fetch_sub(&t->count, 1, __ATOMIC_RELAXED);
}

int inode_table_new(int root_fd, struct inode_table **ret)
{
	struct inode_table *t;
	struct zcfs_inode *root;
	struct stat st;

	if (fstat(root_fd, &st) < 0)
		return -errno;
	t = calloc(1, sizeof(*t));
	root = calloc(1, sizeof(*root));
	if (!t || !root) {
		free(t);
		free(root);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->next_nodeid = FOREIGN_NODEID_BASE;
	t->root_dev = st.st_dev;
	t->root_ino = st.st_ino;
	root->nodeid = FUSE_ROOT_ID;
	root->fd = root_fd;
	root->dev = st.st_dev;
	root->ino = st.st_ino;
	root->blocks = (uint64_t)st.st_blocks;
	root->nlookup = 1;	/* the kernel never forgets the root */
	table_link(t, root);
	*ret = t;
	return 0;
}

void inode_table_free(struct inode_table *t)
{
	size_t b;

	if (!t)
		return;
	for (b = 0; b < NBUCKETS; b++) {
		struct zcfs_inode *i = t->by_id[b], *next;
		for (; i; i = next) {
			next = i->next_by_id;
			safe_close(i->fd);
			free(i);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

uint64_t inode_nodeid_for(struct inode_table *t, dev_t dev, ino_t ino)
{
	if (dev != t->root_dev || ino == 0 || (uint64_t)ino >= FOREIGN_NODEID_BASE)
		return 0;
	if (ino == t->root_ino)
		return FUSE_ROOT_ID;
	if (ino == FUSE_ROOT_ID)
		return (uint64_t)t->root_ino;
	return (uint64_t)ino;
}

ino_t inode_ino_for(struct inode_table *t, uint64_t nodeid)
{
	if (nodeid == FUSE_ROOT_ID)
		return t->root_ino;
	if (nodeid >= FOREIGN_NODEID_BASE)
		return 0;
	if (nodeid == (uint64_t)t->root_ino)
		return FUSE_ROOT_ID;
	return (ino_t)nodeid;
}

static struct zcfs_inode *find_by_id(struct inode_table *t, uint64_t nodeid)
{
	struct zcfs_inode *i;

	for (i = t->by_id[id_hash(nodeid)]; i; i = i->next_by_id)
		if (i->nodeid == nodeid)
			return i;
	return NULL;
}

struct zcfs_inode *inode_get(struct inode_table *t, uint64_t nodeid)
{
	struct zcfs_inode *i;

	pthread_mutex_lock(&t->lock);
	i = find_by_id(t, nodeid);
	if (i)
		i->refs++;
	pthread_mutex_unlock(&t->lock);
	return i;
}

/* Called with the lock held: takes i out of the table when nothing uses
 * it any more and returns it for free_unlinked(), else NULL. */
static struct zcfs_inode *unlink_unused(struct inode_table *t, struct zcfs_inode *i)
{
	if (i->nlookup || i->refs || i->nodeid == FUSE_ROOT_ID)
		return NULL;
	table_unlink(t, i);
	return i;
}

/* After the lock is dropped: close(2) under it made every other request
 * thread wait for the syscall (FORGETs arrive beside LOOKUP/CREATE). */
static void free_unlinked(struct zcfs_inode *i)
{
	if (!i)
		return;
	safe_close(i->fd);
	free(i);
}

void inode_put(struct inode_table *t, struct zcfs_inode *i)
{
	struct zcfs_inode *gone;

	if (!i)
		return;
	pthread_mutex_lock(&t->lock);
	i->refs--;
	gone = unlink_unused(t, i);
	pthread_mutex_unlock(&t->lock);
	free_unlinked(gone);
}

int inode_lookup_insert(struct inode_table *t, int fd, const struct stat *st, struct zcfs_inode **ret)
{
	struct zcfs_inode *i, *fresh;

	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		safe_close(fd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&t->lock);
	for (i = t->by_key[key_hash(st->st_dev, st->st_ino)]; i; i = i->next_by_key)
		if (i->dev == st->st_dev && i->ino == st->st_ino)
			break;
	if (i) {
		i->nlookup++;
		i->refs++;
		pthread_mutex_unlock(&t->lock);
		free(fresh);
		safe_close(fd);
		*ret = i;
		return 0;
	}
	fresh->nodeid = inode_nodeid_for(t, st->st_dev, st->st_ino);
	if (!fresh->nodeid || find_by_id(t, fresh->nodeid))
		fresh->nodeid = t->next_nodeid++;
	fresh->fd = fd;
	fresh->dev = st->st_dev;
	fresh->ino = st->st_ino;
	fresh->blocks = (uint64_t)st->st_blocks;
	fresh->nlookup = 1;
	fresh->refs = 1;
	table_link(t, fresh);
	pthread_mutex_unlock(&t->lock);
	*ret = fresh;
	return 0;
}

void inode_forget(struct inode_table *t, uint64_t nodeid, uint64_t n)
{
	struct zcfs_inode *i, *gone = NULL;

	pthread_mutex_lock(&t->lock);
	i = find_by_id(t, nodeid);
	if (i && i->nodeid != FUSE_ROOT_ID) {
		i->nlookup = n >= i->nlookup ? 0 : i->nlookup - n;
		gone = unlink_unused(t, i);
	}
	pthread_mutex_unlock(&t->lock);
	free_unlinked(gone);
}

void inode_lock(struct inode_table *t) { pthread_mutex_lock(&t->lock); }
void inode_unlock(struct inode_table *t) { pthread_mutex_unlock(&t->lock); }

size_t inode_table_count(struct inode_table *t)
{
	/* Changed under the lock; a snapshot needs none. */
	return __atomic_load_n(&t->count, __ATOMIC_RELAXED);
}

size_t inode_prune_candidates(struct inode_table *t, uint64_t *ids, size_t max)
{
	size_t n = 0, b;

	pthread_mutex_lock(&t->lock);
	for (b = 0; b < NBUCKETS && n < max; b++) {
		size_t bucket = (t->prune_hand + b) % NBUCKETS;
		for (struct zcfs_inode *i = t->by_id[bucket]; i && n < max; i = i->next_by_id)
			/* Pinned (resumed) inodes stay whatever the kernel does. */
			if (!i->refs && i->nodeid != FUSE_ROOT_ID && i->nlookup < UINT64_MAX / 4)
				ids[n++] = i->nodeid;
	}
	t->prune_hand = (t->prune_hand + b) % NBUCKETS;
	pthread_mutex_unlock(&t->lock);
	return n;
}

void inode_pin_lookups(struct inode_table *t, struct zcfs_inode *i)
{
	pthread_mutex_lock(&t->lock);
	i->nlookup = UINT64_MAX / 2;
	pthread_mutex_unlock(&t->lock);
}
