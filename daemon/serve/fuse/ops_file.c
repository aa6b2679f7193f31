/* File data operations on open handles. */
#include <fcntl.h>
#include <sys/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "daemon/serve/backend/backend.h"
#include "daemon/serve/backend/handle.h"
#include "common/log.h"
#include "file_io.h"
#include "ops.h"
#include "req_inode.h"
#include "daemon/serve/backend/passthrough.h"
#include "daemon/serve/backend/quota.h"
#include "daemon/serve/backend/resume.h"
#include "daemon/serve/backend/source_mount.h"

/* Flags for the backing open: the kernel's cache may read pages of a
 * write-only file and decides append offsets itself under writeback.
 * O_DIRECT stays on the client side: request buffers are not aligned the
 * way a direct backing fd demands. */
static int backing_open_flags(struct zcfs_session *se, uint32_t flags)
{
	int f = (int)flags & ~(O_CREAT | O_EXCL | O_NOCTTY | O_DIRECT);

	if (se->conn_flags & FUSE_WRITEBACK_CACHE) {
		if ((f & O_ACCMODE) == O_WRONLY)
			f = (f & ~O_ACCMODE) | O_RDWR;
		f &= ~O_APPEND;
	}
	/* -o noatime: reading through us must not touch the backing atime
	 * (the kernel leaves atime to the server). */
	if (se->opts->mount_flags & MS_NOATIME)
		f |= O_NOATIME;
	return f | O_CLOEXEC | O_NOFOLLOW;
}

/* FOPEN_NOFLUSH: close(2) costs a synchronous FLUSH round trip, and
 * FLUSH has nothing to do here (writes are on the backing file when
 * acknowledged; POSIX locks stay in the kernel). Under writeback the
 * kernel flushes dirty pages on close regardless.
 *
 * FOPEN_DIRECT_IO on an O_DIRECT open: the kernel's O_DIRECT write of a
 * cached-mode file holds the inode lock exclusively across the round trip
 * (fuse_cache_write_iter), so writers of one file take turns; a
 * FOPEN_DIRECT_IO file takes it shared (FOPEN_PARALLEL_DIRECT_WRITES,
 * fuse_dio_lock) while no open of the inode caches. Its reads are
 * synchronous requests finished in the client's context instead of
 * ASYNC_DIO background requests whose pages the server's thread releases
 * (io_uring 4 KiB direct reads +6%, 1 MiB +16%). Not for writing under
 * writeback: the kernel owns mtime/ctime then and its direct write path
 * (fuse_direct_write_iter) never moves them, so a stat would show the
 * time before the write until the inode is forgotten; a read-only open
 * writes nothing. Dirty pages of other opens are written back before a
 * direct read (fuse_direct_io, DIRECT_IO_ALLOW_MMAP). Passthrough replaces
 * these flags (passthrough_attach). */
static uint32_t open_reply_flags(struct zcfs_session *se, int client_flags)
{
	uint32_t f = FOPEN_PARALLEL_DIRECT_WRITES | FOPEN_NOFLUSH;

	if (se->keep_cache)
		f |= FOPEN_KEEP_CACHE;
	if (se->opts->cache == ZCFS_CACHE_NONE)
		f |= FOPEN_DIRECT_IO;
	if ((client_flags & O_DIRECT) &&
	    ((client_flags & O_ACCMODE) == O_RDONLY || !(se->conn_flags & FUSE_WRITEBACK_CACHE)))
		f |= FOPEN_DIRECT_IO;
	return f;
}

