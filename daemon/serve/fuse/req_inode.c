/* A request's inodes and the owner of what it creates. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "daemon/serve/backend/backend.h"
#include "daemon/serve/backend/resume.h"
#include "kernel/zcfs_xattr_abi.h"
#include "req_inode.h"

int req_inode(struct zcfs_req *req, uint64_t nodeid, struct zcfs_inode **ret)
{
	struct zcfs_inode *i = inode_get(req->se->inodes, nodeid);

	if (!i && req->se->resume)
		return resume_find_inode(req->se, nodeid, ret);
	if (!i)
		return -ESTALE;
	*ret = i;
	return 0;
}

void req_inode_put(struct zcfs_req *req, struct zcfs_inode *inode)
{
	inode_put(req->se->inodes, inode);
}

int req_entry_parent(struct zcfs_req *req, const char *name, struct zcfs_inode **parent)
{
	int r;

	if (req->se->opts->read_only)
		return -EROFS;
	r = check_name(name);
	if (r < 0)
		return r;
	return req_inode(req, req->in.nodeid, parent);
}

/* Whether directory dirfd (an O_PATH handle) has a default ACL. "." of
 * the handle is the directory itself: getxattrat costs ~1 us here, the
 * lookup of a /proc/self/fd/N path 3.2-3.8 us (tmpfs, load ~9), on every
 * CREATE, MKNOD, MKDIR and SYMLINK. Kernels before 6.13 answer ENOSYS. */
static bool has_default_acl(int dirfd)
{
	struct zcfs_xattr_args a = { 0 };
	char path[32];
	long n;

	n = syscall(ZCFS_NR_getxattrat, dirfd, ".", AT_SYMLINK_NOFOLLOW, "system.posix_acl_default",
		    &a, sizeof(a));
	if (n >= 0 || errno != ENOSYS)
		return n > 0;
	proc_fd_path(dirfd, path);
	return getxattr(path, "system.posix_acl_default", NULL, 0) > 0;
}

mode_t create_mode(struct zcfs_req *req, struct zcfs_inode *parent, mode_t mode, uint32_t umask)
{
	if (!(req->se->conn_flags & FUSE_DONT_MASK))
		return mode;
	if (has_default_acl(parent->fd))
		return mode;
	return mode & ~(mode_t)(umask & 07777);
}

int new_owner(struct zcfs_req *req, struct zcfs_inode *parent, mode_t *mode, uid_t *uid, gid_t *gid)
{
	struct stat pst;
	int r = inode_stat(req->se, parent, &pst);

	if (r < 0)
		return r;
	*uid = req->in.uid;
	*gid = req->in.gid;
	if (pst.st_mode & S_ISGID) {
		*gid = pst.st_gid;
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	}
	return 0;
}
