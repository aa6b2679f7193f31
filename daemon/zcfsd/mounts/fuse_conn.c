/* Which fuse connection is mounted where, from /proc/self/mountinfo and
 * /sys/fs/fuse/connections: never by stat() of a fuse mount, which would
 * ask a server that may be dead or not started yet. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "common/mountinfo.h"
#include "mounts.h"

int zcfsd_mount_conn_at(const char *path, unsigned *conn)
{
	struct mountinfo_top m;
	int r = mountinfo_top_at(path, &m);

	if (r < 0)
		return r;
	if (strcmp(m.fstype, "fuse.zcfs"))
		return -EMEDIUMTYPE;	/* something else on top */
	*conn = m.minor;
	return 0;
}

int zcfsd_conn_abort(unsigned conn)
{
	char path[96];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", conn);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write(fd, "1", 1) < 0 ? -errno : 0;
}

/* fusectl is where connections are aborted and seen; systemd mounts it,
 * a bare node may not have it. */
int zcfsd_fusectl_ensure(void)
{
	if (access("/sys/fs/fuse/connections", F_OK) < 0)
		return -errno;
	if (mount("fusectl", "/sys/fs/fuse/connections", "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0 && errno != EBUSY)
		return -errno;
	return 0;
}

bool zcfsd_conn_exists(unsigned conn)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u", conn);
	return access(path, F_OK) == 0;
}
