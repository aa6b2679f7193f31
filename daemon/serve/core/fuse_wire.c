/* The one write of a FUSE message on /dev/fuse (replies of the /dev/fuse
 * transport, notifications of every transport). */
#include <errno.h>
#include <sys/uio.h>
#include "fuse_wire.h"

int fuse_msg_write(int fd, uint64_t unique, int error, const struct iovec *iov, int iovcnt)
{
	struct iovec v[8];
	struct fuse_out_header oh = { .error = error, .unique = unique };
	size_t len = sizeof(oh);
	int i;

	if (iovcnt > (int)ARRAY_SIZE(v) - 1)
		return -EINVAL;
	v[0] = (struct iovec){ .iov_base = &oh, .iov_len = sizeof(oh) };
	for (i = 0; i < iovcnt; i++) {
		v[i + 1] = iov[i];
		len += iov[i].iov_len;
	}
	oh.len = (uint32_t)len;
	return writev(fd, v, iovcnt + 1) < 0 ? -errno : 0;
}

int fuse_notify(struct zcfs_session *se, int code, const struct iovec *iov, int iovcnt)
{
	/* Notifications travel on /dev/fuse whatever carries the requests
	 * (the ring has no notification path): unique 0, the code as error. */
	return fuse_msg_write(se->fuse_fd, 0, code, iov, iovcnt);
}
