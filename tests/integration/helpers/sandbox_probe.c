/* sandbox_probe: applies zcfs-serve's own sandbox (daemon/serve/sandbox/sandbox.c,
 * linked in, the same call main.c makes) and then tries what a
 * compromised server would try.
 *
 *   sandbox_probe ROOT OUTSIDE syscall NAME
 *       sandbox with SOURCE = ROOT, then make one syscall NAME. A
 *       forbidden one must kill the process with SIGSYS; if the call
 *       returns, the probe prints "survived" and exits 1. NAME "allowed"
 *       (a getpid and an openat inside ROOT) must survive and exit 0.
 *   sandbox_probe ROOT OUTSIDE fs
 *       ROOT lies inside OUTSIDE, which holds the file "secret". After
 *       sandboxing, every open/create/rename/link/unlink/truncate that
 *       reaches outside ROOT -- by path, by "..", through a directory fd
 *       opened before sandboxing, through /proc/self/fd of it, through a
 *       symlink -- must fail; the same operations inside ROOT must work.
 *       The *at() syscalls zcfs-serve uses (the legacy mkdir, rename...
 *       are not in the allowlist). One TAP-ish line per attempt; exit 0 all as expected, 1 if any
 *       escape or control failed, 77 if the kernel has no Landlock.
 *   sandbox_probe ROOT OUTSIDE ring NAME
 *       sandboxed as the io_uring transport is (rings allowed until
 *       sealed), with one ring made and restricted the way a queue
 *       does (R_DISABLED, sandbox_restrict_ring). NAME:
 *       ops        on that ring IORING_OP_SOCKET and IORING_OP_OPENAT of
 *                  OUTSIDE/secret are refused, a NOP passes; after
 *                  sandbox_seal_rings() the ring still works; exit 0/1.
 *       new-ring   sandbox_seal_rings(), then a new ring: must die by
 *                  SIGSYS (prints "survived" and exits 1 otherwise).
 *       new-ring-thread  the same from a thread that existed before the
 *                  seal (the queue threads do): TSYNC must reach it. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "daemon/serve/sandbox/sandbox.h"

static int failures;
static char root[512], out[512];
static int rootfd = -1, outfd = -1;

/* Prints through write(2) only: stdio buffering could hide the last line
 * of a process killed by SIGSYS. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, (size_t)n) < 0)
		_exit(3);
}

/* An escape attempt: R is the syscall's result (fd or 0, or -1). */
static void denied(const char *what, long r)
{
	int e = errno;

	if (r < 0) {
		say("ok - denied: %s (%s)", what, strerrorname_np(e));
		return;
	}
	say("not ok - ESCAPED: %s succeeded", what);
	failures++;
}

static void allowed(const char *what, long r)
{
	int e = errno;

	if (r >= 0) {
		say("ok - allowed: %s", what);
		return;
	}
	say("not ok - control failed: %s (%s)", what, strerrorname_np(e));
	failures++;
}

