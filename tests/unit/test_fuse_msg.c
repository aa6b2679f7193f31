/* Decoder and dispatch: truncated or malformed messages are refused with
 * an error, never read out of bounds; forged names never leave SOURCE. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/serve/backend/handle.h"
#include "daemon/serve/backend/inode.h"
#include "daemon/serve/fuse/fuse_msg.h"

struct captured {
	int calls;
	int error;
	size_t len;
	char payload[4096];
};

static int capture_reply(struct zcfs_req *req, int error, const struct iovec *iov, int iovcnt)
{
	struct captured *c = req->tctx;
	c->calls++;
	c->error = error;
	c->len = 0;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(c->payload + c->len, iov[i].iov_base, iov[i].iov_len);
		c->len += iov[i].iov_len;
	}
	return 0;
}

static size_t build(char *buf, uint32_t opcode, uint64_t nodeid, const void *arg, size_t arglen)
{
	struct fuse_in_header in = { .opcode = opcode, .unique = 42, .nodeid = nodeid };
	in.len = (uint32_t)(sizeof(in) + arglen);
	memcpy(buf, &in, sizeof(in));
	memcpy(buf + sizeof(in), arg, arglen);
	return in.len;
}

static void decode_rejects_short_header(void **state)
{
	struct zcfs_req req = { 0 };
	char buf[64] = { 0 };
	(void)state;
	assert_int_equal(req_decode_devfuse(&req, buf, 10), -EPROTO);
}

static void decode_rejects_len_mismatch(void **state)
{
	struct zcfs_req req = { 0 };
	char buf[128];
	size_t n = build(buf, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 }, sizeof(struct fuse_getattr_in));
	(void)state;
	assert_int_equal(req_decode_devfuse(&req, buf, n - 1), -EPROTO);
}

static void decode_rejects_truncated_arg(void **state)
{
	struct zcfs_req req = { 0 };
	char buf[128];
	struct fuse_read_in rd = { 0 };
	size_t n = build(buf, FUSE_READ, 1, &rd, sizeof(rd) - 8);
	(void)state;
	assert_int_equal(req_decode_devfuse(&req, buf, n), -EINVAL);
}

static void decode_splits_arg_and_data(void **state)
{
	struct zcfs_req req = { 0 };
	char buf[256], arg[64];
	struct fuse_mkdir_in mk = { .mode = 0755 };
	size_t n;
	(void)state;
	memcpy(arg, &mk, sizeof(mk));
	memcpy(arg + sizeof(mk), "dir\0", 4);
	n = build(buf, FUSE_MKDIR, 1, arg, sizeof(mk) + 4);
	assert_int_equal(req_decode_devfuse(&req, buf, n), 0);
	assert_int_equal(req.arg_len, sizeof(mk));
	assert_int_equal(req.data_len, 4);
	assert_string_equal((const char *)req.data, "dir");
}

static void decode_rejects_oversized_extensions(void **state)
{
	struct zcfs_req req = { 0 };
	char buf[128];
	size_t n = build(buf, FUSE_LOOKUP, 1, "x\0", 2);
	struct fuse_in_header *in = (struct fuse_in_header *)buf;
	(void)state;
	in->total_extlen = 4;	/* 32 bytes claimed, 2 present */
	assert_int_equal(req_decode_devfuse(&req, buf, n), -EINVAL);
}

static void next_string_needs_nul(void **state)
{
	struct zcfs_req req = { .data = "abc", .data_len = 3 };
	const char *s;
	size_t off = 0;
	(void)state;
	assert_int_equal(req_next_string(&req, &off, &s), -EINVAL);
	req.data_len = 4;
	assert_int_equal(req_next_string(&req, &off, &s), 0);
	assert_string_equal(s, "abc");
	assert_int_equal(req_next_string(&req, &off, &s), -EINVAL);
}

