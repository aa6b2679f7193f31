/* Keeping the server's descriptors below RLIMIT_NOFILE. Every inode the
 * kernel knows holds an O_PATH fd here, and with long cache timeouts the
 * kernel forgets inodes only under memory pressure, so a volume with
 * more files than the limit would run into EMFILE. Past a high mark a
 * thread asks the kernel to drop unused inodes (FUSE_NOTIFY_PRUNE, 7.45);
 * each one it evicts comes back as a FORGET, which closes its fd. */
#ifndef ZCFS_PRUNE_H
#define ZCFS_PRUNE_H

#include <stddef.h>
#include "common/util.h"

struct zcfs_session;
struct zcfs_prune;

/* Marks from RLIMIT_NOFILE: prune above 7/8 of it, down to 3/4. */
void prune_marks(size_t nofile, size_t *high, size_t *low);
/* Starts the pruning thread (after INIT: needs the kernel's protocol). */
int prune_start(struct zcfs_session *se, struct zcfs_prune **ret) _must_check_;
/* After the server took a new inode (or met EMFILE): wakes the thread
 * when the table is past the high mark. NULL-safe and cheap. */
void prune_check(struct zcfs_prune *p, size_t inodes);
/* A request failed with EMFILE: wakes the thread and waits (50 ms at
 * most) for the table to drop below the high mark; 0 if it did, so
 * that the request is worth one more try. */
int prune_wait(struct zcfs_prune *p);
/* After FORGETs (inodes = the table's count now): wakes the requests
 * in prune_wait once it is below the high mark. NULL-safe and cheap. */
void prune_forgot(struct zcfs_prune *p, size_t inodes);
void prune_stop(struct zcfs_prune *p);

#endif
