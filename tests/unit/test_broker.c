/* The passthrough broker: what zcfsd checks before it registers a file a
 * server sends (open, regular, same file system, the tenant's, not
 * immutable/append-only), which ids a server may close (only its own),
 * how malformed or abusive traffic is answered without ever blocking
 * zcfsd, and the server's client (timeouts, hang-up). The kernel calls
 * are faked; a real socketpair carries the messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <dirent.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/serve/backend/broker_client.h"
#include "daemon/zcfsd/broker/broker.h"

/* ---- fake kernel ------------------------------------------------------- */

static int fake_next_id;
static int fake_opens, fake_closes, fake_last_closed;
static uid_t fake_uid;

static int fake_open(int fuse_fd, int fd, uid_t uid, gid_t gid)
{
	(void)fuse_fd;
	(void)gid;
	assert_true(fd >= 0);
	fake_uid = uid;
	fake_opens++;
	return ++fake_next_id;
}

static int fake_close(int fuse_fd, int id)
{
	(void)fuse_fd;
	fake_closes++;
	fake_last_closed = id;
	return 0;
}

static const struct zcfsd_broker_kernel fake_kernel = { .open = fake_open, .close = fake_close };

/* ---- fixture ----------------------------------------------------------- */

struct fx {
	char dir[64];
	char file[96];
	int file_fd;
	struct stat st;
	struct zcfsd_broker *b;
	int server;		/* the server's end */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int sv[2];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/zcfs-broker.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->file, sizeof(f->file), "%s/data", f->dir);
	f->file_fd = open(f->file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(f->file_fd >= 0);
	assert_int_equal(fstat(f->file_fd, &f->st), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	f->b = calloc(1, sizeof(*f->b));
	assert_non_null(f->b);
	*f->b = (struct zcfsd_broker){ .fd = sv[0], .peer = -1, .fuse_fd = -1, .dev = f->st.st_dev,
				       .storage_fd = open(f->dir, O_PATH | O_DIRECTORY | O_CLOEXEC),
				       .uid = f->st.st_uid, .gid = f->st.st_gid, .volume = "v1",
				       .kernel = &fake_kernel };
	f->server = sv[1];
	fake_next_id = 100;
	fake_opens = fake_closes = fake_last_closed = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	zcfsd_broker_free(f->b);
	close(f->server);
	close(f->file_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* Sends one request from the server's end carrying nfds copies of fd. */
static void send_raw(int sock, const void *buf, size_t len, int fd, int nfds)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfds) {
		struct cmsghdr *c;
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		for (int i = 0; i < nfds; i++)
			memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(sock, &mh, 0), (ssize_t)len);
}

static void send_req(int sock, uint32_t op, int32_t arg, int fd, int nfds)
{
	static uint32_t seq;
	struct zcfs_broker_msg m = { .magic = ZCFS_BROKER_MAGIC, .op = op, .seq = ++seq, .arg = arg };

	send_raw(sock, &m, sizeof(m), fd, nfds);
}

static int32_t reply(int sock)
{
	struct zcfs_broker_msg m;

	assert_int_equal(recv(sock, &m, sizeof(m), MSG_DONTWAIT), (ssize_t)sizeof(m));
	assert_int_equal(m.magic, ZCFS_BROKER_MAGIC);
	return m.arg;
}

/* One request served: the reply's result. */
static int32_t ask(struct fx *f, uint32_t op, int32_t arg, int fd, int nfds)
{
	send_req(f->server, op, arg, fd, nfds);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), 1);
	return reply(f->server);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* ---- the checks -------------------------------------------------------- */

static void check_accepts_tenant_file(void **state)
{
	struct fx *f = *state;

	assert_int_equal(zcfsd_broker_check_fd(f->file_fd, f->st.st_dev, f->st.st_uid, NULL), 0);
}

static void check_wrong_dev(void **state)
{
	struct fx *f = *state;

	assert_int_equal(zcfsd_broker_check_fd(f->file_fd, f->st.st_dev + 1, f->st.st_uid, NULL), -EXDEV);
}

