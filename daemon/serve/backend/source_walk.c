/* One walker for everything that has to look at all of SOURCE: the quota
 * scan, the resume index, the restarted io_uring server's kick. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "source_walk.h"
#include "common/util.h"

struct walk {
	source_walk_fn fn;
	void *ctx;
	dev_t dev;
	char path[PATH_MAX];
};

/* Appends name to w->path at plen; false when it does not fit. */
static bool path_push(struct walk *w, size_t plen, const char *name, size_t *ret_len)
{
	int n = snprintf(w->path + plen, sizeof(w->path) - plen, "%s%s", plen ? "/" : "", name);

	if (n < 0 || (size_t)n >= sizeof(w->path) - plen) {
		w->path[plen] = '\0';
		return false;
	}
	*ret_len = plen + (size_t)n;
	return true;
}

/* Visits the entries of fd (consumed); plen: length of its path in
 * w->path, path_ok: whether that path fit. */
static int walk_dir(struct walk *w, int fd, size_t plen, bool path_ok, unsigned depth)
{
	_cleanup_closedir_ DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = -errno;
		safe_close(fd);
		return r;
	}
	while (r == 0) {
		struct stat st;
		size_t len = plen;
		bool ok;

		errno = 0;
		de = readdir(d);
		if (!de) {
			r = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = errno == ENOENT ? 0 : -errno;
			continue;
		}
		if (st.st_dev != w->dev)
			continue;
		ok = path_ok && path_push(w, plen, de->d_name, &len);
		r = w->fn(&(struct source_entry){ .dirfd = dirfd(d), .name = de->d_name,
						  .path = ok ? w->path : NULL, .st = &st,
						  .depth = depth }, w->ctx);
		if (r == SOURCE_WALK_NEXT && S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				r = walk_dir(w, sub, len, ok, depth + 1);
			else
				r = errno == ENOENT ? 0 : -errno;
		} else if (r == SOURCE_WALK_PRUNE) {
			r = 0;
		}
		w->path[plen] = '\0';
	}
	return r;
}

int source_walk(int dirfd, source_walk_fn fn, void *ctx)
{
	struct walk *w;
	struct stat st;
	int fd, r;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	/* Heap: PATH_MAX does not belong on every caller's stack. */
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->ctx = ctx;
	w->dev = st.st_dev;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = fd < 0 ? -errno : walk_dir(w, fd, 0, true, 0);
	free(w);
	return r;
}
