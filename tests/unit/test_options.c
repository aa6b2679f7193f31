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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_nodev_nosuid),
		cmocka_unit_test(generic_mount_options),
		cmocka_unit_test(long_options_as_keys),
		cmocka_unit_test(bad_o_items),
		cmocka_unit_test(ready_fd),
	};
	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
