/* zcfs-serve --sandbox (see sandbox.h and docs/security.md).
 *
 * Applied once, in main, after SOURCE is open and the fuse fd is known and
 * before the transport starts any thread: Landlock domains and a seccomp
 * filter loaded without TSYNC bind the calling thread and the threads it
 * creates later, never threads that already exist. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <seccomp.h>
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"
#include "sandbox.h"
#include "kernel/zcfs_fuse_abi.h"
#include "kernel/zcfs_landlock_abi.h"
#include "kernel/zcfs_xattr_abi.h"

/* A read-only file outside SOURCE the server still reads after
 * sandboxing: the io_uring transport sizes its queues from it when it
 * starts. */
#define CPU_POSSIBLE "/sys/devices/system/cpu/possible"

static int ll_abi(void)
{
	long r = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return r < 0 ? -errno : (int)r;
}

static uint64_t ll_handled_fs(int abi)
{
	uint64_t fs = LL_FS_V1_ALL;

	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	return fs;
}

/* Adds PATH (opened O_PATH here) with ACCESS; a path that does not exist
 * is skipped, the rule is only there for when the server needs it. */
static int ll_add_path(int ruleset, const char *path, uint64_t access)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct ll_path_beneath pb = { .allowed_access = access };

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	pb.parent_fd = fd;
	return syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0 ? -errno : 0;
}

int sandbox_landlock(const struct sandbox_config *c, char *why, size_t len)
{
	struct ll_ruleset_attr attr = { 0 };
	struct ll_path_beneath root = { .parent_fd = c->root_fd };
	_cleanup_close_ int ruleset = -1;
	size_t attr_size = sizeof(attr.handled_access_fs);
	int abi = ll_abi(), r;

	if (abi < 0) {
		snprintf(why, len, "kernel without Landlock (%s)", strerror(-abi));
		return abi == -ENOSYS ? -EOPNOTSUPP : abi;
	}
	if (abi < 2) {
		/* ABI 1 cannot handle REFER, and then refuses every rename or
		 * link across directories, which clients do all the time. */
		snprintf(why, len, "Landlock ABI 1 refuses cross-directory renames");
		return -EOPNOTSUPP;
	}
	attr.handled_access_fs = ll_handled_fs(abi);
	if (abi >= 4) {
		/* seccomp already refuses socket(2); this is the second wall. */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		/* Signals only inside the domain: the server's own threads. */
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0) {
		r = -errno;
		snprintf(why, len, "landlock_create_ruleset: %s", strerror(-r));
		return r == -ENOSYS ? -EOPNOTSUPP : r;
	}
	/* SOURCE: everything but executing files and device ioctls. Landlock
	 * checks the object a /proc/self/fd/N magic link leads to, so the
	 * backend's reopen-through-/proc lands here and needs no /proc rule. */
	root.allowed_access = attr.handled_access_fs & ~(LL_FS_EXECUTE | LL_FS_IOCTL_DEV);
	r = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &root, 0) < 0 ? -errno : 0;
	if (r == 0 && c->dev_fuse)
		r = ll_add_path(ruleset, "/dev/fuse", (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV) &
				attr.handled_access_fs);
	if (r == 0)
		r = ll_add_path(ruleset, CPU_POSSIBLE, LL_FS_READ_FILE);
	if (r == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(why, len, "Landlock rules: %s", strerror(-r));
		return r;
	}
	return abi;
}

/* Rules with argument checks. Everything not listed kills the process. */
struct cond_rule {
	int nr;
	uint32_t action;
	struct scmp_arg_cmp cmp;
};
/* SCMP_Ax() leaves datum_b out of two-field compares, which -Wextra
 * refuses in an initializer list. */
#define ARG_EQ(i, v) { .arg = (i), .op = SCMP_CMP_EQ, .datum_a = (scmp_datum_t)(v), .datum_b = 0 }
#define ARG_MASKED(i, mask, v) { .arg = (i), .op = SCMP_CMP_MASKED_EQ, .datum_a = (mask), .datum_b = (v) }

