/* READ replies on /dev/fuse spliced from the backing file through a pipe,
 * so the data is copied once (backing page cache -> client pages, by the
 * kernel) instead of twice (pread into our buffer, then the kernel's copy
 * out of it). */
#ifndef ZCFS_DEVFUSE_SPLICE_H
#define ZCFS_DEVFUSE_SPLICE_H

#include <stddef.h>
#include <stdint.h>
#include "common/util.h"

struct splice_pipe {
	int rd, wr;
	size_t slots;	/* pipe buffers: one per page of data, one for the header */
};

/* Opens a pipe as large as this process may make one (1 MiB without
 * CAP_SYS_RESOURCE). On failure p->slots is 0 and the pipe unusable. */
int splice_pipe_open(struct splice_pipe *p) _must_check_;
void splice_pipe_close(struct splice_pipe *p);

/* Answers READ request `unique` on fuse_fd with up to size bytes of fd at
 * off. 1: replied, *sent payload bytes; 0: nothing was sent (past EOF, the
 * reply does not fit the pipe, the file changed under us, the kernel
 * refused it) and the caller answers the regular way. The pipe is empty
 * again either way. */
int splice_reply_read(struct splice_pipe *p, int fuse_fd, uint64_t unique, int fd, uint64_t off,
		      size_t size, size_t *sent) _must_check_;

#endif
