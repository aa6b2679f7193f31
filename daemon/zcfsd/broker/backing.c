/* The kernel side of the passthrough broker: what zcfsd checks about a
 * file a server hands it, and the FUSE_DEV_IOC_BACKING_OPEN/CLOSE calls.
 *
 * The kernel keeps the credentials of the BACKING_OPEN caller and reopens
 * the backing file with them, with the client's open flags and without a
 * permission check, for every passthrough open; reads and writes run with
 * them too. So zcfsd only registers files the tenant owns (it could chmod
 * and write them anyway), and makes the call with its file identity
 * narrowed to the tenant's fsuid/fsgid and CAP_SYS_ADMIN as the only
 * effective capability (the ioctl requires it), so quotas, reserved
 * blocks and set-id clearing treat passthrough I/O as the tenant's. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <signal.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "common/log.h"
#include "common/openat2.h"
#include "kernel/zcfs_fuse_abi.h"
#include "broker.h"

int zcfsd_broker_check_fd(int fd, dev_t dev, uid_t uid, struct zcfsd_file_id *file)
{
	struct statx stx;
	int fl, attr = 0;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	/* An O_PATH fd proves nothing: the server could get one for a file
	 * it may not open (and the kernel would reopen it for the client). */
	if (fl & O_PATH)
		return -EBADF;
	/* DONT_SYNC: a file on a FUSE (or network) mount must not make zcfsd
	 * wait for that file system's server; the dev check rules it out. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		  STATX_TYPE | STATX_UID | STATX_INO | STATX_BTIME, &stx) < 0)
		return -errno;
	if (makedev(stx.stx_dev_major, stx.stx_dev_minor) != dev)
		return -EXDEV;
	if (!S_ISREG(stx.stx_mode))
		return S_ISDIR(stx.stx_mode) ? -EISDIR : -EINVAL;
	if (!(stx.stx_mask & STATX_UID) || stx.stx_uid != uid)
		return -EPERM;
	/* The kernel's reopen skips may_open(): an append-only file would be
	 * writable anywhere, an immutable one at all. The tenant cannot set
	 * these flags; the host may have. No flags support: nothing to keep. */
	if (ioctl(fd, FS_IOC_GETFLAGS, &attr) == 0 && (attr & (FS_IMMUTABLE_FL | FS_APPEND_FL)))
		return -EPERM;
	if (file)
		*file = (struct zcfsd_file_id){ .ino = stx.stx_ino, .btime_sec = stx.stx_btime.tv_sec,
						.btime_nsec = stx.stx_btime.tv_nsec,
						.valid = (stx.stx_mask & (STATX_INO | STATX_BTIME)) ==
							 (STATX_INO | STATX_BTIME) };
	return 0;
}

static int fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

int zcfsd_broker_check_beneath(int fd, int storage_fd)
{
	char file[PATH_MAX], dir[PATH_MAX];
	struct stat a, b;
	size_t dl;
	int r, walked;

	r = fd_path(fd, file, sizeof(file));
	if (r == 0)
		r = fd_path(storage_fd, dir, sizeof(dir));
	if (r < 0)
		return r;
	dl = strlen(dir);
	if (strncmp(file, dir, dl) || file[dl] != '/' || !file[dl + 1])
		return -EXDEV;
	/* The path string is a hint (a rename may race): what counts is that
	 * the walk from the storage dir, never leaving it, is this inode. */
	walked = openat2_fd(storage_fd, file + dl + 1, O_PATH | O_NOFOLLOW,
			    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
	if (walked < 0)
		return walked == -ENOENT || walked == -EXDEV || walked == -ELOOP ? -EXDEV : walked;
	r = fstat(walked, &a) < 0 || fstat(fd, &b) < 0 ? -errno : 0;
	close(walked);
	if (r < 0)
		return r;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino ? 0 : -EXDEV;
}

/* A failed restore would leave zcfsd with the tenant's file identity:
 * nothing it does afterwards could be trusted. */
static void restore_or_die(struct __user_cap_header_struct *h, struct __user_cap_data_struct *saved,
			   uid_t fsuid, gid_t fsgid)
{
	(void)setfsuid(fsuid);
	(void)setfsgid(fsgid);
	if (syscall(SYS_capset, h, saved) < 0 || (uid_t)setfsuid((uid_t)-1) != fsuid ||
	    (gid_t)setfsgid((gid_t)-1) != fsgid) {
		log_err("event=broker-creds-restore-failed error=%m action=abort");
		abort();
	}
}

/* Per thread: zcfsd's event loop is its only thread, and the calls below
 * change the calling thread's credentials, not the process's. */
static int kernel_open(int fuse_fd, int fd, uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct saved[_LINUX_CAPABILITY_U32S_3], narrow[_LINUX_CAPABILITY_U32S_3];
	struct zcfs_backing_map map = { .fd = fd };
	unsigned i = CAP_TO_INDEX(CAP_SYS_ADMIN);
	uid_t old_uid;
	gid_t old_gid;
	int r;

	if (syscall(SYS_capget, &h, saved) < 0)
		return -errno;
	if (!(saved[i].permitted & CAP_TO_MASK(CAP_SYS_ADMIN)))
		return -EPERM;
	old_gid = (gid_t)setfsgid(gid);
	old_uid = (uid_t)setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
		r = -EPERM;
		goto out;
	}
	memcpy(narrow, saved, sizeof(narrow));
	for (unsigned k = 0; k < _LINUX_CAPABILITY_U32S_3; k++)
		narrow[k].effective = 0;
	narrow[i].effective = CAP_TO_MASK(CAP_SYS_ADMIN);
	if (syscall(SYS_capset, &h, narrow) < 0) {
		r = -errno;
		goto out;
	}
	r = RET_NERRNO(ioctl(fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_OPEN, &map));
out:
	restore_or_die(&h, saved, old_uid, old_gid);
	return r;
}

static int kernel_close(int fuse_fd, int id)
{
	uint32_t u = (uint32_t)id;

	return RET_NERRNO(ioctl(fuse_fd, ZCFS_FUSE_DEV_IOC_BACKING_CLOSE, &u));
}

const struct zcfsd_broker_kernel zcfsd_broker_kernel_real = {
	.open = kernel_open,
	.close = kernel_close,
};
