/* Connection-level operations: INIT negotiation, DESTROY, INTERRUPT,
 * STATFS and ACCESS. */
#include <string.h>
#include <sys/statvfs.h>
#include "daemon/serve/backend/backend.h"
#include "common/log.h"
#include "daemon/serve/backend/quota.h"
#include "ops.h"
#include "req_inode.h"
#include "daemon/serve/backend/passthrough.h"

/* Oldest protocol whose reply layouts we send unconditionally (5.x+). */
#define MIN_KERNEL_MINOR 31

static void log_serving(struct zcfs_session *se, const char *how);

static uint64_t wanted_flags(struct zcfs_session *se)
{
	uint64_t f = FUSE_ASYNC_READ | FUSE_ATOMIC_O_TRUNC | FUSE_BIG_WRITES | FUSE_MAX_PAGES |
		     FUSE_PARALLEL_DIROPS | FUSE_DO_READDIRPLUS | FUSE_READDIRPLUS_AUTO |
		     FUSE_ASYNC_DIO | FUSE_INIT_EXT | FUSE_DIRECT_IO_ALLOW_MMAP;

	switch (se->opts->cache) {
	case ZCFS_CACHE_EXCLUSIVE:
		f |= FUSE_CACHE_SYMLINKS;
		break;
	case ZCFS_CACHE_NONE:
		break;
	default:
		f |= FUSE_AUTO_INVAL_DATA;
		break;
	}
	/* We kill set-id bits (KILLPRIV_V2): the kernel then skips its
	 * security.capability lookup (a GETXATTR round trip) on every write
	 * of a file without them. Passthrough writes never reach us; for a
	 * caller without CAP_FSETID the kernel asks first with an empty
	 * SETATTR (op_setattr). Writeback caching and passthrough exclude
	 * each other in the kernel. */
	f |= FUSE_HANDLE_KILLPRIV_V2;
	/* File handles would outlive the inode table: open_by_handle_at of
	 * a forgotten node id needs LOOKUP of "." by node id alone, which
	 * we cannot answer (no ino -> name index), so it would be ESTALE.
	 * Refuse handles instead of handing out ones that do not work. */
	f |= FUSE_NO_EXPORT_SUPPORT;
	/* POSIX ACLs live on the backing files in native ownership: the
	 * kernel enforces them (default_permissions), and sends modes
	 * unmasked so that a parent's default ACL, not the umask, decides
	 * (create_mode()). */
	if (!se->xattr_owner && !se->opts->no_acl)
		f |= FUSE_POSIX_ACL | FUSE_DONT_MASK;
	/* The kernel says with SETXATTR when setting an access ACL must
	 * drop set-gid (the caller is outside the file's group): we set the
	 * ACL as root, whom the backing file system lets keep it. */
	if (f & FUSE_POSIX_ACL)
		f |= FUSE_SETXATTR_EXT;
	if (se->opts->passthrough && !quota_limits(se)) {
		f |= FUSE_PASSTHROUGH;
	} else {
		if (se->opts->writeback)
			f |= FUSE_WRITEBACK_CACHE;
	}
	return f;
}

int op_init(struct zcfs_req *req)
{
	struct zcfs_session *se = req->se;
	struct fuse_init_in in;
	struct zcfs_init_out out;
	uint64_t offered, want;
	int r;

	memset(&in, 0, sizeof(in));
	memcpy(&in, req->arg, MIN(req->arg_len, sizeof(in)));
	memset(&out, 0, sizeof(out));
	out.major = ZCFS_FUSE_MAJOR;
	out.minor = ZCFS_FUSE_MINOR;
	if (in.major > ZCFS_FUSE_MAJOR)
		return reply_buf(req, &out, 8);	/* kernel retries with our major */
	if (in.major < ZCFS_FUSE_MAJOR || in.minor < MIN_KERNEL_MINOR) {
		log_err("kernel FUSE protocol %u.%u is older than 7.%d", in.major, in.minor,
			MIN_KERNEL_MINOR);
		return -EPROTO;
	}
	offered = in.flags;
	if (in.flags & FUSE_INIT_EXT)
		offered |= (uint64_t)in.flags2 << 32;
	want = wanted_flags(se);
	if (se->transport->init_flags)
		want |= se->transport->init_flags(se, offered);
	se->conn_flags = (want & offered) | FUSE_INIT_EXT;
	se->proto_minor = MIN(in.minor, (uint32_t)ZCFS_FUSE_MINOR);

	out.flags = (uint32_t)se->conn_flags;
	out.flags2 = (uint32_t)(se->conn_flags >> 32);
	out.max_readahead = in.max_readahead;
	out.max_write = se->max_write;
	out.max_pages = (uint16_t)se->max_pages;
	out.time_gran = 1;
	out.max_background = 64;
	out.congestion_threshold = 48;
	if (se->conn_flags & FUSE_PASSTHROUGH) {
		out.max_stack_depth = 1;	/* backing files may not be FUSE */
		atomic_store(&se->passthrough_on, true);
	} else if (se->opts->passthrough && quota_limits(se)) {
		log_info("kernel passthrough off: its writes would bypass --quota-bytes");
	} else if (se->opts->passthrough) {
		log_warn("kernel passthrough requested but not offered by the kernel");
	}
	session_set_initialized(se);
	r = reply_buf(req, &out, sizeof(out));
	if (r < 0)
		return r;
	log_debug("init: kernel 7.%u flags=0x%llx negotiated=0x%llx", in.minor,
		  (unsigned long long)offered, (unsigned long long)se->conn_flags);
	if (se->transport->after_init) {
		r = se->transport->after_init(se);
		if (r < 0) {
			log_err("transport %s failed after INIT: %s", se->transport->name, strerror(-r));
			session_exit(se, 1);
			return 0;	/* exiting: --ready-fd closes unwritten */
		}
	}
	/* Ready first: log_serving's broker hello waits for zcfsd, which
	 * may be waiting for this byte (publish) and answers only after. */
	session_ready(se);
	log_serving(se, "");
	return 0;
}

