/* Confined passthrough backend: every name is one component opened with
 * O_NOFOLLOW relative to an O_PATH handle, so no request can reach above
 * SOURCE, whatever symlinks or renames happen under it. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include "backend.h"
#include "handle.h"
#include "common/log.h"
#include "prune.h"
#include "resume.h"

int check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

void proc_fd_path(int fd, char buf[static 32])
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

mode_t backing_type_for(struct zcfs_session *se, mode_t mode)
{
	if (!se->xattr_owner)
		return mode & S_IFMT;
	return S_ISDIR(mode) ? S_IFDIR : S_IFREG;
}

/* Loads the inode's record once; the server is the only writer. */
static int load_ovr(struct zcfs_session *se, struct zcfs_inode *inode, mode_t backing_mode)
{
	char path[32], buf[OVR_MAXLEN + 1];
	struct ovr_stat o;
	ssize_t n;
	bool loaded;

	inode_lock(se->inodes);
	loaded = inode->ovr_loaded;
	inode_unlock(se->inodes);
	if (loaded)
		return 0;
	if (!S_ISREG(backing_mode) && !S_ISDIR(backing_mode)) {
		n = -1;
		errno = ENODATA;
	} else {
		proc_fd_path(inode->fd, path);
		n = getxattr(path, OVR_XATTR, buf, sizeof(buf) - 1);
	}
	inode_lock(se->inodes);
	if (n >= 0 && ovr_parse(buf, (size_t)n, &o) == 0) {
		inode->ovr = o;
		inode->ovr_present = true;
	} else {
		if (n >= 0)
			log_warn("ignoring malformed %s on inode %llu", OVR_XATTR,
				 (unsigned long long)inode->ino);
		inode->ovr_present = false;
	}
	inode->ovr_loaded = true;
	inode_unlock(se->inodes);
	return 0;
}

/* Turns the backing attributes in st into what clients see. */
static void apply_ovr(struct zcfs_session *se, struct zcfs_inode *inode, struct stat *st)
{
	if (!se->xattr_owner)
		return;
	(void)load_ovr(se, inode, st->st_mode);
	inode_lock(se->inodes);
	if (inode->ovr_present) {
		mode_t type = inode->ovr.has_type ? (inode->ovr.mode & S_IFMT) : (st->st_mode & S_IFMT);
		st->st_uid = inode->ovr.uid;
		st->st_gid = inode->ovr.gid;
		st->st_mode = type | (inode->ovr.mode & 07777);
		if (S_ISCHR(type) || S_ISBLK(type)) {
			st->st_rdev = inode->ovr.rdev;
			st->st_size = 0;
		}
	}
	inode_unlock(se->inodes);
}

int inode_stat(struct zcfs_session *se, struct zcfs_inode *inode, struct stat *st)
{
	if (fstatat(inode->fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	apply_ovr(se, inode, st);
	return 0;
}

int inode_set_ovr(struct zcfs_session *se, struct zcfs_inode *inode, const struct ovr_stat *o)
{
	char path[32], buf[OVR_MAXLEN + 1];
	int n;

	n = ovr_format(o, buf, sizeof(buf));
	if (n < 0)
		return n;
	proc_fd_path(inode->fd, path);
	if (setxattr(path, OVR_XATTR, buf, (size_t)n, 0) < 0)
		return -errno;
	inode_lock(se->inodes);
	inode->ovr = *o;
	inode->ovr.has_type = true;
	inode->ovr_present = true;
	inode->ovr_loaded = true;
	inode_unlock(se->inodes);
	return 0;
}

static void fill_timeout(double t, uint64_t *sec, uint32_t *nsec)
{
	*sec = (uint64_t)t;
	*nsec = (uint32_t)((t - (double)*sec) * 1e9);
}

void fill_attr(struct zcfs_session *se, const struct stat *st, struct fuse_attr *a)
{
	(void)se;
	memset(a, 0, sizeof(*a));
	a->ino = st->st_ino;
	a->size = (uint64_t)st->st_size;
	a->blocks = (uint64_t)st->st_blocks;
	a->atime = (uint64_t)st->st_atim.tv_sec;
	a->mtime = (uint64_t)st->st_mtim.tv_sec;
	a->ctime = (uint64_t)st->st_ctim.tv_sec;
	a->atimensec = (uint32_t)st->st_atim.tv_nsec;
	a->mtimensec = (uint32_t)st->st_mtim.tv_nsec;
	a->ctimensec = (uint32_t)st->st_ctim.tv_nsec;
	a->mode = st->st_mode;
	a->nlink = (uint32_t)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->rdev = (uint32_t)st->st_rdev;
	a->blksize = (uint32_t)st->st_blksize;
}

void fill_entry(struct zcfs_session *se, struct zcfs_inode *inode, const struct stat *st,
		struct fuse_entry_out *e)
{
	memset(e, 0, sizeof(*e));
	e->nodeid = inode->nodeid;
	e->generation = 0;
	fill_timeout(se->entry_timeout, &e->entry_valid, &e->entry_valid_nsec);
	fill_timeout(se->attr_timeout, &e->attr_valid, &e->attr_valid_nsec);
	fill_attr(se, st, &e->attr);
}

int do_lookup(struct zcfs_session *se, struct zcfs_inode *parent, const char *name,
	      struct fuse_entry_out *e)
{
	struct zcfs_inode *inode;
	struct stat st;
	int fd, r;

	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -EMFILE || r == -ENFILE)
			prune_check(se->prune, SIZE_MAX);
		return r;
	}
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
		r = -errno;
		safe_close(fd);
		return r;
	}
	r = inode_lookup_insert(se->inodes, fd, &st, &inode);
	if (r < 0)
		return r;
	prune_check(se->prune, inode_table_count(se->inodes));
	/* st is fresh from the handle we just opened: no second stat. */
	apply_ovr(se, inode, &st);
	fill_entry(se, inode, &st, e);
	inode_put(se->inodes, inode);
	return 0;
}

