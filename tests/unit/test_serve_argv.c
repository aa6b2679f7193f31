/* zcfs-serve's command line as zcfsd runs it (server/serve_argv.c): the
 * argv of a plain volume and of one with every option, in the order
 * docs/supervision.md gives, and what a volume and its tenant ask for. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/zcfsd/broker/broker.h"
#include "daemon/zcfsd/server/server_int.h"

static void assert_argv(const struct zcfsd_serve_opts *o, const char *const *want)
{
	struct zcfsd_serve_argv a;
	size_t n = zcfsd_serve_argv(o, &a), i;

	for (i = 0; want[i]; i++) {
		assert_true(i < n);
		assert_string_equal(a.argv[i], want[i]);
	}
	assert_int_equal(n, i);
	assert_null(a.argv[n]);
	assert_true(n < ZCFSD_SERVE_ARGV_MAX);
}

static void test_plain(void **state)
{
	struct zcfsd_serve_opts o = {
		.serve_bin = "/usr/bin/zcfs-serve", .source = "/var/lib/zcfs/volumes/v1",
		.transport = "devfuse", .queue_depth = 64, .max_write = 131072,
	};
	const char *const want[] = {
		"/usr/bin/zcfs-serve", "--fd=3", "--stats-fd=5", "--ownership=xattr",
		"--foreground", "--sandbox", "--transport=devfuse", "--queue-depth=64",
		"--max-write=131072", "--cache=exclusive", "--threads=1", "--no-writeback",
		"--zero-copy=off", "--count-inodes", "/var/lib/zcfs/volumes/v1", NULL,
	};

	(void)state;
	assert_argv(&o, want);
}

static void test_every_option(void **state)
{
	struct zcfsd_serve_opts o = {
		.serve_bin = "zcfs-serve", .source = "SRC", .transport = "uring",
		.queue_depth = 128, .max_write = 1048576, .quota_bytes = 1ULL << 40,
		.read_only = true, .ring_memfd = true, .writeback = true, .broker = true,
		.zero_copy = true, .ready_fd = true, .resume = true, .standby = true,
	};
	const char *const want[] = {
		"zcfs-serve", "--fd=3", "--stats-fd=5", "--ownership=xattr", "--foreground",
		"--sandbox", "--transport=uring", "--queue-depth=128", "--max-write=1048576",
		"--cache=exclusive", "--threads=1", "--read-only", "--ring-memfd=8",
		"--passthrough", "--broker-fd=6", "--zero-copy=auto",
		"--quota-bytes=1099511627776", "--ready-fd=10", "--resume", "--standby-fd=11",
		"SRC", NULL,
	};

	(void)state;
	assert_argv(&o, want);
}

/* The fd numbers in the argv are the ones the child places. */
static void test_fd_numbers(void **state)
{
	(void)state;
	assert_int_equal(ZCFSD_SERVER_FUSE_FD, 3);
	assert_int_equal(ZCFSD_SERVER_ERR_FD, 4);
	assert_int_equal(ZCFSD_SERVER_STATS_FD, 5);
	assert_int_equal(ZCFSD_SERVER_BROKER_FD, 6);
	assert_int_equal(ZCFSD_SERVER_BROKER_PARK_FD, 7);
	assert_int_equal(ZCFSD_SERVER_RING_FD, 8);
	assert_int_equal(ZCFSD_SERVER_LOG_PARK_FD, 9);
	assert_int_equal(ZCFSD_SERVER_READY_FD, 10);
	assert_int_equal(ZCFSD_SERVER_STANDBY_FD, 11);
}