static int add_cond_rules(scmp_filter_ctx ctx, unsigned *n)
{
	const scmp_datum_t self = (scmp_datum_t)getpid();
	const struct cond_rule rules[] = {
		/* Threads only: glibc's pthread_create passes CLONE_THREAD;
		 * fork and vfork do not. */
		{ SCMP_SYS(clone), SCMP_ACT_ALLOW, ARG_MASKED(0, CLONE_THREAD, CLONE_THREAD) },
		/* Only the FUSE device's own ioctl (clone a reader fd); the
		 * passthrough ones are in add_passthrough_rules(). */
		{ SCMP_SYS(ioctl), SCMP_ACT_ALLOW, ARG_EQ(1, FUSE_DEV_IOC_CLONE) },
		/* isatty() from stdio: harmless, answered "not a tty". */
		{ SCMP_SYS(ioctl), SCMP_ACT_ERRNO(ENOTTY), ARG_EQ(1, TCGETS) },
		/* No new executable memory: nothing is loaded after startup. */
		{ SCMP_SYS(mmap), SCMP_ACT_ALLOW, ARG_MASKED(2, PROT_EXEC, 0) },
		{ SCMP_SYS(mprotect), SCMP_ACT_ALLOW, ARG_MASKED(2, PROT_EXEC, 0) },
		/* Signals to ourselves only (the io_uring transport interrupts
		 * its readers, caps.c's drop, abort()). */
		{ SCMP_SYS(kill), SCMP_ACT_ALLOW, ARG_EQ(0, self) },
		{ SCMP_SYS(tgkill), SCMP_ACT_ALLOW, ARG_EQ(0, self) },
		/* Our own limits only (getrlimit/setrlimit are prlimit64(0)). */
		{ SCMP_SYS(prlimit64), SCMP_ACT_ALLOW, ARG_EQ(0, 0) },
		/* pthread_setname_np on the calling thread. */
		{ SCMP_SYS(prctl), SCMP_ACT_ALLOW, ARG_EQ(0, PR_SET_NAME) },
		{ SCMP_SYS(prctl), SCMP_ACT_ALLOW, ARG_EQ(0, PR_GET_NAME) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_GETFD) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_SETFD) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_GETFL) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_SETFL) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_DUPFD_CLOEXEC) },
		/* sizing the /dev/fuse readers' splice pipes */
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_SETPIPE_SZ) },
		{ SCMP_SYS(fcntl), SCMP_ACT_ALLOW, ARG_EQ(1, F_GETPIPE_SZ) },
	};
	size_t i;
	int r;

	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		r = seccomp_rule_add_exact(ctx, rules[i].action, rules[i].nr, 1, rules[i].cmp);
		if (r < 0)
			return r;
	}
	*n += (unsigned)i;
	return 0;
}

/* Passthrough backing ids: registered by the server itself (it has
 * CAP_SYS_ADMIN, standalone) or by zcfsd, over the one socket the server
 * inherited and on no other fd. socket(2) stays forbidden, so no other
 * socket can appear at that number. */
static int add_passthrough_rules(scmp_filter_ctx ctx, const struct sandbox_config *c, unsigned *n)
{
	const struct scmp_arg_cmp open_cmd = ARG_EQ(1, ZCFS_FUSE_DEV_IOC_BACKING_OPEN);
	const struct scmp_arg_cmp close_cmd = ARG_EQ(1, ZCFS_FUSE_DEV_IOC_BACKING_CLOSE);
	const struct scmp_arg_cmp on_broker = ARG_EQ(0, c->broker_fd);
	int r = 0;

	if (c->backing_ioctls) {
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, open_cmd);
		if (r == 0)
			r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1, close_cmd);
		*n += 2;
	}
	if (r == 0 && c->broker) {
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 1, on_broker);
		if (r == 0)
			r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(recvmsg), 1, on_broker);
		*n += 2;
	}
	return r;
}

/* What a FUSE passthrough server does after startup; docs/security.md
 * says why each group is here. */
