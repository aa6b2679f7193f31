/* The ring holder's contract between zcfsd and zcfs-serve
 * (docs/supervision.md, "Ring holder"): a per-volume process that owns
 * the volume's FUSE io_uring rings (SQPOLL, restricted to URING_CMD on its
 * fixed file 0, the fuse fd), so that a server's death cancels nothing.
 * The holder puts ring fd q at ZCFS_HOLDER_RING_FD + q; zcfsd takes them
 * with pidfd_getfd(2) and gives each server the same numbers. */
#ifndef ZCFS_RING_HOLDER_H
#define ZCFS_RING_HOLDER_H

#define ZCFS_HOLDER_RING_FD 12
/* The most rings (queues = possible CPUs) one holder may have. */
#define ZCFS_HOLDER_RINGS_MAX 1024
/* The line a holder writes on stdout once its rings are enabled,
 * followed by the number of rings and a newline. */
#define ZCFS_HOLDER_READY "ring-holder ready rings="

#endif