static void test_opts_of_volume(void **state)
{
	struct policy pol = { .dirty_limit = 0 };
	struct zcfsd d = { .policy = &pol, .serve_bin = "BIN", .serve_can_resume = true };
	struct policy_tenant ring = { .io_uring = true, .zero_copy = true };
	struct policy_tenant plain = { .io_uring = false, .zero_copy = true };
	struct zcfsd_broker *some_broker = (struct zcfsd_broker *)&d;	/* only its presence counts */
	struct zcfsd_volume v = {
		.transport = POLICY_TRANSPORT_URING, .queue_depth = 32, .max_write = 65536,
		.size = 4096, .read_only = true, .ring_fd = 17, .broker = some_broker,
	};
	struct zcfsd_serve_opts o;

	(void)state;
	v.srv.restarts = 1;
	zcfsd_serve_opts_of(&d, &v, &ring, "SRC", true, &o);
	assert_string_equal(o.serve_bin, "BIN");
	assert_string_equal(o.source, "SRC");
	assert_string_equal(o.transport, "uring");
	assert_int_equal(o.queue_depth, 32);
	assert_int_equal(o.max_write, 65536);
	assert_int_equal(o.quota_bytes, 4096);
	assert_true(o.read_only && o.ring_memfd && o.broker && o.zero_copy && o.ready_fd && o.resume);
	assert_false(o.writeback || o.kernel_size);

	/* A project quota enforces the size: the server neither counts the
	 * blocks nor the inodes (statfs is the project's). */
	v.size_enf = ZCFSD_SIZE_PROJECT;
	zcfsd_serve_opts_of(&d, &v, &ring, "SRC", true, &o);
	assert_int_equal(o.quota_bytes, 0);
	assert_true(o.kernel_size);
	{
		struct zcfsd_serve_argv a;
		size_t n = zcfsd_serve_argv(&o, &a);
		for (size_t i = 0; i < n; i++)
			assert_true(strncmp(a.argv[i], "--quota-bytes", 13) && strcmp(a.argv[i], "--count-inodes"));
	}
	v.size_enf = ZCFSD_SIZE_SERVER;

	/* A tenant without io_uring runs on /dev/fuse, so no zero-copy; a
	 * first start does not resume; the policy's dirty limit writes back. */
	pol.dirty_limit = 1 << 20;
	v.srv.restarts = 0;
	v.ring_fd = -1;
	v.broker = NULL;
	zcfsd_serve_opts_of(&d, &v, &plain, "SRC", false, &o);
	assert_string_equal(o.transport, "devfuse");
	assert_false(o.zero_copy || o.ring_memfd || o.broker || o.ready_fd || o.resume);
	assert_true(o.writeback);

	/* A restart resumes only with a zcfs-serve that has --resume. */
	v.srv.restarts = 3;
	d.serve_can_resume = false;
	zcfsd_serve_opts_of(&d, &v, &plain, "SRC", false, &o);
	assert_false(o.resume);
}

/* A ring_holder volume: its servers on the holder's rings (fds 12..),
 * a pool only unregistered (--buffer-pool=auto: the holder refuses
 * registration), no zero-copy; the holder's own command line, SOURCE last. */
static void test_ring_holder(void **state)
{
	struct policy pol = { .dirty_limit = 0 };
	struct zcfsd d = { .policy = &pol, .serve_bin = "BIN", .serve_can_resume = true };
	struct policy_tenant ring = { .io_uring = true, .zero_copy = true };
	struct zcfsd_volume v = { .transport = POLICY_TRANSPORT_AUTO, .queue_depth = 4, .max_write = 131072,
				  .ring_fd = 17, .ring_holder = true };
	const char *const serve[] = {
		"BIN", "--fd=3", "--stats-fd=5", "--ownership=xattr", "--foreground", "--sandbox",
		"--transport=uring", "--queue-depth=4", "--max-write=131072", "--cache=exclusive",
		"--threads=1", "--ring-memfd=8", "--holder-rings=12", "--buffer-pool=auto",
		"--no-writeback", "--zero-copy=off", "--count-inodes", "SRC", NULL,
	};
	const char *const holder[] = {
		"BIN", "--ring-holder", "--fd=3", "--ring-memfd=8", "--transport=uring",
		"--queue-depth=4", "--max-write=131072", "--buffer-pool=auto", "--zero-copy=off",
		"--foreground", "SRC", NULL,
	};
	struct zcfsd_serve_opts o;
	struct zcfsd_serve_argv a;
	size_t n, i;

	(void)state;
	zcfsd_serve_opts_of(&d, &v, &ring, "SRC", false, &o);
	assert_true(o.holder_rings);
	assert_false(o.zero_copy);	/* no zero-copy on a holder's rings */
	assert_argv(&o, serve);
	n = zcfsd_holder_argv(&o, &a);
	for (i = 0; holder[i]; i++) {
		assert_true(i < n);
		assert_string_equal(a.argv[i], holder[i]);
	}
	assert_int_equal(n, i);
	assert_null(a.argv[n]);
	/* No holder without the ring memfd (a /dev/fuse volume has none). */
	v.ring_fd = -1;
	zcfsd_serve_opts_of(&d, &v, &ring, "SRC", false, &o);
	assert_false(o.holder_rings);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_every_option),
		cmocka_unit_test(test_fd_numbers),
		cmocka_unit_test(test_opts_of_volume),
		cmocka_unit_test(test_ring_holder),
	};
	return cmocka_run_group_tests_name("serve_argv", tests, NULL, NULL);
}
