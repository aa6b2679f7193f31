/* bind + chmod + listen of a unix socket, replacing what a crashed owner left. */
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "fileio.h"
#include "listen_unix.h"

/* Whether someone accepts connections on the socket at SA. */
static bool socket_is_live(const struct sockaddr_un *sa)
{
	_cleanup_close_ int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	return probe >= 0 && connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
}

/* Makes way for a new socket at SA's path. */
static int clear_path(const struct sockaddr_un *sa, unsigned flags)
{
	struct stat st;

	if (!(flags & LISTEN_UNIX_REPLACE_ANY) && lstat(sa->sun_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if ((flags & LISTEN_UNIX_KEEP_LIVE) && socket_is_live(sa))
			return -EADDRINUSE;
	}
	if (unlink(sa->sun_path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int listen_unix(const char *path, int backlog, mode_t mode, unsigned flags)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	char *slash;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* /run/zcfs may not exist yet (after a reboot). */
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		r = mkdir_p(dir, 0755);
		if (r < 0)
			return r;
	}
	r = clear_path(&sa, flags);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (flags & LISTEN_UNIX_NONBLOCK ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	if (chmod(path, mode) < 0 || listen(fd, backlog) < 0) {
		r = -errno;
		(void)unlink(path);
		return r;
	}
	return TAKE_FD(fd);
}
