/* Extended attributes. The ownership record is the server's own: hidden
 * from listings and refused to clients in both ownership modes. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include "daemon/serve/backend/backend.h"
#include "ops.h"
#include "req_inode.h"

static bool is_private(const char *name)
{
	return strcmp(name, OVR_XATTR) == 0;
}

/* ACLs are the backing files' own in native ownership (FUSE_POSIX_ACL).
 * In xattr ownership the backing files belong to the server and the
 * record holds the owner: an ACL there would be stored but never
 * enforced, so there are none (setfacl: EOPNOTSUPP). */
static bool acl_refused(struct zcfs_req *req, const char *name)
{
	return !(req->se->conn_flags & FUSE_POSIX_ACL) && !strncmp(name, "system.posix_acl_", 17);
}

/* The path the xattr calls use: /proc/self/fd/N of the inode's O_PATH
 * handle. For a symlink that is the link itself (the magic link jumps to
 * it and nothing follows it further), as the l*xattr calls would see it. */
static int req_xattr_path(struct zcfs_req *req, char path[static 32])
{
	struct zcfs_inode *inode;
	int r = req_inode(req, req->in.nodeid, &inode);

	if (r < 0)
		return r;
	proc_fd_path(inode->fd, path);
	req_inode_put(req, inode);
	return 0;
}

static int reply_xattr_size(struct zcfs_req *req, size_t size)
{
	struct fuse_getxattr_out out;

	memset(&out, 0, sizeof(out));
	out.size = (uint32_t)size;
	return reply_buf(req, &out, sizeof(out));
}

/* What an xattr request names: the attribute, the path of its inode,
 * and where the value after the name starts in req->data. */
struct xattr_target {
	const char *name;
	char path[32];
	size_t off;
};

/* The target of GETXATTR (CHANGE false), SETXATTR or REMOVEXATTR: changes
 * refused on a read-only volume, the ownership record to everyone
 * (ENODATA to read it, EPERM to change it), ACLs where there are none. */
static int xattr_target(struct zcfs_req *req, bool change, struct xattr_target *x)
{
	int r;

	x->off = 0;
	if (change && req->se->opts->read_only)
		return -EROFS;
	r = req_next_string(req, &x->off, &x->name);
	if (r < 0)
		return r;
	if (is_private(x->name))
		return change ? -EPERM : -ENODATA;
	if (acl_refused(req, x->name))
		return -EOPNOTSUPP;
	return req_xattr_path(req, x->path);
}

int op_getxattr(struct zcfs_req *req)
{
	const struct fuse_getxattr_in *a = req->arg;
	_cleanup_free_ char *buf = NULL;
	struct xattr_target x;
	size_t size;
	ssize_t n;
	int r;

	r = xattr_target(req, false, &x);
	if (r < 0)
		return r;
	if (a->size == 0) {
		n = getxattr(x.path, x.name, NULL, 0);
		return n < 0 ? -errno : reply_xattr_size(req, (size_t)n);
	}
	/* No value is larger than XATTR_SIZE_MAX: never allocate more. */
	size = MIN(a->size, (uint32_t)XATTR_SIZE_MAX);
	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	n = getxattr(x.path, x.name, buf, size);
	if (n < 0)
		return -errno;
	return reply_buf(req, buf, (size_t)n);
}

/* An access ACL set by a caller outside the file's group and without
 * CAP_FSETID drops set-gid, as on a local file system (the kernel's
 * posix_acl_update_mode; xfstests generic/375). */
static int acl_kill_sgid(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!(st.st_mode & S_ISGID))
		return 0;
	return RET_NERRNO(chmod(path, st.st_mode & 07777 & ~(mode_t)S_ISGID));
}

int op_setxattr(struct zcfs_req *req)
{
	const struct fuse_setxattr_in *a = req->arg;
	struct xattr_target x;
	int r;

	r = xattr_target(req, true, &x);
	if (r < 0)
		return r;
	if (a->size > req->data_len - x.off)
		return -EINVAL;
	r = RET_NERRNO(setxattr(x.path, x.name, (const char *)req->data + x.off, a->size, (int)a->flags));
	if (r == 0 && (req->se->conn_flags & FUSE_SETXATTR_EXT) &&
	    (a->setxattr_flags & FUSE_SETXATTR_ACL_KILL_SGID) && !strcmp(x.name, "system.posix_acl_access"))
		r = acl_kill_sgid(x.path);
	return reply_err(req, r);
}

int op_listxattr(struct zcfs_req *req)
{
	const struct fuse_getxattr_in *a = req->arg;
	_cleanup_free_ char *buf = NULL;
	char path[32];
	size_t len = 0, used = 0;
	ssize_t n;
	int r;

	r = req_xattr_path(req, path);
	if (r < 0)
		return r;
	/* Read the whole list, drop the private name, then size-check. */
	for (;;) {
		n = listxattr(path, NULL, 0);
		if (n < 0)
			return -errno;
		free(buf);
		len = (size_t)n;
		buf = malloc(len ? len : 1);
		if (!buf)
			return -ENOMEM;
		n = listxattr(path, buf, len);
		if (n >= 0)
			break;
		if (errno != ERANGE)
			return -errno;
	}
	len = (size_t)n;
	for (size_t i = 0; i < len;) {
		size_t l = strnlen(buf + i, len - i) + 1;
		if (!is_private(buf + i)) {
			memmove(buf + used, buf + i, l);
			used += l;
		}
		i += l;
	}
	if (a->size == 0)
		return reply_xattr_size(req, used);
	if (used > a->size)
		return -ERANGE;
	return reply_buf(req, buf, used);
}

int op_removexattr(struct zcfs_req *req)
{
	struct xattr_target x;
	int r = xattr_target(req, true, &x);

	if (r < 0)
		return r;
	return reply_err(req, RET_NERRNO(removexattr(x.path, x.name)));
}
