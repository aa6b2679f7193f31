/* FUSE message decoding and dispatch: every length is checked against the
 * opcode table before a handler sees the request, so a truncated or
 * malformed message is answered with an error, never read out of bounds.
 * What the handlers use of their request (its strings, the replies) is
 * req_io.c's, so the table calls the handlers and nothing calls back. */
#include <string.h>
#include "daemon/serve/backend/inode.h"
#include "common/log.h"
#include "fuse_msg.h"
#include "ops.h"
#include "daemon/serve/backend/prune.h"

struct opcode_desc {
	const char *name;
	int arg_size;		/* fixed argument struct; 0 for none */
	zcfs_op_fn fn;
	bool no_reply;
	/* Its data may move off the dispatching thread: a transport that
	 * does so (req->serve_async, the io_uring queue) serves it instead
	 * of fn and answers it once the data has moved. */
	bool async;
	/* Fails cleanly (nothing changed) when it cannot open a descriptor:
	 * worth one more try once the kernel forgot some inodes (prune.h). */
	bool retry_emfile;
};

#define OP(code, nm, sz, f) [code] = { .name = nm, .arg_size = (sz), .fn = (f) }
#define OP_NOREPLY(code, nm, sz, f) [code] = { .name = nm, .arg_size = (sz), .fn = (f), .no_reply = true }
#define OP_OPENS(code, nm, sz, f) [code] = { .name = nm, .arg_size = (sz), .fn = (f), .retry_emfile = true }
#define OP_ASYNC(code, nm, sz, f) [code] = { .name = nm, .arg_size = (sz), .fn = (f), .async = true }

