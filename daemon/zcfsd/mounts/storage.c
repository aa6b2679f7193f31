/* A volume's storage directory STORAGE_ROOT/ID: made with the modes and
 * owners the tenant's servers need and nobody else gets, opened without
 * following symlinks, removed without crossing mounts. */
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/fileio.h"
#include "common/openat2.h"
#include "common/walk_nofuse.h"
#include "mounts.h"

/* The server runs as the tenant (no supplementary groups) and opens
 * STORAGE_ROOT/ID by path: every existing directory above it must let
 * the tenant search it, or the server dies at start with EACCES. Mode bits only
 * (an ACL that grants more is not seen: the error then names a directory
 * that does work, which the operator can tell from its ACL). */
static int check_tenant_traverse(const struct policy_tenant *t, struct zcfs_err *e)
{
	_cleanup_free_ char *p = strdup(t->storage_root);
	struct stat st;
	char *s;

	if (!p)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	for (s = p;; s++) {
		char c = *s;
		mode_t need;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (stat(*p ? p : "/", &st) == 0 && S_ISDIR(st.st_mode)) {
			need = st.st_uid == t->uid ? S_IXUSR : st.st_gid == t->gid ? S_IXGRP : S_IXOTH;
			if (!(st.st_mode & need))
				return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -EACCES,
						 "tenant '%s' (uid %u) cannot reach its storage_root %s: "
						 "directory %s (mode %04o, owner %u:%u) denies it search "
						 "permission; fix: chmod o+x %s (or move storage_root)",
						 t->name, (unsigned)t->uid, t->storage_root, *p ? p : "/",
						 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
						 (unsigned)st.st_gid, *p ? p : "/");
		}
		*s = c;
		if (!c)
			return 0;
	}
}

/* The storage directory NAME in RFD is on no FUSE mount: the tenant owns
 * it and could mount its own FUSE file system there, and every open or
 * stat of that would be a request to its server. Reaching it O_PATH asks
 * nothing, nor does the check (common/walk_nofuse.h). Other mounts are
 * the operator's (a disk or a small tmpfs per volume) and are served. */