static void check_not_regular(void **state)
{
	struct fx *f = *state;
	char fifo[128];
	int dfd, ffd;

	dfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(zcfsd_broker_check_fd(dfd, f->st.st_dev, f->st.st_uid, NULL), -EISDIR);
	close(dfd);
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	ffd = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	assert_true(ffd >= 0);
	assert_int_equal(zcfsd_broker_check_fd(ffd, f->st.st_dev, f->st.st_uid, NULL), -EINVAL);
	close(ffd);
}

static void check_o_path(void **state)
{
	struct fx *f = *state;
	int pfd = open(f->file, O_PATH | O_CLOEXEC);

	assert_true(pfd >= 0);
	assert_int_equal(zcfsd_broker_check_fd(pfd, f->st.st_dev, f->st.st_uid, NULL), -EBADF);
	close(pfd);
}

static void check_foreign_owner(void **state)
{
	struct fx *f = *state;

	assert_int_equal(zcfsd_broker_check_fd(f->file_fd, f->st.st_dev, f->st.st_uid + 1, NULL), -EPERM);
}

static void check_append_only(void **state)
{
	struct fx *f = *state;
	int attr = 0, r;

	if (ioctl(f->file_fd, FS_IOC_GETFLAGS, &attr) < 0)
		skip();
	attr |= FS_APPEND_FL;
	if (ioctl(f->file_fd, FS_IOC_SETFLAGS, &attr) < 0)
		skip();	/* needs CAP_LINUX_IMMUTABLE and a file system with the flag */
	r = zcfsd_broker_check_fd(f->file_fd, f->st.st_dev, f->st.st_uid, NULL);
	attr &= ~FS_APPEND_FL;
	assert_int_equal(ioctl(f->file_fd, FS_IOC_SETFLAGS, &attr), 0);
	assert_int_equal(r, -EPERM);
}

/* ---- the protocol ------------------------------------------------------ */

static void open_then_close_own_id(void **state)
{
	struct fx *f = *state;
	int before = count_fds();
	int32_t id;

	id = ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1);
	assert_int_equal(id, 101);
	assert_int_equal(fake_opens, 1);
	assert_int_equal(fake_uid, f->st.st_uid);
	assert_non_null(zcfsd_broker_ids_find(f->b, id));
	assert_int_equal(f->b->state, ZCFSD_PT_ON);
	/* the received fd was closed after the registration */
	assert_int_equal(count_fds(), before);
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id, -1, 0), 0);
	assert_int_equal(fake_closes, 1);
	assert_int_equal(fake_last_closed, id);
	assert_null(zcfsd_broker_ids_find(f->b, id));
	assert_int_equal(f->b->bad, 0);
}

static void foreign_id_close_refused(void **state)
{
	struct fx *f = *state;
	int32_t id = ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1);

	/* Never registered for this server (another volume's, or made up). */
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, 7, -1, 0), -ENOENT);
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id + 1, -1, 0), -ENOENT);
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, -3, -1, 0), -EINVAL);
	assert_int_equal(fake_closes, 0);
	assert_int_equal(f->b->bad, 3);
	/* twice: the second is foreign by then */
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id, -1, 0), 0);
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id, -1, 0), -ENOENT);
	assert_int_equal(fake_closes, 1);
}

static void inherited_close_goes_to_kernel(void **state)
{
	struct fx *f = *state;

	/* After a zcfsd restart the old ids are unknown: the kernel decides. */
	f->b->inherited = true;
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, 55, -1, 0), 0);
	assert_int_equal(fake_last_closed, 55);
}

static void open_refusals_never_reach_kernel(void **state)
{
	struct fx *f = *state;
	int pfd = open(f->file, O_PATH | O_CLOEXEC), dfd = open(f->dir, O_RDONLY | O_CLOEXEC);

	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, pfd, 1), -EBADF);
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, dfd, 1), -EISDIR);
	f->b->dev++;
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1), -EXDEV);
	f->b->dev--;
	f->b->uid++;
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1), -EPERM);
	f->b->uid--;
	assert_int_equal(fake_opens, 0);
	assert_int_equal(f->b->refused, 4);
	assert_int_equal(f->b->n_ents, 0);
	close(pfd);
	close(dfd);
}

