/* Name-space operations: lookup, attributes, and everything that creates,
 * links, renames or removes a directory entry. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include "daemon/serve/backend/backend.h"
#include "daemon/serve/backend/handle.h"
#include "daemon/serve/backend/prune.h"
#include "common/log.h"
#include "ops.h"
#include "req_inode.h"
#include "daemon/serve/backend/quota.h"

int op_lookup(struct zcfs_req *req)
{
	struct zcfs_inode *parent;
	struct fuse_entry_out e;
	const char *name;
	size_t off = 0;
	int r;

	r = req_next_string(req, &off, &name);
	if (r < 0)
		return r;
	r = check_name(name);
	if (r < 0)
		return r == -EINVAL ? -ENOENT : r;
	r = req_inode(req, req->in.nodeid, &parent);
	if (r < 0)
		return r;
	r = do_lookup(req->se, parent, name, &e);
	req_inode_put(req, parent);
	if (r == -ENOENT && req->se->entry_timeout > 0) {
		/* Negative entry: node id 0 lets the kernel cache the miss. */
		memset(&e, 0, sizeof(e));
		e.entry_valid = (uint64_t)req->se->entry_timeout;
		return reply_buf(req, &e, sizeof(e));
	}
	if (r < 0)
		return r;
	return reply_buf(req, &e, sizeof(e));
}

int op_forget(struct zcfs_req *req)
{
	const struct fuse_forget_in *arg = req->arg;

	inode_forget(req->se->inodes, req->in.nodeid, arg->nlookup);
	prune_forgot(req->se->prune, inode_table_count(req->se->inodes));
	reply_none(req);
	return 0;
}

int op_batch_forget(struct zcfs_req *req)
{
	const struct fuse_batch_forget_in *arg = req->arg;
	const struct fuse_forget_one *one = req->data;
	size_t i, n = arg->count;

	if (n > req->data_len / sizeof(*one))
		n = req->data_len / sizeof(*one);
	for (i = 0; i < n; i++) {
		struct fuse_forget_one f;
		memcpy(&f, &one[i], sizeof(f));
		inode_forget(req->se->inodes, f.nodeid, f.nlookup);
	}
	prune_forgot(req->se->prune, inode_table_count(req->se->inodes));
	reply_none(req);
	return 0;
}

static int reply_attr(struct zcfs_req *req, const struct stat *st)
{
	struct fuse_attr_out out;
	double t = req->se->attr_timeout;

	memset(&out, 0, sizeof(out));
	out.attr_valid = (uint64_t)t;
	out.attr_valid_nsec = (uint32_t)((t - (double)out.attr_valid) * 1e9);
	fill_attr(req->se, st, &out.attr);
	return reply_buf(req, &out, sizeof(out));
}

/* The request's own inode, held (req_inode_put) when this returns 0,
 * and its attributes as the client sees them. */
static int req_inode_stat(struct zcfs_req *req, struct zcfs_inode **inode, struct stat *st)
{
	int r = req_inode(req, req->in.nodeid, inode);

	if (r < 0)
		return r;
	r = inode_stat(req->se, *inode, st);
	if (r < 0)
		req_inode_put(req, *inode);
	return r;
}

int op_getattr(struct zcfs_req *req)
{
	struct zcfs_inode *inode;
	struct stat st;
	int r = req_inode_stat(req, &inode, &st);

	if (r < 0)
		return r;
	req_inode_put(req, inode);
	return reply_attr(req, &st);
}

