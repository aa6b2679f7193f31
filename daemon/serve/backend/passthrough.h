/* Kernel passthrough (FUSE_PASSTHROUGH, 6.9+): the kernel reads and writes
 * the backing file itself. One backing id per inode, shared by its opens,
 * because the kernel refuses mixed cached and passthrough opens. */
#ifndef ZCFS_PASSTHROUGH_H
#define ZCFS_PASSTHROUGH_H

#include "handle.h"
#include "inode.h"
#include "daemon/serve/core/session.h"

/* Registers (or shares) inode's backing id for the open handle h and sets
 * the passthrough fields of out. Returns 0 with out untouched when
 * passthrough is off or this file cannot have it: without a broker a
 * refusal (no CAP_SYS_ADMIN) turns it off for the session, with one
 * (zcfsd refused or did not answer) only for this inode while it has
 * opens; one log line either way, never a failed open. */
int passthrough_attach(struct zcfs_session *se, struct zcfs_inode *inode, struct zcfs_handle *h,
		       struct zcfs_open_out *out);
/* Releases h's share of the backing id. */
void passthrough_detach(struct zcfs_session *se, struct zcfs_handle *h);
/* After INIT: tells zcfsd (broker) whether passthrough was negotiated. */
void passthrough_announce(struct zcfs_session *se);

#endif
