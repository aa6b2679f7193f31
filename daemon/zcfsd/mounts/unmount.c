/* Unmounting what zcfsd mounted, never a path string resolved again.
 *
 * A target path is only a hint: a directory on the way may have been
 * renamed or swapped for a symlink by someone who owns it. So the
 * target's parent is opened (O_PATH, no symlink on the way) and the mount
 * its leaf leads to checked (statx: the VFS answers, never the server) to
 * be the root of a mount of this volume's connection that mountinfo lists
 * as fuse.zcfs of source zcfs:ID made by root. The
 * umount goes through /proc/self/fd/PARENT/LEAF with UMOUNT_NOFOLLOW: the
 * parent is the one the fd pins, a leaf turned symlink is not followed,
 * and a mount point cannot be renamed or removed in this namespace
 * (EBUSY), so the leaf still leads to the mount checked. Nothing is
 * checked by number after the umount: the connection number and mount id
 * are the next mount's. No fd of ours may pin the mount itself:
 * the O_PATH fd the umount used to go through made every umount2 EBUSY
 * and each unpublish a lazy detach. Only a mount really in use is
 * detached, through an fd on it checked to be the same mount id.
 * move_mount of the mount by fd to a private place first is no option:
 * the kernel refuses to move a mount out of a shared parent (systemd
 * makes every mount shared). A mount not reachable by its recorded path
 * any more is found by its connection in mountinfo, wherever it is now. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/log.h"
#include "common/walk_nofuse.h"
#include "common/mountinfo.h"
#include "mounts.h"

#define VNAME(volume) ((volume) ? (volume) : "orphan")

struct conn_mount {
	int id;
	char path[4096];
};

/* Is the mount zcfsd's mount of VOLUME (NULL: of any volume)? Connection
 * numbers (anonymous device minors) and mount ids are handed to the next
 * mount anywhere once ours is gone, so neither alone names our mount: its
 * source is zcfs:VOLUME and user_id=0, which only a root mount can carry
 * (fusermount3 writes the caller's uid). */
static bool ours(const char *source, const char *opts, const char *volume)
{
	return !strncmp(source, "zcfs:", 5) && (!volume || !strcmp(source + 5, volume)) &&
	       strstr(opts, ",user_id=0,");
}

struct conn_walk {
	unsigned conn;
	int id;
	const char *volume;
	struct conn_mount *list;
	int count;
};

static int conn_mount_line(const struct mountinfo_line *l, void *arg)
{
	struct conn_walk *w = arg;
	struct conn_mount *n;

	if (l->major != 0 || l->minor != w->conn || (w->id >= 0 && l->id != w->id) ||
	    strcmp(l->fstype, "fuse.zcfs") || !ours(l->source, l->super_opts, w->volume))
		return 0;
	n = realloc(w->list, (size_t)(w->count + 1) * sizeof(*w->list));
	if (!n)
		return -ENOMEM;
	w->list = n;
	n[w->count].id = l->id;
	snprintf(n[w->count].path, sizeof(n[w->count].path), "%s", l->mnt);
	w->count++;
	return 0;
}

/* Every mount of fuse connection CONN (its superblock is 0:CONN) that is
 * zcfsd's of VOLUME, in mountinfo order (later ones on top of earlier
 * ones). ID >= 0: only that mount. Returns the count or -errno. */
static int conn_mounts(unsigned conn, int id, const char *volume, struct conn_mount **ret)
{
	struct conn_walk w = { .conn = conn, .id = id, .volume = volume };
	int r = mountinfo_each(conn_mount_line, &w);

	if (r < 0) {
		free(w.list);
		w.list = NULL;
	}
	*ret = w.list;
	return r < 0 ? r : w.count;
}

/* The id of the mount DFD/NAME leads to if it is the root of a mount of
 * CONN (and mount WANT_ID, if >= 0) that mountinfo lists as VOLUME's;
 * -EMEDIUMTYPE if it is not ours. Nothing of FUSE's attributes is asked
 * for (and DONT_SYNC): the server is never asked. */
