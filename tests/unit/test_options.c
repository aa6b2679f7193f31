/* zcfs-serve's command line: -o with generic mount options and long
 * options as key=value, as mount(8), fstab and mount.fuse.zcfs pass them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <cmocka.h>
#include "daemon/serve/core/options.h"

#define PARSE(o, err, ...)                                                                  \
	({                                                                                  \
		char *argv_[] = { "zcfs-serve", __VA_ARGS__, NULL };                        \
		options_parse((int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_, (o), (err), \
			      sizeof(err));                                                 \
	})

static void defaults_nodev_nosuid(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	assert_int_equal(PARSE(&o, err, "/src", "/mnt"), 0);
	assert_int_equal(o.mount_flags, MS_NODEV | MS_NOSUID);
	assert_false(o.read_only);
	assert_string_equal(o.source, "/src");
	assert_string_equal(o.mountpoint, "/mnt");
	assert_string_equal(o.fsname, "");
}

static void generic_mount_options(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	/* mount(8) puts -o after the positional arguments */
	assert_int_equal(PARSE(&o, err, "/src", "/mnt", "-o",
			       "rw,dev,suid,noexec,noatime,allow_other,default_permissions,fsname=source:/x,subtype=zcfs,nofail,x-systemd.automount"),
			 0);
	assert_int_equal(o.mount_flags, MS_NOEXEC | MS_NOATIME);
	assert_string_equal(o.fsname, "source:/x");
	assert_string_equal(o.subtype, "zcfs");
	assert_string_equal(o.source, "/src");
	assert_string_equal(o.mountpoint, "/mnt");
	assert_int_equal(PARSE(&o, err, "-oro,strictatime", "/src", "/mnt"), 0);
	assert_true(o.read_only);
	assert_int_equal(o.mount_flags, MS_NODEV | MS_NOSUID | MS_STRICTATIME);
	assert_int_equal(PARSE(&o, err, "-o", "noatime,relatime", "/src", "/mnt"), 0);
	assert_int_equal(o.mount_flags, MS_NODEV | MS_NOSUID | MS_RELATIME);
}

static void long_options_as_keys(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	assert_int_equal(PARSE(&o, err, "-o", "transport=devfuse,cache=exclusive,no_writeback,queue_depth=16",
			       "/src", "/mnt", "-o", "ownership=xattr"),
			 0);
	assert_int_equal(o.transport, ZCFS_TRANSPORT_DEVFUSE);
	assert_int_equal(o.cache, ZCFS_CACHE_EXCLUSIVE);
	assert_false(o.writeback);
	assert_int_equal(o.queue_depth, 16);
	assert_int_equal(o.ownership, ZCFS_OWNERSHIP_XATTR);
	assert_string_equal(o.mountpoint, "/mnt");
}

