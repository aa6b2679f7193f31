/* Passthrough broker, zcfsd's side (broker.h): one socketpair per
 * server, served from zcfsd's event loop without ever blocking on the
 * server: bounded reads per wakeup, nonblocking replies, fixed-size
 * messages, and a hang-up for a server that keeps sending garbage. */
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include "common/log.h"
#include "common/openat2.h"
#include "common/walk_nofuse.h"
#include "daemon/zcfsd/model/model.h"
#include "broker.h"

/* Requests answered per wakeup, so one busy server cannot starve the
 * control socket or the other volumes (epoll is level-triggered). */
#define SERVE_BATCH 16

/* 1, 10, 100...: how often a repeated complaint is logged. */
static bool log_this(uint64_t n)
{
	while (n >= 10 && n % 10 == 0)
		n /= 10;
	return n == 1;
}

/* The volume's storage directory, never a FUSE mount on it (a tenant's
 * would answer every lookup of the broker): statx DONT_SYNC, mask 0,
 * answered by the VFS (common/walk_nofuse.h). */
static int storage_open(const char *storage, dev_t *dev, int *ret)
{
	_cleanup_close_ int fd = open_nofollow(storage, O_PATH | O_DIRECTORY);
	struct statx st;
	int r;

	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, 0, &st) < 0)
		return -errno;
	r = nofuse_check(fd, NULL, 0);
	if (r < 0)
		return r;
	*dev = makedev(st.stx_dev_major, st.stx_dev_minor);
	*ret = TAKE_FD(fd);
	return 0;
}

int zcfsd_broker_new(const char *volume, int fuse_fd, const char *storage, uid_t uid, gid_t gid,
		     struct zcfsd_broker **ret)
{
	struct zcfsd_broker *b = calloc(1, sizeof(*b));
	int r;

	if (!b)
		return -ENOMEM;
	*b = (struct zcfsd_broker){ .fd = -1, .peer = -1, .fuse_fd = fuse_fd, .uid = uid, .gid = gid,
				    .storage_fd = -1, .volume = volume, .kernel = &zcfsd_broker_kernel_real };
	r = storage_open(storage, &b->dev, &b->storage_fd);
	if (r < 0) {
		free(b);
		return r;
	}
	*ret = b;
	return 0;
}

static void close_socket(struct zcfsd_broker *b)
{
	b->fd = safe_close(b->fd);
	b->peer = safe_close(b->peer);
}

/* A server's socket: *MINE zcfsd's end (non-blocking), *PEER the server's. */
static int socket_pair(int *mine, int *peer)
{
	const struct timeval tv = { .tv_sec = ZCFS_BROKER_TIMEOUT_MS / 1000,
				    .tv_usec = (ZCFS_BROKER_TIMEOUT_MS % 1000) * 1000 };
	int sv[2], r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* The server blocks on its end; bounded, so that a zcfsd that is
	 * busy or restarting costs it passthrough, not a stuck open. */
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
		r = -errno;
		safe_close(sv[0]);
		safe_close(sv[1]);
		return r;
	}
	*mine = sv[0];
	*peer = sv[1];
	return 0;
}

/* A new server: its own state, and no ids of a zcfsd before us. */
static void new_server(struct zcfsd_broker *b)
{
	b->state = ZCFSD_PT_PENDING;
	b->inherited = false;
	b->bad = 0;
}

int zcfsd_broker_open_socket(struct zcfsd_broker *b)
{
	int r;

	close_socket(b);
	r = socket_pair(&b->fd, &b->peer);
	if (r < 0)
		return r;
	new_server(b);
	return 0;
}

/* Checked, not assumed: the parked fd of the process must be our kind
 * of end, and ours now without blocking. */
static int check_parked(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);

	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return -errno;
	return type == SOCK_SEQPACKET ? 0 : -ENOTSOCK;
}

int zcfsd_broker_adopt(const char *volume, int pidfd, int fuse_fd, const char *storage, uid_t uid,
		       gid_t gid, struct zcfsd_broker **ret)
{
	struct zcfsd_broker *b;
	int fd, r;

	fd = (int)syscall(SYS_pidfd_getfd, pidfd, ZCFSD_SERVER_BROKER_PARK_FD, 0);
	if (fd < 0)
		return -errno;
	r = zcfsd_broker_new(volume, fuse_fd, storage, uid, gid, &b);
	if (r < 0) {
		safe_close(fd);
		return r;
	}
	b->fd = fd;
	b->inherited = true;
	b->state = ZCFSD_PT_UNKNOWN;
	r = check_parked(fd);
	if (r < 0) {
		zcfsd_broker_free(b);
		return r;
	}
	*ret = b;
	return 0;
}