static long open_close(int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, flags | O_CLOEXEC, 0600);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void fs_attempts(void)
{
	char p[1100], q[1100];

#define P(...) (snprintf(p, sizeof(p), __VA_ARGS__), p)
#define Q(...) (snprintf(q, sizeof(q), __VA_ARGS__), q)
	denied("read OUTSIDE/secret", open_close(AT_FDCWD, P("%s/secret", out), O_RDONLY));
	denied("write OUTSIDE/secret", open_close(AT_FDCWD, P("%s/secret", out), O_WRONLY));
	denied("create OUTSIDE/new", open_close(AT_FDCWD, P("%s/new", out), O_CREAT | O_WRONLY));
	denied("mkdir OUTSIDE/newdir", mkdirat(AT_FDCWD, P("%s/newdir", out), 0700));
	denied("mkfifo OUTSIDE/fifo", mknodat(AT_FDCWD, P("%s/fifo", out), S_IFIFO | 0600, 0));
	denied("symlink OUTSIDE/sym", symlinkat("x", AT_FDCWD, P("%s/sym", out)));
	denied("unlink OUTSIDE/secret", unlinkat(AT_FDCWD, P("%s/secret", out), 0));
	denied("rmdir OUTSIDE/subdir", unlinkat(AT_FDCWD, P("%s/subdir", out), AT_REMOVEDIR));
	denied("truncate OUTSIDE/secret", truncate(P("%s/secret", out), 0));
	denied("rename OUTSIDE/secret -> OUTSIDE/renamed",
	       renameat(AT_FDCWD, P("%s/secret", out), AT_FDCWD, Q("%s/renamed", out)));
	denied("rename ROOT/inside -> OUTSIDE/moved", renameat(AT_FDCWD, P("%s/inside", root), AT_FDCWD, Q("%s/moved", out)));
	denied("rename OUTSIDE/secret -> ROOT/stolen", renameat(AT_FDCWD, P("%s/secret", out), AT_FDCWD, Q("%s/stolen", root)));
	denied("link OUTSIDE/secret -> ROOT/hard", linkat(AT_FDCWD, P("%s/secret", out), AT_FDCWD, Q("%s/hard", root), 0));
	denied("link ROOT/inside -> OUTSIDE/hard", linkat(AT_FDCWD, P("%s/inside", root), AT_FDCWD, Q("%s/hard", out), 0));
	denied("read ROOT/../secret", open_close(AT_FDCWD, P("%s/../secret", root), O_RDONLY));
	denied("openat(rootfd, \"../secret\")", open_close(rootfd, "../secret", O_RDONLY));
	denied("create via openat(rootfd, \"../new\")", open_close(rootfd, "../new", O_CREAT | O_WRONLY));
	denied("openat(pre-sandbox dir fd, \"secret\")", open_close(outfd, "secret", O_RDONLY));
	denied("create via pre-sandbox dir fd", open_close(outfd, "new", O_CREAT | O_WRONLY));
	denied("unlinkat(pre-sandbox dir fd, \"secret\")", unlinkat(outfd, "secret", 0));
	denied("renameat(pre-sandbox dir fd) secret -> renamed",
	       renameat(outfd, "secret", outfd, "renamed"));
	denied("read /proc/self/fd/<pre-sandbox dir fd>/secret",
	       open_close(AT_FDCWD, P("/proc/self/fd/%d/secret", outfd), O_RDONLY));
	denied("readdir /proc/self/fd/<pre-sandbox dir fd>",
	       open_close(AT_FDCWD, P("/proc/self/fd/%d", outfd), O_RDONLY | O_DIRECTORY));
	denied("create /proc/self/fd/<pre-sandbox dir fd>/new",
	       open_close(AT_FDCWD, P("/proc/self/fd/%d/new", outfd), O_CREAT | O_WRONLY));
	denied("read /proc/self/fd/<rootfd>/../secret",
	       open_close(AT_FDCWD, P("/proc/self/fd/%d/../secret", rootfd), O_RDONLY));
	denied("read through ROOT/link-out (symlink to OUTSIDE/secret)",
	       open_close(rootfd, "link-out", O_RDONLY));
	denied("read /etc/passwd", open_close(AT_FDCWD, "/etc/passwd", O_RDONLY));
	denied("create /tmp/zcfs-sandbox-escape", open_close(AT_FDCWD, "/tmp/zcfs-sandbox-escape",
							    O_CREAT | O_WRONLY));
	denied("readdir /", open_close(AT_FDCWD, "/", O_RDONLY | O_DIRECTORY));

	/* The same operations inside ROOT: what the server needs. */
	allowed("create ROOT/c", open_close(AT_FDCWD, P("%s/c", root), O_CREAT | O_RDWR));
	allowed("read ROOT/inside", open_close(AT_FDCWD, P("%s/inside", root), O_RDONLY));
	allowed("reopen ROOT/inside through /proc/self/fd/<rootfd>/inside",
		open_close(AT_FDCWD, P("/proc/self/fd/%d/inside", rootfd), O_RDWR));
	allowed("readdir ROOT via /proc/self/fd/<rootfd>",
		open_close(AT_FDCWD, P("/proc/self/fd/%d", rootfd), O_RDONLY | O_DIRECTORY));
	allowed("mkdir ROOT/d", mkdirat(rootfd, "d", 0700));
	allowed("rename ROOT/c -> ROOT/d/c", renameat(rootfd, "c", rootfd, "d/c"));
	allowed("link ROOT/d/c -> ROOT/l", linkat(rootfd, "d/c", rootfd, "l", 0));
	allowed("truncate ROOT/l", truncate(P("%s/l", root), 0));
	allowed("unlink ROOT/l", unlinkat(rootfd, "l", 0));
	allowed("unlink ROOT/d/c", unlinkat(rootfd, "d/c", 0));
	allowed("rmdir ROOT/d", unlinkat(rootfd, "d", AT_REMOVEDIR));
#undef P
#undef Q
}

