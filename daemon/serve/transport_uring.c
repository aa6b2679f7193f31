/* FUSE-over-io_uring transport: being written; until then it reports
 * itself unavailable so auto falls back to /dev/fuse. */
#include <stdio.h>
#include "transport.h"

int transport_uring_probe(char *reason, size_t len)
{
	snprintf(reason, len, "io_uring transport not built yet");
	return -EOPNOTSUPP;
}

static int uring_start(struct zcfs_session *se)
{
	(void)se;
	return -EOPNOTSUPP;
}

const struct zcfs_transport_ops transport_uring = {
	.name = "uring",
	.start = uring_start,
};
