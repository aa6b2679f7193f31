/* The server's side of the passthrough broker (broker_client.h). Only
 * sendmsg(2) and recvmsg(2) on the one inherited socket: those are the
 * calls the seccomp allowlist grants for it (sandbox.c). Timeouts are
 * the socket's (SO_RCVTIMEO/SO_SNDTIMEO, set by zcfsd). */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "broker_client.h"
#include "common/log.h"
#include "common/zcfs_broker.h"

/* Ids registered for requests this server stopped waiting for. */
#define MAX_ORPHANS 16

struct broker_client {
	int fd;
	pthread_mutex_t lock;
	uint32_t seq;
	int64_t quiet_until;	/* monotonic ms; 0: asking */
	bool gone;
	int32_t orphans[MAX_ORPHANS];
	unsigned n_orphans;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int broker_client_new(int fd, struct broker_client **ret)
{
	struct broker_client *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	pthread_mutex_init(&c->lock, NULL);
	*ret = c;
	return 0;
}

void broker_client_free(struct broker_client *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int send_req(struct broker_client *c, uint32_t op, int32_t arg, int fd, uint32_t seq)
{
	struct zcfs_broker_msg m = { .magic = ZCFS_BROKER_MAGIC, .op = op, .seq = seq, .arg = arg };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (fd >= 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	do
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EPROTO;
}

/* Waits for the reply to seq. Late replies to requests we gave up on are
 * skipped; ids they carry are remembered, to be given back. */
static int recv_reply(struct broker_client *c, uint32_t seq, int32_t *res)
{
	for (;;) {
		struct zcfs_broker_msg m;
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		do
			n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ENOTCONN;
		if (n != (ssize_t)sizeof(m) || m.magic != ZCFS_BROKER_MAGIC)
			return -EPROTO;
		if (m.seq == seq) {
			*res = m.arg;
			return 0;
		}
		if (m.op == ZCFS_BROKER_OPEN && m.arg > 0 && c->n_orphans < MAX_ORPHANS)
			c->orphans[c->n_orphans++] = m.arg;
	}
}

/* One request and its reply; c->lock held. */
static int exchange(struct broker_client *c, uint32_t op, int32_t arg, int fd, int32_t *res)
{
	int64_t now = now_ms();
	uint32_t seq;
	int r;

	if (c->gone)
		return -ENOTCONN;
	if (c->quiet_until && now < c->quiet_until)
		return -EAGAIN;
	c->quiet_until = 0;
	seq = ++c->seq ? c->seq : ++c->seq;
	r = send_req(c, op, arg, fd, seq);
	if (r == 0)
		r = recv_reply(c, seq, res);
	if (r == -ETIMEDOUT) {
		c->quiet_until = now_ms() + ZCFS_BROKER_QUIET_MS;
		log_warn("passthrough broker: zcfsd did not answer within %d ms; new opens without "
			 "passthrough for %d s", ZCFS_BROKER_TIMEOUT_MS, ZCFS_BROKER_QUIET_MS / 1000);
	} else if (r == -ENOTCONN || r == -EPIPE || r == -ECONNRESET) {
		c->gone = true;
		r = -ENOTCONN;
		log_warn("passthrough broker: zcfsd hung up; new opens without passthrough from now on");
	}
	return r;
}

static int request(struct broker_client *c, uint32_t op, int32_t arg, int fd)
{
	int32_t res = 0, ignored;
	int r;

	pthread_mutex_lock(&c->lock);
	r = exchange(c, op, arg, fd, &res);
	while (r >= 0 && c->n_orphans &&
	       exchange(c, ZCFS_BROKER_CLOSE, c->orphans[--c->n_orphans], -1, &ignored) >= 0)
		;
	pthread_mutex_unlock(&c->lock);
	return r < 0 ? r : res;
}

int broker_client_open(struct broker_client *c, int fd)
{
	int r = request(c, ZCFS_BROKER_OPEN, 0, fd);

	return r == 0 ? -EIO : r;
}

int broker_client_close(struct broker_client *c, int id)
{
	return request(c, ZCFS_BROKER_CLOSE, id, -1);
}

int broker_client_hello(struct broker_client *c, int state)
{
	return request(c, ZCFS_BROKER_HELLO, state, -1);
}