/* A session over a scratch SOURCE with one file outside it. */
struct fixture {
	char dir[64];
	struct zcfs_options opts;
	struct zcfs_session se;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char path[128];
	int fd;

	strcpy(f->dir, "/tmp/zcfs-unit.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/src", f->dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/outside", f->dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/src", f->dir);
	f->opts.cache = ZCFS_CACHE_NONE;
	f->se.wake_fd = -1;
	f->se.opts = &f->opts;
	f->se.max_write = 1 << 20;
	atomic_store(&f->se.initialized, true);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(inode_table_new(fd, &f->se.inodes), 0);
	assert_int_equal(handle_table_new(&f->se.handles), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	handle_table_free(f->se.handles);
	inode_table_free(f->se.inodes);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static struct captured run(struct fixture *f, uint32_t opcode, uint64_t nodeid, const void *arg,
			   size_t arglen)
{
	static char buf[8192];
	struct captured c = { 0 };
	struct zcfs_req req = { .se = &f->se, .reply = capture_reply, .tctx = &c };
	size_t n = build(buf, opcode, nodeid, arg, arglen);

	assert_int_equal(req_decode_devfuse(&req, buf, n), 0);
	session_dispatch(&req);
	return c;
}

static void unknown_opcode_is_enosys(void **state)
{
	struct captured c = run(*state, 4242, 1, "", 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.error, -ENOSYS);
}

static void requests_before_init_fail(void **state)
{
	struct fixture *f = *state;
	struct captured c;

	atomic_store(&f->se.initialized, false);
	c = run(f, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 }, sizeof(struct fuse_getattr_in));
	assert_int_equal(c.error, -EIO);
}

struct waiting_dispatch {
	struct fixture *f;
	struct captured c;
	atomic_bool done;
};

static void *dispatch_getattr(void *arg)
{
	struct waiting_dispatch *w = arg;

	w->c = run(w->f, FUSE_GETATTR, 1, &(struct fuse_getattr_in){ 0 },
		   sizeof(struct fuse_getattr_in));
	atomic_store(&w->done, true);
	return NULL;
}

/* A restarted server's reader may read a queued request before main has
 * run session_resume(): it waits and is served, never EIO. */
static void resumed_requests_wait_for_resume(void **state)
{
	struct waiting_dispatch w = { .f = *state };
	pthread_t t;

	w.f->opts.resume = true;
	atomic_store(&w.f->se.initialized, false);
	assert_int_equal(pthread_create(&t, NULL, dispatch_getattr, &w), 0);
	usleep(50 * 1000);
	assert_false(atomic_load(&w.done));
	session_set_initialized(&w.f->se);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.c.calls, 1);
	assert_int_equal(w.c.error, 0);
}

/* ...and a server that ends before resuming answers it (EIO) rather
 * than leaving the reader blocked. */
static void resumed_requests_fail_on_exit(void **state)
{
	struct waiting_dispatch w = { .f = *state };
	pthread_t t;

	w.f->opts.resume = true;
	w.f->se.wake_fd = -1;
	atomic_store(&w.f->se.initialized, false);
	atomic_store(&w.f->se.exiting, true);	/* session_exit without waking a main */
	assert_int_equal(pthread_create(&t, NULL, dispatch_getattr, &w), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.c.error, -EIO);
}

static void forged_names_stay_inside(void **state)
{
	static const char *const names[] = { "..", ".", "../outside", "a/b", "/etc", "" };
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char arg[64];
		size_t len = strlen(names[i]) + 1;
		struct captured c;

		memcpy(arg, names[i], len);
		c = run(f, FUSE_LOOKUP, 1, arg, len);
		assert_int_equal(c.calls, 1);
		assert_true(c.error < 0);
		c = run(f, FUSE_UNLINK, 1, arg, len);
		assert_true(c.error < 0);
	}
}

