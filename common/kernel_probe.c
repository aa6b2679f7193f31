/* Kernel feature probe (see kernel_probe.h). The flag values are the
 * kernel's (../shared/docs/fuse-uring-abi.md sections 1.1, 2.4, 3.1); they
 * are repeated here rather than taken from kernel/ because this file is
 * built into programs that do not include the FUSE ABI headers. */
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include "kernel_probe.h"

#define KP_FUSE_PASSTHROUGH (1ULL << 37)
#define KP_FUSE_OVER_IO_URING (1ULL << 41)
#define KP_FUSE_HAS_IO_URING_BUFPOOL (1ULL << 43)
#define KP_MINOR_URING 42
#define KP_MINOR_PASSTHROUGH 40
#define KP_MINOR_BUFPOOL 46
#define KP_INIT_EXT (1u << 30)
#define KP_FUSE_INIT 26
/* /dev/fuse refuses reads into less than FUSE_MIN_READ_BUFFER. */
#define KP_READ_BUF (16 * 1024)
#define KP_INIT_TIMEOUT_MS 2000

static int read_param(const char *path, char *buf, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static bool has_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

/* io_uring_setup with 128-byte SQEs, as every FUSE command ring needs. */
static int probe_sqe128(void)
{
	struct io_uring_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQE128;
	fd = (int)syscall(SYS_io_uring_setup, 2, &p);
	if (fd < 0)
		return -errno;
	safe_close(fd);
	return 0;
}

/* Reads the INIT request the kernel queues on fd right after mount(2). */
static int read_init(int fd, struct kernel_facts *f)
{
	_cleanup_free_ char *buf = malloc(KP_READ_BUF);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint32_t opcode, flags, flags2;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	if (poll(&pfd, 1, KP_INIT_TIMEOUT_MS) <= 0)
		return -ETIMEDOUT;
	n = read(fd, buf, KP_READ_BUF);
	if (n < 0)
		return -errno;
	/* fuse_in_header (40 bytes): opcode u32 @4; fuse_init_in after it:
	 * major @0, minor @4, flags @12, flags2 @16. */
	if (n < 40 + 20)
		return -EPROTO;
	memcpy(&opcode, buf + 4, 4);
	if (opcode != KP_FUSE_INIT)
		return -EPROTO;
	memcpy(&f->major, buf + 40, 4);
	memcpy(&f->minor, buf + 44, 4);
	memcpy(&flags, buf + 52, 4);
	memcpy(&flags2, buf + 56, 4);
	f->offered = flags;
	if (flags & KP_INIT_EXT)
		f->offered |= (uint64_t)flags2 << 32;
	f->init_read = true;
	return 0;
}

/* A scratch mount whose INIT we read and leave unanswered: detaching the
 * mount and closing the fd (the only connection) aborts it. */
static void probe_mount(struct kernel_facts *f)
{
	char dir[] = "/tmp/zcfs-kprobe.XXXXXX", opts[128];
	_cleanup_close_ int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		f->devfuse_err = -errno;
		f->mount_err = f->devfuse_err;
		return;
	}
	if (!mkdtemp(dir)) {
		f->mount_err = -errno;
		return;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("zcfs-kprobe", dir, "fuse.zcfs-kprobe", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
		f->mount_err = -errno;
	} else {
		f->mount_err = read_init(fd, f);
		(void)umount2(dir, MNT_DETACH);
	}
	(void)rmdir(dir);
}

void kernel_probe_run(struct kernel_facts *f)
{
	struct utsname u;
	struct rlimit rl;
	char v[16];

	memset(f, 0, sizeof(*f));
	if (uname(&u) == 0)
		snprintf(f->release, sizeof(f->release), "%s", u.release);
	f->enable_uring = -1;
	if (read_param("/sys/module/fuse/parameters/enable_uring", v, sizeof(v)) == 0)
		f->enable_uring = v[0] == 'Y';
	f->io_uring_disabled = -1;
	if (read_param("/proc/sys/kernel/io_uring_disabled", v, sizeof(v)) == 0)
		f->io_uring_disabled = v[0] - '0';
	f->sqe128_err = probe_sqe128();
	f->cap_sys_admin = has_cap(CAP_SYS_ADMIN);
	f->cap_ipc_lock = has_cap(CAP_IPC_LOCK);
	f->memlock_limit = UINT64_MAX;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		f->memlock_limit = rl.rlim_cur;
	probe_mount(f);
}

static void set(struct kernel_verdict *v, enum kernel_status s, const char *fmt, ...) _printf_(3, 4);
static void set(struct kernel_verdict *v, enum kernel_status s, const char *fmt, ...)
{
	va_list ap;

	v->status = s;
	va_start(ap, fmt);
	vsnprintf(v->why, sizeof(v->why), fmt, ap);
	va_end(ap);
}

static void verdict_uring(const struct kernel_facts *f, struct kernel_verdict *v)
{
	if (!f->init_read)
		set(v, KSTATUS_NOT_SUPPORTED, "no FUSE connection could be probed");
	else if (f->enable_uring < 0 || f->minor < KP_MINOR_URING)
		set(v, KSTATUS_NOT_SUPPORTED, "kernel too old or CONFIG_FUSE_IO_URING off "
		    "(protocol 7.%u, enable_uring parameter %s)", f->minor,
		    f->enable_uring < 0 ? "missing" : "present");
	else if (f->io_uring_disabled > 0 && !(f->io_uring_disabled == 1 && f->cap_sys_admin))
		set(v, KSTATUS_DISABLED, "kernel.io_uring_disabled=%d", f->io_uring_disabled);
	else if (f->sqe128_err < 0)
		set(v, KSTATUS_NOT_SUPPORTED, "io_uring_setup(SQE128) failed: %s", strerror(-f->sqe128_err));
	else if (f->enable_uring == 0)
		set(v, KSTATUS_DISABLED, "enable_uring=N (echo Y > /sys/module/fuse/parameters/enable_uring)");
	else if (!(f->offered & KP_FUSE_OVER_IO_URING))
		set(v, KSTATUS_NOT_SUPPORTED, "kernel did not offer FUSE_OVER_IO_URING in INIT");
	else if (!f->cap_ipc_lock && f->memlock_limit < f->default_pinned)
		set(v, KSTATUS_DISABLED, "memlock limit too low for the default geometry "
		    "(RLIMIT_MEMLOCK %llu < %llu bytes, no CAP_IPC_LOCK)",
		    (unsigned long long)f->memlock_limit, (unsigned long long)f->default_pinned);
	else
		set(v, KSTATUS_SUPPORTED, "%s", "");
}

static void verdict_devfuse(const struct kernel_facts *f, struct kernel_verdict *v)
{
	if (f->devfuse_err < 0)
		set(v, KSTATUS_NOT_SUPPORTED, "/dev/fuse: %s", strerror(-f->devfuse_err));
	else if (!f->init_read && !f->cap_sys_admin)
		set(v, KSTATUS_DISABLED, "scratch mount failed: %s (no CAP_SYS_ADMIN)", strerror(-f->mount_err));
	else if (!f->init_read)
		set(v, KSTATUS_NOT_SUPPORTED, "scratch mount failed: %s", strerror(-f->mount_err));
}

static void verdict_bufpool(const struct kernel_facts *f, const struct kernel_verdict *uring,
			    struct kernel_verdict *v)
{
	if (uring->status != KSTATUS_SUPPORTED)
		set(v, uring->status, "needs FUSE-over-io_uring: %.180s", uring->why);
	else if (f->minor < KP_MINOR_BUFPOOL || !(f->offered & KP_FUSE_HAS_IO_URING_BUFPOOL))
		set(v, KSTATUS_NOT_SUPPORTED, "patch series missing: kernel offers protocol 7.%u%s "
		    "(needs 7.46 + FUSE_HAS_IO_URING_BUFPOOL: io-uring buffer pools, Linux 7.3)",
		    f->minor, f->offered & KP_FUSE_HAS_IO_URING_BUFPOOL ? "" : " without the pool flag");
}

static void verdict_zerocopy(const struct kernel_facts *f, const struct kernel_verdict *pool,
			     struct kernel_verdict *v)
{
	if (pool->status != KSTATUS_SUPPORTED)
		set(v, pool->status, "needs buffer pools: %.180s", pool->why);
	else if (!f->cap_sys_admin)
		set(v, KSTATUS_DISABLED, "no CAP_SYS_ADMIN (ADD_QUEUE with ZERO_COPY fails with EPERM)");
}

static void verdict_passthrough(const struct kernel_facts *f, struct kernel_verdict *v)
{
	if (!f->init_read)
		set(v, KSTATUS_NOT_SUPPORTED, "no FUSE connection could be probed");
	else if (!(f->offered & KP_FUSE_PASSTHROUGH))
		set(v, KSTATUS_NOT_SUPPORTED, "kernel too old or CONFIG_FUSE_PASSTHROUGH off (protocol 7.%u, "
		    "passthrough since 7.%d)", f->minor, KP_MINOR_PASSTHROUGH);
	else if (!f->cap_sys_admin)
		set(v, KSTATUS_DISABLED, "no CAP_SYS_ADMIN (FUSE_DEV_IOC_BACKING_OPEN needs it)");
}

void kernel_verdicts(const struct kernel_facts *f, struct kernel_verdict v[KPATH_COUNT])
{
	memset(v, 0, sizeof(*v) * KPATH_COUNT);
	verdict_devfuse(f, &v[KPATH_DEVFUSE]);
	verdict_uring(f, &v[KPATH_URING]);
	verdict_bufpool(f, &v[KPATH_URING], &v[KPATH_BUFPOOL]);
	verdict_zerocopy(f, &v[KPATH_BUFPOOL], &v[KPATH_ZEROCOPY]);
	verdict_passthrough(f, &v[KPATH_PASSTHROUGH]);
}

const char *kernel_path_name(enum kernel_path p)
{
	static const char *const names[KPATH_COUNT] = { "devfuse", "io_uring", "buffer_pool",
							 "zero_copy", "passthrough" };

	return p < KPATH_COUNT ? names[p] : "?";
}

const char *kernel_status_name(enum kernel_status s)
{
	return s == KSTATUS_SUPPORTED ? "supported" : s == KSTATUS_DISABLED ? "disabled" : "not supported";
}
