/* What a handler uses of its request: the strings of its payload and the
 * replies, each counted in the counters zcfsd reads (zcfs_stats.h). The
 * dispatcher (fuse_msg.c) and the transports answer through here too. */
#include <string.h>
#include <time.h>
#include "fuse_msg.h"
#include "common/zcfs_stats.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Counts one answered request in the counters zcfsd reads. */
static void count_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	struct zcfs_stats *st = req->se ? req->se->stats : NULL;
	uint64_t lat;

	if (!st)
		return;
	lat = req->start_ns ? now_ns() - req->start_ns : 0;
	zcfs_stats_add(&st->requests, 1);
	zcfs_stats_add(&st->latency_ns_sum, lat);
	zcfs_stats_add(&st->latency[zcfs_stats_bucket(lat)], 1);
	if (error) {
		zcfs_stats_add(&st->errors, 1);
		return;
	}
	if (req->in.opcode == FUSE_READ) {
		uint64_t n = 0;
		for (int i = 0; i < iovcnt; i++)
			n += iov[i].iov_len;
		zcfs_stats_add(&st->bytes_read, n);
	} else if (req->in.opcode == FUSE_WRITE && iovcnt == 1 &&
		   iov[0].iov_len >= sizeof(struct fuse_write_out)) {
		const struct fuse_write_out *out = iov[0].iov_base;
		zcfs_stats_add(&st->bytes_written, out->size);
	}
}

void req_start_clock(struct zcfs_req *req)
{
	req->start_ns = req->se && req->se->stats ? now_ns() : 0;
}

int req_next_string(struct zcfs_req *req, size_t *off, const char **ret)
{
	const char *base = req->data;
	const char *nul;

	if (!base || *off >= req->data_len)
		return -EINVAL;
	nul = memchr(base + *off, '\0', req->data_len - *off);
	if (!nul)
		return -EINVAL;
	*ret = base + *off;
	*off = (size_t)(nul - base) + 1;
	return 0;
}

/* Every reply: counted, marked, handed to the transport. */
static int reply_send(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	count_reply(req, error, iov, iovcnt);
	req->replied = true;
	return req->reply(req, error, iov, iovcnt);
}

int reply_iov(struct zcfs_req *req, const struct iovec *iov, int iovcnt)
{
	return reply_send(req, 0, iov, iovcnt);
}

int reply_buf(struct zcfs_req *req, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return reply_iov(req, &iov, len ? 1 : 0);
}

int reply_err(struct zcfs_req *req, int error)
{
	/* Only -errno in (-512, 0] is valid on the wire. */
	if (error > 0 || error <= -512)
		error = -EIO;
	return reply_send(req, error, NULL, 0);
}

void reply_none(struct zcfs_req *req)
{
	req->replied = true;
}

void reply_sent(struct zcfs_req *req, size_t len)
{
	struct iovec iov = { .iov_base = NULL, .iov_len = len };

	count_reply(req, 0, &iov, 1);
	req->replied = true;
}
