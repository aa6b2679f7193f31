/* The sandbox itself (daemon/serve/sandbox/sandbox.c): the io_uring restriction
 * helper lets the transport's opcodes through and refuses others; a
 * dispatcher running under the full sandbox (in a forked child: it cannot
 * be undone) still serves ordinary requests without being killed, while
 * forged names, a symlink leading out and a hard link to a file outside
 * never reach anything outside SOURCE. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <liburing.h>
#include "daemon/serve/backend/handle.h"
#include "daemon/serve/backend/inode.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "daemon/serve/fuse/fuse_msg.h"

#define SECRET "zcfs-unit-secret-marker"

/* ---- io_uring restrictions ---- */

static int ring_nop_or(struct io_uring *ring, int opcode, int *res)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int r;

	if (!sqe)
		return -EBUSY;
	if (opcode == IORING_OP_NOP)
		io_uring_prep_nop(sqe);
	else
		io_uring_prep_openat(sqe, AT_FDCWD, "/etc/passwd", O_RDONLY, 0);
	r = io_uring_submit(ring);
	if (r < 0)
		return r;
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return r;
	*res = cqe->res;
	if (cqe->res >= 0 && opcode != IORING_OP_NOP)
		close(cqe->res);
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

static void ring_restrictions(void **state)
{
	struct io_uring ring;
	int r, res = 0, efd;

	(void)state;
	r = io_uring_queue_init(8, &ring, IORING_SETUP_R_DISABLED);
	if (r == -ENOSYS || r == -EPERM || r == -EINVAL)
		skip();		/* no io_uring (or no R_DISABLED) here */
	assert_int_equal(r, 0);
	assert_int_equal(sandbox_restrict_ring(&ring), 0);
	assert_int_equal(ring_nop_or(&ring, IORING_OP_NOP, &res), 0);
	assert_int_equal(res, 0);
	assert_int_equal(ring_nop_or(&ring, IORING_OP_OPENAT, &res), 0);
	assert_int_equal(res, -EACCES);
	/* Register ops outside the list are refused after enabling. */
	efd = eventfd(0, EFD_CLOEXEC);
	assert_true(efd >= 0);
	assert_int_equal(io_uring_register_eventfd(&ring, efd), -EACCES);
	close(efd);
	/* A second set of restrictions is refused: the list is final. */
	assert_true(sandbox_restrict_ring(&ring) < 0);
	io_uring_queue_exit(&ring);
}

/* ---- a sandboxed dispatcher ---- */

struct captured {
	int calls;
	int error;
	size_t len;
	char payload[8192];
};

static int capture_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	struct captured *c = req->tctx;

	c->calls++;
	c->error = error;
	c->len = 0;
	for (int i = 0; i < iovcnt && c->len + iov[i].iov_len <= sizeof(c->payload); i++) {
		memcpy(c->payload + c->len, iov[i].iov_base, iov[i].iov_len);
		c->len += iov[i].iov_len;
	}
	return 0;
}

static struct zcfs_session se;
static struct zcfs_options opts;

static struct captured run(uint32_t opcode, uint64_t nodeid, const void *arg, size_t arglen)
{
	static char buf[8192];
	struct fuse_in_header in = { .opcode = opcode, .unique = 7, .nodeid = nodeid };
	struct captured c = { 0 };
	struct zcfs_req req = { .se = &se, .reply = capture_reply, .tctx = &c };

	in.len = (uint32_t)(sizeof(in) + arglen);
	memcpy(buf, &in, sizeof(in));
	memcpy(buf + sizeof(in), arg, arglen);
	if (req_decode_devfuse(&req, buf, in.len) < 0) {
		c.error = -EPROTO;
		return c;
	}
	session_dispatch(&req);
	return c;
}

static uint64_t lookup(const char *name, int *err)
{
	struct captured c = run(FUSE_LOOKUP, 1, name, strlen(name) + 1);
	struct fuse_entry_out e;

	*err = c.error;
	if (c.error < 0 || c.len < sizeof(e))
		return 0;
	memcpy(&e, c.payload, sizeof(e));
	return e.nodeid;
}