static const int allowed_syscalls[] = {
	/* backing file data */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(pread64), SCMP_SYS(pwrite64),
	SCMP_SYS(splice), SCMP_SYS(pipe2),
	SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(preadv), SCMP_SYS(pwritev),
	SCMP_SYS(preadv2), SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(copy_file_range),
	SCMP_SYS(fallocate), SCMP_SYS(ftruncate), SCMP_SYS(truncate), SCMP_SYS(fsync),
	SCMP_SYS(fdatasync),
	/* names, inside SOURCE (Landlock) or through O_PATH handles */
	SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(close), SCMP_SYS(getdents64),
	SCMP_SYS(mkdirat), SCMP_SYS(mknodat), SCMP_SYS(unlinkat), SCMP_SYS(renameat),
	SCMP_SYS(renameat2), SCMP_SYS(linkat), SCMP_SYS(symlinkat), SCMP_SYS(readlinkat),
	/* attributes */
	SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(statfs),
	SCMP_SYS(fstatfs), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(chmod),
	SCMP_SYS(fchown), SCMP_SYS(fchownat), SCMP_SYS(utimensat),
	SCMP_SYS(getxattr), SCMP_SYS(lgetxattr), SCMP_SYS(fgetxattr),
	SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
	SCMP_SYS(listxattr), SCMP_SYS(llistxattr), SCMP_SYS(flistxattr),
	SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
	ZCFS_NR_getxattrat,	/* unknown to libseccomp 2.5: the kernel's number */
	/* memory */
	SCMP_SYS(munmap), SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(mremap),
	SCMP_SYS(mlock), SCMP_SYS(munlock),
	/* threads, signals, time */
	SCMP_SYS(futex), SCMP_SYS(set_robust_list), SCMP_SYS(rseq), SCMP_SYS(exit),
	SCMP_SYS(exit_group), SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid),
	SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
	/* reading and dropping our own capabilities (a zero-copy server drops
	 * CAP_SYS_ADMIN once its rings are registered): capset can never
	 * raise anything beyond the permitted set the process already has */
	SCMP_SYS(capget), SCMP_SYS(capset),
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(rt_sigtimedwait), SCMP_SYS(restart_syscall),
	/* signal stacks: harmless, and sanitizer runtimes set one per thread */
	SCMP_SYS(sigaltstack),
	SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_setaffinity),
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
	SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
	/* event plumbing of the transports */
	SCMP_SYS(eventfd2), SCMP_SYS(epoll_create1), SCMP_SYS(epoll_ctl),
	SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait),
};

/* The io_uring transport creates its rings after this filter is loaded,
 * from the queue threads (rings are per thread and pinned to its CPU), and
 * then loads the second filter of sandbox_seal_rings(), which kills
 * io_uring_setup and seccomp for every thread (TSYNC). Until then it may
 * load that filter: a filter only ever takes permissions away. Without
 * rings (the /dev/fuse transport) none of this is allowed at all. */
static int add_ring_rules(scmp_filter_ctx ctx, const struct sandbox_config *c, unsigned *n)
{
	const struct scmp_arg_cmp set_filter = ARG_EQ(0, SECCOMP_SET_MODE_FILTER);
	/* libseccomp adds TSYNC_ESRCH where the kernel has it (5.7+). */
	const struct scmp_arg_cmp tsync = ARG_EQ(1, SECCOMP_FILTER_FLAG_TSYNC);
	const struct scmp_arg_cmp tsync_esrch =
		ARG_EQ(1, SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH);
	int r;

	if (!c->rings)
		return 0;
	r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(io_uring_setup), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(io_uring_enter), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(io_uring_register), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 2, set_filter, tsync);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 2, set_filter,
					   tsync_esrch);
	*n += 4;
	return r;
}

