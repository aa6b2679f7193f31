#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#define FUSE_USE_VERSION 34
#include <fuse_lowlevel.h>
#include "common/bdi.h"
#include "common/log.h"
#include "mount.h"
#include "common/mountinfo.h"
#include "options.h"


struct zcfs_mount {
	char *mountpoint;
	struct fuse_session *helper;	/* set when fusermount3 mounted it */
	int fuse_fd;			/* the connection's /dev/fuse fd (not owned) */
	dev_t dev;			/* its st_dev, read right after mounting; 0: unknown */
};

/* The mount(2) flags of -o: set-id bits and devices only when asked. */
static unsigned long mount_flags(const struct zcfs_options *o)
{
	return o->mount_flags | (o->read_only ? MS_RDONLY : 0);
}

static const char *fs_type(const struct zcfs_options *o, char *buf, size_t len)
{
	if (o->no_subtype)
		snprintf(buf, len, "fuse");
	else
		snprintf(buf, len, "fuse.%s", o->subtype[0] ? o->subtype : "zcfs");
	return buf;
}

static int mount_direct(const struct zcfs_options *o, uint32_t max_read, int *ret_fd)
{
	char opts[256], type[80];
	struct stat st;
	int fd, r;

	if (stat(o->mountpoint, &st) < 0)
		return -errno;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=%o,user_id=%u,group_id=%u,default_permissions%s,max_read=%u", fd,
		 st.st_mode & S_IFMT, getuid(), getgid(), o->allow_other ? ",allow_other" : "",
		 max_read);
	if (mount(o->fsname[0] ? o->fsname : o->source, o->mountpoint,
		  fs_type(o, type, sizeof(type)), mount_flags(o), opts) < 0) {
		r = -errno;
		safe_close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

/* Unprivileged: fusermount3 mounts for us (it adds nosuid,nodev for
 * users); we only keep the fd. */
static int mount_helper(const struct zcfs_options *o, struct fuse_session **ret, int *ret_fd)
{
	static const struct fuse_lowlevel_ops no_ops;
	char *argv[] = { "zcfs-serve", "-o", NULL, NULL };
	unsigned long f = mount_flags(o);
	char opt[768];
	struct fuse_args args;
	struct fuse_session *se;

	snprintf(opt, sizeof(opt), "default_permissions,fsname=%s%s%s%s%s%s%s%s%s%s%s",
		 o->fsname[0] ? o->fsname : "zcfs", o->no_subtype ? "" : ",subtype=",
		 o->no_subtype ? "" : o->subtype[0] ? o->subtype : "zcfs",
		 o->allow_other ? ",allow_other" : "", f & MS_RDONLY ? ",ro" : "",
		 f & MS_NODEV ? ",nodev" : ",dev", f & MS_NOSUID ? ",nosuid" : ",suid",
		 f & MS_NOEXEC ? ",noexec" : "", f & MS_NOATIME ? ",noatime" : "",
		 f & MS_STRICTATIME ? ",strictatime" : "", f & MS_SYNCHRONOUS ? ",sync" : "");
	argv[2] = opt;
	args = (struct fuse_args)FUSE_ARGS_INIT(3, argv);
	se = fuse_session_new(&args, &no_ops, sizeof(no_ops), NULL);
	if (!se)
		return -EINVAL;
	if (fuse_session_mount(se, o->mountpoint) != 0) {
		fuse_session_destroy(se);
		return -EPERM;
	}
	*ret = se;
	*ret_fd = fuse_session_fd(se);
	return 0;
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

int zcfs_mount(const struct zcfs_options *o, uint32_t max_read, struct zcfs_mount **ret,
	       int *ret_fd)
{
	struct zcfs_mount *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->mountpoint = realpath(o->mountpoint, NULL);
	if (!m->mountpoint) {
		free(m);
		return -ENOMEM;
	}
	r = mount_direct(o, max_read, ret_fd);
	if (r == -EPERM) {
		log_info("mount(2) not permitted, using fusermount3");
		r = mount_helper(o, &m->helper, ret_fd);
	}
	if (r < 0) {
		zcfs_mount_free(m);
		return r;
	}
	m->fuse_fd = *ret_fd;
	/* Recorded now, while the mount we just made is the topmost one:
	 * at exit this is how we know which mount and connection are ours. */
	if (mountinfo_dev(m->mountpoint, &m->dev) < 0)
		m->dev = 0;
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

int zcfs_mount_set_dirty_limit(struct zcfs_mount *m, uint64_t bytes)
{
	if (!m->dev)
		return -ENODEV;
	return bdi_set_max_bytes(major(m->dev), minor(m->dev), bytes);
}

/* Our connection has ended (unmounted and released, or aborted) when
 * its fd polls as an error. Its device number may then belong to a new
 * mount already, so nothing may be done in its name. */
static bool connection_ended(int fuse_fd)
{
	struct pollfd p = { .fd = fuse_fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLNVAL));
}

void zcfs_unmount(struct zcfs_mount *m)
{
	dev_t top = 0;

	if (!m)
		return;
	if (m->helper) {
		/* libfuse polls the fd too and leaves an ended connection alone. */
		fuse_session_unmount(m->helper);
		return;
	}
	if (!m->dev || connection_ended(m->fuse_fd))
		return;
	/* The connection is alive, so its superblock and device number are
	 * still ours. Detach the mountpoint only if the topmost mount there
	 * is ours (not one stacked on top or made after an external umount). */
	if (mountinfo_dev(m->mountpoint, &top) == 0 && top == m->dev &&
	    umount2(m->mountpoint, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL &&
	    errno != ENOENT)
		log_warn("unmount %s: %m", m->mountpoint);
	/* Files still open keep a detached mount alive: abort it so the
	 * readers wake up and clients see ENOTCONN instead of a hang. */
	(void)fuse_abort_connection(m->dev);
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