/* One forbidden (or, for "allowed", permitted) call. */
static long do_syscall(const char *name)
{
	char *argv[] = { "/bin/true", NULL };
	char *envp[] = { NULL };
	long r;

	if (!strcmp(name, "allowed")) {
		r = open_close(rootfd, "inside", O_RDONLY);
		return r < 0 ? r : getpid();
	}
	if (!strcmp(name, "execve"))
		return execve(argv[0], argv, envp);
	if (!strcmp(name, "socket"))
		return socket(AF_INET, SOCK_STREAM, 0);
	if (!strcmp(name, "socket-unix"))
		return socket(AF_UNIX, SOCK_STREAM, 0);
	if (!strcmp(name, "mount"))
		return mount("none", root, "tmpfs", 0, NULL);
	if (!strcmp(name, "umount"))
		return umount2(root, MNT_DETACH);
	if (!strcmp(name, "ptrace"))
		return ptrace(PTRACE_TRACEME, 0, NULL, NULL);
	if (!strcmp(name, "fork"))
		return syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
	if (!strcmp(name, "unshare"))
		return unshare(CLONE_NEWUSER);
	if (!strcmp(name, "setuid"))
		return setuid(0);
	if (!strcmp(name, "kill-other"))
		return kill(1, 0);
	if (!strcmp(name, "mprotect-exec"))
		return mprotect((void *)((unsigned long)&failures & ~4095UL), 4096, PROT_READ | PROT_EXEC);
	if (!strcmp(name, "ioctl-tty"))
		return ioctl(STDIN_FILENO, TIOCSTI, "x");
	if (!strcmp(name, "bpf"))
		return syscall(SYS_bpf, 0, NULL, 0);
	if (!strcmp(name, "seccomp"))
		return syscall(SYS_seccomp, 0, 0, NULL);
	if (!strcmp(name, "io_uring_setup")) {
		/* The /dev/fuse transport makes no ring: none may be made. */
		struct io_uring ring;
		int e = io_uring_queue_init(2, &ring, 0);
		errno = e < 0 ? -e : 0;
		return e;
	}
	say("unknown syscall name %s", name);
	_exit(2);
}

/* One SQE on RING; the CQE's result. */
static int ring_op(struct io_uring *ring, uint8_t op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	char path[1100];
	int r;

	snprintf(path, sizeof(path), "%s/secret", out);
	if (op == IORING_OP_SOCKET)
		io_uring_prep_socket(sqe, AF_UNIX, SOCK_DGRAM, 0, 0);
	else if (op == IORING_OP_OPENAT)
		io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY, 0);
	else
		io_uring_prep_nop(sqe);
	r = io_uring_submit_and_wait(ring, 1);
	if (r < 0)
		return r;
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return r;
	r = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (r >= 0 && op != IORING_OP_NOP)
		close(r);
	return r;
}

static void ring_refused(struct io_uring *ring, const char *what, uint8_t op)
{
	int r = ring_op(ring, op);

	if (r < 0)
		say("ok - refused: %s on a restricted ring (%s)", what, strerrorname_np(-r));
	else {
		say("not ok - ESCAPED: %s on a restricted ring returned %d", what, r);
		failures++;
	}
}

static pthread_mutex_t seal_lock = PTHREAD_MUTEX_INITIALIZER;

/* Exists before the seal, makes its ring after it. */
static void *make_ring_thread(void *arg)
{
	struct io_uring ring;
	int r;

	(void)arg;
	pthread_mutex_lock(&seal_lock);
	pthread_mutex_unlock(&seal_lock);
	r = io_uring_queue_init(2, &ring, 0);
	say("survived: a thread made a new ring after the seal (%s)", r < 0 ? strerror(-r) : "ok");
	_exit(1);
}

