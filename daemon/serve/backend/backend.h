/* Passthrough backend helpers shared by the op handlers: attributes as the
 * client sees them (native or from the ownership xattr), confined name
 * resolution, and ownership of newly created entries (what a request asks
 * of them: fuse/req_inode.h). */
#ifndef ZCFS_BACKEND_H
#define ZCFS_BACKEND_H

#include <sys/stat.h>
#include "inode.h"
#include "daemon/serve/core/session.h"

/* Rejects names that are not one path component: "", ".", "..", "a/b";
 * -ENAMETOOLONG past NAME_MAX. */
int check_name(const char *name) _must_check_;

/* "/proc/self/fd/N" for reopening an O_PATH handle. */
void proc_fd_path(int fd, char buf[static 32]);

/* Attributes of the inode as clients see them. */
int inode_stat(struct zcfs_session *se, struct zcfs_inode *inode, struct stat *st) _must_check_;

/* Stores the record for inode (xattr mode) and updates the cache. */
int inode_set_ovr(struct zcfs_session *se, struct zcfs_inode *inode, const struct ovr_stat *o) _must_check_;

/* Looks NAME up under PARENT (no symlink following, never above PARENT)
 * and fills e, counting one kernel reference. */
int do_lookup(struct zcfs_session *se, struct zcfs_inode *parent, const char *name,
	      struct fuse_entry_out *e) _must_check_;

void fill_attr(struct zcfs_session *se, const struct stat *st, struct fuse_attr *attr);
void fill_entry(struct zcfs_session *se, struct zcfs_inode *inode, const struct stat *st,
		struct fuse_entry_out *e);

/* Gives the just-created NAME under PARENT (open as fd when fd >= 0) the
 * caller's ownership and mode: chown in native mode, the record in xattr
 * mode. */
int set_new_owner(struct zcfs_session *se, int dirfd, const char *name, int fd, mode_t mode,
		  uid_t uid, gid_t gid, dev_t rdev) _must_check_;

/* Drops set-uid, and set-gid when group-executable or when the caller
 * (uid, fsgid) is outside the file's group, of a non-directory, as a
 * write, truncate or fallocate by a caller without CAP_FSETID must (the
 * kernel leaves it to us with FUSE_HANDLE_KILLPRIV_V2). Returns 1 when
 * the mode changed, 0 when there was nothing to drop. */
int inode_kill_suidgid(struct zcfs_session *se, struct zcfs_inode *inode, uid_t uid, gid_t gid) _must_check_;
/* The mode st keeps after that kill by (uid, gid). */
mode_t suidgid_killed(const struct stat *st, uid_t uid, gid_t gid);

/* Type of the backing object (S_IFMT) the client sees as mode. In xattr
 * mode symlinks and device nodes are regular files holding the record. */
mode_t backing_type_for(struct zcfs_session *se, mode_t mode);

#endif
