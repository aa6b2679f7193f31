/* Unmounting what zcfsd mounted, never a path string resolved again.
 *
 * A target path is only a hint: a directory on the way may have been
 * renamed or swapped for a symlink by someone who owns it. So a mount is
 * opened (O_PATH, no symlink anywhere on the way), the fd's mount id is
 * read from /proc/self/fdinfo (the VFS answers, never the FUSE server) and
 * checked against mountinfo to be a mount of this volume's connection; the
 * umount then goes through /proc/self/fd/N, i.e. exactly the mount the fd
 * pins, which cannot be reused under another id while the fd is open. A
 * mount that cannot be reached by its recorded path any more is found by
 * its connection in mountinfo, at wherever it is now. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include "daemon/common/log.h"
#include "daemon/common/openat2.h"
#include "daemon/common/mountinfo.h"
#include "mounts.h"

struct conn_mount {
	int id;
	char path[4096];
};

/* Every mount of fuse connection CONN (its superblock is 0:CONN), in
 * mountinfo order (later ones on top of earlier ones). ID >= 0: only
 * that mount. Returns the count or -errno. */
static int conn_mounts(unsigned conn, int id, struct conn_mount **ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	struct conn_mount *list = NULL, *n;
	size_t cap = 0;
	int count = 0;

	*ret = NULL;
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], fstype[64];
		unsigned maj, min;
		const char *sep;
		int mid;

		if (sscanf(line, "%d %*d %u:%u %*s %4095s", &mid, &maj, &min, mnt) != 4 || maj != 0 ||
		    min != conn || (id >= 0 && mid != id))
			continue;
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %63s", fstype) != 1 || strcmp(fstype, "fuse.zcfs"))
			continue;
		n = realloc(list, (size_t)(count + 1) * sizeof(*list));
		if (!n) {
			free(list);
			return -ENOMEM;
		}
		list = n;
		mountinfo_unescape(mnt);
		list[count].id = mid;
		snprintf(list[count].path, sizeof(list[count].path), "%s", mnt);
		count++;
	}
	*ret = list;
	return count;
}

static int fd_mount_id(int fd)
{
	char path[64], line[128];
	_cleanup_fclose_ FILE *f = NULL;
	int id;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			return id;
	return -ENODATA;
}

/* Unmounts the mount PATH leads to, if it is one of CONN's (and mount
 * WANT_ID, if >= 0). -ENOENT/-ELOOP/...: the path leads nowhere useful;
 * -EMEDIUMTYPE: what is there is not ours. */
static int unmount_at(unsigned conn, const char *path, int want_id, bool lazy, const char *volume)
{
	_cleanup_close_ int fd = open_nofollow(path, O_PATH | O_DIRECTORY);
	_cleanup_free_ struct conn_mount *m = NULL;
	char self[64];
	int id, r;

	if (fd < 0)
		return fd;
	id = fd_mount_id(fd);
	if (id < 0)
		return id;
	if (want_id >= 0 && id != want_id)
		return -EMEDIUMTYPE;
	/* The fd pins the mount: its id names it until we close the fd. */
	r = conn_mounts(conn, id, &m);
	if (r <= 0)
		return r < 0 ? r : -EMEDIUMTYPE;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (!lazy && umount2(self, 0) == 0)
		return 0;
	if (!lazy)
		log_warn("event=unmount-busy volume=%s target=%s error=%m action=detach", volume, path);
	/* EINVAL: the fd is inside our mount, not its root (a path that was
	 * moved into it): nothing is unmounted. */
	return umount2(self, MNT_DETACH) < 0 ? -errno : 0;
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
	n = conn_mounts(conn, -1, &m);
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
		log_info("event=unmount-moved volume=%s target=%s found_at=%s mount_id=%d result=%s", volume,
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
		int n = conn_mounts(conn, -1, &m);

		if (n <= 0)
			return n;
		if (round == 3)
			return -EBUSY;
		for (int i = n - 1; i >= 0; i--) {
			int r = unmount_at(conn, m[i].path, m[i].id, lazy, volume);
			if (r < 0)
				log_warn("event=unmount-failed volume=%s target=%s mount_id=%d error=\"%s\"",
					 volume, m[i].path, m[i].id, strerror(-r));
		}
	}
}
