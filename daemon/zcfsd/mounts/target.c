/* Publish targets: the checks of a target path, its directory opened
 * without following symlinks, the fuse mount and bind mounts made on the
 * checked fd, and the unmount of one target by what was mounted there. */
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "common/bdi.h"
#include "common/log.h"
#include "common/names.h"
#include "common/max_read.h"
#include "common/mountinfo.h"
#include "common/parse.h"
#include "common/walk_nofuse.h"
#include "mounts.h"

/* Control characters would split log lines and the status table; a
 * component longer than NAME_MAX or a path beyond PATH_MAX can never be
 * a mount point (and made mkdir answer INTERNAL). */
int zcfsd_target_check_shape(const char *target, struct zcfs_err *e)
{
	size_t comp = 0, i;

	if (!target)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.target is required");
	for (i = 0; target[i]; i++) {
		unsigned char ch = (unsigned char)target[i];
		if (ch < 0x20 || ch == 0x7f)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "target contains a control character (byte %zu)", i);
		comp = ch == '/' ? 0 : comp + 1;
		if (comp > NAME_MAX)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -ENAMETOOLONG,
					 "target has a component longer than %d bytes", NAME_MAX);
	}
	if (i >= PATH_MAX)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -ENAMETOOLONG,
				 "target longer than %d bytes", PATH_MAX - 1);
	if (!path_is_normalized_absolute(target))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "target '%s' is not a normalized absolute path", target);
	return 0;
}

int zcfsd_target_check(const struct policy_tenant *t, const char *target,
			       struct zcfs_err *e)
{
	if (zcfsd_target_check_shape(target, e) < 0)
		return -EINVAL;
	for (size_t i = 0; i < t->n_prefixes; i++)
		if (path_is_under(target, t->prefixes[i]))
			return 0;
	return zcfs_fail(e, ZCFS_PERMISSION_DENIED, -EPERM,
			 "target '%s' is not under any allowed_target_prefixes of tenant '%s'", target,
			 t->name);
}

/* A target changed under a publish (removed, created, unmounted or
 * swapped at the same moment by someone else) is worth a retry:
 * UNAVAILABLE; anything else is INTERNAL. */
static enum zcfs_code race_code(int r)
{
	return r == -ENOENT || r == -ESTALE || r == -EEXIST || r == -EBUSY || r == -ENOTDIR ?
		ZCFS_UNAVAILABLE : ZCFS_INTERNAL;
}

/* A walk of TARGET that failed with R: a symlink or a FUSE directory on
 * the way (HIT: which mount) is the caller's to change. */
static int walk_fail(const char *target, int r, const char *hit, struct zcfs_err *e)
{
	if (r == -ELOOP)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, r, "target '%s' contains a symlink", target);
	if (r == -EXDEV)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r,
				 "target '%s' is below a FUSE mount (%s): zcfsd looks nothing up in a FUSE "
				 "file system, whose server could make it wait; unmount it or use another "
				 "target", target, hit);
	if (r == -ENOTDIR)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, r, "target '%s' is not a directory", target);
	return zcfs_fail(e, race_code(r), r, "target '%s': %s", target, strerror(-r));
}

/* O_PATH fd of the target directory; creates the last component when
 * only it is missing (*created tells the caller to remove it on error).
 * Walked from / without symlinks and without looking a name up in a FUSE
 * directory (common/walk_nofuse.h); the target itself may be a mount of one. */