static void malformed_requests(void **state)
{
	struct fx *f = *state;
	struct zcfs_broker_msg m = { .magic = ZCFS_BROKER_MAGIC, .op = ZCFS_BROKER_HELLO, .arg = 1 };
	char big[64] = { 0 };
	int before = count_fds();

	/* short, long, wrong magic, unknown op */
	send_raw(f->server, &m, 8, -1, 0);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), 1);
	assert_int_equal(reply(f->server), -EBADMSG);
	memcpy(big, &m, sizeof(m));
	send_raw(f->server, big, sizeof(big), -1, 0);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), 1);
	assert_int_equal(reply(f->server), -EBADMSG);
	m.magic = 0x1234;
	send_raw(f->server, &m, sizeof(m), -1, 0);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), 1);
	assert_int_equal(reply(f->server), -EBADMSG);
	assert_int_equal(ask(f, 99, 0, -1, 0), -EOPNOTSUPP);
	/* fds where none belong, none or too many where one does */
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, -1, 0), -EBADF);
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 2), -EBADF);
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 4), -EBADMSG);
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, 101, f->file_fd, 1), -EINVAL);
	assert_int_equal(ask(f, ZCFS_BROKER_HELLO, 1, f->file_fd, 1), -EINVAL);
	assert_int_equal(ask(f, ZCFS_BROKER_HELLO, 42, -1, 0), -EINVAL);
	/* a zero-length record is a bad request, not a hang-up */
	send_raw(f->server, "", 0, -1, 0);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), 1);
	assert_int_equal(reply(f->server), -EBADMSG);
	assert_int_equal(fake_opens, 0);
	assert_int_equal(f->b->bad, 11);
	/* every fd that came with them was closed */
	assert_int_equal(count_fds(), before);
}

static void hello_sets_state(void **state)
{
	struct fx *f = *state;

	assert_int_equal(ask(f, ZCFS_BROKER_HELLO, ZCFS_BROKER_PT_QUOTA, -1, 0), 0);
	assert_int_equal(f->b->state, ZCFSD_PT_QUOTA);
	assert_int_equal(ask(f, ZCFS_BROKER_HELLO, ZCFS_BROKER_PT_ON, -1, 0), 0);
	assert_int_equal(f->b->state, ZCFSD_PT_ON);
}

