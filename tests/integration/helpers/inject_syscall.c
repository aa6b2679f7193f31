/* inject_syscall: makes a running process issue syscalls itself, the way a
 * compromised zcfs-serve would, so that its real seccomp filter, Landlock
 * domain, rlimits and credentials decide (x86-64; ptrace, root).
 *
 *   inject_syscall TID CALL...
 *
 * CALL is NAME[:ARG,ARG...]. NAME is a syscall name from the table below
 * or a number. ARG is an integer (decimal, 0x hex, negative), $K (the
 * result of call K, 0-based), @N (a zeroed scratch buffer of N bytes in the
 * tracee) or s:TEXT (a NUL-terminated string in the tracee; no commas).
 * Two built-ins run whole sequences inside the tracee:
 *   uring-socket          a new io_uring ring, then IORING_OP_SOCKET
 *                         (AF_UNIX, SOCK_DGRAM) submitted on it
 *   uring-openat:PATH     a new ring, then IORING_OP_OPENAT(PATH, O_RDONLY)
 *
 * One line per call: "NAME = N" or "NAME = -ERRNO_NAME" (pipe2 adds
 * "pipe2 fds = R W" and its $K is W). If the tracee dies
 * (a seccomp kill), "killed by SIGSYS" (or the signal) and exit 3. Exit 0
 * when every call returned (whatever it returned), 1 on a usage or ptrace
 * error, 77 on another architecture. The thread is left as it was found:
 * registers restored, the interrupted syscall restarted by the kernel. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/io_uring.h>

#if !defined(__x86_64__)
int main(void)
{
	printf("SKIP: inject_syscall knows only x86-64 registers\n");
	return 77;
}
#else

#define SCRATCH_SIZE (64 * 1024)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static pid_t tid;
static int memfd = -1;
static struct user_regs_struct saved;
static unsigned long sysinsn;	/* address of a `syscall` instruction */
static unsigned long scratch, scratch_used;
static int pending_sig;		/* a signal that arrived meanwhile, given back at detach */
static long results[64];
static int nresults;

struct died {
	int sig;
};

static const struct {
	const char *name;
	long nr;
} names[] = {
	{ "read", SYS_read }, { "write", SYS_write }, { "close", SYS_close },
	{ "openat", SYS_openat }, { "mmap", SYS_mmap }, { "munmap", SYS_munmap },
	{ "mlock", SYS_mlock }, { "munlock", SYS_munlock }, { "ftruncate", SYS_ftruncate },
	{ "fallocate", SYS_fallocate }, { "pwrite64", SYS_pwrite64 }, { "socket", SYS_socket },
	{ "getpid", SYS_getpid }, { "gettid", SYS_gettid }, { "fstat", SYS_fstat },
	{ "io_uring_setup", SYS_io_uring_setup }, { "io_uring_enter", SYS_io_uring_enter },
	{ "io_uring_register", SYS_io_uring_register }, { "seccomp", SYS_seccomp },
	{ "fcntl", SYS_fcntl }, { "lseek", SYS_lseek }, { "pipe2", SYS_pipe2 },
};

