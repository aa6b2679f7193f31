/* FUSE messages on /dev/fuse: the out header and payload every reply
 * written there carries, and the notifications the server sends unasked
 * (unique 0), which travel on /dev/fuse whichever transport carries the
 * requests. Below the message layer and the transports, so the backend's
 * prune thread, the handlers and the io_uring queue send notifications
 * without depending on the /dev/fuse transport. */
#ifndef ZCFS_FUSE_WIRE_H
#define ZCFS_FUSE_WIRE_H

#include <stdint.h>
#include <sys/uio.h>
#include "session.h"

/* Writes one message to a /dev/fuse fd: out header (unique, error) + iov
 * in a single writev. -errno or 0. */
int fuse_msg_write(int fd, uint64_t unique, int error, const struct iovec *iov, int iovcnt) _must_check_;
/* Sends a notification (unique 0, error = code) on the session's /dev/fuse
 * fd, whichever transport carries its requests. */
int fuse_notify(struct zcfs_session *se, int code, const struct iovec *iov, int iovcnt) _must_check_;

#endif