static int check_not_fuse(int rfd, const char *name)
{
	_cleanup_close_ int fd = openat2_fd(rfd, name, O_PATH | O_NOFOLLOW,
					    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

	if (fd < 0)
		return fd;
	return nofuse_check(fd, NULL, 0);
}

/* STORAGE_ROOT/ID, owned by the tenant, 0700. The root itself is kept
 * root:TENANT_GID 0710: the tenant's servers reach their volumes, no
 * other host user reaches anything below it, whatever modes clients give
 * the files inside (a client's chmod 1777 of the volume root lands on the
 * storage dir itself). */
int zcfsd_storage_ensure(const struct policy_tenant *t, const char *id, bool *created,
			  struct zcfs_err *e)
{
	_cleanup_close_ int rfd = -1, vfd = -1;
	int r;

	*created = false;
	/* Before making anything: what is missing is made 0711 (reachable). */
	r = check_tenant_traverse(t, e);
	if (r < 0)
		return r;
	r = mkdir_p(t->storage_root, 0711);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "storage_root %s: %s", t->storage_root, strerror(-r));
	rfd = open_nofollow(t->storage_root, O_RDONLY | O_DIRECTORY);
	if (rfd < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, rfd, "storage_root %s: %s", t->storage_root,
				 strerror(-rfd));
	if (fchown(rfd, 0, t->gid) < 0 || fchmod(rfd, 0710) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -errno, "storage_root %s: %m", t->storage_root);
	if (mkdirat(rfd, id, 0700) == 0)
		*created = true;
	else if (errno != EEXIST)
		return zcfs_fail(e, ZCFS_INTERNAL, -errno, "mkdir %s/%s: %m", t->storage_root, id);
	r = check_not_fuse(rfd, id);
	if (r < 0)
		return zcfs_fail(e, r == -EXDEV ? ZCFS_FAILED_PRECONDITION : ZCFS_INTERNAL, r,
				 "storage %s/%s: %s", t->storage_root, id,
				 r == -EXDEV ? "a FUSE file system is mounted on it; unmount it" : strerror(-r));
	vfd = RET_NERRNO(openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (vfd < 0 || fchown(vfd, t->uid, t->gid) < 0 || fchmod(vfd, 0700) < 0) {
		r = vfd < 0 ? vfd : -errno;
		if (*created)
			(void)unlinkat(rfd, id, AT_REMOVEDIR);
		*created = false;
		return zcfs_fail(e, ZCFS_INTERNAL, r, "storage %s/%s: %s", t->storage_root, id,
				 strerror(-r));
	}
	return 0;
}

/* The storage directory STORAGE_ROOT/ID (no symlink followed), or -errno. */
int zcfsd_storage_open(const struct policy_tenant *t, const char *id)
{
	_cleanup_close_ int rfd = open_nofollow(t->storage_root, O_PATH | O_DIRECTORY);

	int r;

	if (rfd < 0)
		return rfd;
	r = check_not_fuse(rfd, id);
	if (r < 0)
		return r;
	return RET_NERRNO(openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

void zcfsd_storage_remove_dir(const struct policy_tenant *t, const char *id)
{
	_cleanup_free_ char *p = NULL;

	if (asprintf(&p, "%s/%s", t->storage_root, id) >= 0)
		(void)rmdir(p);
}

/* rm -rf below DFD without following symlinks or crossing mounts. The
 * stat is DONT_SYNC: a mount on NAME (a tenant's FUSE mount on its
 * storage directory) is told by its device without asking its server. */
static int rm_rf_at(int dfd, const char *name, dev_t dev)
{
	_cleanup_closedir_ DIR *dir = NULL;
	struct dirent *de;
	struct statx st;
	int fd, r = 0;

	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | AT_NO_AUTOMOUNT, STATX_TYPE,
		  &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (makedev(st.stx_dev_major, st.stx_dev_minor) != dev)
		return -EXDEV;
	if (!S_ISDIR(st.stx_mode))
		return RET_NERRNO(unlinkat(dfd, name, 0));
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		safe_close(fd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int k = rm_rf_at(dirfd(dir), de->d_name, dev);
		if (k < 0 && r == 0)
			r = k;
	}
	if (r == 0)
		r = RET_NERRNO(unlinkat(dfd, name, AT_REMOVEDIR));
	return r;
}

int zcfsd_storage_delete(const struct policy_tenant *t, const char *id)
{
	_cleanup_close_ int rfd = open_nofollow(t->storage_root, O_PATH | O_DIRECTORY);
	struct stat st;

	if (rfd < 0 || fstat(rfd, &st) < 0)
		return 0;	/* no storage_root: nothing of the volume is left */
	return rm_rf_at(rfd, id, st.st_dev);
}

int zcfsd_storage_delete_start(const struct policy_tenant *t, const char *id, int *pidfd)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int r = zcfsd_storage_delete(t, id);
		_exit(r < 0 ? MIN(-r, 255) : 0);
	}
	return zcfsd_child_pidfd(pid, pidfd);
}

int zcfsd_storage_delete_finish(int pidfd)
{
	siginfo_t si = { 0 };

	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) < 0)
		return -errno;
	if (!si.si_pid)
		return -EINPROGRESS;
	if (si.si_code != CLD_EXITED)
		return -EINTR;	/* killed */
	return -si.si_status;
}

int zcfsd_storage_available(const struct policy_tenant *t, uint64_t *ret)
{
	_cleanup_free_ char *p = strdup(t->storage_root);
	struct statvfs st;
	char *slash;

	if (!p)
		return -ENOMEM;
	/* storage_root is made at the first publish: its nearest existing
	 * ancestor is the file system it will be on. */
	while (statvfs(p, &st) < 0) {
		if (errno != ENOENT || !(slash = strrchr(p, '/')) || slash == p)
			return statvfs("/", &st) < 0 ? -errno : (*ret = st.f_bavail * st.f_frsize, 0);
		*slash = '\0';
	}
	*ret = (uint64_t)st.f_bavail * st.f_frsize;
	return 0;
}