static void unread_replies_never_block(void **state)
{
	struct fx *f = *state;
	int i, r;

	/* The server never reads its replies: zcfsd drops them (a small send
	 * buffer gets there sooner). */
	int small = 4096;

	assert_int_equal(setsockopt(f->b->fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
	for (i = 0; i < 4096 && !f->b->dropped; i++) {
		struct zcfs_broker_msg m = { .magic = ZCFS_BROKER_MAGIC, .op = ZCFS_BROKER_HELLO,
					     .seq = (uint32_t)i, .arg = 1 };
		if (send(f->server, &m, sizeof(m), MSG_DONTWAIT) < 0)
			break;	/* our own queue to zcfsd is full: let it drain */
		r = zcfsd_broker_serve(f->b, 16);
		assert_true(r >= 0);
	}
	assert_true(f->b->dropped > 0);
}

static void abuse_hangs_up(void **state)
{
	struct fx *f = *state;
	int r = 0;

	for (int i = 0; i < 2 * ZCFSD_BROKER_BAD_LIMIT && r >= 0; i++) {
		char junk[3] = "xx";
		struct zcfs_broker_msg m;
		send_raw(f->server, junk, sizeof(junk), -1, 0);
		r = zcfsd_broker_serve(f->b, 16);
		while (recv(f->server, &m, sizeof(m), MSG_DONTWAIT) > 0)
			;
	}
	assert_int_equal(r, -EPROTO);
	assert_true(f->b->bad >= ZCFSD_BROKER_BAD_LIMIT);
}

static void hangup_and_release(void **state)
{
	struct fx *f = *state;

	for (int i = 0; i < 3; i++)
		assert_true(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1) > 0);
	assert_int_equal(f->b->n_ents, 3);
	close(f->server);
	f->server = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(zcfsd_broker_serve(f->b, 16), -ECONNRESET);
	/* the server died: every id it registered is closed */
	zcfsd_broker_release_ids(f->b);
	assert_int_equal(fake_closes, 3);
	assert_int_equal(f->b->n_ents, 0);
}

static void id_set(void **state)
{
	struct zcfsd_broker b = { 0 };
	int32_t ids[] = { 40, 3, 17, 99, 1 };

	(void)state;
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(zcfsd_broker_ids_add(&b, ids[i], NULL), 0);
	assert_int_equal(zcfsd_broker_ids_add(&b, 17, NULL), -EEXIST);
	assert_int_equal(b.n_ents, 5);
	for (size_t i = 1; i < b.n_ents; i++)
		assert_true(b.ents[i - 1].id < b.ents[i].id);
	assert_true(zcfsd_broker_ids_remove(&b, 17));
	assert_false(zcfsd_broker_ids_remove(&b, 17));
	assert_null(zcfsd_broker_ids_find(&b, 17));
	assert_non_null(zcfsd_broker_ids_find(&b, 99));
	assert_non_null(zcfsd_broker_ids_find(&b, 1));
	free(b.ents);
}

/* A server died with files open in passthrough: its ids stay, and its
 * successor's OPEN of the same file gets the same id (a second one for
 * the inode would make the kernel fail the open). */
static void restart_carries_ids(void **state)
{
	struct fx *f = *state;
	char other[128];
	int ofd;
	int32_t id, id2;

	id = ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1);
	assert_true(id > 0);
	zcfsd_broker_carry(f->b);
	assert_int_equal(zcfsd_broker_ids_live(f->b), 0);
	/* carried ids are not the new server's to close */
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id, -1, 0), -ENOENT);
	assert_int_equal(fake_closes, 0);
	/* another file: a new registration, not the carried id */
	snprintf(other, sizeof(other), "%s/other", f->dir);
	ofd = open(other, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(ofd >= 0);
	id2 = ask(f, ZCFS_BROKER_OPEN, 0, ofd, 1);
	assert_true(id2 > 0 && id2 != id);
	/* the same file (a new open of it): the carried id, no new ioctl */
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1), id);
	assert_int_equal(fake_opens, 2);
	assert_int_equal(f->b->reused, 1);
	assert_int_equal(zcfsd_broker_ids_live(f->b), 2);
	/* the new server may close it, but it stays registered: files the
	 * dead server opened may still need it for the next open */
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id, -1, 0), 0);
	assert_int_equal(fake_closes, 0);
	assert_int_equal(ask(f, ZCFS_BROKER_OPEN, 0, f->file_fd, 1), id);
	assert_int_equal(fake_opens, 2);
	/* its own ids are closed for real */
	assert_int_equal(ask(f, ZCFS_BROKER_CLOSE, id2, -1, 0), 0);
	assert_int_equal(fake_closes, 1);
	/* the volume stops: everything goes */
	zcfsd_broker_release_ids(f->b);
	assert_int_equal(fake_closes, 2);
	close(ofd);
}

static void claim_needs_same_file(void **state)
{
	struct fx *f = *state;
	struct zcfsd_file_id a = { .ino = 5, .btime_sec = 100, .btime_nsec = 7, .valid = true }, b = a;

	assert_int_equal(zcfsd_broker_ids_add(f->b, 9, &a), 0);
	zcfsd_broker_carry(f->b);
	/* the inode number reused by a newer file */
	b.btime_nsec = 8;
	assert_int_equal(zcfsd_broker_ids_claim(f->b, &b), 0);
	/* no birth time: never a match */
	b = a;
	b.valid = false;
	assert_int_equal(zcfsd_broker_ids_claim(f->b, &b), 0);
	assert_int_equal(zcfsd_broker_ids_claim(f->b, &a), 9);
	assert_int_equal(zcfsd_broker_ids_claim(f->b, &a), 0);	/* live now */
}

/* The broker's own wall: a file of the tenant on the same file system
 * but outside the volume's storage dir is refused; one below it is not. */
