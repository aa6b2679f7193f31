/* Crash-safe JSON state files for the plugins. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "common/fileio.h"
#include "plugin_json.h"
#include "statefile.h"

int sf_write_json(const char *dir, const char *name, json_object *o)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const char *s;

	if (dfd < 0)
		return -errno;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	return write_file_atomic(dfd, name, s, strlen(s), true, 0600);
}

int sf_read_json(const char *dir, const char *name, size_t max, json_object **ret)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct zcfs_err e = { 0 };
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
