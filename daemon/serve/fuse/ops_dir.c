/* Directory streams: READDIR and READDIRPLUS resume at the kernel's
 * offset (the backing d_off), and an entry that did not fit is kept for
 * the next call instead of being read twice. */
#include <fcntl.h>
#include <sys/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include "daemon/serve/backend/backend.h"
#include "daemon/serve/backend/handle.h"
#include "common/log.h"
#include "ops.h"
#include "req_inode.h"
#include "daemon/serve/backend/passthrough.h"
#include "daemon/serve/backend/resume.h"

int op_opendir(struct zcfs_req *req)
{
	struct zcfs_session *se = req->se;
	struct zcfs_inode *inode;
	struct zcfs_open_out out;
	struct zcfs_handle *h;
	bool keep;
	int fd, r;

	r = req_inode(req, req->in.nodeid, &inode);
	if (r < 0)
		return r;
	/* -o noatime / nodiratime: listing must not touch the backing atime */
	fd = openat(inode->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC |
		    (req->se->opts->mount_flags & (MS_NOATIME | MS_NODIRATIME) ? O_NOATIME : 0));
	if (fd < 0 && errno == EPERM)
		fd = openat(inode->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	req_inode_put(req, inode);
	if (fd < 0)
		return -errno;
	keep = open_keeps_cache(se, fd);	/* a listing that moves atime reaches us */
	r = handle_new(fd, true, &h);
	if (r < 0) {
		safe_close(fd);
		return r;
	}
	memset(&out, 0, sizeof(out));
	r = handle_register(se->handles, h, &out.fh);
	if (r < 0) {
		handle_free(h);
		return r;
	}
	if (se->keep_cache)
		out.open_flags = (keep ? FOPEN_KEEP_CACHE : 0) | FOPEN_CACHE_DIR;
	return reply_buf(req, &out, sizeof(out));
}

int op_releasedir(struct zcfs_req *req)
{
	const struct fuse_release_in *a = req->arg;
	struct zcfs_handle *h = handle_unregister(req->se->handles, a->fh);

	/* Whatever kind the fh names (a forged one may name a file). */
	if (h) {
		passthrough_detach(req->se, h);
		handle_free(h);
	}
	return reply_err(req, 0);
}

/* A directory handle; after --resume one of the previous server's is
 * opened again on the request's inode. */
static struct zcfs_handle *dir_handle(struct zcfs_req *req, uint64_t fh)
{
	struct zcfs_handle *h = handle_get(req->se->handles, fh);

	if (!h && req->se->resume &&
	    resume_adopt_handle(req->se, req->in.nodeid, fh, 0, true, &h) < 0)
		h = NULL;
	return h;
}

int op_fsyncdir(struct zcfs_req *req)
{
	const struct fuse_fsync_in *a = req->arg;
	struct zcfs_handle *h = dir_handle(req, a->fh);

	if (!h || !h->dir)
		return -EBADF;
	return reply_err(req, RET_NERRNO(fsync(dirfd(h->dir))));
}

/* d_type as the client sees it: xattr mode may keep a symlink, fifo or
 * device as a plain file whose record names the real type. */
static unsigned client_dtype(struct zcfs_session *se, DIR *dir, const struct dirent *d)
{
	char path[64 + 256], buf[OVR_MAXLEN + 1];
	struct ovr_stat o;
	ssize_t n;

	if (!se->xattr_owner || d->d_type != DT_REG)
		return d->d_type;
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd(dir), d->d_name);
	n = lgetxattr(path, OVR_XATTR, buf, sizeof(buf) - 1);
	if (n < 0 || ovr_parse(buf, (size_t)n, &o) < 0 || !o.has_type)
		return d->d_type;
	return IFTODT(o.mode & S_IFMT);
}

/* Moves H's stream to the kernel's OFFSET unless it is there already. */
static void dir_seek(struct zcfs_handle *h, uint64_t offset)
{
	if ((off_t)offset == h->dir_off)
		return;
	if (offset == 0)
		rewinddir(h->dir);
	else
		seekdir(h->dir, (long)offset);
	h->dir_off = (off_t)offset;
	h->pending = NULL;
}

/* READDIRPLUS's entry for D (of DIR, whose inode is DIR_INODE) at DP,
 * ENTLEN bytes, with the attributes of a lookup; -ENOENT when it
 * vanished since readdir (the caller skips it). */
