/* One component at a time from /, each directory checked before a name
 * is looked up in it (walk_nofuse.h). The check costs one statx per
 * directory; mountinfo is read once per walk, and only when a directory
 * on an anonymous device (major 0: tmpfs, overlay, fuse...) is met, again
 * when a mount is not in the copy read (made since). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "mountinfo.h"
#include "openat2.h"
#include "walk_nofuse.h"

struct mnt_ent {
	int id;
	unsigned major, minor;
	char *fuse;	/* "TYPE at MOUNTPOINT" for a FUSE mount, else NULL */
};

struct walk {
	struct mnt_ent *m;
	size_t n;
	bool loaded;
	char *hit;
	size_t hit_len;
};

/* fuseblk needs a block device (root's alone) and is not anonymous. */
static bool fuse_type(const char *t)
{
	return !strcmp(t, "fuse") || !strncmp(t, "fuse.", 5);
}

static void table_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->m[i].fuse);
	free(w->m);
	w->m = NULL;
	w->n = 0;
}

static int table_line(const struct mountinfo_line *l, void *arg)
{
	struct walk *w = arg;
	struct mnt_ent *n = realloc(w->m, (w->n + 1) * sizeof(*w->m));

	if (!n)
		return -ENOMEM;
	w->m = n;
	n[w->n] = (struct mnt_ent){ .id = l->id, .major = l->major, .minor = l->minor };
	if (fuse_type(l->fstype) && asprintf(&n[w->n].fuse, "%s at %s", l->fstype, l->mnt) < 0)
		return -ENOMEM;
	w->n++;
	return 0;
}

static int table_load(struct walk *w)
{
	table_free(w);
	w->loaded = true;
	return mountinfo_each(table_line, w);
}

/* The mount of DFD, a directory a name is about to be looked up in, is
 * not FUSE. Mask 0 and DONT_SYNC: FUSE's getattr then asks its server
 * nothing (and, for a mount without allow_other, does not refuse root);
 * the VFS adds the mount id. A mount id is reused only once its mount is
 * freed, and DFD pins it: the same id and device in the table read since
 * is this mount. */
static int check_dir(struct walk *w, int dfd)
{
	struct statx s;
	int r;

	if (statx(dfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, 0, &s) < 0)
		return -errno;
	if (!(s.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	if (s.stx_dev_major != 0)
		return 0;	/* FUSE superblocks have anonymous devices */
	for (int pass = 0; pass < 2; pass++) {
		if (pass || !w->loaded) {
			r = table_load(w);
			if (r < 0)
				return r;
		}
		for (size_t i = 0; i < w->n; i++) {
			const struct mnt_ent *e = &w->m[i];
			if ((uint64_t)e->id != s.stx_mnt_id || e->major != 0 || e->minor != s.stx_dev_minor)
				continue;
			if (!e->fuse)
				return 0;
			if (w->hit)
				snprintf(w->hit, w->hit_len, "%s", e->fuse);
			return -EXDEV;
		}
	}
	return -ESTALE;	/* unmounted while we walked */
}

/* Walks PATH; the last component opened with FLAGS, checked itself when
 * CHECK_LAST (a name will be looked up in it). */
static int walk(const char *path, uint64_t flags, bool check_last, char *hit, size_t hit_len)
{
	_cleanup_free_ char *copy = strdup(path);
	struct walk w = { .hit = hit, .hit_len = hit_len };
	char *save = NULL, *comp, *next;
	int fd, r = 0;

	if (!copy)
		return -ENOMEM;
	if (path[0] != '/')
		return -EINVAL;
	fd = openat2_fd(AT_FDCWD, "/", copy[strspn(copy, "/")] ? O_PATH | O_DIRECTORY : flags, 0);
	for (comp = strtok_r(copy, "/", &save); fd >= 0 && comp; comp = next) {
		int nfd;

		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, ".") || !strcmp(comp, ".."))
			r = -EINVAL;
		else
			r = check_dir(&w, fd);
		nfd = r < 0 ? r : openat2_fd(fd, comp, next ? O_PATH | O_DIRECTORY : flags,
					   RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		close(fd);
		fd = nfd;
	}
	if (fd >= 0 && r == 0 && check_last)
		r = check_dir(&w, fd);
	table_free(&w);
	if (fd >= 0 && r < 0)
		close(fd);
	return r < 0 ? r : fd;
}

int nofuse_check(int fd, char *hit, size_t hit_len)
{
	struct walk w = { .hit = hit, .hit_len = hit_len };
	int r = check_dir(&w, fd);

	table_free(&w);
	return r;
}

int nofuse_open(const char *path, uint64_t flags, char *hit, size_t hit_len)
{
	return walk(path, flags, false, hit, hit_len);
}

int nofuse_open_parent(const char *path, const char **leaf, char *hit, size_t hit_len)
{
	_cleanup_free_ char *dir = NULL;
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
		return -EINVAL;
	*leaf = slash + 1;
	dir = strndup(path, n ? n : 1);	/* the parent of /x is / */
	if (!dir)
		return -ENOMEM;
	return walk(dir, O_PATH | O_DIRECTORY, true, hit, hit_len);
}

/* The parent is walked without symlinks, so a component swapped for a
 * symlink after the directory was made cannot redirect the removal, and
 * without FUSE directories, so no server can hold the removal up. */
int rmdir_nofollow(const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int pfd = -1;
	const char *leaf = NULL;
	size_t n;

	if (!copy)
		return -ENOMEM;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	pfd = nofuse_open_parent(copy, &leaf, NULL, 0);
	if (pfd < 0)
		return pfd;
	return RET_NERRNO(unlinkat(pfd, leaf, AT_REMOVEDIR));
}