static void beneath_storage(void **state)
{
	struct fx *f = *state;
	char out[64], sub[300];
	int ofd, sfd, r;

	snprintf(out, sizeof(out), "/tmp/zcfs-broker-outside.XXXXXX");
	ofd = mkstemp(out);
	assert_true(ofd >= 0);
	r = zcfsd_broker_check_beneath(ofd, f->b->storage_fd);
	unlink(out);
	close(ofd);
	assert_int_equal(r, -EXDEV);
	assert_int_equal(zcfsd_broker_check_beneath(f->file_fd, f->b->storage_fd), 0);
	snprintf(sub, sizeof(sub), "%s/d", f->dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/d/f", f->dir);
	sfd = open(sub, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(sfd >= 0);
	assert_int_equal(zcfsd_broker_check_beneath(sfd, f->b->storage_fd), 0);
	/* the storage dir itself is no backing file */
	assert_int_equal(zcfsd_broker_check_beneath(f->b->storage_fd, f->b->storage_fd), -EXDEV);
	close(sfd);
}

/* ---- the server's client ----------------------------------------------- */

struct served {
	struct zcfsd_broker *b;
	volatile int stop;
};

static void *serve_loop(void *arg)
{
	struct served *s = arg;

	while (!s->stop) {
		struct pollfd p = { .fd = s->b->fd, .events = POLLIN };
		if (poll(&p, 1, 20) > 0 && zcfsd_broker_serve(s->b, 16) < 0)
			break;
	}
	return NULL;
}

static void set_timeout(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
}

static void client_round_trips(void **state)
{
	struct fx *f = *state;
	struct served s = { .b = f->b };
	struct broker_client *c;
	pthread_t t;
	int id;

	set_timeout(f->server, 2000);
	assert_int_equal(broker_client_new(f->server, &c), 0);
	assert_int_equal(pthread_create(&t, NULL, serve_loop, &s), 0);
	assert_int_equal(broker_client_hello(c, ZCFS_BROKER_PT_ON), 0);
	id = broker_client_open(c, f->file_fd);
	assert_true(id > 0);
	assert_int_equal(broker_client_close(c, id), 0);
	assert_int_equal(broker_client_close(c, id), -ENOENT);
	f->b->uid++;
	assert_int_equal(broker_client_open(c, f->file_fd), -EPERM);
	s.stop = 1;
	pthread_join(t, NULL);
	broker_client_free(c);
}

static void client_timeout_then_quiet(void **state)
{
	struct fx *f = *state;
	struct broker_client *c;

	/* Nobody serves: one timed-out request, then no asking for a while. */
	set_timeout(f->server, 50);
	assert_int_equal(broker_client_new(f->server, &c), 0);
	assert_int_equal(broker_client_open(c, f->file_fd), -ETIMEDOUT);
	assert_int_equal(broker_client_open(c, f->file_fd), -EAGAIN);
	broker_client_free(c);
}

static void client_hangup(void **state)
{
	struct fx *f = *state;
	struct broker_client *c;

	set_timeout(f->server, 500);
	zcfsd_broker_free(f->b);
	f->b = NULL;
	assert_int_equal(broker_client_new(f->server, &c), 0);
	assert_int_equal(broker_client_open(c, f->file_fd), -ENOTCONN);
	assert_int_equal(broker_client_open(c, f->file_fd), -ENOTCONN);
	broker_client_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(check_accepts_tenant_file, setup, teardown),
		cmocka_unit_test_setup_teardown(beneath_storage, setup, teardown),
		cmocka_unit_test_setup_teardown(check_wrong_dev, setup, teardown),
		cmocka_unit_test_setup_teardown(check_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(check_o_path, setup, teardown),
		cmocka_unit_test_setup_teardown(check_foreign_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(check_append_only, setup, teardown),
		cmocka_unit_test_setup_teardown(open_then_close_own_id, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_id_close_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(inherited_close_goes_to_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(open_refusals_never_reach_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(hello_sets_state, setup, teardown),
		cmocka_unit_test_setup_teardown(unread_replies_never_block, setup, teardown),
		cmocka_unit_test_setup_teardown(abuse_hangs_up, setup, teardown),
		cmocka_unit_test_setup_teardown(hangup_and_release, setup, teardown),
		cmocka_unit_test(id_set),
		cmocka_unit_test_setup_teardown(restart_carries_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_needs_same_file, setup, teardown),
		cmocka_unit_test_setup_teardown(client_round_trips, setup, teardown),
		cmocka_unit_test_setup_teardown(client_timeout_then_quiet, setup, teardown),
		cmocka_unit_test_setup_teardown(client_hangup, setup, teardown),
	};

	return cmocka_run_group_tests_name("broker", tests, NULL, NULL);
}
