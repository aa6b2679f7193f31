/* The shared counters of a volume's server: a memfd zcfsd creates, maps,
 * and hands to every server of the volume as fd ZCFSD_SERVER_STATS_FD. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "zcfsd.h"

static int map_fd(struct zcfsd_volume *v, int fd, bool init)
{
	struct zcfs_stats *st;

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st == MAP_FAILED)
		return -errno;
	if (init) {
		st->magic = ZCFS_STATS_MAGIC;
		st->version = ZCFS_STATS_VERSION;
	} else if (st->magic != ZCFS_STATS_MAGIC || st->version != ZCFS_STATS_VERSION) {
		munmap(st, sizeof(*st));
		return -EPROTO;
	}
	v->stats = st;
	v->stats_fd = fd;
	return 0;
}

int zcfsd_stats_ensure(struct zcfsd_volume *v)
{
	int fd, r;

	if (v->stats)
		return 0;
	fd = memfd_create("zcfs-stats", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct zcfs_stats)) < 0) {
		r = -errno;
		safe_close(fd);
		return r;
	}
	r = map_fd(v, fd, true);
	if (r < 0)
		safe_close(fd);
	return r;
}

int zcfsd_stats_adopt(struct zcfsd_volume *v, int pidfd)
{
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, ZCFSD_SERVER_STATS_FD, 0);

	zcfsd_stats_release(v);
	if (fd >= 0) {
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (map_fd(v, fd, false) == 0)
			return 0;
		safe_close(fd);
	}
	/* An older server without counters: start new ones for its successor. */
	return zcfsd_stats_ensure(v);
}

void zcfsd_stats_release(struct zcfsd_volume *v)
{
	if (!v->stats)
		return;
	munmap(v->stats, sizeof(*v->stats));
	v->stats = NULL;
	v->stats_fd = safe_close(v->stats_fd);
}
