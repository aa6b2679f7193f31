#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include "bdi.h"
#include "log.h"
#include "mount.h"
#include "mountinfo.h"


struct zcfs_mount {
	char *mountpoint;
	struct fuse_session *helper;	/* set when fusermount3 mounted it */
};

static int mount_direct(const char *source, const char *mountpoint, bool allow_other,
			bool read_only, uint32_t max_read, int *ret_fd)
{
	char opts[256];
	struct stat st;
	int fd, r;

	if (stat(mountpoint, &st) < 0)
		return -errno;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,default_permissions%s,max_read=%u", fd,
		 st.st_mode & S_IFMT, getuid(), getgid(), allow_other ? ",allow_other" : "",
		 max_read);
	if (mount(source, mountpoint, "fuse.zcfs",
		  MS_NOSUID | MS_NODEV | (read_only ? MS_RDONLY : 0), opts) < 0) {
		r = -errno;
		safe_close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Unprivileged: fusermount3 mounts for us; we only keep the fd. */
static int mount_helper(const char *mountpoint, bool allow_other, bool read_only,
			struct fuse_session **ret, int *ret_fd)
{
	static const struct fuse_lowlevel_ops no_ops;
	char *argv[] = { "zcfs-serve", "-o", NULL, NULL };
	char o[128];
	struct fuse_args args;
	struct fuse_session *se;

	snprintf(o, sizeof(o), "default_permissions,fsname=zcfs,subtype=zcfs%s%s",
		 allow_other ? ",allow_other" : "", read_only ? ",ro" : "");
	argv[2] = o;
	args = (struct fuse_args)FUSE_ARGS_INIT(3, argv);
	se = fuse_session_new(&args, &no_ops, sizeof(no_ops), NULL);
	if (!se)
		return -EINVAL;
	if (fuse_session_mount(se, mountpoint) != 0) {
		fuse_session_destroy(se);
		return -EPERM;
	}
	*ret = se;
	*ret_fd = fuse_session_fd(se);
	return 0;
}

int zcfs_mount(const char *source, const char *mountpoint, bool allow_other, bool read_only,
	       uint32_t max_read, struct zcfs_mount **ret, int *ret_fd)
{
	struct zcfs_mount *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->mountpoint = realpath(mountpoint, NULL);
	if (!m->mountpoint) {
		free(m);
		return -ENOMEM;
	}
	r = mount_direct(source, mountpoint, allow_other, read_only, max_read, ret_fd);
	if (r == -EPERM) {
		log_info("mount(2) not permitted, using fusermount3");
		r = mount_helper(mountpoint, allow_other, read_only, &m->helper, ret_fd);
	}
	if (r < 0) {
		zcfs_mount_free(m);
		return r;
	}
	*ret = m;
	return 0;
}

int fuse_abort_connection(dev_t dev)
{
	char path[96];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", minor(dev));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT &&
	    mount("fusectl", "/sys/fs/fuse/connections", "fusectl", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) == 0)
		fd = open(path, O_WRONLY | O_CLOEXEC);	/* fusectl was not mounted yet */
	if (fd < 0)
		return -errno;
	if (write(fd, "1", 1) < 0)
		r = -errno;
	safe_close(fd);
	return r;
}

/* The connection's device number, from the topmost FUSE mount at
 * mountpoint (stat() of the root would ask the server). */
static int mountinfo_dev(const char *mountpoint, dev_t *ret)
{
	struct mountinfo_top m;
	int r = mountinfo_top_at(mountpoint, &m);

	if (r < 0)
		return r;
	if (strncmp(m.fstype, "fuse", 4))
		return -EMEDIUMTYPE;
	*ret = makedev(m.major, m.minor);
	return 0;
}

int zcfs_mount_set_dirty_limit(struct zcfs_mount *m, uint64_t bytes)
{
	dev_t dev;
	int r = mountinfo_dev(m->mountpoint, &dev);

	return r < 0 ? r : bdi_set_max_bytes(major(dev), minor(dev), bytes);
}

void zcfs_unmount(struct zcfs_mount *m)
{
	dev_t dev = 0;
	bool have_dev;

	if (!m)
		return;
	if (m->helper) {
		fuse_session_unmount(m->helper);
		return;
	}
	have_dev = mountinfo_dev(m->mountpoint, &dev) == 0;
	if (umount2(m->mountpoint, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		log_warn("unmount %s: %m", m->mountpoint);
	/* Files still open keep a detached mount alive: abort it so the
	 * readers wake up and clients see ENOTCONN instead of a hang. */
	if (have_dev)
		(void)fuse_abort_connection(dev);
}

void zcfs_mount_free(struct zcfs_mount *m)
{
	if (!m)
		return;
	if (m->helper)
		fuse_session_destroy(m->helper);
	free(m->mountpoint);
	free(m);
}