static void die(const char *what)
{
	fprintf(stderr, "inject_syscall: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int wait_stop(int *status)
{
	for (;;) {
		if (waitpid(tid, status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			die("waitpid");
		}
		return 0;
	}
}

static void report_death(int status)
{
	if (WIFSIGNALED(status))
		printf("killed by SIG%s\n", sigabbrev_np(WTERMSIG(status)) ?
		       sigabbrev_np(WTERMSIG(status)) : "?");
	else
		printf("exited with %d\n", WEXITSTATUS(status));
	fflush(stdout);
	exit(3);
}

static void peek(unsigned long addr, void *buf, size_t len)
{
	if (pread(memfd, buf, len, (off_t)addr) != (ssize_t)len)
		die("read tracee memory");
}

static void poke(unsigned long addr, const void *buf, size_t len)
{
	if (pwrite(memfd, buf, len, (off_t)addr) != (ssize_t)len)
		die("write tracee memory");
}

/* A `syscall` (0f 05) the thread can execute: the one it is blocked in,
 * else one in the vDSO. */
static unsigned long find_syscall_insn(void)
{
	unsigned char b[2];
	char line[512], path[64];
	FILE *f;

	if (saved.rip >= 2) {
		peek(saved.rip - 2, b, 2);
		if (b[0] == 0x0f && b[1] == 0x05)
			return saved.rip - 2;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", tid);
	f = fopen(path, "re");
	if (!f)
		die("maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, a;
		unsigned char *text;

		if (!strstr(line, "[vdso]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		text = malloc(hi - lo);
		if (!text)
			die("malloc");
		peek(lo, text, hi - lo);
		for (a = 0; a + 1 < hi - lo; a++)
			if (text[a] == 0x0f && text[a + 1] == 0x05) {
				free(text);
				fclose(f);
				return lo + a;
			}
		free(text);
	}
	fclose(f);
	errno = ENOEXEC;
	die("no syscall instruction found");
	return 0;
}

static void attach(void)
{
	char path[64];
	int st;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0)
		die("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
		die("PTRACE_INTERRUPT");
	wait_stop(&st);
	if (!WIFSTOPPED(st))
		report_death(st);
	if (WSTOPSIG(st) != SIGTRAP || (st >> 16) != PTRACE_EVENT_STOP)
		pending_sig = WSTOPSIG(st);	/* a signal won the race */
	if (ptrace(PTRACE_GETREGS, tid, 0, &saved) < 0)
		die("PTRACE_GETREGS");
	snprintf(path, sizeof(path), "/proc/%d/mem", tid);
	memfd = open(path, O_RDWR | O_CLOEXEC);
	if (memfd < 0)
		die("open /proc/TID/mem");
	sysinsn = find_syscall_insn();
}

/* One syscall inside the tracee; exits (3) if that kills it. */
static long inject(long nr, const long a[6])
{
	struct user_regs_struct r = saved;
	int st, tries;

	r.rax = (unsigned long)nr;
	r.orig_rax = (unsigned long)-1;	/* no syscall-restart fix-up on resume */
	r.rdi = (unsigned long)a[0];
	r.rsi = (unsigned long)a[1];
	r.rdx = (unsigned long)a[2];
	r.r10 = (unsigned long)a[3];
	r.r8 = (unsigned long)a[4];
	r.r9 = (unsigned long)a[5];
	r.rip = sysinsn;
	if (ptrace(PTRACE_SETREGS, tid, 0, &r) < 0)
		die("PTRACE_SETREGS");
	for (tries = 0; tries < 100; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) < 0)
			die("PTRACE_SINGLESTEP");
		wait_stop(&st);
		if (!WIFSTOPPED(st))
			report_death(st);
		if (ptrace(PTRACE_GETREGS, tid, 0, &r) < 0)
			die("PTRACE_GETREGS");
		if (WSTOPSIG(st) == SIGTRAP && r.rip == sysinsn + 2)
			return (long)r.rax;
		/* A signal was delivered before the instruction ran: keep it
		 * for later, step again. */
		if (WSTOPSIG(st) != SIGTRAP)
			pending_sig = WSTOPSIG(st);
	}
	errno = ETIMEDOUT;
	die("the injected syscall never completed");
	return 0;
}

static long call6(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	const long a[6] = { a0, a1, a2, a3, a4, a5 };

	return inject(nr, a);
}

static unsigned long scratch_alloc(size_t n)
{
	unsigned long p;
	static const char zero[4096];
	size_t done;

	if (!scratch) {
		long m = call6(SYS_mmap, 0, SCRATCH_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m < 0 && m > -4096) {
			errno = (int)-m;
			die("mmap of scratch memory in the tracee");
		}
		scratch = (unsigned long)m;
	}
	n = (n + 15) & ~(size_t)15;
	if (scratch_used + n > SCRATCH_SIZE) {
		errno = ENOMEM;
		die("scratch memory");
	}
	p = scratch + scratch_used;
	scratch_used += n;
	for (done = 0; done < n; done += MIN(n - done, sizeof(zero)))
		poke(p + done, zero, MIN(n - done, sizeof(zero)));
	return p;
}

static void print_result(const char *name, long v)
{
	if (v < 0 && v > -4096)
		printf("%s = -%s\n", name, strerrorname_np((int)-v) ? strerrorname_np((int)-v) : "?");
	else
		printf("%s = %ld\n", name, v);
	fflush(stdout);
}

/* A fresh ring in the tracee and one SQE on it; prints the CQE's result. */
static void uring_op(const char *label, uint8_t op, const char *path)
{
	struct io_uring_params p;
	struct io_uring_sqe sqe;
	unsigned long pa = scratch_alloc(sizeof(p)), sq, sqes, cq, path_at = 0;
	uint32_t tail, mask, head;
	size_t sq_sz, cq_sz;
	int32_t res;
	long fd, r;

	if (path) {
		path_at = scratch_alloc(strlen(path) + 1);
		poke(path_at, path, strlen(path) + 1);
	}
	fd = call6(SYS_io_uring_setup, 4, (long)pa, 0, 0, 0, 0);
	print_result("io_uring_setup", fd);
	if (fd < 0)
		return;
	peek(pa, &p, sizeof(p));
	sq_sz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_sz = cq_sz = sq_sz > cq_sz ? sq_sz : cq_sz;
	sq = (unsigned long)call6(SYS_mmap, 0, (long)sq_sz, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
	cq = p.features & IORING_FEAT_SINGLE_MMAP ? sq :
		(unsigned long)call6(SYS_mmap, 0, (long)cq_sz, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_CQ_RING);
	sqes = (unsigned long)call6(SYS_mmap, 0, (long)(p.sq_entries * sizeof(sqe)),
				    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if ((long)sq < 0 || (long)cq < 0 || (long)sqes < 0) {
		printf("%s: mmap of the ring failed\n", label);
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = op;
	sqe.user_data = 0x5a;
	if (op == IORING_OP_SOCKET) {
		sqe.fd = AF_UNIX;
		sqe.off = SOCK_DGRAM;
	} else {
		sqe.fd = AT_FDCWD;
		sqe.addr = path_at;
		sqe.open_flags = O_RDONLY;
	}
	poke(sqes, &sqe, sizeof(sqe));
	peek(sq + p.sq_off.tail, &tail, sizeof(tail));
	peek(sq + p.sq_off.ring_mask, &mask, sizeof(mask));
	{
		uint32_t idx = 0;
		poke(sq + p.sq_off.array + (tail & mask) * sizeof(uint32_t), &idx, sizeof(idx));
	}
	tail++;
	poke(sq + p.sq_off.tail, &tail, sizeof(tail));
	r = call6(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, 0, 0);
	print_result("io_uring_enter", r);
	peek(cq + p.cq_off.head, &head, sizeof(head));
	peek(cq + p.cq_off.ring_mask, &mask, sizeof(mask));
	peek(cq + p.cq_off.cqes + (head & mask) * sizeof(struct io_uring_cqe) +
	     offsetof(struct io_uring_cqe, res), &res, sizeof(res));
	print_result(label, res);
	if (res >= 0)
		(void)call6(SYS_close, res, 0, 0, 0, 0, 0);
	(void)call6(SYS_munmap, (long)sqes, (long)(p.sq_entries * sizeof(sqe)), 0, 0, 0, 0);
	if (cq != sq)
		(void)call6(SYS_munmap, (long)cq, (long)cq_sz, 0, 0, 0, 0);
	(void)call6(SYS_munmap, (long)sq, (long)sq_sz, 0, 0, 0, 0);
	(void)call6(SYS_close, fd, 0, 0, 0, 0, 0);
}

static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "inject_syscall: bad number '%s'\n", s);
		exit(1);
	}
	return v;
}

static long parse_arg(const char *s)
{
	if (s[0] == '$') {
		long k = parse_num(s + 1);
		if (k < 0 || k >= nresults) {
			fprintf(stderr, "inject_syscall: no result %s yet\n", s);
			exit(1);
		}
		return results[k];
	}
	if (s[0] == '@')
		return (long)scratch_alloc((size_t)parse_num(s + 1));
	if (strncmp(s, "s:", 2) == 0) {
		unsigned long a = scratch_alloc(strlen(s + 2) + 1);
		poke(a, s + 2, strlen(s + 2) + 1);
		return (long)a;
	}
	return parse_num(s);
}

static long syscall_nr(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].name, name) == 0)
			return names[i].nr;
	return parse_num(name);
}

static void run_call(char *spec)
{
	char *colon = strchr(spec, ':'), *tok, *save = NULL;
	long a[6] = { 0 }, v;
	int n = 0;

	if (colon)
		*colon = '\0';
	if (strcmp(spec, "uring-socket") == 0) {
		uring_op("IORING_OP_SOCKET", IORING_OP_SOCKET, NULL);
		v = 0;
	} else if (strcmp(spec, "uring-openat") == 0) {
		uring_op("IORING_OP_OPENAT", IORING_OP_OPENAT, colon ? colon + 1 : "/");
		v = 0;
	} else {
		for (tok = colon ? strtok_r(colon + 1, ",", &save) : NULL; tok && n < 6;
		     tok = strtok_r(NULL, ",", &save))
			a[n++] = parse_arg(tok);
		v = inject(syscall_nr(spec), a);
		print_result(spec, v);
		if (!strcmp(spec, "pipe2") && v == 0) {
			/* the fds it wrote: the result is the write end */
			int fds[2];
			peek((unsigned long)a[0], fds, sizeof(fds));
			printf("pipe2 fds = %d %d\n", fds[0], fds[1]);
			fflush(stdout);
			v = fds[1];
		}
	}
	if (nresults < (int)(sizeof(results) / sizeof(results[0])))
		results[nresults++] = v;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: inject_syscall TID CALL...\n");
		return 1;
	}
	tid = (pid_t)parse_num(argv[1]);
	attach();
	for (i = 2; i < argc; i++)
		run_call(argv[i]);
	if (scratch)
		(void)call6(SYS_munmap, (long)scratch, SCRATCH_SIZE, 0, 0, 0, 0);
	if (ptrace(PTRACE_SETREGS, tid, 0, &saved) < 0)
		die("PTRACE_SETREGS (restore)");
	if (ptrace(PTRACE_DETACH, tid, 0, pending_sig) < 0)
		die("PTRACE_DETACH");
	return 0;
}
#endif