static const struct opcode_desc opcodes[] = {
	OP_OPENS(FUSE_LOOKUP, "LOOKUP", 0, op_lookup),
	OP_NOREPLY(FUSE_FORGET, "FORGET", sizeof(struct fuse_forget_in), op_forget),
	OP_OPENS(FUSE_GETATTR, "GETATTR", sizeof(struct fuse_getattr_in), op_getattr),
	OP(FUSE_SETATTR, "SETATTR", sizeof(struct fuse_setattr_in), op_setattr),
	OP_OPENS(FUSE_READLINK, "READLINK", 0, op_readlink),
	OP_OPENS(FUSE_SYMLINK, "SYMLINK", 0, op_symlink),
	OP_OPENS(FUSE_MKNOD, "MKNOD", sizeof(struct fuse_mknod_in), op_mknod),
	OP_OPENS(FUSE_MKDIR, "MKDIR", sizeof(struct fuse_mkdir_in), op_mkdir),
	OP(FUSE_UNLINK, "UNLINK", 0, op_unlink),
	OP(FUSE_RMDIR, "RMDIR", 0, op_rmdir),
	OP(FUSE_RENAME, "RENAME", sizeof(struct fuse_rename_in), op_rename),
	OP_OPENS(FUSE_LINK, "LINK", sizeof(struct fuse_link_in), op_link),
	OP_OPENS(FUSE_OPEN, "OPEN", sizeof(struct fuse_open_in), op_open),
	OP_ASYNC(FUSE_READ, "READ", sizeof(struct fuse_read_in), op_read),
	OP_ASYNC(FUSE_WRITE, "WRITE", sizeof(struct fuse_write_in), op_write),
	OP(FUSE_STATFS, "STATFS", 0, op_statfs),
	OP(FUSE_RELEASE, "RELEASE", sizeof(struct fuse_release_in), op_release),
	OP(FUSE_FSYNC, "FSYNC", sizeof(struct fuse_fsync_in), op_fsync),
	/* Without FUSE_SETXATTR_EXT the kernel sends the 8-byte form. */
	OP(FUSE_SETXATTR, "SETXATTR", FUSE_COMPAT_SETXATTR_IN_SIZE, op_setxattr),
	OP_OPENS(FUSE_GETXATTR, "GETXATTR", sizeof(struct fuse_getxattr_in), op_getxattr),
	OP_OPENS(FUSE_LISTXATTR, "LISTXATTR", sizeof(struct fuse_getxattr_in), op_listxattr),
	OP(FUSE_REMOVEXATTR, "REMOVEXATTR", 0, op_removexattr),
	OP(FUSE_FLUSH, "FLUSH", sizeof(struct fuse_flush_in), op_flush),
	OP(FUSE_INIT, "INIT", 16, op_init),
	OP_OPENS(FUSE_OPENDIR, "OPENDIR", sizeof(struct fuse_open_in), op_opendir),
	OP(FUSE_READDIR, "READDIR", sizeof(struct fuse_read_in), op_readdir),
	OP(FUSE_RELEASEDIR, "RELEASEDIR", sizeof(struct fuse_release_in), op_releasedir),
	OP(FUSE_FSYNCDIR, "FSYNCDIR", sizeof(struct fuse_fsync_in), op_fsyncdir),
	OP(FUSE_GETLK, "GETLK", sizeof(struct fuse_lk_in), NULL),
	OP(FUSE_SETLK, "SETLK", sizeof(struct fuse_lk_in), NULL),
	OP(FUSE_SETLKW, "SETLKW", sizeof(struct fuse_lk_in), NULL),
	OP(FUSE_ACCESS, "ACCESS", sizeof(struct fuse_access_in), op_access),
	OP_OPENS(FUSE_CREATE, "CREATE", sizeof(struct fuse_create_in), op_create),
	OP_NOREPLY(FUSE_INTERRUPT, "INTERRUPT", sizeof(struct fuse_interrupt_in), op_interrupt),
	OP(FUSE_BMAP, "BMAP", sizeof(struct fuse_bmap_in), NULL),
	OP(FUSE_DESTROY, "DESTROY", 0, op_destroy),
	OP(FUSE_IOCTL, "IOCTL", sizeof(struct fuse_ioctl_in), NULL),
	OP(FUSE_POLL, "POLL", sizeof(struct fuse_poll_in), NULL),
	OP_NOREPLY(FUSE_NOTIFY_REPLY, "NOTIFY_REPLY", 0, NULL),
	OP_NOREPLY(FUSE_BATCH_FORGET, "BATCH_FORGET", sizeof(struct fuse_batch_forget_in), op_batch_forget),
	OP(FUSE_FALLOCATE, "FALLOCATE", sizeof(struct fuse_fallocate_in), op_fallocate),
	OP(FUSE_READDIRPLUS, "READDIRPLUS", sizeof(struct fuse_read_in), op_readdirplus),
	OP(FUSE_RENAME2, "RENAME2", sizeof(struct fuse_rename2_in), op_rename2),
	OP(FUSE_LSEEK, "LSEEK", sizeof(struct fuse_lseek_in), op_lseek),
	OP(FUSE_COPY_FILE_RANGE, "COPY_FILE_RANGE", sizeof(struct fuse_copy_file_range_in),
	   op_copy_file_range),
	OP(FUSE_SETUPMAPPING, "SETUPMAPPING", 0, NULL),
	OP(FUSE_REMOVEMAPPING, "REMOVEMAPPING", 0, NULL),
	OP(FUSE_SYNCFS, "SYNCFS", 0, NULL),
	OP(FUSE_TMPFILE, "TMPFILE", 0, NULL),
};

static const struct opcode_desc *opcode_lookup(uint32_t opcode)
{
	if (opcode >= ARRAY_SIZE(opcodes) || !opcodes[opcode].name)
		return NULL;
	return &opcodes[opcode];
}

const char *fuse_opcode_name(uint32_t opcode)
{
	const struct opcode_desc *d = opcode_lookup(opcode);
	return d ? d->name : "UNKNOWN";
}

int fuse_opcode_arg_size(uint32_t opcode)
{
	const struct opcode_desc *d = opcode_lookup(opcode);
	return d ? d->arg_size : -1;
}

