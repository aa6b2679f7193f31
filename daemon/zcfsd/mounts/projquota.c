/* Project quotas on a storage root, the kernel side (mounts/projquota.h):
 * the probe, a directory's project id, the project's limits and usage.
 * XFS through its own quotactl commands (Q_X*), ext4 through the generic
 * ones (Q_GETQUOTA/Q_SETQUOTA on PRJQUOTA), both by quotactl_fd(2). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/dqblk_xfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/quota.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include "projquota.h"

#ifndef __NR_quotactl_fd
#define __NR_quotactl_fd 443
#endif

static int pq_ctl(const struct zcfsd_pq_fs *fs, unsigned cmd, uint32_t id, void *addr)
{
	long r = syscall(__NR_quotactl_fd, fs->root_fd, QCMD(cmd, PRJQUOTA), id, addr);

	return r < 0 ? -errno : 0;
}

static const char *fs_name(long type)
{
	switch (type) {
	case TMPFS_MAGIC: return "tmpfs";
	case BTRFS_SUPER_MAGIC: return "btrfs";
	case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
	case NFS_SUPER_MAGIC: return "NFS";
	default: return "a file system";
	}
}

/* What a storage root of KIND lacks when its project quotas are not on
 * (FLAGS from Q_XGETQSTATV). */
static void lacks(enum zcfsd_pq_kind kind, const char *path, uint16_t flags, char *why, size_t len)
{
	bool xfs = kind == ZCFSD_PQ_XFS;

	if (!(flags & FS_QUOTA_PDQ_ACCT))
		snprintf(why, len, "storage_root %s: %s", path,
			 xfs ? "XFS mounted without project quotas (mount option prjquota)"
			     : "ext4 without project quotas (features quota,project: tune2fs -O "
			       "quota,project, and mount option prjquota)");
	else
		snprintf(why, len, "storage_root %s: project quotas are counted but not enforced (%s)",
			 path, xfs ? "mount option prjquota, not pqnoenforce" : "mount option prjquota");
}

int zcfsd_pq_probe(int root_fd, const char *path, struct zcfsd_pq_fs *fs, char *why, size_t len)
{
	struct fs_quota_statv st = { .qs_version = FS_QSTATV_VERSION1 };
	struct statfs sf;
	int r;

	*fs = (struct zcfsd_pq_fs){ .kind = ZCFSD_PQ_NONE, .root_fd = root_fd };
	if (fstatfs(root_fd, &sf) < 0) {
		r = -errno;
		snprintf(why, len, "storage_root %s: statfs: %s", path, strerror(-r));
		return r;
	}
	if (sf.f_type == XFS_SUPER_MAGIC) {
		fs->kind = ZCFSD_PQ_XFS;
	} else if (sf.f_type == EXT4_SUPER_MAGIC) {
		fs->kind = ZCFSD_PQ_EXT4;
	} else {
		snprintf(why, len, "storage_root %s is on %s (f_type 0x%lx), which has no project "
			 "quotas: XFS or ext4 needed", path, fs_name((long)sf.f_type), (long)sf.f_type);
		return -EOPNOTSUPP;
	}
	r = pq_ctl(fs, Q_XGETQSTATV, 0, &st);
	/* XFS answers only when built with quotas; ext4 without the quota
	 * feature, or on a kernel without QFMT_V2 (which cannot mount it
	 * read-write with it), has nothing to say either. */
	if ((r == -ENOSYS || r == -EOPNOTSUPP) && fs->kind == ZCFSD_PQ_XFS) {
		snprintf(why, len, "storage_root %s: this kernel has no quota support for XFS "
			 "(CONFIG_XFS_QUOTA)", path);
		return -EOPNOTSUPP;
	}
	if (r == -ENOSYS || r == -EOPNOTSUPP) {
		snprintf(why, len, "storage_root %s: ext4 without project quotas: needs the features "
			 "quota,project (mkfs.ext4/tune2fs -O quota,project), mount option prjquota, and a "
			 "kernel with CONFIG_QUOTA and CONFIG_QFMT_V2", path);
		return -EOPNOTSUPP;
	}
	if (r < 0) {
		snprintf(why, len, "storage_root %s: quotactl_fd(Q_XGETQSTATV): %s", path, strerror(-r));
		return r;
	}
	if ((st.qs_flags & (FS_QUOTA_PDQ_ACCT | FS_QUOTA_PDQ_ENFD)) !=
	    (FS_QUOTA_PDQ_ACCT | FS_QUOTA_PDQ_ENFD)) {
		lacks(fs->kind, path, st.qs_flags, why, len);
		return -EOPNOTSUPP;
	}
	return 0;
}