void zcfsd_broker_free(struct zcfsd_broker *b)
{
	if (!b)
		return;
	close_socket(b);
	safe_close(b->storage_fd);
	free(b->ents);
	free(b);
}

void zcfsd_broker_release_ids(struct zcfsd_broker *b)
{
	size_t n = b->n_ents, failed = 0;

	/* Files already opened with an id keep their backing reference;
	 * closing only stops new opens from using it. */
	for (size_t i = 0; i < n; i++)
		failed += b->kernel->close(b->fuse_fd, b->ents[i].id) < 0;
	if (n)
		log_info("event=broker-release volume=%s ids=%zu failed=%zu", b->volume, n, failed);
	b->n_ents = 0;
}

/* ---- requests ---------------------------------------------------------- */

static int32_t complain(struct zcfsd_broker *b, const char *what, int32_t err)
{
	b->bad++;
	if (log_this(b->bad))
		log_warn("event=broker-bad-request volume=%s what=%s count=%llu", b->volume, what,
			 (unsigned long long)b->bad);
	return err;
}

static int32_t do_open(struct zcfsd_broker *b, int fd)
{
	struct zcfsd_file_id file;
	int r, id;

	r = zcfsd_broker_check_fd(fd, b->dev, b->uid, &file);
	/* Landlock keeps the server inside its volume; the broker keeps
	 * that promise on its own: nothing outside the storage dir. */
	if (r == 0)
		r = zcfsd_broker_check_beneath(fd, b->storage_fd);
	id = r < 0 ? 0 : zcfsd_broker_ids_claim(b, &file);
	if (id > 0) {
		b->reused++;
		goto done;
	}
	if (r == 0 && b->n_ents >= ZCFSD_BROKER_MAX_IDS)
		r = -EMFILE;
	id = r < 0 ? r : b->kernel->open(b->fuse_fd, fd, b->uid, b->gid);
	if (id > 0 && (r = zcfsd_broker_ids_add(b, id, &file)) < 0) {
		(void)b->kernel->close(b->fuse_fd, id);
		id = r;
	}
	if (id <= 0) {
		b->refused++;
		if (log_this(b->refused))
			log_warn("event=passthrough-refused volume=%s error=%s count=%llu", b->volume,
				 strerror(id ? -id : EIO), (unsigned long long)b->refused);
		return id ? id : -EIO;
	}
	b->registered++;
done:
	if (b->state == ZCFSD_PT_PENDING || b->state == ZCFSD_PT_UNKNOWN)
		b->state = ZCFSD_PT_ON;
	return id;
}

static int32_t do_close(struct zcfsd_broker *b, int32_t id)
{
	struct zcfsd_backing *e;

	if (id <= 0)
		return complain(b, "close-bad-id", -EINVAL);
	/* Only its own: not a carried id its predecessor registered (files
	 * opened with it may still need it), not anything else. */
	e = zcfsd_broker_ids_find(b, id);
	if (e && e->keep) {
		e->carried = true;	/* see zcfsd_broker_ids_claim() */
		return 0;
	}
	if (e) {
		zcfsd_broker_ids_remove(b, id);
		return b->kernel->close(b->fuse_fd, id);
	}
	/* After a zcfsd restart the server's older ids are unknown here;
	 * they can only be ids of this connection, which the kernel checks. */
	if (b->inherited)
		return b->kernel->close(b->fuse_fd, id);
	return complain(b, "close-foreign-id", -ENOENT);
}

static int32_t do_hello(struct zcfsd_broker *b, int32_t arg)
{
	static const enum zcfsd_pt_state map[] = {
		[ZCFS_BROKER_PT_ON] = ZCFSD_PT_ON,
		[ZCFS_BROKER_PT_NOT_OFFERED] = ZCFSD_PT_NOT_OFFERED,
		[ZCFS_BROKER_PT_QUOTA] = ZCFSD_PT_QUOTA,
	};

	if (arg < ZCFS_BROKER_PT_ON || arg > ZCFS_BROKER_PT_QUOTA)
		return complain(b, "hello-bad-state", -EINVAL);
	b->state = map[arg];
	log_info("event=passthrough-hello volume=%s passthrough=%s", b->volume,
		 zcfsd_broker_state_name(b->state));
	return 0;
}