static int mount_of_conn(unsigned conn, int dfd, const char *name, int flags, int want_id,
			 const char *volume)
{
	_cleanup_free_ struct conn_mount *m = NULL;
	struct statx stx;
	int r;

	if (statx(dfd, name, flags | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID) || !(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return -EOPNOTSUPP;
	if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || stx.stx_dev_major != 0 ||
	    stx.stx_dev_minor != conn || stx.stx_mnt_id > INT_MAX ||
	    (want_id >= 0 && stx.stx_mnt_id != (uint64_t)want_id))
		return -EMEDIUMTYPE;
	r = conn_mounts(conn, (int)stx.stx_mnt_id, volume, &m);
	if (r <= 0)
		return r < 0 ? r : -EMEDIUMTYPE;
	return (int)stx.stx_mnt_id;
}

/* PATH's parent opened without a symlink on the way and without looking
 * a name up in a FUSE directory (common/walk_nofuse.h); *leaf in PATH. */
static int open_parent(const char *path, const char **leaf, const char *volume)
{
	char hit[4200] = "";
	int r = nofuse_open_parent(path, leaf, hit, sizeof(hit));

	if (r == -EXDEV)
		log_warn("event=unmount-refused volume=%s target=%s reason=\"below a FUSE mount: %s\"",
			 VNAME(volume), path, hit);
	return r;
}

/* Lazily detaches mount ID at PFD/LEAF through an fd that pins it. */
static int detach(unsigned conn, int pfd, const char *leaf, int id, const char *volume)
{
	_cleanup_close_ int fd = RET_NERRNO(openat(pfd, leaf, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	char self[64];
	int r;

	if (fd < 0)
		return fd;
	r = mount_of_conn(conn, fd, "", AT_EMPTY_PATH, id, volume);
	if (r < 0)
		return r;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	return RET_NERRNO(umount2(self, MNT_DETACH));
}

/* Unmounts the mount PATH leads to, if it is one of CONN's (and mount
 * WANT_ID, if >= 0): for real, or detached when LAZY or really busy.
 * -ENOENT/-ELOOP/...: the path leads nowhere useful; -EMEDIUMTYPE: what
 * is there is not ours. */
static int unmount_at(unsigned conn, const char *path, int want_id, bool lazy, const char *volume)
{
	_cleanup_close_ int pfd = -1;
	const char *leaf = NULL;
	char at[96 + NAME_MAX];
	int id;

	pfd = open_parent(path, &leaf, volume);
	if (pfd < 0)
		return pfd;
	id = mount_of_conn(conn, pfd, leaf, AT_SYMLINK_NOFOLLOW, want_id, volume);
	if (id < 0 || lazy)
		return id < 0 ? id : detach(conn, pfd, leaf, id, volume);
	if (snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", pfd, leaf) >= (int)sizeof(at))
		return -ENAMETOOLONG;
	if (umount2(at, UMOUNT_NOFOLLOW) == 0)
		return 0;	/* its numbers may name another mount from now on */
	if (errno != EBUSY)
		return -errno;
	log_warn("event=unmount-busy volume=%s target=%s error=%m action=detach", VNAME(volume), path);
	return detach(conn, pfd, leaf, id, volume);
}

static bool kept(const char *path, const char *const *keep, size_t n_keep)
{
	for (size_t i = 0; i < n_keep; i++)
		if (!strcmp(path, keep[i]))
			return true;
	return false;
}

int zcfsd_unmount_target(unsigned conn, const char *target, const char *const *keep, size_t n_keep,
			 bool lazy, const char *volume)
{
	_cleanup_free_ struct conn_mount *m = NULL;
	int r = unmount_at(conn, target, -1, lazy, volume), n, left = 0, i;

	if (r == 0)
		return 0;
	/* Not reachable at its path (a parent renamed, a component swapped
	 * for a symlink, something mounted over it): the connection's
	 * mounts that are not another target of the volume. */
	n = conn_mounts(conn, -1, volume, &m);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		left += !kept(m[i].path, keep, n_keep);
	if (left == 0)
		return 0;	/* gone already */
	if (left > 1 && n_keep)
		return -ENOTUNIQ;	/* cannot tell which one was this target */
	for (i = n - 1, r = 0; i >= 0; i--) {
		int k;
		if (kept(m[i].path, keep, n_keep))
			continue;
		k = unmount_at(conn, m[i].path, m[i].id, lazy, volume);
		log_info("event=unmount-moved volume=%s target=%s found_at=%s mount_id=%d result=%s", VNAME(volume),
			 target, m[i].path, m[i].id, k ? strerror(-k) : "unmounted");
		if (k < 0 && r == 0)
			r = k;
	}
	return r;
}

int zcfsd_unmount_conn(unsigned conn, bool lazy, const char *volume)
{
	/* A few rounds: a mount moved while we walked is found again. */
	for (int round = 0;; round++) {
		_cleanup_free_ struct conn_mount *m = NULL;
		int n = conn_mounts(conn, -1, volume, &m);

		if (n <= 0)
			return n;
		if (round == 3)
			return -EBUSY;
		for (int i = n - 1; i >= 0; i--) {
			int r = unmount_at(conn, m[i].path, m[i].id, lazy, volume);
			if (r < 0)
				log_warn("event=unmount-failed volume=%s target=%s mount_id=%d error=\"%s\"",
					 VNAME(volume), m[i].path, m[i].id, strerror(-r));
		}
	}
}

bool zcfsd_conn_ours(unsigned conn, const char *volume)
{
	_cleanup_free_ struct conn_mount *m = NULL;

	return conn_mounts(conn, -1, volume, &m) > 0;
}

/* FD (a detached clone) holds a superblock; 0:CONN names only one live
 * superblock, so a mount of it in mountinfo that is VOLUME's makes it ours. */
static bool pinned_ours(int fd, unsigned conn, const char *volume)
{
	struct statx stx;

	return statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	       stx.stx_dev_major == 0 && stx.stx_dev_minor == conn && zcfsd_conn_ours(conn, volume);
}

int zcfsd_conn_pin(unsigned conn, const char *volume)
{
	_cleanup_free_ struct conn_mount *m = NULL;
	int n = conn_mounts(conn, -1, volume, &m);

	for (int i = n - 1; i >= 0; i--) {
		_cleanup_close_ int pfd = -1, fd = -1;
		const char *leaf = NULL;

		pfd = open_parent(m[i].path, &leaf, volume);
		if (pfd < 0)
			continue;
		fd = RET_NERRNO(open_tree(pfd, leaf, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW));
		if (fd >= 0 && pinned_ours(fd, conn, volume))
			return TAKE_FD(fd);
	}
	return n < 0 ? n : -ENOENT;
}
