/* The shared counters of a volume's server: a memfd zcfsd creates, maps,
 * and hands to every server of the volume as fd ZCFSD_SERVER_STATS_FD.
 * zcfsd maps only a memfd sealed against shrinking and growing: a server
 * that truncated the file under the mapping would make zcfsd's next read
 * of it a SIGBUS (the server is treated as compromised). */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "model.h"

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
	/* new or adopted: the server sees the size zcfsd holds (state.json) */
	(void)zcfsd_stats_set_size(v);
	return 0;
}

#define STATS_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

/* What a server hands back at re-adoption may be any fd it put at that
 * number: only a memfd of our size with our seals is mapped. F_GET_SEALS
 * answers without touching the file (a FUSE file would make fstat wait
 * for its server). */
static int check_sealed(int fd)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0)
		return -errno;
	if ((seals & STATS_SEALS) != STATS_SEALS)
		return -EPERM;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* A memfd of an older zcfsd is shorter; we never read past it. */
	return S_ISREG(st.st_mode) && (st.st_size == (off_t)sizeof(struct zcfs_stats) ||
				       st.st_size == (off_t)ZCFS_STATS_SIZE_V2 ||
				       st.st_size == (off_t)ZCFS_STATS_SIZE_V1) ? 0 : -EINVAL;
}

int zcfsd_stats_ensure(struct zcfsd_volume *v)
{
	int fd, r;

	if (v->stats)
		return 0;
	fd = memfd_create("zcfs-stats", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct zcfs_stats)) < 0 || fcntl(fd, F_ADD_SEALS, STATS_SEALS) < 0) {
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
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, ZCFSD_SERVER_STATS_FD, 0), r;

	zcfsd_stats_release(v);
	if (fd >= 0) {
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		r = check_sealed(fd);
		if (r == 0)
			r = map_fd(v, fd, false);
		if (r == 0)
			return 0;
		log_warn("event=stats-not-adopted volume=%s error=%s effect=\"new counters\"", v->id,
			 strerror(-r));
		safe_close(fd);
	}
	/* An older server without counters: start new ones for its successor. */
	return zcfsd_stats_ensure(v);
}

int zcfsd_stats_set_size(struct zcfsd_volume *v)
{
	struct stat st;

	if (!v->stats)
		return 0;
	/* An older zcfsd's memfd is shorter: a store past its end would be
	 * a SIGBUS here. fstat of a memfd does not wait on any server. */
	if (fstat(v->stats_fd, &st) < 0)
		return -errno;
	if (st.st_size < (off_t)sizeof(struct zcfs_stats))
		return -EOPNOTSUPP;
	__atomic_store_n(&v->stats->quota_bytes, v->size, __ATOMIC_RELEASE);
	return 0;
}

void zcfsd_stats_release(struct zcfsd_volume *v)
{
	if (!v->stats)
		return;
	munmap(v->stats, sizeof(*v->stats));
	v->stats = NULL;
	v->stats_fd = safe_close(v->stats_fd);
}
