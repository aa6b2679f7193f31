/* What a request asks of the backend: its inodes by node id, the parent
 * of an entry it makes or removes, the mode and owner of what it creates
 * (the caller's ids and the connection's flags are the request's). */
#ifndef ZCFS_REQ_INODE_H
#define ZCFS_REQ_INODE_H

#include <sys/types.h>
#include "daemon/serve/backend/inode.h"
#include "fuse_msg.h"

/* A request's inode by node id; -ESTALE when the kernel names one we
 * do not know. Release with inode_put(). */
int req_inode(struct zcfs_req *req, uint64_t nodeid, struct zcfs_inode **ret) _must_check_;
void req_inode_put(struct zcfs_req *req, struct zcfs_inode *inode);

/* The directory of a request that makes or removes NAME in it: -EROFS on
 * a read-only volume, NAME checked with check_name(). The parent is held:
 * release with req_inode_put(). */
int req_entry_parent(struct zcfs_req *req, const char *name, struct zcfs_inode **parent) _must_check_;

/* The mode to create with: with FUSE_DONT_MASK the kernel sends it
 * unmasked, and the umask applies only when parent has no default ACL
 * (the backing file system then applies that ACL instead). */
mode_t create_mode(struct zcfs_req *req, struct zcfs_inode *parent, mode_t mode, uint32_t umask);
/* Owner, group and final mode of a new entry made by req under parent:
 * the caller's uid, the parent's gid if it is setgid, else the caller's. */
int new_owner(struct zcfs_req *req, struct zcfs_inode *parent, mode_t *mode, uid_t *uid,
	      gid_t *gid) _must_check_;

#endif