static mode_t backing_perm(mode_t mode)
{
	/* The server must keep access to what it stores for the client. */
	return (mode & 0777) | (S_ISDIR(mode) ? 0700 : 0600);
}

int set_new_owner(struct zcfs_session *se, int dirfd, const char *name, int fd, mode_t mode,
		  uid_t uid, gid_t gid, dev_t rdev)
{
	_cleanup_close_ int own_fd = -1;
	char buf[OVR_MAXLEN + 1];
	struct ovr_stat o;
	int n;

	if (!se->xattr_owner) {
		if (fd >= 0 ? fchown(fd, uid, gid) : fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW))
			return -errno;
		/* chown clears set-id bits on non-directories: put them back
		 * onto the permissions the entry got, which a default ACL of
		 * the parent may have narrowed (xfstests generic/444). */
		if ((mode & 06000) && !S_ISLNK(mode)) {
			struct stat st;
			mode_t m;
			if ((fd >= 0 ? fstat(fd, &st) : fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) < 0)
				return -errno;
			m = (st.st_mode & 0777) | (mode & 06000);
			if ((st.st_mode & 07777) != m && (fd >= 0 ? fchmod(fd, m) : fchmodat(dirfd, name, m, 0)))
				return -errno;
		}
		return 0;
	}
	if (fd < 0) {
		own_fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (own_fd < 0)
			return -errno;
		fd = own_fd;
	}
	o = (struct ovr_stat){ .uid = uid, .gid = gid, .mode = mode, .rdev = rdev, .has_type = true };
	n = ovr_format(&o, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (fsetxattr(fd, OVR_XATTR, buf, (size_t)n, 0) < 0)
		return -errno;
	if (fchmod(fd, backing_perm(mode)) < 0)
		return -errno;
	return 0;
}

mode_t suidgid_killed(const struct stat *st, uid_t uid, gid_t gid)
{
	mode_t mode = st->st_mode;

	/* Every non-directory: fifos, sockets and devices have set-id bits too. */
	if (S_ISDIR(mode) || S_ISLNK(mode))
		return mode;
	mode &= ~(mode_t)S_ISUID;
	/* The kernel's rule (setattr_should_drop_sgid): set-gid goes when
	 * group-executable, or when the caller is outside the file's group.
	 * A FUSE request carries the caller's fsgid only, so membership by
	 * a supplementary group is not seen (the bit then goes: the safe
	 * side); uid 0 stands for CAP_FSETID. */
	if ((mode & S_IXGRP) || (uid != 0 && gid != st->st_gid))
		mode &= ~(mode_t)S_ISGID;
	return mode;
}

int inode_kill_suidgid(struct zcfs_session *se, struct zcfs_inode *inode, uid_t uid, gid_t gid)
{
	struct stat st;
	mode_t mode;
	char path[32];
	int r;

	r = inode_stat(se, inode, &st);
	if (r < 0)
		return r;
	mode = suidgid_killed(&st, uid, gid);
	if (mode == st.st_mode)
		return 0;
	if (se->xattr_owner) {
		struct ovr_stat o = { .uid = st.st_uid, .gid = st.st_gid, .mode = mode,
				      .rdev = st.st_rdev };
		r = inode_set_ovr(se, inode, &o);
	} else {
		proc_fd_path(inode->fd, path);
		r = RET_NERRNO(chmod(path, mode & 07777));
	}
	return r < 0 ? r : 1;
}