static void unknown_nodeid_is_estale(void **state)
{
	struct captured c = run(*state, FUSE_GETATTR, 987654, &(struct fuse_getattr_in){ 0 },
				sizeof(struct fuse_getattr_in));
	assert_int_equal(c.error, -ESTALE);
}

static void forged_fh_is_ebadf(void **state)
{
	struct fuse_read_in rd = { .fh = 0x1234567800000003ULL, .size = 4096 };
	struct captured c = run(*state, FUSE_READ, 1, &rd, sizeof(rd));
	assert_int_equal(c.error, -EBADF);
}

static void mkdir_lookup_forget_cycle(void **state)
{
	struct fixture *f = *state;
	char arg[64];
	struct fuse_mkdir_in mk = { .mode = 0755 };
	struct fuse_entry_out e;
	struct fuse_forget_in fg = { .nlookup = 2 };
	struct captured c;

	memcpy(arg, &mk, sizeof(mk));
	memcpy(arg + sizeof(mk), "d\0", 2);
	c = run(f, FUSE_MKDIR, 1, arg, sizeof(mk) + 2);
	assert_int_equal(c.error, 0);
	memcpy(&e, c.payload, sizeof(e));
	assert_true(S_ISDIR(e.attr.mode));
	c = run(f, FUSE_LOOKUP, 1, "d", 2);
	assert_int_equal(c.error, 0);
	assert_int_equal(inode_table_count(f->se.inodes), 2);
	c = run(f, FUSE_FORGET, e.nodeid, &fg, sizeof(fg));
	assert_int_equal(c.calls, 0);	/* FORGET takes no reply */
	assert_int_equal(inode_table_count(f->se.inodes), 1);
}

/* A RELEASE naming a directory handle (or RELEASEDIR a file's) closes it
 * whatever its kind: found by fuzzing as a leaked DIR stream. */
static void release_of_other_kind_closes_it(void **state)
{
	struct fixture *f = *state;
	struct fuse_open_in oi = { .flags = O_RDONLY };
	struct zcfs_open_out oo;
	struct fuse_release_in rel = { 0 };
	struct captured c;

	c = run(f, FUSE_OPENDIR, 1, &oi, sizeof(oi));
	assert_int_equal(c.error, 0);
	memcpy(&oo, c.payload, sizeof(oo));
	rel.fh = oo.fh;
	c = run(f, FUSE_RELEASE, 1, &rel, sizeof(rel));
	assert_int_equal(c.error, 0);
	assert_null(handle_get(f->se.handles, oo.fh));
	c = run(f, FUSE_OPENDIR, 1, &oi, sizeof(oi));
	memcpy(&oo, c.payload, sizeof(oo));
	rel.fh = oo.fh;
	c = run(f, FUSE_RELEASEDIR, 1, &rel, sizeof(rel));
	assert_int_equal(c.error, 0);
	c = run(f, FUSE_RELEASEDIR, 1, &rel, sizeof(rel));	/* twice: unknown now */
	assert_int_equal(c.error, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_rejects_short_header),
		cmocka_unit_test(decode_rejects_len_mismatch),
		cmocka_unit_test(decode_rejects_truncated_arg),
		cmocka_unit_test(decode_splits_arg_and_data),
		cmocka_unit_test(decode_rejects_oversized_extensions),
		cmocka_unit_test(next_string_needs_nul),
		cmocka_unit_test_setup_teardown(unknown_opcode_is_enosys, setup, teardown),
		cmocka_unit_test_setup_teardown(requests_before_init_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(resumed_requests_wait_for_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(resumed_requests_fail_on_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(forged_names_stay_inside, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_nodeid_is_estale, setup, teardown),
		cmocka_unit_test_setup_teardown(forged_fh_is_ebadf, setup, teardown),
		cmocka_unit_test_setup_teardown(mkdir_lookup_forget_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(release_of_other_kind_closes_it, setup, teardown),
	};
	return cmocka_run_group_tests_name("fuse_msg", tests, NULL, NULL);
}
