/* Mount mechanics: publish targets (checks, the fuse mount and binds made
 * on checked fds, unmount by what was mounted), fuse connections, a
 * volume's storage directory. Below the server and lifecycle layers. */
#ifndef ZCFSD_MOUNTS_H
#define ZCFSD_MOUNTS_H

#include <stdint.h>
#include "daemon/zcfsd/model/model.h"

/* Opens PATH refusing any symlink on the way (openat2 RESOLVE_NO_SYMLINKS). */

/* target.c: a target's string (given, no control characters,
 * NAME_MAX/PATH_MAX, normalized absolute); for T also under one of its
 * prefixes. */
int zcfsd_target_check_shape(const char *target, struct zcfs_err *e);
int zcfsd_target_check(const struct policy_tenant *t, const char *target, struct zcfs_err *e);
/* O_PATH fd of the target directory; creates the last component when
 * only it is missing (*created tells the caller to remove it on error). */
int zcfsd_target_open(const char *target, bool *created, struct zcfs_err *e);
/* Removes the target directory zcfsd_target_open made, its path resolved
 * without any symlink: one that cannot be (a component swapped since)
 * stays, logged event=target-left. */
void zcfsd_target_remove_created(const char *target);
/* The first target: a new fuse connection (v->fuse_fd, v->conn) mounted
 * on the target fd TFD, read-only for this target alone when RO. */
int zcfsd_mount_fuse(struct zcfsd *d, struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		     bool uring, struct zcfs_err *e);
/* A further target: a bind of the first target's mount with its own RO flag. */
int zcfsd_mount_bind(struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		     struct zcfs_err *e);
/* Publishing a target again succeeds when its top mount is the volume's
 * connection with the flag asked; anything else there fails. */
int zcfsd_target_same(const struct zcfsd_volume *v, const char *target, bool ro,
		      struct zcfs_err *e);
/* Unmounts TARGET's mount of V's connection; 0 once it is gone. */
int zcfsd_target_unmount(struct zcfsd_volume *v, const char *target, bool lazy);

/* fuse_conn.c: the fuse connection (device minor) mounted at PATH on
 * top, or -ENOENT; the fusectl abort of one. */
int zcfsd_mount_conn_at(const char *path, unsigned *conn);
int zcfsd_conn_abort(unsigned conn);
int zcfsd_fusectl_ensure(void);
bool zcfsd_conn_exists(unsigned conn);

/* unmount.c: unmount TARGET's mount of fuse connection CONN, found by
 * mount id (also after a rename or symlink swap on its path), never
 * another mount; KEEP are the volume's other targets. 0 when no such
 * mount is left, -ENOTUNIQ when several moved mounts could be it. */
int zcfsd_unmount_target(unsigned conn, const char *target, const char *const *keep, size_t n_keep,
			 bool lazy, const char *volume);
/* Every mount of CONN; 0 when none is left, -EBUSY otherwise. Only mounts
 * whose source is zcfs:VOLUME (any zcfs: volume if NULL, orphans) made by
 * root count: a connection number is reused once its superblock is gone. */
int zcfsd_unmount_conn(unsigned conn, bool lazy, const char *volume);

/* A mount of CONN that is VOLUME's (source zcfs:VOLUME, root's) is in
 * mountinfo now. A connection number alone names nothing once its
 * superblock is gone: the next mount anywhere gets it, so a fusectl abort
 * by number is only done while this holds or a pin is held. */
bool zcfsd_conn_ours(unsigned conn, const char *volume);
/* A detached clone of such a mount: while its fd is open the superblock,
 * and with it the number, stays ours (it keeps no attached mount busy).
 * -ENOENT when no mount of VOLUME's is found. */
int zcfsd_conn_pin(unsigned conn, const char *volume);

/* syncfs.c: the pidfd of the child PID just forked, or -errno with the
 * child killed and reaped. */
int zcfsd_child_pidfd(pid_t pid, int *pidfd) _must_check_;
/* syncfs(2) of the mount at target, waiting at most timeout_ms. */
int zcfsd_syncfs_bounded(struct zcfsd *d, const char *target, int timeout_ms) _must_check_;
/* The same in steps, for the event loop: a child started on target
 * (*pidfd, watch it for POLLIN); then its result: 0, -EIO, -EINPROGRESS
 * while it runs and !give_up, -ETIMEDOUT when given up on (killed, reaped
 * later: zcfsd_reap_later). pidfd is consumed unless -EINPROGRESS. */
int zcfsd_syncfs_start(const char *target, int *pidfd) _must_check_;
int zcfsd_syncfs_finish(struct zcfsd *d, int pidfd, bool give_up) _must_check_;

/* storage.c: STORAGE_ROOT/ID owned by the tenant 0700 under a root:GID
 * 0710 root (*created: made now); opened without following symlinks;
 * removed (an empty one, or the whole tree without crossing mounts). */
int zcfsd_storage_ensure(const struct policy_tenant *t, const char *id, bool *created,
			 struct zcfs_err *e);
int zcfsd_storage_open(const struct policy_tenant *t, const char *id);
void zcfsd_storage_remove_dir(const struct policy_tenant *t, const char *id);
int zcfsd_storage_delete(const struct policy_tenant *t, const char *id);
/* The same in a child (the tree may be large, or shaped by the tenant to
 * be slow): started (*pidfd, watch it for POLLIN), then its result: 0,
 * -errno of the removal, -EINTR if killed, -EINPROGRESS while it runs. */
int zcfsd_storage_delete_start(const struct policy_tenant *t, const char *id, int *pidfd) _must_check_;
int zcfsd_storage_delete_finish(int pidfd) _must_check_;
/* Free bytes of the file system storage_root is (or will be) on. */
int zcfsd_storage_available(const struct policy_tenant *t, uint64_t *ret) _must_check_;

/* target.c: every target of V unmounted (binds first, the fuse mount
 * last) and whatever else of its connection is mounted, then the
 * connection aborted; the server is left running. A target that cannot
 * be unmounted stays recorded (not with LAZY). */
int zcfsd_volume_unmount_all(struct zcfsd_volume *v, bool lazy) _must_check_;

#endif
