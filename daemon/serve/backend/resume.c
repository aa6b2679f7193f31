#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "backend.h"
#include "common/log.h"
#include "common/openat2.h"
#include "resume.h"
#include "source_walk.h"

#define NBUCKETS 4096
#define MAX_DEPTH 256

struct path_entry {
	ino_t ino;
	char *path;		/* relative to SOURCE */
	struct path_entry *next;
};

struct resume_index {
	pthread_mutex_t lock;
	struct path_entry *buckets[NBUCKETS];
	bool built;
};

int resume_index_new(struct resume_index **ret)
{
	struct resume_index *ri = calloc(1, sizeof(*ri));

	if (!ri)
		return -ENOMEM;
	pthread_mutex_init(&ri->lock, NULL);
	*ret = ri;
	return 0;
}

static void index_clear(struct resume_index *ri)
{
	for (size_t b = 0; b < NBUCKETS; b++)
		while (ri->buckets[b]) {
			struct path_entry *e = ri->buckets[b];
			ri->buckets[b] = e->next;
			free(e->path);
			free(e);
		}
	ri->built = false;
}

void resume_index_free(struct resume_index *ri)
{
	if (!ri)
		return;
	index_clear(ri);
	pthread_mutex_destroy(&ri->lock);
	free(ri);
}

static int index_add(struct resume_index *ri, ino_t ino, const char *path)
{
	struct path_entry *e = calloc(1, sizeof(*e));
	size_t b = (size_t)ino % NBUCKETS;

	if (!e || !(e->path = strdup(path))) {
		free(e);
		return -ENOMEM;
	}
	e->ino = ino;
	e->next = ri->buckets[b];
	ri->buckets[b] = e;
	return 0;
}

/* Records an entry of SOURCE by inode number and path. */
static int index_entry(const struct source_entry *e, void *ctx)
{
	int r;

	if (!e->path)
		return SOURCE_WALK_PRUNE;	/* cannot be opened by path */
	r = index_add(ctx, e->st->st_ino, e->path);
	if (r < 0)
		return r;
	return e->depth < MAX_DEPTH ? SOURCE_WALK_NEXT : SOURCE_WALK_PRUNE;
}

/* Opens path below SOURCE without following any symlink. */
static int open_beneath(int root_fd, const char *path)
{
	return openat2_fd(root_fd, path, O_PATH | O_NOFOLLOW, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
}

static int try_index(struct zcfs_session *se, struct resume_index *ri, ino_t ino, int *ret_fd,
		     struct stat *st)
{
	struct zcfs_inode *root = inode_get(se->inodes, FUSE_ROOT_ID);
	struct path_entry *e;
	int r = -ESTALE;

	if (!root)
		return -ESTALE;
	for (e = ri->buckets[(size_t)ino % NBUCKETS]; e && r < 0; e = e->next) {
		int fd;
		if (e->ino != ino)
			continue;
		fd = open_beneath(root->fd, e->path);
		if (fd < 0)
			continue;
		if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
		    st->st_ino == ino && st->st_dev == root->dev) {
			*ret_fd = fd;
			r = 0;
		} else {
			safe_close(fd);
		}
	}
	inode_put(se->inodes, root);
	return r;
}

int resume_find_inode(struct zcfs_session *se, uint64_t nodeid, struct zcfs_inode **ret)
{
	struct resume_index *ri = se->resume;
	ino_t ino = inode_ino_for(se->inodes, nodeid);
	struct zcfs_inode *root, *inode;
	struct stat st;
	int fd = -1, r;

	if (!ri || !ino)
		return -ESTALE;
	pthread_mutex_lock(&ri->lock);
	r = try_index(se, ri, ino, &fd, &st);
	if (r < 0) {
		/* Not indexed yet, or moved since: walk SOURCE (again). */
		root = inode_get(se->inodes, FUSE_ROOT_ID);
		index_clear(ri);
		r = root ? source_walk(root->fd, index_entry, ri) : -ESTALE;
		inode_put(se->inodes, root);
		ri->built = true;
		if (r == 0)
			r = try_index(se, ri, ino, &fd, &st);
	}
	pthread_mutex_unlock(&ri->lock);
	if (r < 0)
		return r;
	r = inode_lookup_insert(se->inodes, fd, &st, &inode);
	if (r < 0)
		return r;
	if (inode->nodeid != nodeid) {
		inode_forget(se->inodes, inode->nodeid, 1);
		inode_put(se->inodes, inode);
		return -ESTALE;
	}
	/* The kernel holds an unknown number of lookups on it: never let
	 * FORGET drop it below zero. */
	inode_pin_lookups(se->inodes, inode);
	log_debug("resume: found node %llu again", (unsigned long long)nodeid);
	*ret = inode;
	return 0;
}

int resume_adopt_handle(struct zcfs_session *se, uint64_t nodeid, uint64_t fh, int open_flags,
			bool dir, struct zcfs_handle **ret)
{
	struct zcfs_inode *inode;
	struct zcfs_handle *h;
	char path[32];
	int fd, r;

	inode = inode_get(se->inodes, nodeid);
	if (!inode && (r = resume_find_inode(se, nodeid, &inode)) < 0)
		return r;
	if (dir) {
		fd = openat(inode->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		open_flags &= ~(O_CREAT | O_EXCL | O_TRUNC | O_NOCTTY | O_DIRECT | O_NOFOLLOW);
		proc_fd_path(inode->fd, path);
		fd = open(path, open_flags | O_CLOEXEC);
		if (fd < 0 && (errno == EACCES || errno == EISDIR))
			fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	inode_put(se->inodes, inode);
	if (fd < 0)
		return -errno;
	r = handle_new(fd, dir, &h);
	if (r < 0) {
		safe_close(fd);
		return r;
	}
	h->nodeid = nodeid;
	r = handle_adopt(se->handles, fh, h, ret);
	if (r != 0)
		handle_free(h);
	if (r == 0)
		log_info("resume: re-opened fh %llu of node %llu", (unsigned long long)fh,
			 (unsigned long long)nodeid);
	return r < 0 ? r : 0;
}
