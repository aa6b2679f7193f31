/* Mount flag inspection and the per-target read-only flag. */
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include "mnt.h"
#include "mountinfo.h"

int mnt_top_readonly(const char *path, bool *ro)
{
	struct mountinfo_top m;
	int r = mountinfo_top_at(path, &m);

	if (r == 0)
		*ro = m.read_only;
	return r;
}

int mnt_set_readonly(const char *path, bool ro)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_DIRECTORY,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	struct mount_attr attr = {
		.attr_set = ro ? MOUNT_ATTR_RDONLY : 0,
		.attr_clr = ro ? 0 : MOUNT_ATTR_RDONLY,
	};
	_cleanup_close_ int fd = -1;

	fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	return RET_NERRNO((int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)));
}
