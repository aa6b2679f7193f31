/* Kernel-enforced volume sizes: project quotas on a storage root on XFS
 * (mounted prjquota/pquota) or ext4 (features quota,project, mounted
 * prjquota). Each volume directory gets a project id of its own with the
 * inherit flag and block + inode hard limits from its size; the kernel
 * then refuses writes past the size whichever path they take (the
 * server's, kernel passthrough's), and statfs of the directory reports
 * the project's limit and usage. Mechanics only: which volumes get it is
 * lifecycle/size.c's decision. */
#ifndef ZCFSD_PROJQUOTA_H
#define ZCFSD_PROJQUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ids zcfsd hands out: far above the small ids operators number
 * their own projects with (/etc/projid), below 2^31. */
#define ZCFSD_PROJID_MIN 0x7a000000u
#define ZCFSD_PROJID_MAX 0x7affffffu

/* projid.c (pure, tests/unit/test_projquota.c) */
/* The lowest id in [FROM, ZCFSD_PROJID_MAX] that is not in USED[0..N)
 * (any order), or 0 when there is none. */
uint32_t zcfsd_projid_pick(const uint32_t *used, size_t n, uint32_t from);

/* Claiming a project id on a file system that other zcfsd instances (other
 * state dirs on this node, other nodes on shared storage) claim from too:
 * an id free at the pick may be taken before it is set, so the id is set
 * on the volume's (empty) directory first and kept only if that
 * directory is the one inode charged to it; else it is taken off again
 * and the next one tried. Two claims of one id cannot both keep it: the
 * later check sees both directories. The file system is the one place
 * every claimant shares; no lock file to agree on. */
struct zcfsd_projid_ops {
	void *ctx;
	/* whether anyone uses ID on the file system (usage or limits) */
	bool (*busy)(void *ctx, uint32_t id);
	/* ID recorded (state.json) before it is set on disk; -errno */
	int (*record)(void *ctx, uint32_t id);
	/* ID (0: none) set on the volume's directory; -errno */
	int (*assign)(void *ctx, uint32_t id);
	/* the inodes charged to ID; -errno */
	int (*charged)(void *ctx, uint32_t id, uint64_t *inodes);
};
/* An id not in USED[0..N) (this zcfsd's own), claimed as above, in *ID;
 * STRIDE (>= 1) spaces out the retries of two claimants that collided.
 * -ENOSPC when the range is spent, else -errno of an op. */
int zcfsd_projid_claim(const uint32_t *used, size_t n, uint32_t stride,
		       const struct zcfsd_projid_ops *ops, uint32_t *id);

/* Hard limits for a volume of SIZE bytes: blocks in 512-byte units
 * (XFS's basic blocks, rounded up), in 1 KiB units (the generic quota's
 * QIF_DQBLKSIZE, rounded up), and inodes: one per 4 KiB of size (a file
 * that holds data takes at least a block) but at least
 * ZCFSD_PROJ_INODES_MIN, so that a small volume still holds a tree. */
#define ZCFSD_PROJ_INODES_MIN 1024u
struct zcfsd_proj_limits {
	uint64_t bytes;		/* SIZE */
	uint64_t basic_blocks;	/* 512-byte units */
	uint64_t kib;		/* 1024-byte units */
	uint64_t inodes;
};
void zcfsd_proj_limits_of(uint64_t size, struct zcfsd_proj_limits *l);

/* projquota.c: the kernel side. */
enum zcfsd_pq_kind { ZCFSD_PQ_NONE, ZCFSD_PQ_XFS, ZCFSD_PQ_EXT4 };
/* quotactl_fd(2) (Linux 5.14) on the storage root: no block device to
 * find, and every kernel with FUSE passthrough has it. */
struct zcfsd_pq_fs {
	enum zcfsd_pq_kind kind;
	int root_fd;		/* the storage root (borrowed) */
};
/* Whether the file system of ROOT_FD (the storage root, PATH for the
 * messages) enforces project quotas: 0 with FS filled, or -EOPNOTSUPP
 * (-errno of a failed probe) with WHY saying what the storage root
 * lacks, e.g. "XFS mounted without prjquota". */
int zcfsd_pq_probe(int root_fd, const char *path, struct zcfsd_pq_fs *fs, char *why, size_t len);
/* The project's usage and limits (bytes and inodes); -ENOENT: no such
 * project known to the file system (nothing used, no limits). */
struct zcfsd_pq_usage {
	uint64_t bytes_used, bytes_limit, inodes_used, inodes_limit;
};
int zcfsd_pq_get(const struct zcfsd_pq_fs *fs, uint32_t id, struct zcfsd_pq_usage *u);
/* Whether ID is in use on FS by anyone: usage or limits. */
bool zcfsd_pq_id_busy(const struct zcfsd_pq_fs *fs, uint32_t id);
/* Project ID and FS_XFLAG_PROJINHERIT on the directory DFD (idempotent). */
int zcfsd_pq_assign(int dfd, uint32_t id);
/* ID's hard limits from L (soft limits none); L NULL: no limits (the
 * project's record goes once nothing is charged to it). */
int zcfsd_pq_set_limits(const struct zcfsd_pq_fs *fs, uint32_t id, const struct zcfsd_proj_limits *l);
/* The project ID of the directory DFD (0: none), or -errno. */
int zcfsd_pq_id_of(int dfd, uint32_t *id);

#endif
