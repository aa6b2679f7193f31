/* A request's inodes and the owner of what it creates. */
#include <sys/stat.h>
#include <sys/xattr.h>
#include "daemon/serve/backend/backend.h"
#include "daemon/serve/backend/resume.h"
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

mode_t create_mode(struct zcfs_req *req, struct zcfs_inode *parent, mode_t mode, uint32_t umask)
{
	char path[32];

	if (!(req->se->conn_flags & FUSE_DONT_MASK))
		return mode;
	proc_fd_path(parent->fd, path);
	if (getxattr(path, "system.posix_acl_default", NULL, 0) > 0)
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