int sandbox_seccomp(const struct sandbox_config *c, unsigned *nr_allowed)
{
	scmp_filter_ctx ctx;
	unsigned n = 0;
	size_t i;
	int r;

	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	/* A syscall of another ABI (int 0x80, x32) kills as well. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	for (i = 0; r == 0 && i < ARRAY_SIZE(allowed_syscalls); i++, n++)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, allowed_syscalls[i], 0);
	/* clone3's flags sit in memory seccomp cannot read: ENOSYS makes
	 * glibc fall back to clone, whose flags the rule above checks. */
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r == 0)
		r = add_cond_rules(ctx, &n);
	if (r == 0)
		r = add_passthrough_rules(ctx, c, &n);
	if (r == 0)
		r = add_ring_rules(ctx, c, &n);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r == 0 && nr_allowed)
		*nr_allowed = n;
	return r;
}

static int count_threads(void)
{
	return (int)dir_count_entries("/proc/self/task");
}

int sandbox_apply(const struct sandbox_config *c, struct sandbox_report *rep)
{
	int r;

	*rep = (struct sandbox_report){ .landlock_abi = -EOPNOTSUPP };
	r = count_threads();
	if (r > 1)
		return -EBUSY;
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	r = sandbox_landlock(c, rep->landlock_why, sizeof(rep->landlock_why));
	rep->landlock_abi = r;
	if (r < 0 && r != -EOPNOTSUPP)
		return r;
	return sandbox_seccomp(c, &rep->nr_syscalls);
}

static atomic_bool rings_sealed;

int sandbox_seal_rings(void)
{
	scmp_filter_ctx ctx;
	int r;

	if (atomic_load(&rings_sealed))
		return 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	/* Every thread, also those that exist already (the queues, prune,
	 * readers): a thread left with the first filter alone could still
	 * make a ring the opcode allowlist never saw. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	/* no_new_privs is set already, and prctl is not in the allowlist. */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(io_uring_setup), 0);
	if (r == 0)
		r = seccomp_rule_add_exact(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(seccomp), 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	/* TSYNC without ESRCH names the thread that could not follow. */
	if (r > 0)
		r = -EBUSY;
	if (r == 0)
		atomic_store(&rings_sealed, true);
	return r;
}

bool sandbox_rings_sealed(void)
{
	return atomic_load(&rings_sealed);
}

int sandbox_restrict_ring(struct io_uring *ring)
{
	static const uint8_t sqe_ops[] = {
		IORING_OP_URING_CMD,	/* FUSE REGISTER / COMMIT_AND_FETCH */
		IORING_OP_READ, IORING_OP_WRITE,	/* backing I/O */
		IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED,	/* into registered buffers */
		IORING_OP_NOP,
		IORING_OP_POLL_ADD,	/* the queue's wake eventfd */
	};
	static const uint8_t reg_ops[] = {
		IORING_REGISTER_FILES, IORING_UNREGISTER_FILES,
		IORING_REGISTER_BUFFERS, IORING_UNREGISTER_BUFFERS,
		/* zero-copy: a sparse fixed-buffer table, then its pool slot */
		IORING_REGISTER_BUFFERS2, IORING_REGISTER_BUFFERS_UPDATE,
		IORING_REGISTER_RING_FDS, IORING_UNREGISTER_RING_FDS,
	};
	struct io_uring_restriction res[ARRAY_SIZE(sqe_ops) + ARRAY_SIZE(reg_ops) + 1];
	unsigned n = 0;
	size_t i;

	memset(res, 0, sizeof(res));
	for (i = 0; i < ARRAY_SIZE(sqe_ops); i++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n++].sqe_op = sqe_ops[i];
	}
	for (i = 0; i < ARRAY_SIZE(reg_ops); i++) {
		res[n].opcode = IORING_RESTRICTION_REGISTER_OP;
		res[n++].register_op = reg_ops[i];
	}
	/* The fuse fd is a fixed file when registration worked. */
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = IOSQE_FIXED_FILE;
	/* Debian's liburing 2.3 declares io_uring_register_restrictions()
	 * and io_uring_enable_rings() but does not export them. */
	if (syscall(SYS_io_uring_register, ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res, n) < 0 ||
	    syscall(SYS_io_uring_register, ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return -errno;
	return 0;
}
