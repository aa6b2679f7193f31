/* Backing-device knobs of a mount (see bdi.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "bdi.h"

int bdi_set_max_bytes(unsigned major, unsigned minor, uint64_t bytes)
{
	char path[64], val[32];
	_cleanup_close_ int fd = -1;
	int n;

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/max_bytes", major, minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(val, sizeof(val), "%llu\n", (unsigned long long)bytes);
	if (write(fd, val, (size_t)n) != n)
		return errno ? -errno : -EIO;
	return 0;
}