int req_decode(struct zcfs_req *req, const struct fuse_in_header *in, const void *arg,
	       size_t arg_len, const void *data, size_t data_len, bool contiguous)
{
	const struct opcode_desc *d = opcode_lookup(in->opcode);
	size_t need, ext = (size_t)in->total_extlen * 8;

	req->in = *in;
	req_start_clock(req);
	req->arg = NULL;
	req->arg_len = 0;
	req->data = NULL;
	req->data_len = 0;
	req->replied = false;
	if (!d)
		return 0;	/* dispatch answers ENOSYS */
	need = (size_t)d->arg_size;
	if (in->opcode == FUSE_INIT)
		need = MIN(arg_len, sizeof(struct fuse_init_in));
	/* With FUSE_SETXATTR_EXT the kernel sends the whole struct. */
	if (in->opcode == FUSE_SETXATTR && req->se && (req->se->conn_flags & FUSE_SETXATTR_EXT))
		need = sizeof(struct fuse_setxattr_in);
	if (arg_len < need)
		return -EINVAL;
	req->arg = need ? arg : NULL;
	req->arg_len = need;
	if (contiguous) {
		data = (const char *)arg + need;
		data_len = arg_len - need;
	}
	/* Request extensions sit at the end of the payload; not ours to parse. */
	if (ext > data_len)
		return -EINVAL;
	req->data = data;
	req->data_len = data_len - ext;
	return 0;
}

int req_decode_devfuse(struct zcfs_req *req, const void *buf, size_t n)
{
	struct fuse_in_header in;

	if (n < sizeof(in))
		return -EPROTO;
	memcpy(&in, buf, sizeof(in));
	if (in.len != n)
		return -EPROTO;
	return req_decode(req, &in, (const char *)buf + sizeof(in), n - sizeof(in), NULL, 0, true);
}

void session_dispatch(struct zcfs_req *req)
{
	const struct opcode_desc *d = opcode_lookup(req->in.opcode);
	struct zcfs_session *se = req->se;
	int r;

	log_debug("op=%s unique=%llu nodeid=%llu uid=%u len=%u", fuse_opcode_name(req->in.opcode),
		  (unsigned long long)req->in.unique, (unsigned long long)req->in.nodeid,
		  req->in.uid, req->in.len);
	/* Read by a predecessor that did not answer it: it may run twice
	 * (docs/supervision.md). Said, so a planned restart that should
	 * replay nothing can be checked. */
	if (req->in.unique & ZCFS_FUSE_UNIQUE_RESEND)
		log_info("replayed request: op=%s unique=%llu nodeid=%llu", fuse_opcode_name(req->in.opcode),
			 (unsigned long long)(req->in.unique & ~ZCFS_FUSE_UNIQUE_RESEND),
			 (unsigned long long)req->in.nodeid);

	/* A resumed connection was initialized by our predecessor: what we
	 * read before session_resume() ran waits for it (its INIT is never
	 * sent again). On a fresh mount nothing but INIT can come first. */
	if (!atomic_load(&se->initialized) && req->in.opcode != FUSE_INIT &&
	    !(se->opts->resume && session_wait_initialized(se))) {
		r = -EIO;
	} else if (!d || !d->fn) {
		r = -ENOSYS;
	} else if (d->async && req->serve_async) {
		req->serve_async(req);	/* answered once its data has moved */
		return;
	} else {
		r = d->fn(req);
		for (int tries = 0; (r == -EMFILE || r == -ENFILE) && !req->replied && d->retry_emfile &&
				    tries < 3 && prune_wait(se->prune) == 0; tries++) {
			log_debug("op=%s: out of descriptors; retrying after pruning", d->name);
			r = d->fn(req);
		}
		if (r == -EMFILE || r == -ENFILE)
			log_warn("op=%s: out of descriptors (%zu inodes held): %s", d->name,
				 inode_table_count(se->inodes), strerror(-r));
	}
	if (d && d->no_reply) {
		req->replied = true;
		return;
	}
	if (r < 0 && !req->replied) {
		reply_err(req, r);
	} else if (!req->replied) {
		log_err("op=%s returned without a reply; answering EIO", fuse_opcode_name(req->in.opcode));
		reply_err(req, -EIO);
	}
}
