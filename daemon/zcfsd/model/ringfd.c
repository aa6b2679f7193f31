/* The memfd an io_uring volume's servers keep their ring buffers in
 * (zcfs-serve --ring-memfd, daemon/serve/transport/uring_ringmem.h): zcfsd holds it for
 * the life of the connection, so a restarted server can answer what its
 * predecessor's ring entries held. A new connection gets a new one. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "model.h"

int zcfsd_ringfd_ensure(struct zcfsd_volume *v)
{
	int fd;

	if (v->ring_fd >= 0)
		return 0;
	/* Empty: the first server sizes it for its geometry. */
	fd = memfd_create("zcfs-ring", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	v->ring_fd = fd;
	return 0;
}

void zcfsd_ringfd_adopt(struct zcfsd_volume *v, int pidfd)
{
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, ZCFSD_SERVER_RING_FD, 0);

	zcfsd_ringfd_release(v);
	if (fd < 0)
		return;		/* a devfuse server, or one from before ring memfds */
	/* Whatever the server has at that number: a /dev/fuse server's own
	 * fd there (its epoll), or what a compromised one put there, was
	 * kept for the connection's life and handed to every successor as
	 * its ring memfd. Only a memfd: F_GET_SEALS answers for shmem files
	 * alone, without touching the file. */
	if (fcntl(fd, F_GET_SEALS) < 0) {
		close(fd);
		return;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	v->ring_fd = fd;
}

void zcfsd_ringfd_release(struct zcfsd_volume *v)
{
	v->ring_fd = safe_close(v->ring_fd);
}