static void bad_o_items(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	assert_int_equal(PARSE(&o, err, "-o", "bogus", "/src", "/mnt"), -EINVAL);
	assert_non_null(strstr(err, "bogus"));
	assert_int_equal(PARSE(&o, err, "-o", "transport", "/src", "/mnt"), -EINVAL);
	assert_non_null(strstr(err, "needs a value"));
	assert_int_equal(PARSE(&o, err, "-o", "writeback=1", "/src", "/mnt"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-o", "transport=pigeon", "/src", "/mnt"), -EINVAL);
	assert_non_null(strstr(err, "pigeon"));
	assert_int_equal(PARSE(&o, err, "-o", "fsname=", "/src", "/mnt"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "-o", "subtype=", "/src", "/mnt"), 0);
	assert_true(o.no_subtype);
	assert_int_equal(PARSE(&o, err, "/src", "/mnt", "-o"), -EINVAL);
}

static void ready_fd(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	assert_int_equal(PARSE(&o, err, "/src", "/mnt"), 0);
	assert_int_equal(o.ready_fd, -1);
	assert_int_equal(PARSE(&o, err, "--fd=3", "--ready-fd=9", "/src"), 0);
	assert_int_equal(o.ready_fd, 9);
	assert_int_equal(PARSE(&o, err, "--ready-fd=nine", "/src", "/mnt"), -EINVAL);
	assert_non_null(strstr(err, "--ready-fd"));
	assert_int_equal(PARSE(&o, err, "--ready-fd=-1", "/src", "/mnt"), -EINVAL);
}

/* The ring holder and its servers: only on zcfsd's fds, io_uring, no
 * registered pool, no zero-copy; never both at once. */
static void ring_holder(void **state)
{
	struct zcfs_options o;
	char err[256];
	(void)state;
	assert_int_equal(PARSE(&o, err, "/src", "/mnt"), 0);
	assert_false(o.ring_holder);
	assert_int_equal(o.holder_rings, -1);
	assert_int_equal(PARSE(&o, err, "--ring-holder", "--fd=3", "--ring-memfd=8", "--transport=uring",
			       "--buffer-pool=off", "--zero-copy=off", "/src"), 0);
	assert_true(o.ring_holder);
	assert_int_equal(PARSE(&o, err, "--holder-rings=12", "--fd=3", "--ring-memfd=8",
			       "--transport=uring", "--buffer-pool=off", "--zero-copy=off", "/src"), 0);
	assert_int_equal(o.holder_rings, 12);
	/* an unregistered pool: what the kernel allows on a holder's ring */
	assert_int_equal(PARSE(&o, err, "--holder-rings=12", "--fd=3", "--ring-memfd=8",
			       "--transport=uring", "--buffer-pool=auto", "--zero-copy=off", "/src"), 0);
	assert_int_equal(PARSE(&o, err, "--ring-holder", "--fd=3", "--ring-memfd=8", "--transport=uring",
			       "--buffer-pool=on", "--zero-copy=off", "/src"), 0);
	assert_int_equal(PARSE(&o, err, "--holder-rings=12", "--fd=3", "--ring-memfd=8",
			       "--transport=uring", "--buffer-pool=registered", "--zero-copy=off", "/src"), -EINVAL);
	assert_non_null(strstr(err, "no --buffer-pool=registered"));
	assert_int_equal(PARSE(&o, err, "--holder-rings=12", "--fd=3", "--ring-memfd=8",
			       "--transport=uring", "--buffer-pool=auto", "--zero-copy=auto", "/src"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--ring-holder", "--fd=3", "--ring-memfd=8", "/src"), -EINVAL);
	assert_non_null(strstr(err, "--ring-holder needs"));
	assert_int_equal(PARSE(&o, err, "--holder-rings=12", "--fd=3", "--transport=uring",
			       "--buffer-pool=off", "--zero-copy=off", "/src"), -EINVAL);
	assert_int_equal(PARSE(&o, err, "--ring-holder", "--holder-rings=12", "--fd=3", "--ring-memfd=8",
			       "--transport=uring", "--buffer-pool=off", "--zero-copy=off", "/src"), -EINVAL);
}

/* Every option of parse_args's tables lands in its own field, at its
 * width, and a bad value gets the message it always had. */
static void table_options(void **state)
{
	struct zcfs_options o;
	char err[256] = "";
	int r;
	(void)state;
	r = PARSE(&o, err, "--threads=7", "--queue-depth=1024", "--max-write=1M",
			       "--pinned-budget=2G", "--pool-buffers=3", "--fd=1048576",
			       "--ring-memfd=8", "--passthrough", "--broker-fd=6", "--quota-bytes=5120G",
			       "--dirty-limit=0", "--stats-fd=5", "--ready-fd=10", "--transport=uring",
			       "--ownership=xattr", "--cache=none", "--buffer-pool=registered",
			       "--zero-copy=off", "--count-inodes", "--read-only", "--sandbox",
			       "--resume", "--no-acl", "--no-allow-other", "-f", "-d", "/src");
	assert_string_equal(err, "");
	assert_int_equal(r, 0);
	assert_int_equal(o.threads, 7);
	assert_int_equal(o.queue_depth, 1024);
	assert_int_equal(o.max_write, 1 << 20);
	assert_int_equal(o.pinned_budget, 2ULL << 30);
	assert_int_equal(o.pool_buffers, 3);
	assert_int_equal(o.fuse_fd, 1 << 20);
	assert_int_equal(o.ring_memfd, 8);
	assert_int_equal(o.broker_fd, 6);
	assert_int_equal(o.quota_bytes, 5ULL << 40);
	assert_int_equal(o.dirty_limit, 0);
	assert_int_equal(o.stats_fd, 5);
	assert_int_equal(o.ready_fd, 10);
	assert_int_equal(o.transport, ZCFS_TRANSPORT_URING);
	assert_int_equal(o.ownership, ZCFS_OWNERSHIP_XATTR);
	assert_int_equal(o.cache, ZCFS_CACHE_NONE);
	assert_int_equal(o.buffer_pool, ZCFS_BUFPOOL_REGISTERED);
	assert_int_equal(o.zero_copy, ZCFS_ZEROCOPY_OFF);
	assert_true(o.count_inodes && o.read_only && o.sandbox && o.resume && o.no_acl &&
		    o.passthrough && o.foreground && o.debug);
	assert_false(o.allow_other);
	assert_false(o.writeback);	/* passthrough excludes it */
	assert_int_equal(o.stats_fd, 5);

	assert_int_equal(PARSE(&o, err, "--threads=257", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--threads: '257' is not a number from 1 to 256");
	assert_int_equal(PARSE(&o, err, "--max-write=5000", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--max-write: '5000' is not a multiple of 4K from 4K to 16M");
	assert_int_equal(PARSE(&o, err, "--quota-bytes=1K", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--quota-bytes: '1K' is not a size of at least 4K (K, M, G suffixes)");
	assert_int_equal(PARSE(&o, err, "--stats-fd=x", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--stats-fd: 'x' is not a file descriptor number");
	/* "default" is how the enum says "not given", never a value */
	assert_int_equal(PARSE(&o, err, "--ownership=default", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--ownership: 'default' is not native or xattr");
	assert_int_equal(PARSE(&o, err, "--cache=default", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--cache: 'default' is not exclusive, shared or none");
	assert_int_equal(PARSE(&o, err, "--transport=auto", "--zero-copy=maybe", "/src", "/mnt"), -EINVAL);
	assert_string_equal(err, "--zero-copy: 'maybe' is not auto, on or off");
	assert_int_equal(PARSE(&o, err, "--writeback", "--allow-other", "/src", "/mnt"), 0);
	assert_true(o.writeback && o.allow_other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_nodev_nosuid),
		cmocka_unit_test(generic_mount_options),
		cmocka_unit_test(long_options_as_keys),
		cmocka_unit_test(bad_o_items),
		cmocka_unit_test(ready_fd),
		cmocka_unit_test(ring_holder),
		cmocka_unit_test(table_options),
	};
	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