static int fill_direntplus(struct zcfs_session *se, struct zcfs_inode *dir_inode, DIR *dir,
			   const struct dirent *d, struct fuse_direntplus *dp, size_t entlen)
{
	size_t namelen = strlen(d->d_name);

	memset(dp, 0, entlen);
	if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
		int lr = do_lookup(se, dir_inode, d->d_name, &dp->entry_out);

		if (lr == -ENOENT)
			return -ENOENT;
		if (lr < 0) {
			/* Out of descriptors, say: the name without attributes
			 * (node id 0), the kernel looks it up when it is used. */
			memset(&dp->entry_out, 0, sizeof(dp->entry_out));
			dp->dirent.type = client_dtype(se, dir, d);
		} else {
			dp->dirent.type = (dp->entry_out.attr.mode & S_IFMT) >> 12;
		}
	} else {
		dp->dirent.type = DT_DIR;
	}
	dp->dirent.ino = d->d_ino;
	dp->dirent.off = (uint64_t)d->d_off;
	dp->dirent.namelen = (uint32_t)namelen;
	memcpy(dp->dirent.name, d->d_name, namelen);
	return 0;
}

/* READDIR's entry for D at DE, ENTLEN bytes. */
static void fill_dirent(struct zcfs_session *se, DIR *dir, const struct dirent *d,
			struct fuse_dirent *de, size_t entlen)
{
	size_t namelen = strlen(d->d_name);

	memset(de, 0, entlen);
	de->ino = d->d_ino;
	de->off = (uint64_t)d->d_off;
	de->namelen = (uint32_t)namelen;
	de->type = client_dtype(se, dir, d);
	memcpy(de->name, d->d_name, namelen);
}

/* Entries of H's stream (locked) into BUF, at most SIZE bytes: *USED of
 * them. An entry that does not fit stays pending for the next call. */
static int dir_fill(struct zcfs_session *se, struct zcfs_handle *h, struct zcfs_inode *dir_inode,
		    bool plus, char *buf, size_t size, size_t *used)
{
	for (;;) {
		struct dirent *d = h->pending;
		size_t namelen, entlen;

		if (!d) {
			errno = 0;
			d = readdir(h->dir);
			if (!d)
				return errno && *used == 0 ? -errno : 0;
		}
		namelen = strlen(d->d_name);
		entlen = plus ? FUSE_DIRENTPLUS_SIZE(&(struct fuse_direntplus){ .dirent.namelen = (uint32_t)namelen })
			      : FUSE_DIRENT_SIZE(&(struct fuse_dirent){ .namelen = (uint32_t)namelen });
		if (*used + entlen > size) {
			h->pending = d;
			return 0;
		}
		h->pending = NULL;
		if (!plus)
			fill_dirent(se, h->dir, d, (struct fuse_dirent *)(buf + *used), entlen);
		else if (fill_direntplus(se, dir_inode, h->dir, d,
					 (struct fuse_direntplus *)(buf + *used), entlen) == -ENOENT) {
			h->dir_off = d->d_off;	/* vanished since readdir: skipped */
			continue;
		}
		*used += entlen;
		h->dir_off = d->d_off;
	}
}

static int do_readdir(struct zcfs_req *req, bool plus)
{
	const struct fuse_read_in *a = req->arg;
	struct zcfs_session *se = req->se;
	struct zcfs_handle *h = dir_handle(req, a->fh);
	struct zcfs_inode *dir_inode = NULL;
	_cleanup_free_ char *own = NULL;
	char *buf = req->outbuf;
	size_t size = MIN(a->size, MAX(req->outbuf_size, se->max_write)), used = 0;
	int r = 0;

	if (!h || !h->dir)
		return -EBADF;
	if (!buf || size > req->outbuf_size) {
		buf = own = malloc(size ? size : 1);
		if (!buf)
			return -ENOMEM;
	}
	if (plus) {
		r = req_inode(req, req->in.nodeid, &dir_inode);
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&h->dir_lock);
	dir_seek(h, a->offset);
	r = dir_fill(se, h, dir_inode, plus, buf, size, &used);
	pthread_mutex_unlock(&h->dir_lock);
	if (dir_inode)
		req_inode_put(req, dir_inode);
	if (r < 0)
		return r;
	return reply_buf(req, buf, used);
}

int op_readdir(struct zcfs_req *req) { return do_readdir(req, false); }
int op_readdirplus(struct zcfs_req *req) { return do_readdir(req, true); }