static int ring_probe(const char *name)
{
	struct io_uring_params p = { .flags = IORING_SETUP_R_DISABLED };
	struct io_uring ring, ring2;
	pthread_t t;
	int r;

	r = io_uring_queue_init_params(4, &ring, &p);
	if (r == 0)
		r = sandbox_restrict_ring(&ring);
	if (r < 0) {
		say("not ok - a ring as the transport makes it: %s", strerror(-r));
		return 1;
	}
	if (!strcmp(name, "ops")) {
		ring_refused(&ring, "IORING_OP_SOCKET(AF_UNIX)", IORING_OP_SOCKET);
		ring_refused(&ring, "IORING_OP_OPENAT(OUTSIDE/secret)", IORING_OP_OPENAT);
		allowed("IORING_OP_NOP on the restricted ring", ring_op(&ring, IORING_OP_NOP));
		r = sandbox_seal_rings();
		errno = -r;
		allowed("sandbox_seal_rings", r);
		allowed("IORING_OP_NOP after the seal", ring_op(&ring, IORING_OP_NOP));
		return failures ? 1 : 0;
	}
	if (!strcmp(name, "new-ring-thread")) {
		/* Created before the seal, like the queue threads; it waits
		 * until the seal is in place. */
		pthread_mutex_lock(&seal_lock);
		if (pthread_create(&t, NULL, make_ring_thread, NULL) != 0)
			return 2;
		r = sandbox_seal_rings();
		pthread_mutex_unlock(&seal_lock);
		if (r < 0) {
			say("sandbox_seal_rings: %s", strerror(-r));
			return 1;
		}
		pthread_join(t, NULL);
		return 1;
	}
	if (strcmp(name, "new-ring")) {
		say("unknown ring probe %s", name);
		return 2;
	}
	r = sandbox_seal_rings();
	if (r < 0) {
		say("sandbox_seal_rings: %s", strerror(-r));
		return 1;
	}
	r = io_uring_queue_init(2, &ring2, 0);
	say("survived: a new ring after the seal (%s)", r < 0 ? strerror(-r) : "created");
	return 1;
}

int main(int argc, char **argv)
{
	struct sandbox_config c;
	struct sandbox_report rep;
	int r;

	if (argc < 4 || (strcmp(argv[3], "fs") && ((strcmp(argv[3], "syscall") && strcmp(argv[3], "ring")) ||
						   argc < 5))) {
		fprintf(stderr, "usage: sandbox_probe ROOT OUTSIDE syscall NAME | ring NAME | fs\n");
		return 2;
	}
	snprintf(root, sizeof(root), "%s", argv[1]);
	snprintf(out, sizeof(out), "%s", argv[2]);
	/* Both opened before sandboxing: the server holds such an fd for
	 * SOURCE; the OUTSIDE one shows that holding a handle is not enough
	 * to get past Landlock. */
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	outfd = open(out, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || outfd < 0) {
		perror("open ROOT/OUTSIDE");
		return 2;
	}
	c = (struct sandbox_config){ .root_fd = rootfd, .dev_fuse = true,
				     .rings = !strcmp(argv[3], "ring") };
	r = sandbox_apply(&c, &rep);
	if (r < 0) {
		fprintf(stderr, "sandbox_apply: %s\n", strerror(-r));
		return 2;
	}
	say("# sandbox: landlock_abi=%d%s%s syscalls=%u", rep.landlock_abi,
	    rep.landlock_abi > 0 ? "" : " ", rep.landlock_abi > 0 ? "" : rep.landlock_why,
	    rep.nr_syscalls);
	if (!strcmp(argv[3], "ring"))
		return ring_probe(argv[4]);
	if (!strcmp(argv[3], "fs")) {
		if (rep.landlock_abi <= 0) {
			say("SKIP: Landlock not in force: %s", rep.landlock_why);
			return 77;
		}
		fs_attempts();
		say("# %d unexpected results", failures);
		return failures ? 1 : 0;
	}
	errno = 0;
	r = (int)do_syscall(argv[4]);
	if (!strcmp(argv[4], "allowed")) {
		if (r < 0) {
			say("allowed calls failed: %s", strerror(errno));
			return 1;
		}
		say("survived allowed calls");
		return 0;
	}
	say("survived: %s returned %d (%s)", argv[4], r, strerrorname_np(errno) ?: "0");
	return 1;
}