static int set_times(struct zcfs_inode *inode, const struct fuse_setattr_in *a, mode_t type)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
	char path[32];

	if (a->valid & FATTR_ATIME_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (a->valid & FATTR_ATIME)
		ts[0] = (struct timespec){ .tv_sec = (time_t)a->atime, .tv_nsec = a->atimensec };
	if (a->valid & FATTR_MTIME_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (a->valid & FATTR_MTIME)
		ts[1] = (struct timespec){ .tv_sec = (time_t)a->mtime, .tv_nsec = a->mtimensec };
	if (utimensat(inode->fd, "", ts, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EINVAL && errno != EBADF)
		return -errno;
	if (S_ISLNK(type))
		return -EPERM;
	proc_fd_path(inode->fd, path);
	return RET_NERRNO(utimensat(AT_FDCWD, path, ts, 0));
}

static int set_size(struct zcfs_session *se, struct zcfs_inode *inode,
		    const struct fuse_setattr_in *a)
{
	struct zcfs_handle *h = (a->valid & FATTR_FH) ? handle_get(se->handles, a->fh) : NULL;
	char path[32];

	if (h && h->fd >= 0)
		return RET_NERRNO(ftruncate(h->fd, (off_t)a->size));
	proc_fd_path(inode->fd, path);
	return RET_NERRNO(truncate(path, (off_t)a->size));
}

static int set_mode_owner(struct zcfs_session *se, struct zcfs_inode *inode,
			  const struct fuse_setattr_in *a, const struct stat *cur)
{
	uid_t uid = (a->valid & FATTR_UID) ? a->uid : (uid_t)-1;
	gid_t gid = (a->valid & FATTR_GID) ? a->gid : (gid_t)-1;
	char path[32];

	if (se->xattr_owner) {
		struct ovr_stat o = { .uid = cur->st_uid, .gid = cur->st_gid, .mode = cur->st_mode,
				      .rdev = cur->st_rdev };
		int r;
		if (a->valid & FATTR_MODE)
			o.mode = (cur->st_mode & S_IFMT) | (a->mode & 07777);
		if (uid != (uid_t)-1)
			o.uid = uid;
		if (gid != (gid_t)-1)
			o.gid = gid;
		/* chown drops set-id bits of every non-directory, as the
		 * backing chown does in native mode (KILLPRIV_V2 leaves it to
		 * us); set-gid without group execute (locking) stays. */
		if ((uid != (uid_t)-1 || gid != (gid_t)-1) && !(a->valid & FATTR_MODE) &&
		    !S_ISDIR(cur->st_mode)) {
			o.mode &= ~(mode_t)S_ISUID;
			if (o.mode & S_IXGRP)
				o.mode &= ~(mode_t)S_ISGID;
		}
		r = inode_set_ovr(se, inode, &o);
		if (r < 0)
			return r;
		if (a->valid & FATTR_MODE) {
			mode_t keep = S_ISDIR(cur->st_mode) ? 0700 : 0600;
			proc_fd_path(inode->fd, path);
			return RET_NERRNO(chmod(path, (a->mode & 0777) | keep));
		}
		return 0;
	}
	if (uid != (uid_t)-1 || gid != (gid_t)-1) {
		if (fchownat(inode->fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (a->valid & FATTR_MODE) {
		if (S_ISLNK(cur->st_mode))
			return -EOPNOTSUPP;
		proc_fd_path(inode->fd, path);
		if (chmod(path, a->mode & 07777) < 0)
			return -errno;
	}
	return 0;
}

/* With KILLPRIV_V2 the kernel leaves set-id bits to us and turns two
 * things into a SETATTR that changes nothing (or only ctime, under
 * writeback): a write by a caller without CAP_FSETID (also through
 * passthrough, which we never see; and fallocate, copy_file_range) and
 * chown(f, -1, -1). Both drop the bits on a local file system, but the
 * latter only for the owner (EPERM for others), so: the owner, root, or
 * a caller holding the file open for writing. After --resume the
 * writer's fh may not be adopted yet: any caller with write permission
 * by mode (primary group only) then, who could write the file anyway. */
static int kill_request(struct zcfs_req *req, struct zcfs_inode *inode, const struct stat *st)
{
	uid_t uid = req->in.uid;
	bool may;

	if (suidgid_killed(st, uid, req->in.gid) == st->st_mode)
		return 0;	/* nothing inode_kill_suidgid would drop */
	may = uid == 0 || uid == st->st_uid ||
	      handle_writer_exists(req->se->handles, inode->nodeid, uid);
	if (!may && req->se->opts->resume)
		may = (st->st_mode & S_IWOTH) || (req->in.gid == st->st_gid && (st->st_mode & S_IWGRP));
	return may ? inode_kill_suidgid(req->se, inode, req->in.uid, req->in.gid) : -EPERM;
}

int op_setattr(struct zcfs_req *req)
{
	const struct fuse_setattr_in *a = req->arg;
	struct zcfs_inode *inode;
	struct stat st;
	int r;

	if (req->se->opts->read_only)
		return -EROFS;
	r = req_inode_stat(req, &inode, &st);
	if (r < 0)
		return r;
	if (a->valid & (FATTR_MODE | FATTR_UID | FATTR_GID)) {
		r = set_mode_owner(req->se, inode, a, &st);
		if (r < 0)
			goto out;
	}
	if ((a->valid & FATTR_KILL_SUIDGID) && !(a->valid & FATTR_MODE)) {
		r = inode_kill_suidgid(req->se, inode, req->in.uid, req->in.gid);
		if (r < 0)
			goto out;
	} else if (!(a->valid & ~(FATTR_FH | FATTR_LOCKOWNER | FATTR_CTIME))) {
		r = kill_request(req, inode, &st);
		if (r < 0)
			goto out;
	}
	if (a->valid & FATTR_SIZE) {
		if (S_ISDIR(st.st_mode)) {
			r = -EISDIR;
			goto out;
		}
		r = set_size(req->se, inode, a);
		if (r < 0)
			goto out;
		quota_recount(req->se, inode, inode->fd);
	}
	if (a->valid & (FATTR_ATIME | FATTR_MTIME | FATTR_ATIME_NOW | FATTR_MTIME_NOW)) {
		r = set_times(inode, a, st.st_mode);
		if (r < 0)
			goto out;
	}
	r = inode_stat(req->se, inode, &st);
out:
	req_inode_put(req, inode);
	if (r < 0)
		return r;
	return reply_attr(req, &st);
}

int op_readlink(struct zcfs_req *req)
{
	struct zcfs_inode *inode;
	char buf[PATH_MAX + 1];
	struct stat st;
	ssize_t n;
	int r;

	r = req_inode_stat(req, &inode, &st);
	if (r < 0)
		return r;
	if (!S_ISLNK(st.st_mode)) {
		r = -EINVAL;
		goto out;
	}
	if (req->se->xattr_owner && fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode)) {
		/* xattr mode keeps a symlink as a file holding its target. */
		char path[32];
		_cleanup_close_ int fd = -1;
		proc_fd_path(inode->fd, path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : pread(fd, buf, PATH_MAX, 0);
	} else {
		n = readlinkat(inode->fd, "", buf, PATH_MAX);
	}
	if (n < 0) {
		r = -errno;
		goto out;
	}
	r = reply_buf(req, buf, (size_t)n);
out:
	req_inode_put(req, inode);
	return r;
}

/* Replies with the entry of NAME just created under parent, or removes it
 * again when ownership cannot be given (nothing half-made stays). */
static int finish_create(struct zcfs_req *req, struct zcfs_inode *parent, const char *name,
			 int fd, mode_t mode, dev_t rdev, bool is_dir)
{
	struct fuse_entry_out e;
	uid_t uid;
	gid_t gid;
	int r;

	r = new_owner(req, parent, &mode, &uid, &gid);
	if (r == 0)
		r = set_new_owner(req->se, parent->fd, name, fd, mode, uid, gid, rdev);
	if (r == 0)
		r = do_lookup(req->se, parent, name, &e);
	if (r < 0) {
		(void)unlinkat(parent->fd, name, is_dir ? AT_REMOVEDIR : 0);
		return r;
	}
	quota_charge_new(req->se, parent, e.attr.blocks);
	return reply_buf(req, &e, sizeof(e));
}

/* MKNOD, MKDIR and SYMLINK: the name, then a symlink's target. */
static int make_node(struct zcfs_req *req, mode_t mode, dev_t rdev, uint32_t umask)
{
	struct zcfs_session *se = req->se;
	const char *name, *link_target = NULL;
	struct zcfs_inode *parent;
	_cleanup_close_ int fd = -1;
	size_t off = 0;
	int r;

	r = req_next_string(req, &off, &name);
	if (r == 0 && S_ISLNK(mode))
		r = req_next_string(req, &off, &link_target);
	if (r == 0 && link_target && strlen(link_target) >= PATH_MAX)
		r = -ENAMETOOLONG;
	if (r == 0)
		r = req_entry_parent(req, name, &parent);
	if (r < 0)
		return r;
	if (!S_ISLNK(mode))
		mode = create_mode(req, parent, mode, umask);
	if (S_ISDIR(mode)) {
		r = RET_NERRNO(mkdirat(parent->fd, name, se->xattr_owner ? 0700 : (mode & 07777)));
	} else if (se->xattr_owner) {
		/* Everything but directories is a plain file with a record. */
		fd = openat(parent->fd, name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
		r = fd < 0 ? -errno : 0;
		if (r == 0 && link_target) {
			size_t len = strlen(link_target);
			if (pwrite(fd, link_target, len, 0) != (ssize_t)len)
				r = -EIO;
		}
		if (r < 0 && fd >= 0)
			(void)unlinkat(parent->fd, name, 0);
	} else if (S_ISLNK(mode)) {
		r = RET_NERRNO(symlinkat(link_target, parent->fd, name));
	} else {
		r = RET_NERRNO(mknodat(parent->fd, name, mode, rdev));
	}
	if (r == 0)
		r = finish_create(req, parent, name, fd, mode, rdev, S_ISDIR(mode));
	req_inode_put(req, parent);
	return r;
}

int op_mknod(struct zcfs_req *req)
{
	const struct fuse_mknod_in *a = req->arg;

	if (S_ISDIR(a->mode) || S_ISLNK(a->mode))
		return -EINVAL;
	return make_node(req, a->mode ? a->mode : (S_IFREG | 0644), a->rdev, a->umask);
}

int op_mkdir(struct zcfs_req *req)
{
	const struct fuse_mkdir_in *a = req->arg;

	return make_node(req, S_IFDIR | (a->mode & 07777), 0, a->umask);
}

int op_symlink(struct zcfs_req *req)
{
	return make_node(req, S_IFLNK | 0777, 0, 0);
}

static int remove_entry(struct zcfs_req *req, int flags)
{
	struct quota_victim victim;
	struct zcfs_inode *parent;
	const char *name;
	size_t off = 0;
	int r;

	r = req_next_string(req, &off, &name);
	if (r == 0)
		r = req_entry_parent(req, name, &parent);
	if (r < 0)
		return r;
	quota_victim_get(req->se, parent->fd, name, &victim);
	r = RET_NERRNO(unlinkat(parent->fd, name, flags));
	if (r == 0)
		quota_removed(req->se, parent, &victim);
	req_inode_put(req, parent);
	if (r < 0)
		return r;
	return reply_err(req, 0);
}

int op_unlink(struct zcfs_req *req) { return remove_entry(req, 0); }
int op_rmdir(struct zcfs_req *req) { return remove_entry(req, AT_REMOVEDIR); }

static int do_rename(struct zcfs_req *req, uint64_t newdir_id, unsigned flags)
{
	struct zcfs_inode *olddir = NULL, *newdir = NULL;
	struct quota_victim victim = { .valid = false };
	const char *oldname, *newname;
	size_t off = 0;
	int r;

	if (req->se->opts->read_only)
		return -EROFS;
	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	r = req_next_string(req, &off, &oldname);
	if (r == 0)
		r = req_next_string(req, &off, &newname);
	if (r == 0)
		r = check_name(oldname);
	if (r == 0)
		r = check_name(newname);
	if (r < 0)
		return r;
	r = req_inode(req, req->in.nodeid, &olddir);
	if (r == 0)
		r = req_inode(req, newdir_id, &newdir);
	if (r == 0)
		quota_victim_get(req->se, newdir->fd, newname, &victim);
	if (r == 0)
		r = RET_NERRNO(renameat2(olddir->fd, oldname, newdir->fd, newname, flags));
	if (r == 0 && !(flags & RENAME_EXCHANGE)) {
		/* A replaced target may have been its inode's last name. */
		quota_removed(req->se, newdir, &victim);
		quota_recount(req->se, olddir, olddir->fd);
	}
	req_inode_put(req, olddir);
	req_inode_put(req, newdir);
	if (r < 0)
		return r;
	return reply_err(req, 0);
}

int op_rename(struct zcfs_req *req)
{
	const struct fuse_rename_in *a = req->arg;
	return do_rename(req, a->newdir, 0);
}

int op_rename2(struct zcfs_req *req)
{
	const struct fuse_rename2_in *a = req->arg;
	return do_rename(req, a->newdir, a->flags);
}

int op_link(struct zcfs_req *req)
{
	const struct fuse_link_in *a = req->arg;
	struct zcfs_inode *inode = NULL, *parent = NULL;
	struct fuse_entry_out e;
	const char *name;
	char path[32];
	size_t off = 0;
	int r;

	r = req_next_string(req, &off, &name);
	if (r == 0)
		r = req_entry_parent(req, name, &parent);
	if (r == 0)
		r = req_inode(req, a->oldnodeid, &inode);
	if (r < 0)
		goto out;
	r = RET_NERRNO(linkat(inode->fd, "", parent->fd, name, AT_EMPTY_PATH));
	if (r == -ENOENT || r == -EPERM) {
		/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH: go through /proc. */
		proc_fd_path(inode->fd, path);
		r = RET_NERRNO(linkat(AT_FDCWD, path, parent->fd, name, AT_SYMLINK_FOLLOW));
	}
	if (r == 0) {
		r = do_lookup(req->se, parent, name, &e);
		if (r < 0)	/* fail cleanly: the client was not told of it */
			(void)unlinkat(parent->fd, name, 0);
	}
	if (r == 0)
		quota_link_new(req->se, parent);
out:
	req_inode_put(req, inode);
	req_inode_put(req, parent);
	if (r < 0)
		return r;
	return reply_buf(req, &e, sizeof(e));
}