bool open_keeps_cache(struct zcfs_session *se, int fd)
{
	struct timespec now;
	struct stat st;

	if (!se->keep_cache)
		return false;
	/* the client's noatime (O_NOATIME) and ro (no atime to show) */
	if (se->opts->read_only || (se->opts->mount_flags & (MS_NOATIME | MS_RDONLY)))
		return true;
	if (fstat(fd, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
		return true;
	if (S_ISDIR(st.st_mode) && (se->opts->mount_flags & MS_NODIRATIME))
		return true;
	return !source_read_moves_atime(se->backing_atime, &st, &now);
}

/* Registers an open of inode on fd and fills out; consumes fd only on
 * success. */
static int new_file_handle(struct zcfs_req *req, struct zcfs_inode *inode, int fd, int client_flags,
			   struct zcfs_open_out *out)
{
	struct zcfs_session *se = req->se;
	struct zcfs_handle *h;
	int r = handle_new(fd, false, &h);

	if (r < 0)
		return r;
	h->nodeid = inode->nodeid;
	h->opener = req->in.uid;
	h->writable = (client_flags & O_ACCMODE) != O_RDONLY;
	memset(out, 0, sizeof(*out));
	out->open_flags = open_reply_flags(se, client_flags);
	r = passthrough_attach(se, inode, h, out);
	if (r == 0)
		r = handle_register(se->handles, h, &out->fh);
	if (r < 0) {
		passthrough_detach(se, h);
		free(h);
	}
	return r;
}

/* A real fd of inode's O_PATH handle: its /proc/self/fd/N magic link,
 * relative to the session's open /proc/self/fd when there is one (0.8-1.1
 * us less per OPEN than the whole path, tmpfs, load ~7). */
static int reopen_inode(struct zcfs_session *se, struct zcfs_inode *inode, int flags)
{
	char path[32];
	int fd;

	if (se->proc_fd_dir > 0) {
		snprintf(path, sizeof(path), "%d", inode->fd);
		fd = openat(se->proc_fd_dir, path, flags & ~O_NOFOLLOW);
	} else {
		proc_fd_path(inode->fd, path);
		fd = open(path, flags & ~O_NOFOLLOW);
	}
	return fd < 0 ? -errno : fd;
}

/* Drops the kernel's cached attributes of nodeid (not its pages), for
 * changes no reply tells it of: a set-id kill on OPEN, whose reply has
 * no attributes; st_blocks after a writeback flush. */
static void attrs_changed(struct zcfs_session *se, uint64_t nodeid)
{
	struct fuse_notify_inval_inode_out inv = { .ino = nodeid, .off = -1 };
	struct iovec iov = { .iov_base = &inv, .iov_len = sizeof(inv) };

	(void)!fuse_notify(se, FUSE_NOTIFY_INVAL_INODE, &iov, 1);
}

int op_open(struct zcfs_req *req)
{
	const struct fuse_open_in *a = req->arg;
	struct zcfs_session *se = req->se;
	struct zcfs_inode *inode;
	struct zcfs_open_out out;
	bool keep;
	int fd, r;

	if (se->opts->read_only && ((a->flags & O_ACCMODE) != O_RDONLY || (a->flags & O_TRUNC)))
		return -EROFS;
	r = req_inode(req, req->in.nodeid, &inode);
	if (r < 0)
		return r;
	fd = reopen_inode(se, inode, backing_open_flags(se, a->flags));
	if (fd == -EPERM && (backing_open_flags(se, a->flags) & O_NOATIME))
		fd = reopen_inode(se, inode, backing_open_flags(se, a->flags) & ~O_NOATIME);	/* not the owner */
	r = fd;
	if (fd >= 0 && (a->open_flags & FUSE_OPEN_KILL_SUIDGID)) {
		r = inode_kill_suidgid(se, inode, req->in.uid, req->in.gid);
		if (r > 0)
			attrs_changed(se, inode->nodeid);
	}
	/* a read that must move atime has to reach us: no cached pages */
	keep = (a->flags & O_ACCMODE) == O_WRONLY || (r >= 0 && open_keeps_cache(se, fd));
	if (r >= 0)
		r = new_file_handle(req, inode, fd, a->flags, &out);
	if (r >= 0 && !keep)
		out.open_flags &= ~FOPEN_KEEP_CACHE;
	req_inode_put(req, inode);
	if (r < 0) {
		safe_close(fd);
		return r;
	}
	return reply_buf(req, &out, sizeof(out));
}

/* kill: O_TRUNC of an existing set-id file by a caller without
 * CAP_FSETID (FUSE_OPEN_KILL_SUIDGID); then attr, the entry's
 * attributes, are looked up again. */
static int create_handle(struct zcfs_req *req, uint64_t nodeid, int fd, int client_flags, bool kill,
			 struct zcfs_open_out *out, struct fuse_attr *attr)
{
	struct zcfs_inode *inode = inode_get(req->se->inodes, nodeid);
	struct stat st;
	int r = 0;

	if (!inode)
		return -ESTALE;
	if (kill)
		r = inode_kill_suidgid(req->se, inode, req->in.uid, req->in.gid);
	if (r > 0) {
		r = inode_stat(req->se, inode, &st);
		if (r == 0)
			fill_attr(req->se, &st, attr);
	}
	if (r == 0)
		r = new_file_handle(req, inode, fd, client_flags, out);
	inode_put(req->se->inodes, inode);
	return r;
}

int op_create(struct zcfs_req *req)
{
	const struct fuse_create_in *a = req->arg;
	struct zcfs_session *se = req->se;
	struct {
		struct fuse_entry_out e;
		struct zcfs_open_out o;
	} out;
	struct zcfs_inode *parent;
	mode_t mode = S_IFREG | (a->mode & 07777);
	const char *name;
	size_t off = 0;
	uid_t uid;
	gid_t gid;
	bool created = true;
	int fd = -1, flags, r;

	r = req_next_string(req, &off, &name);
	if (r == 0)
		r = req_entry_parent(req, name, &parent);
	if (r < 0)
		return r;
	flags = backing_open_flags(se, a->flags);
	mode = create_mode(req, parent, mode, a->umask);
	fd = openat(parent->fd, name, flags | O_CREAT | O_EXCL, se->xattr_owner ? 0600 : (mode & 0777));
	if (fd < 0 && errno == EEXIST && !(a->flags & O_EXCL)) {
		created = false;
		fd = openat(parent->fd, name, flags);
	}
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	if (created) {
		r = new_owner(req, parent, &mode, &uid, &gid);
		if (r == 0)
			r = set_new_owner(se, parent->fd, name, fd, mode, uid, gid, 0);
	}
	if (r == 0)
		r = do_lookup(se, parent, name, &out.e);
	if (r < 0)
		goto fail;
	r = create_handle(req, out.e.nodeid, fd, a->flags,
			  !created && (a->open_flags & FUSE_OPEN_KILL_SUIDGID), &out.o, &out.e.attr);
	if (r < 0) {
		inode_forget(se->inodes, out.e.nodeid, 1);
		goto fail;
	}
	if (created)
		quota_charge_new(se, parent, out.e.attr.blocks);
	req_inode_put(req, parent);
	return reply_buf(req, &out, sizeof(out));
fail:
	if (created)
		(void)unlinkat(parent->fd, name, 0);
	safe_close(fd);
out:
	req_inode_put(req, parent);
	return r;
}

/* A write by a caller without CAP_FSETID drops set-id bits first. */
static int kill_suidgid_fh(struct zcfs_req *req, uint64_t fh)
{
	struct zcfs_handle *h = handle_get(req->se->handles, fh);
	struct zcfs_inode *inode;
	int r;

	r = h ? req_inode(req, h->nodeid, &inode) : req_inode(req, req->in.nodeid, &inode);
	if (r < 0)
		return r;
	r = inode_kill_suidgid(req->se, inode, req->in.uid, req->in.gid);
	req_inode_put(req, inode);
	return r;
}

/* The backing fd of an open file; after --resume an fh of the previous
 * server is re-opened on the request's inode. Read-write whatever the
 * request says: one fh serves every later request, and writeback WRITEs
 * carry no access mode at all (flags 0, i.e. O_RDONLY). The re-open
 * falls back to read-only where the file allows no more. */
static int file_fd_flags(struct zcfs_req *req, uint64_t fh, int open_flags)
{
	struct zcfs_handle *h = handle_get(req->se->handles, fh);
	int r;

	if (!h && req->se->resume) {
		open_flags = backing_open_flags(req->se, (uint32_t)((open_flags & ~O_ACCMODE) | O_RDWR));
		r = resume_adopt_handle(req->se, req->in.nodeid, fh, open_flags, false, &h);
		if (r < 0)
			return r == -ESTALE ? -EBADF : r;
	}
	return h && h->fd >= 0 ? h->fd : -EBADF;
}

static int file_fd(struct zcfs_req *req, uint64_t fh)
{
	return file_fd_flags(req, fh, O_RDWR);
}

/* End of a WRITE or COPY_FILE_RANGE into fh: the file's blocks recounted
 * and the quota reservation dropped whatever happened, then the reply.
 * n: bytes written or -errno. */
static int write_done(struct zcfs_req *req, uint64_t fh, uint64_t held, ssize_t n)
{
	struct fuse_write_out out;

	quota_recount_fh(req->se, fh);
	quota_unreserve(req->se, held);
	if (n < 0)
		return (int)n;
	memset(&out, 0, sizeof(out));
	out.size = (uint32_t)n;
	return reply_buf(req, &out, sizeof(out));
}

int file_io_begin(struct zcfs_req *req, bool data_elsewhere, struct file_io *io)
{
	const struct fuse_read_in *rd = req->arg;	/* fh, offset, size lead both */
	const struct fuse_write_in *wr = req->arg;
	size_t cap = MAX(req->se->max_write, req->outbuf_size);
	int r;

	*io = (struct file_io){ .write = req->in.opcode == FUSE_WRITE, .fh = rd->fh, .off = rd->offset,
				.len = rd->size };
	io->fd = file_fd_flags(req, io->fh, (int)(io->write ? wr->flags : rd->flags));
	if (io->fd < 0)
		return io->fd;
	if (!io->write) {
		io->len = MIN(io->len, cap);
		return 0;
	}
	if (!data_elsewhere && wr->size > req->data_len)
		return -EINVAL;
	if (wr->write_flags & FUSE_WRITE_KILL_SUIDGID) {
		r = kill_suidgid_fh(req, io->fh);
		if (r < 0)
			return r;
	}
	return quota_reserve(req->se, io->fd, io->off, &io->len, &io->quota_held);
}

int file_io_end(struct zcfs_req *req, struct file_io *io, const void *buf, ssize_t n)
{
	if (io->write)
		return write_done(req, io->fh, io->quota_held, n);
	if (n < 0)
		return (int)n;
	return reply_buf(req, buf, (size_t)n);
}

int op_read(struct zcfs_req *req)
{
	_cleanup_free_ void *own = NULL;
	struct file_io io;
	void *buf = req->outbuf;
	ssize_t n;
	int r = file_io_begin(req, false, &io);

	if (r < 0)
		return r;
	if (req->reply_fd && req->reply_fd(req, io.fd, io.off, io.len) > 0)
		return 0;
	if (!buf || io.len > req->outbuf_size) {
		buf = own = malloc(io.len ? io.len : 1);
		if (!buf)
			return -ENOMEM;
	}
	n = pread(io.fd, buf, io.len, (off_t)io.off);
	return file_io_end(req, &io, buf, n < 0 ? -errno : n);
}

int op_write(struct zcfs_req *req)
{
	struct file_io io;
	ssize_t n;
	int r = file_io_begin(req, false, &io);

	if (r < 0)
		return r;
	n = pwrite(io.fd, req->data, io.len, (off_t)io.off);
	return file_io_end(req, &io, NULL, n < 0 ? -errno : n);
}

int op_release(struct zcfs_req *req)
{
	const struct fuse_release_in *a = req->arg;
	struct zcfs_handle *h = handle_unregister(req->se->handles, a->fh);

	if (h) {
		passthrough_detach(req->se, h);
		quota_release(req->se, h->fd);
		handle_free(h);
	}
	return reply_err(req, 0);
}

/* FLUSH has nothing to do (see open_reply_flags), but under writeback the
 * kernel sends it on every close despite FOPEN_NOFLUSH. ENOSYS makes the
 * kernel stop sending it for the connection: one round trip less per
 * close(2); the kernel still writes the dirty pages back and reports
 * their errors at close. */
int op_flush(struct zcfs_req *req)
{
	(void)req;
	return -ENOSYS;
}

int op_fsync(struct zcfs_req *req)
{
	const struct fuse_fsync_in *a = req->arg;
	int fd = file_fd(req, a->fh), r;

	if (fd < 0)
		return fd;
	r = RET_NERRNO((a->fsync_flags & FUSE_FSYNC_FDATASYNC) ? fdatasync(fd) : fsync(fd));
	if (r == 0 && (req->se->conn_flags & FUSE_WRITEBACK_CACHE)) {
		/* Under writeback the kernel keeps attributes from before its
		 * flush (st_blocks): drop them, data pages stay. */
		struct zcfs_handle *h = handle_get(req->se->handles, a->fh);
		if (h)
			attrs_changed(req->se, h->nodeid);
	}
	return reply_err(req, r);
}

int op_fallocate(struct zcfs_req *req)
{
	const struct fuse_fallocate_in *a = req->arg;
	size_t len = (size_t)a->length;
	uint64_t held = 0;
	int r, fd = file_fd(req, a->fh);

	if (fd < 0)
		return fd;
	if (req->se->opts->read_only)
		return -EROFS;
	/* Modes that allocate must fit whole: fallocate has no short count. */
	if (!(a->mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE))) {
		r = quota_reserve(req->se, fd, a->offset, &len, &held);
		if (r == 0 && len < a->length)
			r = -ENOSPC;
		if (r < 0) {
			quota_unreserve(req->se, held);
			return r;
		}
	}
	r = RET_NERRNO(fallocate(fd, (int)a->mode, (off_t)a->offset, (off_t)a->length));
	quota_recount_fh(req->se, a->fh);
	quota_unreserve(req->se, held);
	return reply_err(req, r);
}

int op_lseek(struct zcfs_req *req)
{
	const struct fuse_lseek_in *a = req->arg;
	struct fuse_lseek_out out;
	off_t off;
	int fd = file_fd(req, a->fh);

	if (fd < 0)
		return fd;
	/* Under writeback, data may sit unflushed in the kernel: the backing
	 * file's holes say nothing. ENOSYS makes the kernel answer from its
	 * own size (all data, hole at EOF), which POSIX allows. */
	if (req->se->conn_flags & FUSE_WRITEBACK_CACHE)
		return -ENOSYS;
	off = lseek(fd, (off_t)a->offset, (int)a->whence);
	if (off < 0)
		return -errno;
	memset(&out, 0, sizeof(out));
	out.offset = (uint64_t)off;
	return reply_buf(req, &out, sizeof(out));
}

int op_copy_file_range(struct zcfs_req *req)
{
	const struct fuse_copy_file_range_in *a = req->arg;
	loff_t in_off = (loff_t)a->off_in, out_off = (loff_t)a->off_out;
	int r, in = file_fd(req, a->fh_in), outfd = file_fd(req, a->fh_out);
	size_t len = (size_t)a->len;
	uint64_t held;
	ssize_t n;

	if (in < 0)
		return in;
	if (outfd < 0)
		return outfd;
	r = quota_reserve(req->se, outfd, a->off_out, &len, &held);
	if (r < 0)
		return r;
	n = copy_file_range(in, &in_off, outfd, &out_off, len, (unsigned)a->flags);
	return write_done(req, a->fh_out, held, n < 0 ? -errno : n);
}
