/* Clocks, what an fd a server hands back is, whether a volume's servers
 * run on io_uring. */
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

int zcfsd_check_dev_fuse(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISCHR(st.st_mode) && major(st.st_rdev) == 10 && minor(st.st_rdev) == 229 ? 0 : -ENODEV;
}

bool zcfsd_uses_uring(enum policy_transport t, const struct policy_tenant *tenant)
{
	/* auto may end on io_uring, so it is charged like uring. */
	return tenant->io_uring && t != POLICY_TRANSPORT_DEVFUSE;
}

int zcfsd_note_check(json_object *o)
{
	if (!json_object_is_type(o, json_type_string))
		return -EINVAL;
	if (json_object_get_string_len(o) > ZCFSD_NOTE_MAX)
		return -E2BIG;
	/* a NUL would cut it short in every C reader, zcfsd's state too */
	return strlen(json_object_get_string(o)) == (size_t)json_object_get_string_len(o) ? 0 : -EILSEQ;
}