static int32_t handle(struct zcfsd_broker *b, const struct zcfs_broker_msg *m, ssize_t n,
		      int flags, int nfds, int fd)
{
	if (n != (ssize_t)sizeof(*m) || (flags & MSG_TRUNC))
		return complain(b, "bad-size", -EBADMSG);
	if (flags & MSG_CTRUNC)
		return complain(b, "too-many-fds", -EBADMSG);
	if (m->magic != ZCFS_BROKER_MAGIC)
		return complain(b, "bad-magic", -EBADMSG);
	switch (m->op) {
	case ZCFS_BROKER_HELLO:
		return nfds ? complain(b, "hello-with-fd", -EINVAL) : do_hello(b, m->arg);
	case ZCFS_BROKER_OPEN:
		return nfds == 1 ? do_open(b, fd) : complain(b, "open-without-one-fd", -EBADF);
	case ZCFS_BROKER_CLOSE:
		return nfds ? complain(b, "close-with-fd", -EINVAL) : do_close(b, m->arg);
	default:
		return complain(b, "unknown-op", -EOPNOTSUPP);
	}
}

/* Keeps the first fd the message carried in *fd, closes any other. */
static int take_fds(struct msghdr *mh, int *fd)
{
	int n = 0;

	*fd = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t k;
		int *fds;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)CMSG_DATA(c);
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t j = 0; j < k; j++, n++) {
			int f;
			memcpy(&f, &fds[j], sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				safe_close(f);
		}
	}
	return n;
}

/* A zero-length record reads as 0 like a hang-up does; poll tells. */
static bool peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