/* Opens NODEID and reads it; true if the secret came back. */
static bool read_leaks(uint64_t nodeid)
{
	struct fuse_open_in o = { .flags = O_RDONLY };
	struct fuse_open_out oo;
	struct fuse_read_in rd = { .size = 4096 };
	struct captured c = run(FUSE_OPEN, nodeid, &o, sizeof(o));

	if (c.error < 0 || c.len < sizeof(oo))
		return false;
	memcpy(&oo, c.payload, sizeof(oo));
	rd.fh = oo.fh;
	c = run(FUSE_READ, nodeid, &rd, sizeof(rd));
	return c.error >= 0 && memmem(c.payload, c.len, SECRET, strlen(SECRET)) != NULL;
}

/* Runs in the sandboxed child; returns the number of the first failed
 * step, 0 when all held. No cmocka here: an assertion would longjmp into
 * the parent's copy of the runner. */
static int sandboxed_checks(const char *dir)
{
	static const char *const forged[] = { "..", ".", "../outside", "a/b", "/etc", "" };
	struct fuse_mkdir_in mk = { .mode = 0755 };
	struct sandbox_config cfg = { .root_fd = se.root_fd };
	struct sandbox_report rep;
	char arg[128], path[256];
	struct captured c;
	uint64_t id;
	size_t i;
	int err;

	if (sandbox_apply(&cfg, &rep) < 0)
		return 1;
	if (rep.landlock_abi <= 0)
		return 77;
	for (i = 0; i < ARRAY_SIZE(forged); i++) {
		size_t len = strlen(forged[i]) + 1;
		memcpy(arg, forged[i], len);
		if (run(FUSE_LOOKUP, 1, arg, len).error >= 0 || run(FUSE_UNLINK, 1, arg, len).error >= 0)
			return 10 + (int)i;
	}
	/* A symlink inside SOURCE that points at the outside file: the
	 * server must not hand out what is behind it. */
	id = lookup("link-out", &err);
	if (id && read_leaks(id))
		return 20;
	/* Ordinary requests still work and do not trip seccomp. */
	memcpy(arg, &mk, sizeof(mk));
	memcpy(arg + sizeof(mk), "d", 2);
	c = run(FUSE_MKDIR, 1, arg, sizeof(mk) + 2);
	if (c.error < 0)
		return 30;
	if (!lookup("d", &err))
		return 31;
	if (run(FUSE_STATFS, 1, "", 0).error < 0)
		return 32;
	/* The outside file itself is unreachable even by its real path. */
	snprintf(path, sizeof(path), "%s/outside", dir);
	if (open(path, O_RDONLY) >= 0)
		return 40;
	return 0;
}

static void dispatcher_under_sandbox(void **state)
{
	char dir[] = "/tmp/zcfs-unit-sbx.XXXXXX", path[256], cmd[300];
	int fd, status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/src", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/outside", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, SECRET, strlen(SECRET)), (ssize_t)strlen(SECRET));
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/src/link-out", dir);
	assert_int_equal(symlink(path, cmd), 0);

	snprintf(path, sizeof(path), "%s/src", dir);
	opts.cache = ZCFS_CACHE_NONE;
	opts.ownership = ZCFS_OWNERSHIP_NATIVE;
	se = (struct zcfs_session){ .opts = &opts, .fuse_fd = -1, .wake_fd = -1, .max_write = 1 << 20,
				    .server_uid = geteuid() };
	atomic_store(&se.initialized, true);
	se.root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(se.root_fd >= 0);
	assert_int_equal(inode_table_new(se.root_fd, &se.inodes), 0);
	assert_int_equal(handle_table_new(&se.handles), 0);

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(sandboxed_checks(dir));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	handle_table_free(se.handles);
	inode_table_free(se.inodes);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	if (WIFSIGNALED(status))
		fail_msg("sandboxed dispatcher killed by signal %d (%s)", WTERMSIG(status),
			 WTERMSIG(status) == SIGSYS ? "a syscall missing from the allowlist" : "?");
	if (WEXITSTATUS(status) == 77)
		skip();		/* no Landlock in this kernel */
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void *idle(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* Landlock and a filter without TSYNC would miss an existing thread. */
static void refuses_when_threaded(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sandbox_config cfg = { .root_fd = AT_FDCWD };
		struct sandbox_report rep;
		pthread_t t;
		int r;

		if (pthread_create(&t, NULL, idle, NULL) != 0)
			_exit(2);
		r = sandbox_apply(&cfg, &rep);
		_exit(r == -EBUSY ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_restrictions),
		cmocka_unit_test(dispatcher_under_sandbox),
		cmocka_unit_test(refuses_when_threaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