/* "main=WALL_US steps_ms=source:A,tables:B,confine:C,transport:D,standby:E,serving:F":
 * when main() was entered and how long each start step took
 * (zcfs_start_step; a step not reached counts 0). */
static void start_steps(struct zcfs_session *se, char *buf, size_t len)
{
	static const char *const names[] = { "source", "tables", "confine", "transport", "standby",
					      "serving" };
	int64_t *t = se->start_us, prev = t[START_MAIN];
	size_t off;

	t[START_SERVING] = wall_us();
	off = (size_t)snprintf(buf, len, "main=%lld steps_ms=", (long long)prev);
	for (unsigned i = START_SOURCE; i < START_STEPS && off < len; i++) {
		int64_t ti = __atomic_load_n(&t[i], __ATOMIC_RELAXED);
		int64_t d = ti && prev ? ti - prev : 0;
		off += (size_t)snprintf(buf + off, len - off, "%s%s:%.1f", i > START_SOURCE ? "," : "",
					names[i - START_SOURCE], (double)d / 1000);
		if (ti)
			prev = ti;
	}
}

static void log_serving(struct zcfs_session *se, const char *how)
{
	char steps[160];

	start_steps(se, steps, sizeof(steps));
	passthrough_announce(se);	/* zcfsd shows what was negotiated */
	log_info("serving source=%s mountpoint=%s %s passthrough=%s protocol=7.%u max_write=%u ownership=%s cache=%s writeback=%s%s %s",
		 se->opts->source, se->opts->mountpoint ? se->opts->mountpoint : "-",
		 se->transport_desc, atomic_load(&se->passthrough_on) ? "on" : "off",
		 se->proto_minor, se->max_write, se->xattr_owner ? "xattr" : "native",
		 se->opts->cache == ZCFS_CACHE_EXCLUSIVE ? "exclusive" :
		 se->opts->cache == ZCFS_CACHE_NONE ? "none" : "shared",
		 (se->conn_flags & FUSE_WRITEBACK_CACHE) ? "on" : "off", how, steps);
}

int session_resume(struct zcfs_session *se)
{
	int r = 0;

	/* INIT happened with the previous server, which zcfsd started with
	 * the same options on this kernel: assume what it negotiated. */
	se->conn_flags = wanted_flags(se) | FUSE_INIT_EXT;
	if (se->transport->init_flags)
		se->conn_flags |= se->transport->init_flags(se, ~0ULL);
	/* Stock level: a resumed server does not set up buffer pools. */
	se->proto_minor = ZCFS_FUSE_MINOR_STOCK;
	atomic_store(&se->passthrough_on, (se->conn_flags & FUSE_PASSTHROUGH) != 0);
	session_set_initialized(se);
	if (se->transport->after_init)
		r = se->transport->after_init(se);
	if (r == 0) {
		session_ready(se);	/* before the hello, as in op_init */
		log_serving(se, " resumed=yes");
	}
	return r;
}

int op_destroy(struct zcfs_req *req)
{
	int r = reply_err(req, 0);

	session_exit(req->se, 0);
	return r;
}

int op_interrupt(struct zcfs_req *req)
{
	/* Requests run to completion synchronously; nothing to cancel. */
	reply_none(req);
	return 0;
}

int op_statfs(struct zcfs_req *req)
{
	struct fuse_statfs_out out;
	struct zcfs_inode *inode;
	struct statvfs sv;
	struct stat st;
	int r, fd;

	r = req_inode(req, req->in.nodeid, &inode);
	if (r < 0)
		return r;
	/* XFS and ext4 report a project quota (a zcfsd volume's size) for
	 * directories only, which carry its inherit flag: a file of SOURCE's
	 * file system reports what SOURCE's root does. */
	fd = inode->fd;
	if ((uint64_t)inode->dev == req->se->root_dev && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		fd = req->se->root_fd;
	r = RET_NERRNO(fstatvfs(fd, &sv));
	req_inode_put(req, inode);
	if (r < 0)
		return r;
	memset(&out, 0, sizeof(out));
	out.st.blocks = sv.f_blocks;
	out.st.bfree = sv.f_bfree;
	out.st.bavail = sv.f_bavail;
	out.st.files = sv.f_files;
	out.st.ffree = sv.f_ffree;
	out.st.bsize = (uint32_t)sv.f_bsize;
	out.st.frsize = (uint32_t)sv.f_frsize;
	out.st.namelen = (uint32_t)sv.f_namemax;
	quota_statfs(req->se, &out.st);
	return reply_buf(req, &out, sizeof(out));
}

int op_access(struct zcfs_req *req)
{
	struct zcfs_inode *inode;
	int r;

	/* Mounted with default_permissions: the kernel checks modes itself;
	 * this only confirms the inode still exists. */
	r = req_inode(req, req->in.nodeid, &inode);
	if (r < 0)
		return r;
	req_inode_put(req, inode);
	return reply_err(req, 0);
}