int zcfsd_target_open(const char *target, bool *created, struct zcfs_err *e)
{
	_cleanup_close_ int pfd = -1;
	char hit[4200] = "";
	const char *leaf = NULL;
	int fd;

	*created = false;
	fd = nofuse_open(target, O_PATH | O_DIRECTORY, hit, sizeof(hit));
	if (fd >= 0)
		return fd;
	if (fd != -ENOENT)
		return walk_fail(target, fd, hit, e);
	pfd = nofuse_open_parent(target, &leaf, hit, sizeof(hit));
	if (pfd == -ENOENT)
		return zcfs_fail(e, ZCFS_NOT_FOUND, pfd, "target's parent of %s: %s", target, strerror(-pfd));
	if (pfd < 0)
		return walk_fail(target, pfd, hit, e);
	if (mkdirat(pfd, leaf, 0750) < 0)
		return zcfs_fail(e, race_code(-errno), -errno, "mkdir %s: %m", target);
	*created = true;
	fd = RET_NERRNO(openat(pfd, leaf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0) {
		(void)unlinkat(pfd, leaf, AT_REMOVEDIR);
		*created = false;
		return zcfs_fail(e, race_code(fd), fd, "open %s: %s", target, strerror(-fd));
	}
	return fd;
}

/* A tenant who can write a parent of the target may have swapped a
 * component for a symlink since it was made: rmdir(target) as root would
 * then remove an empty directory wherever the symlink leads. */
void zcfsd_target_remove_created(const char *target)
{
	int r = rmdir_nofollow(target);

	if (r < 0 && r != -ENOENT)
		log_warn("event=target-left target=\"%s\" reason=\"%s\"", target,
			 r == -ELOOP ? "a symlink on the way" : r == -EXDEV ? "a FUSE mount on the way" :
			 strerror(-r));
}

static int fd_path(int fd, char *buf, size_t len)
{
	return snprintf(buf, len, "/proc/self/fd/%d", fd) < (int)len ? 0 : -ENAMETOOLONG;
}

/* Sets or clears MOUNT_ATTR_RDONLY on MFD's mount only: the superblock
 * and the volume's other targets keep theirs (per-target read-only). */
static int set_mount_ro(int mfd, bool ro)
{
	struct mount_attr a = {
		.attr_set = ro ? MOUNT_ATTR_RDONLY : 0,
		.attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY,
	};

	return RET_NERRNO(mount_setattr(mfd, "", AT_EMPTY_PATH, &a, sizeof(a)));
}

/* The first target: a new fuse connection mounted on the target fd,
 * read-only for this target alone when RO asks for it. */
int zcfsd_mount_fuse(struct zcfsd *d, struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		      bool uring, struct zcfs_err *e)
{
	_cleanup_close_ int fuse_fd = -1, mfd = -1;
	char opts[256], tpath[64], source[160];
	int r;

	fuse_fd = RET_NERRNO(open("/dev/fuse", O_RDWR | O_CLOEXEC));
	if (fuse_fd < 0)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, fuse_fd, "open /dev/fuse: %s", strerror(-fuse_fd));
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,default_permissions,allow_other,max_read=%u",
		 fuse_fd, zcfs_mount_max_read(v->max_write, uring));
	snprintf(source, sizeof(source), "zcfs:%s", v->id);
	(void)fd_path(tfd, tpath, sizeof(tpath));
	/* Mounting on /proc/self/fd/N mounts on what we checked, even if
	 * a path component was swapped since. */
	if (mount(source, tpath, "fuse.zcfs", MS_NOSUID | MS_NODEV | (v->read_only ? MS_RDONLY : 0),
		  opts) < 0)
		return zcfs_fail(e, race_code(-errno), -errno, "mount %s: %m", target);
	r = zcfsd_mount_conn_at(target, &v->conn);
	if (r < 0) {
		(void)umount2(tpath, MNT_DETACH);
		return zcfs_fail(e, race_code(r), r, "mount %s not found in mountinfo (unmounted or moved meanwhile?)",
				 target);
	}
	/* The server caches writes back (exclusive volume); without this its
	 * bdi keeps FUSE's strict 1% dirty share and throttles at a few MiB. */
	if (d->policy->dirty_limit) {
		r = bdi_set_max_bytes(0, v->conn, d->policy->dirty_limit);
		if (r < 0)
			log_warn("event=dirty-limit volume=%s conn=%u error=\"%s\"", v->id, v->conn, strerror(-r));
	}
	/* MS_RDONLY would make the superblock read-only, and with it every
	 * later bind: a read-only first target is a per-mount flag. Nobody
	 * has the target before publish returns, so setting it now is safe. */
	if (ro && !v->read_only) {
		mfd = nofuse_open(target, O_PATH | O_DIRECTORY, NULL, 0);
		r = mfd < 0 ? mfd : set_mount_ro(mfd, true);
		if (r < 0) {
			(void)umount2(tpath, MNT_DETACH);
			return zcfs_fail(e, ZCFS_INTERNAL, r, "making %s read-only: %s", target, strerror(-r));
		}
	}
	v->fuse_fd = TAKE_FD(fuse_fd);
	return 0;
}

/* A further target: a detached clone of the first target's mount gets
 * this target's read-only flag (a clone inherits the first target's)
 * before it is attached, so it never appears with the wrong one. */
int zcfsd_mount_bind(struct zcfsd_volume *v, int tfd, const char *target, bool ro,
		       struct zcfs_err *e)
{
	_cleanup_close_ int sfd = -1, tree = -1;
	char hit[4200] = "";
	unsigned conn;
	int r;

