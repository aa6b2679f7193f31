/* The one READ/WRITE path: the steps every READ and WRITE takes, whichever
 * transport moves its data (/dev/fuse through op_read/op_write, the
 * io_uring queue on its ring, zero-copy with READ_FIXED/WRITE_FIXED):
 * the backing fd (an fh of a dead predecessor adopted under --resume),
 * the size rules, set-id kill and quota reservation of a WRITE before the
 * I/O; recount, release and the reply after it. The transport only moves
 * the bytes in between. */
#ifndef ZCFS_FILE_IO_H
#define ZCFS_FILE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/util.h"

struct zcfs_req;

struct file_io {
	bool write;
	int fd;			/* the backing file, owned by its handle */
	uint64_t fh;
	uint64_t off;
	size_t len;		/* READ: bytes to read; WRITE: bytes to write (quota may cut it) */
	uint64_t quota_held;	/* WRITE: reservation to release at the end */
};

/* Starts req (FUSE_READ or FUSE_WRITE) into io. A READ is cut to what
 * the transport's buffer (req->outbuf_size) or max_write allows. A WRITE's
 * data is req->data unless data_elsewhere (zero-copy: in registered
 * pages). -errno (nothing held) or 0. */
int file_io_begin(struct zcfs_req *req, bool data_elsewhere, struct file_io *io) _must_check_;
/* Ends io after the transport moved n bytes (or failed with -errno):
 * a WRITE's blocks recounted and its reservation released, then the
 * reply. READ data is at buf (NULL: where the kernel takes it already,
 * only its length is sent). The reply's result, or -errno for the caller
 * to reply (as a handler's return value). */
int file_io_end(struct zcfs_req *req, struct file_io *io, const void *buf, ssize_t n);

#endif
