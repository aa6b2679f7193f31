/* SOURCE on a detached mount with the client mount's flags (source_mount.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "daemon/serve/backend/source_mount.h"

int source_mount_attrs(int *root_fd, unsigned long mount_flags, bool read_only)
{
	struct mount_attr a = { 0 };
	int tree;

	if (mount_flags & MS_NOATIME)
		a.attr_set |= MOUNT_ATTR_NOATIME;
	else if (mount_flags & MS_STRICTATIME)
		a.attr_set |= MOUNT_ATTR_STRICTATIME;
	if (a.attr_set)
		a.attr_clr = MOUNT_ATTR__ATIME;	/* the atime mode is one field */
	if (mount_flags & MS_NODIRATIME)
		a.attr_set |= MOUNT_ATTR_NODIRATIME;
	if (read_only)
		a.attr_set |= MOUNT_ATTR_RDONLY;
	if (!a.attr_set)
		return 0;
	/* Recursive: mounts below SOURCE stay visible, with the same flags. */
	tree = open_tree(*root_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return -errno;
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
		int r = -errno;
		safe_close(tree);
		return r;
	}
	safe_close(*root_fd);
	*root_fd = tree;
	return 1;
}

unsigned long source_mount_atime_flags(int root_fd)
{
	struct statvfs sv;

	if (fstatvfs(root_fd, &sv) < 0)
		return ST_RELATIME;
	return sv.f_flag & (ST_NOATIME | ST_NODIRATIME | ST_RELATIME | ST_RDONLY);
}

static bool ts_before_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

bool source_read_moves_atime(unsigned long st_flags, const struct stat *st, const struct timespec *now)
{
	if (st_flags & (ST_NOATIME | ST_RDONLY))
		return false;
	if (S_ISDIR(st->st_mode) && (st_flags & ST_NODIRATIME))
		return false;
	if (st->st_atim.tv_sec == now->tv_sec && st->st_atim.tv_nsec == now->tv_nsec)
		return false;
	if (!(st_flags & ST_RELATIME))
		return true;	/* strictatime */
	/* relatime: once after every change, and once a day */
	return ts_before_eq(&st->st_atim, &st->st_mtim) || ts_before_eq(&st->st_atim, &st->st_ctim) ||
	       now->tv_sec - st->st_atim.tv_sec >= 24 * 60 * 60;
}
