/* SOURCE on a detached mount with the client mount's flags (source_mount.h). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
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