int zcfsd_pq_get(const struct zcfsd_pq_fs *fs, uint32_t id, struct zcfsd_pq_usage *u)
{
	int r;

	if (fs->kind == ZCFSD_PQ_XFS) {
		struct fs_disk_quota d = { 0 };
		r = pq_ctl(fs, Q_XGETQUOTA, id, &d);
		if (r < 0)
			return r;
		*u = (struct zcfsd_pq_usage){ .bytes_used = d.d_bcount * 512,
					      .bytes_limit = d.d_blk_hardlimit * 512,
					      .inodes_used = d.d_icount, .inodes_limit = d.d_ino_hardlimit };
		return 0;
	}
	struct if_dqblk q = { 0 };
	r = pq_ctl(fs, Q_GETQUOTA, id, &q);
	if (r < 0)
		return r;
	*u = (struct zcfsd_pq_usage){ .bytes_used = q.dqb_curspace,
				      .bytes_limit = q.dqb_bhardlimit * QIF_DQBLKSIZE,
				      .inodes_used = q.dqb_curinodes, .inodes_limit = q.dqb_ihardlimit };
	return 0;
}

bool zcfsd_pq_id_busy(const struct zcfsd_pq_fs *fs, uint32_t id)
{
	struct zcfsd_pq_usage u;
	int r = zcfsd_pq_get(fs, id, &u);

	if (r == -ENOENT || r == -ESRCH)
		return false;
	/* Cannot tell: taken, to be safe. */
	return r < 0 || u.bytes_used || u.bytes_limit || u.inodes_used || u.inodes_limit;
}

int zcfsd_pq_set_limits(const struct zcfsd_pq_fs *fs, uint32_t id, const struct zcfsd_proj_limits *l)
{
	if (fs->kind == ZCFSD_PQ_XFS) {
		struct fs_disk_quota d = {
			.d_version = FS_DQUOT_VERSION, .d_flags = FS_PROJ_QUOTA, .d_id = id,
			.d_fieldmask = FS_DQ_BSOFT | FS_DQ_BHARD | FS_DQ_ISOFT | FS_DQ_IHARD,
			.d_blk_hardlimit = l ? l->basic_blocks : 0, .d_ino_hardlimit = l ? l->inodes : 0,
		};
		return pq_ctl(fs, Q_XSETQLIM, id, &d);
	}
	struct if_dqblk q = {
		.dqb_bhardlimit = l ? l->kib : 0, .dqb_ihardlimit = l ? l->inodes : 0,
		.dqb_valid = QIF_LIMITS,
	};
	return pq_ctl(fs, Q_SETQUOTA, id, &q);
}

int zcfsd_pq_assign(int dfd, uint32_t id)
{
	struct fsxattr fa;

	if (ioctl(dfd, FS_IOC_FSGETXATTR, &fa) < 0)
		return -errno;
	if (fa.fsx_projid == id && (fa.fsx_xflags & FS_XFLAG_PROJINHERIT))
		return 0;
	fa.fsx_projid = id;
	fa.fsx_xflags |= FS_XFLAG_PROJINHERIT;
	return ioctl(dfd, FS_IOC_FSSETXATTR, &fa) < 0 ? -errno : 0;
}

int zcfsd_pq_id_of(int dfd, uint32_t *id)
{
	struct fsxattr fa;

	if (ioctl(dfd, FS_IOC_FSGETXATTR, &fa) < 0)
		return -errno;
	*id = fa.fsx_projid;
	return 0;
}
