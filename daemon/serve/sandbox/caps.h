/* CAP_SYS_ADMIN in zcfs-serve. zcfsd starts a server with it only for
 * zero-copy (ADD_QUEUE with ZERO_COPY checks it); the server gives it up
 * from every thread once its rings are registered, or as soon as
 * zero-copy turns out impossible, checks that it is gone and logs one
 * line (docs/security.md). */
#ifndef ZCFS_CAPS_H
#define ZCFS_CAPS_H

#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include "daemon/serve/core/options.h"
#include "common/util.h"

/* Whether the capability is there for zero-copy alone: a server that
 * mounts and unmounts by itself, or registers backing files itself
 * (passthrough without a broker), needs it all along. */
bool caps_only_for_zero_copy(const struct zcfs_options *o);
/* CAP_SYS_ADMIN in the calling thread's permitted set. */
bool caps_have_sys_admin(void);
/* Before the sandbox, when the process has the capability: keeps
 * /proc/self/task open, which Landlock would not let it open later, to
 * find every thread when dropping. */
int caps_prepare(const struct zcfs_options *o) _must_check_;
bool caps_drop_ready(void);
/* A fresh stream over the thread list (caps_prepare's fd, else opened). */
DIR *caps_open_tasks(void);
/* Drops CAP_SYS_ADMIN (every capability when it is all the server was
 * given) from the calling thread only. */
int caps_drop_self(void) _must_check_;
/* For a thread that should take no signal: takes out of set the one
 * caps_drop_sys_admin sends every thread, so the drop reaches it too. */
void caps_keep_drop_signal(sigset_t *set);
/* Drops CAP_SYS_ADMIN from every thread, verifies with capget(2) that
 * no thread keeps it and logs "caps: CAP_SYS_ADMIN dropped (WHY) ...".
 * 0 when done or there was nothing to drop; -errno: the server must
 * not serve. */
int caps_drop_sys_admin(const char *why) _must_check_;

#endif
