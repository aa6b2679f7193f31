/* Clocks, the client-facing error record, and what an fd a server hands back is. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "model.h"

int64_t zcfsd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t zcfsd_wall(void)
{
	return (int64_t)time(NULL);
}

/* Fills E and returns R (a -errno) so call sites read
 * `return zcfsd_fail(e, ZCFS_NOT_FOUND, -ENOENT, "...")`. */
int zcfsd_fail(struct zcfsd_err *e, enum zcfs_code code, int r, const char *fmt, ...)
{
	va_list ap;

	errno = r < 0 ? -r : r;	/* lets callers use %m for R */
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return r < 0 ? r : -EINVAL;
}

int zcfsd_check_dev_fuse(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == 10 && minor(st.st_rdev) == 229 ? 0 : -ENODEV;
}
