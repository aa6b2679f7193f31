/* Kernel passthrough (FUSE_PASSTHROUGH, 6.9+): the kernel reads and writes
 * the backing file itself. One backing id per inode, shared by its opens,
 * because the kernel refuses mixed cached and passthrough opens. */
#ifndef ZCFS_PASSTHROUGH_H
#define ZCFS_PASSTHROUGH_H

#include "handle.h"
#include "inode.h"
#include "session.h"

/* Registers (or shares) inode's backing id for the open handle h and sets
 * the passthrough fields of out. Returns 0 with out untouched when
 * passthrough is off; turns it off for the session when the kernel
 * refuses (no CAP_SYS_ADMIN), logging why once. */
int passthrough_attach(struct zcfs_session *se, struct zcfs_inode *inode, struct zcfs_handle *h,
		       struct zcfs_open_out *out);
/* Releases h's share of the backing id. */
void passthrough_detach(struct zcfs_session *se, struct zcfs_handle *h);

#endif
