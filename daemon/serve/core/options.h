/* zcfs-serve command line: parsed into one struct, validated in one place. */
#ifndef ZCFS_OPTIONS_H
#define ZCFS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum zcfs_transport_kind { ZCFS_TRANSPORT_AUTO, ZCFS_TRANSPORT_DEVFUSE, ZCFS_TRANSPORT_URING };
enum zcfs_ownership { ZCFS_OWNERSHIP_DEFAULT, ZCFS_OWNERSHIP_NATIVE, ZCFS_OWNERSHIP_XATTR };
enum zcfs_cache { ZCFS_CACHE_DEFAULT, ZCFS_CACHE_EXCLUSIVE, ZCFS_CACHE_SHARED, ZCFS_CACHE_NONE };
/* Patched-kernel (protocol 7.46) ring extensions, see uring_bufpool.h. */
enum zcfs_bufpool_mode { ZCFS_BUFPOOL_AUTO, ZCFS_BUFPOOL_ON, ZCFS_BUFPOOL_REGISTERED, ZCFS_BUFPOOL_OFF };
enum zcfs_zerocopy_mode { ZCFS_ZEROCOPY_AUTO, ZCFS_ZEROCOPY_ON, ZCFS_ZEROCOPY_OFF };
/* --uring-backing: a stock io_uring queue's backing reads and writes on its
 * ring (auto: where the backing fs takes RWF_NOWAIT) or in its thread. */
enum zcfs_uring_backing { ZCFS_URING_BACKING_AUTO, ZCFS_URING_BACKING_INLINE };

struct zcfs_options {
	const char *source;
	const char *mountpoint;
	enum zcfs_transport_kind transport;
	enum zcfs_ownership ownership;
	enum zcfs_cache cache;
	unsigned threads;	/* 0: one per CPU */
	/* 0 until main resolves them: given, or chosen by the io_uring
	 * geometry (common/uring_sizing.h) within pinned_budget. */
	unsigned queue_depth;
	uint32_t max_write;
	uint64_t pinned_budget;	/* --pinned-budget; 0: URING_DEFAULT_PINNED_BUDGET */
	enum zcfs_bufpool_mode buffer_pool;
	enum zcfs_zerocopy_mode zero_copy;
	enum zcfs_uring_backing uring_backing;
	uint64_t quota_bytes;	/* 0: no size limit */
	bool count_inodes;	/* --count-inodes: STATFS's inodes in use are the volume's */
	int ring_memfd;		/* -1, or a memfd the ring buffers live in (uring_ringmem.h) */
	uint64_t dirty_limit;	/* bdi max_bytes with writeback when self-mounted; 0: kernel's */
	unsigned pool_buffers;	/* payload buffers per queue pool; 0: = queue_depth */
	int fuse_fd;		/* -1: mount ourselves; else an inherited, mounted fd */
	int stats_fd;		/* -1, or shared counters to map (zcfs_stats.h) */
	int broker_fd;		/* -1, or zcfsd's passthrough broker socket (zcfs_broker.h) */
	int ready_fd;		/* -1, or where to say "serving" (session_ready) */
	int standby_fd;		/* -1, or the pipe whose 'G' lets a prepared successor serve */
	int holder_rings;	/* -1, or the fd of a ring holder's ring 0 (uring_holder.h) */
	bool ring_holder;	/* --ring-holder: be the ring holder, serve nothing */
	unsigned long mount_flags;	/* MS_* of -o (nodev, nosuid, noatime...); default nodev,nosuid */
	char fsname[256];	/* -o fsname=: the mount's source column (default SOURCE) */
	char subtype[64];	/* -o subtype=: file system type fuse.<subtype> (default zcfs) */
	bool no_subtype;	/* -o subtype= (empty): type plain "fuse" */
	bool read_only;
	bool foreground;
	bool debug;
	bool allow_other;
	bool writeback;
	bool passthrough;
	bool resume;		/* take over a live connection (--fd) */
	bool help;
	bool version;
	bool print_pinned;	/* print the bytes the volume pins, mount nothing */
	bool sandbox;		/* seccomp + Landlock before serving; needs --fd */
	bool no_acl;		/* --no-acl / -o noacl: no POSIX ACLs (native ownership has them) */
};

/* Parses argv into *opts. `-o opt[,opt...]` takes the generic mount
 * options (ro, rw, dev, nodev, suid, nosuid, exec, noexec, atime, noatime,
 * relatime, strictatime, ..., allow_other, default_permissions, fsname=,
 * subtype=) and every long option as key[=value]. Returns 0, or -EINVAL
 * after writing one line that names the problem into errbuf. */
int options_parse(int argc, char **argv, struct zcfs_options *opts, char *errbuf, size_t errlen);
void options_usage(const char *prog);

#endif