	sfd = nofuse_open(v->targets[0], O_PATH | O_DIRECTORY, hit, sizeof(hit));
	if (sfd == -EXDEV)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, sfd,
				 "volume '%s' is mounted at %s, below a FUSE mount (%s) zcfsd looks nothing "
				 "up in; unmount that first", v->id, v->targets[0], hit);
	if (sfd < 0 || zcfsd_mount_conn_at(v->targets[0], &conn) < 0 || conn != v->conn)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				 "volume '%s' is recorded at %s but no longer mounted there (unmounted behind "
				 "zcfsd's back); unpublish it there, then publish again", v->id, v->targets[0]);
	tree = RET_NERRNO(open_tree(sfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
	if (tree < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, tree, "bind mount %s: open_tree: %s", target,
				 strerror(-tree));
	r = set_mount_ro(tree, ro);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "bind mount %s: read-%s: %s", target,
				 ro ? "only" : "write", strerror(-r));
	if (move_mount(tree, "", tfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return zcfs_fail(e, race_code(-errno), -errno, "bind mount %s: %m", target);
	return 0;
}

/* Publishing a target again succeeds when it is what is asked for: the
 * top mount there is this volume's connection (fuse.zcfs on 0:CONN, source
 * zcfs:ID: a connection number is reused once its superblock is gone), with
 * the read-only flag asked. A foreign mount over or instead of it (another
 * file system, another zcfs connection) or none at all is not the volume:
 * the caller must not take it for a publish done. The kernel's per-mount
 * flag is the record: it survives zcfsd restarts. */
int zcfsd_target_same(const struct zcfsd_volume *v, const char *target, bool ro,
			     struct zcfs_err *e)
{
	struct mountinfo_top m;
	int r = mountinfo_top_at(target, &m);

	if (r == -ENOENT)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r,
				 "volume '%s' is recorded at %s but nothing is mounted there any more "
				 "(unmounted behind zcfsd's back); unpublish it there, then publish again",
				 v->id, target);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "reading the mount table: %s", strerror(-r));
	if (strcmp(m.fstype, "fuse.zcfs") || m.major != 0 || m.minor != v->conn ||
	    strncmp(m.source, "zcfs:", 5) || strcmp(m.source + 5, v->id))
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EMEDIUMTYPE,
				 "volume '%s' is recorded at %s but the mount on top there is %s %u:%u, "
				 "not the volume (connection 0:%u): something was mounted over it or in its "
				 "place; unmount that first", v->id, target, m.fstype, m.major, m.minor, v->conn);
	if (m.read_only == ro)
		return 0;
	return zcfs_fail(e, ZCFS_ALREADY_EXISTS, -EEXIST,
			 "volume '%s' is already published at %s read-%s; asked read-%s", v->id, target,
			 m.read_only ? "only" : "write", ro ? "only" : "write");
}

/* Unmounts TARGET's mount of our connection (unmount.c: by mount
 * id, never by re-resolving the string). 0 once it is gone. */
int zcfsd_target_unmount(struct zcfsd_volume *v, const char *target, bool lazy)
{
	const char **keep = calloc(v->n_targets ? v->n_targets : 1, sizeof(*keep));
	size_t n = 0;
	int r;

	if (!keep)
		return -ENOMEM;
	for (size_t i = 0; i < v->n_targets; i++)
		if (strcmp(v->targets[i], target))
			keep[n++] = v->targets[i];
	r = zcfsd_unmount_target(v->conn, target, keep, n, lazy, v->id);
	free(keep);
	if (r < 0)
		log_err("event=unmount-failed volume=%s target=%s error=\"%s\"", v->id, target, strerror(-r));
	return r;
}

/* Every target (binds first) and whatever else of the connection is
 * mounted; the server is left running. */
int zcfsd_volume_unmount_all(struct zcfsd_volume *v, bool lazy)
{
	/* Held to the end: the superblock, and with it the connection
	 * number, stays ours, so the abort below cannot hit the next mount
	 * to get that number (an unmount by number would not either). */
	_cleanup_close_ int pin = v->conn ? zcfsd_conn_pin(v->conn, v->id) : -1;
	int r;

	/* Binds first: the fuse mount at targets[0] goes last. A target
	 * whose mount cannot be removed stays recorded (so does the server
	 * and its budget), and a later unpublish tries again. */
	while (v->n_targets) {
		r = zcfsd_target_unmount(v, v->targets[v->n_targets - 1], lazy);
		if (r < 0 && !lazy)
			return r;
		zcfsd_volume_remove_target(v, v->n_targets - 1);
	}
	/* Whatever else of the connection is mounted (a target moved, a
	 * bind made behind our back) goes too. */
	if (v->conn) {
		r = zcfsd_unmount_conn(v->conn, lazy, v->id);
		if (r < 0 && !lazy) {
			log_err("event=unmount-failed volume=%s conn=%u error=\"%s\" effect=\"stays published\"",
				v->id, v->conn, strerror(-r));
			return r;
		}
	}
	/* The pin keeps the superblock alive past the last unmount: end the
	 * connection (a detached busy mount then answers ENOTCONN, a lazy
	 * cleanup leaves no live mount to a forgotten connection, the
	 * server's reads end). */
	if (pin >= 0)
		(void)zcfsd_conn_abort(v->conn);
	return 0;
}