static int serve_one(struct zcfsd_broker *b)
{
	/* Room for two fds: a second one shows up as MSG_CTRUNC only if it
	 * does not fit, so one spare makes "exactly one" checkable. */
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct zcfs_broker_msg m = { 0 }, reply;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			     .msg_controllen = sizeof(cbuf.buf) };
	_cleanup_close_ int fd = -1;
	ssize_t n;
	int nfds;

	n = recvmsg(b->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	nfds = take_fds(&mh, &fd);
	if (n == 0 && nfds == 0 && peer_gone(b->fd))
		return -ECONNRESET;
	reply = (struct zcfs_broker_msg){ .magic = ZCFS_BROKER_MAGIC, .op = m.op, .seq = m.seq,
					  .arg = handle(b, &m, n, mh.msg_flags, nfds, fd) };
	/* Never wait for a server that does not read its replies. */
	if (send(b->fd, &reply, sizeof(reply), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (errno != EAGAIN)
			return -errno;
		b->dropped++;
		(void)complain(b, "reply-queue-full", 0);
	}
	return 1;
}

int zcfsd_broker_serve(struct zcfsd_broker *b, unsigned max)
{
	unsigned i;
	int r = 0;

	for (i = 0; i < max; i++) {
		r = serve_one(b);
		if (r <= 0)
			break;
	}
	if (r < 0)
		return r;
	if (b->bad >= ZCFSD_BROKER_BAD_LIMIT)
		return -EPROTO;
	return (int)i;
}

/* ---- event loop -------------------------------------------------------- */

static void unwatch(struct zcfsd *d, struct zcfsd_broker *b)
{
	zcfsd_unwatch(d, &b->watch);
}

void zcfsd_broker_prepare(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			  const char *storage)
{
	int r = 0;

	if (!t->passthrough) {
		zcfsd_broker_stop(d, v);	/* the policy changed since */
		return;
	}
	/* A restarted server keeps the broker: its predecessor's ids. */
	if (v->broker && v->broker->fuse_fd != v->fuse_fd)
		zcfsd_broker_stop(d, v);	/* not this connection's: cannot be */
	if (!v->broker)
		r = zcfsd_broker_new(v->id, v->fuse_fd, storage, t->uid, t->gid, &v->broker);
	if (r == 0) {
		unwatch(d, v->broker);
		r = zcfsd_broker_open_socket(v->broker);
	}
	if (r < 0)
		log_warn("event=broker-failed volume=%s error=%s effect=\"server runs without passthrough\"",
			 v->id, strerror(-r));
}

int zcfsd_broker_standby_socket(struct zcfsd *d, struct zcfsd_volume *v,
				const struct policy_tenant *t, const char *storage, int *mine,
				int *peer)
{
	int r = 0;

	*mine = *peer = -1;
	if (!t->passthrough)
		return 0;
	if (v->broker && v->broker->fuse_fd != v->fuse_fd)
		zcfsd_broker_stop(d, v);	/* not this connection's: cannot be */
	if (!v->broker)
		r = zcfsd_broker_new(v->id, v->fuse_fd, storage, t->uid, t->gid, &v->broker);
	if (r == 0)
		r = socket_pair(mine, peer);
	if (r < 0)
		log_warn("event=broker-failed volume=%s error=%s effect=\"the successor runs without "
			 "passthrough\"", v->id, strerror(-r));
	return 0;
}

void zcfsd_broker_standby_take(struct zcfsd *d, struct zcfsd_volume *v, int fd)
{
	struct zcfsd_broker *b = v->broker;
	int r;

	if (!b || fd < 0) {
		safe_close(fd);
		return;
	}
	unwatch(d, b);
	close_socket(b);
	b->fd = fd;
	new_server(b);
	r = zcfsd_broker_watch(d, v);
	if (r < 0)
		log_warn("event=broker-watch-failed volume=%s error=%s", v->id, strerror(-r));
}

void zcfsd_broker_spawned(struct zcfsd *d, struct zcfsd_volume *v, bool started)
{
	struct zcfsd_broker *b = v->broker;
	int r;

	if (!b)
		return;
	b->peer = safe_close(b->peer);
	if (!started || b->fd < 0) {
		close_socket(b);
		return;
	}
	r = zcfsd_broker_watch(d, v);
	if (r < 0)
		log_warn("event=broker-watch-failed volume=%s error=%s", v->id, strerror(-r));
}

/* The server's requests on its broker socket. */
static void readable(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;
	int r;

	(void)events;
	r = zcfsd_broker_serve(v->broker, SERVE_BATCH);
	if (r >= 0)
		return;
	/* The ids stay registered until the server is gone (pidfd), so its
	 * files keep working; it just gets no new ones. */
	unwatch(d, v->broker);
	if (r == -ECONNRESET)
		return;
	v->broker->state = ZCFSD_PT_LOST;
	v->broker->fd = safe_close(v->broker->fd);
	log_err("event=broker-hangup volume=%s reason=%s bad_requests=%llu", v->id,
		r == -EPROTO ? "abuse" : strerror(-r), (unsigned long long)v->broker->bad);
}

int zcfsd_broker_watch(struct zcfsd *d, struct zcfsd_volume *v)
{
	return zcfsd_watch(d, &v->broker->watch, v->broker->fd, EPOLLIN, readable, v);
}

void zcfsd_broker_server_gone(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfsd_broker *b = v->broker;

	if (!b)
		return;
	unwatch(d, b);
	close_socket(b);
	zcfsd_broker_carry(b);
	if (b->n_ents)
		log_info("event=broker-carry volume=%s ids=%zu", v->id, b->n_ents);
}

void zcfsd_broker_stop(struct zcfsd *d, struct zcfsd_volume *v)
{
	if (!v->broker)
		return;
	unwatch(d, v->broker);
	/* Only on the connection they belong to, while zcfsd still has it. */
	if (v->fuse_fd >= 0 && v->fuse_fd == v->broker->fuse_fd)
		zcfsd_broker_release_ids(v->broker);
	zcfsd_broker_free(v->broker);
	v->broker = NULL;
}

const char *zcfsd_broker_state_name(enum zcfsd_pt_state s)
{
	static const char *const names[] = {
		[ZCFSD_PT_PENDING] = "pending", [ZCFSD_PT_ON] = "on",
		[ZCFSD_PT_NOT_OFFERED] = "kernel-did-not-offer", [ZCFSD_PT_QUOTA] = "off-quota",
		[ZCFSD_PT_UNKNOWN] = "unknown", [ZCFSD_PT_LOST] = "lost",
	};

	return (size_t)s < ARRAY_SIZE(names) ? names[s] : "?";
}

json_object *zcfsd_broker_json(const struct zcfsd_broker *b, bool allowed)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "state", json_object_new_string(
		b ? zcfsd_broker_state_name(b->state) : allowed ? "off" : "off-policy"));
	if (b) {
		size_t live = zcfsd_broker_ids_live(b);
		json_object_object_add(o, "backing_ids", json_object_new_int64((int64_t)live));
		json_object_object_add(o, "carried_ids", json_object_new_int64((int64_t)(b->n_ents - live)));
		json_object_object_add(o, "registered", json_object_new_int64((int64_t)b->registered));
		json_object_object_add(o, "reused", json_object_new_int64((int64_t)b->reused));
		json_object_object_add(o, "refused", json_object_new_int64((int64_t)b->refused));
		json_object_object_add(o, "bad_requests", json_object_new_int64((int64_t)b->bad));
	}
	return o;
}
