/* Which fuse connection is mounted where, from /proc/self/mountinfo and
 * /sys/fs/fuse/connections: never by stat() of a fuse mount, which would
 * ask a server that may be dead or not started yet. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "zcfsd.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int zcfsd_mount_conn_at(const char *path, unsigned *conn)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;

	if (!f)
		return -errno;
	/* Later lines are mounted on top of earlier ones: the last match wins. */
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], fstype[64];
		unsigned maj, min;
		const char *sep;

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s", &maj, &min, mnt) != 3)
			continue;
		unescape(mnt);
		if (strcmp(mnt, path))
			continue;
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %63s", fstype) != 1)
			continue;
		if (!strcmp(fstype, "fuse.zcfs")) {
			*conn = min;
			found = 0;
		} else {
			found = -EMEDIUMTYPE;	/* something else on top */
		}
	}
	return found;
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
