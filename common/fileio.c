/* Whole writes, atomic file replacement, mkdir -p. */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "fileio.h"

int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	bool sock = true;

	while (len) {
		ssize_t n = sock ? send(fd, c, len, MSG_NOSIGNAL) : write(fd, c, len);
		if (n < 0) {
			if (sock && errno == ENOTSOCK) {
				sock = false;
				continue;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file_atomic(int dirfd, const char *name, const void *data, size_t len, bool newline,
		      mode_t mode)
{
	_cleanup_close_ int fd = -1;
	char tmp[NAME_MAX + 1];
	int r;

	/* The pid keeps two writers of one name off each other's temporary. */
	if ((size_t)snprintf(tmp, sizeof(tmp), ".%s.tmp.%d", name, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, len);
	if (r == 0 && newline)
		r = write_all(fd, "\n", 1);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0);
		return r;
	}
	/* The rename itself must reach the disk too. */
	return fsync(dirfd) < 0 ? -errno : 0;
}

/* mkdir P; the first directory made is remembered in *created. */
static int mkdir_one(const char *p, mode_t mode, char **created)
{
	if (mkdir(p, mode) < 0)
		return errno == EEXIST ? 0 : -errno;
	if (created && !*created && !(*created = strdup(p)))
		return -ENOMEM;
	return 0;
}

int mkdir_p_undoable(const char *path, mode_t mode, char **created)
{
	_cleanup_free_ char *p = strdup(path);
	char *s;
	int r;

	if (created)
		*created = NULL;
	if (!p)
		return -ENOMEM;
	for (s = p + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		r = mkdir_one(p, 0755, created);
		*s = '/';
		if (r < 0)
			return r;
	}
	return mkdir_one(p, mode, created);
}

int mkdir_p(const char *path, mode_t mode)
{
	return mkdir_p_undoable(path, mode, NULL);
}

void rmdir_created(const char *path, const char *created)
{
	_cleanup_free_ char *p = NULL;
	size_t n;
	char *s;

	if (!created || strncmp(path, created, (n = strlen(created))) ||
	    (path[n] != '\0' && path[n] != '/') || !(p = strdup(path)))
		return;
	for (;;) {
		if (rmdir(p) < 0 || strlen(p) <= n)
			return;
		s = strrchr(p, '/');
		if (!s || s == p)
			return;
		*s = '\0';
	}
}

long dir_count_entries(const char *path)
{
	_cleanup_closedir_ DIR *d = opendir(path);
	struct dirent *e;
	long n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	return n;
}
