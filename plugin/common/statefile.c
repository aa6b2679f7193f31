/* Crash-safe JSON state files for the plugins. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "plugin_json.h"
#include "statefile.h"

/* mkdir P; the first directory made is remembered in *created. */
static int mkdir_one(const char *p, mode_t mode, char **created)
{
	if (mkdir(p, mode) < 0)
		return errno == EEXIST ? 0 : -errno;
	if (created && !*created && !(*created = strdup(p)))
		return -ENOMEM;
	return 0;
}

int sf_mkdir_p_undoable(const char *path, mode_t mode, char **created)
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

int sf_mkdir_p(const char *path, mode_t mode)
{
	return sf_mkdir_p_undoable(path, mode, NULL);
}

void sf_rmdir_created(const char *path, const char *created)
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

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sf_write_json(const char *dir, const char *name, json_object *o)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *tmp = NULL;
	const char *s;
	int r;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (asprintf(&tmp, ".%s.tmp.%d", name, (int)getpid()) < 0)
		return -ENOMEM;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	r = write_all(fd, s, strlen(s));
	if (r == 0)
		r = write_all(fd, "\n", 1);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dfd, tmp, 0);
		return r;
	}
	return fsync(dfd) < 0 ? -errno : 0;
}

int sf_read_json(const char *dir, const char *name, size_t max, json_object **ret)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct perr e = { 0 };
	size_t len;
	int r;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = pj_read_fd(fd, max, &buf, &len);
	if (r < 0)
		return r;
	r = pj_parse_object(buf, len, false, ret, &e);
	return r < 0 ? -EBADMSG : 0;
}

int sf_remove(const char *dir, const char *name)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return fsync(dfd) < 0 ? -errno : 0;
}

int sf_lock(const char *dir, const char *name)
{
	_cleanup_close_ int dfd = -1, fd = -1;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	return TAKE_FD(fd);
}

int sf_trylock(const char *dir, const char *name)
{
	_cleanup_close_ int dfd = -1;
	struct stat a, b;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (;;) {
		_cleanup_close_ int fd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		while (flock(fd, LOCK_EX | LOCK_NB) < 0)
			if (errno != EINTR)
				return errno == EWOULDBLOCK ? -EWOULDBLOCK : -errno;
		/* the holder before us may have removed the name: lock the live file */
		if (fstat(fd, &a) < 0)
			return -errno;
		if (fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			return TAKE_FD(fd);
	}
}
