/*
 * posix_check - POSIX conformance checks for a directory: a zcfs mount
 * (allow_other + default_permissions) or, as the reference, native tmpfs.
 *
 *   posix_check [--only GROUP[,GROUP...]] [--skip GROUP[,GROUP...]]
 *               [--zcfs] [--keep] [--list] DIR
 *
 * Runs every check inside a fresh DIR/posix_check.XXXXXX (removed at the
 * end unless --keep) and prints one line per check:
 *
 *   ok - GROUP: description
 *   not ok - GROUP: description (expected X, got Y)
 *   ok - GROUP: description # SKIP reason
 *
 * then a closing line "N passed, N failed" (", N skipped" appended when a
 * check could not run). Exit status 0 iff nothing failed, 2 on usage error.
 *
 * Must run as root: ownership and permission checks are made by forked
 * children that switch to uids 1001..1004 (setgroups + setresgid +
 * setresuid, so without capabilities), with and without supplementary
 * group 2001, so that the kernel's default_permissions checks and the
 * server see a real unprivileged caller.
 *
 * The group "hidden-xattr" checks zcfs's ownership record
 * (user.containers.override_stat) is invisible and immutable for clients;
 * it only means something on a zcfs mount, so it runs only with --zcfs.
 *
 * Expectations are those of Linux tmpfs: every check passes there (the
 * driver t_posix.sh proves it on each run).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define OVERRIDE_XATTR "user.containers.override_stat"

/* ------------------------------------------------------------------ */
/* reporting                                                           */

static const char *g_group = "";
static unsigned g_pass, g_fail, g_skip;
static bool g_zcfs;

/* Special results of a child run with AS(). */
#define AS_DIED INT_MIN
#define AS_NOID (INT_MIN + 1)

static const char *ename(int e)
{
	static char buf[4][48];
	static unsigned i;
	const char *n;

	if (e == 0)
		return "success";
	if (e == AS_DIED)
		return "child process died";
	if (e == AS_NOID)
		return "identity switch failed";
	n = e > 0 ? strerrorname_np(e) : NULL;
	if (n)
		return n;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "errno %d", e);
	return buf[i];
}

__attribute__((format(printf, 3, 4)))
static bool check(bool ok, const char *desc, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		g_pass++;
		printf("ok - %s: %s\n", g_group, desc);
	} else {
		g_fail++;
		printf("not ok - %s: %s (", g_group, desc);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf(")\n");
	}
	fflush(stdout);
	return ok;
}

__attribute__((format(printf, 2, 3)))
static void skip(const char *desc, const char *fmt, ...)
{
	va_list ap;

	g_skip++;
	printf("ok - %s: %s # SKIP ", g_group, desc);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* got: 0 for success or an errno; the list of accepted values ends at -1. */
static bool expect_errs(const char *desc, int got, ...)
{
	char exp[160] = "";
	size_t len = 0;
	bool ok = false;
	va_list ap;
	int e;

	va_start(ap, got);
	while ((e = va_arg(ap, int)) != -1) {
		if (e == got)
			ok = true;
		if (len < sizeof exp)
			len += (size_t)snprintf(exp + len, sizeof exp - len, "%s%s",
						len ? " or " : "", ename(e));
	}
	va_end(ap);
	return check(ok, desc, "expected %s, got %s", exp, ename(got));
}
#define EXPECT(desc, got, ...) expect_errs((desc), (got), __VA_ARGS__, -1)
#define EXPECT_OK(desc, got) expect_errs((desc), (got), 0, -1)

/* Values from helpers: >= 0 is a value, < 0 is -errno. */
static const char *vstr(long long v, bool octal)
{
	static char buf[4][64];
	static unsigned i;

	i = (i + 1) % 4;
	if (v == AS_DIED || v == AS_NOID)
		return ename((int)v);
	if (v < 0 && v > -4096)
		snprintf(buf[i], sizeof buf[i], "error %s", ename((int)-v));
	else if (octal)
		snprintf(buf[i], sizeof buf[i], "0%llo", v);
	else
		snprintf(buf[i], sizeof buf[i], "%lld", v);
	return buf[i];
}

static bool expect_val(const char *desc, long long want, long long got)
{
	return check(want == got, desc, "expected %s, got %s", vstr(want, false), vstr(got, false));
}

static bool expect_mode(const char *desc, long long want, long long got)
{
	return check(want == got, desc, "expected %s, got %s", vstr(want, true), vstr(got, true));
}

static bool setup_(int err, const char *what, int line)
{
	if (err == 0)
		return true;
	g_fail++;
	printf("not ok - %s: setup failed at line %d: %s (got %s)\n", g_group, line, what, ename(err));
	fflush(stdout);
	return false;
}
#define SETUP(x) setup_((x), #x, __LINE__)

#define ERR(x) ((x) < 0 ? errno : 0)

/* ------------------------------------------------------------------ */
/* identities                                                          */

struct cred {
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[2];
};
static const struct cred U1 = { 1001, 1001, 0, { 0, 0 } };
static const struct cred U1G = { 1001, 1001, 1, { 2001, 0 } };
static const struct cred U2 = { 1002, 1002, 0, { 0, 0 } };
static const struct cred U2G = { 1002, 1002, 1, { 2001, 0 } };
static const struct cred U3 = { 1003, 1003, 0, { 0, 0 } };
static const struct cred U4 = { 1004, 1004, 0, { 0, 0 } };

__attribute__((noreturn))
static void as_return(int fd, int v)
{
	ssize_t n = write(fd, &v, sizeof v);

	_exit(n == sizeof v ? 0 : 1);
}

/* Forks; the child (return 0) runs with cred c (NULL: stays root) and
 * must end with as_return(*fd, value). The parent gets the pid. */
static pid_t as_fork(const struct cred *c, int *fd)
{
	int p[2];
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	*fd = -1;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		*fd = p[1];
		if (c && (setgroups((size_t)c->ngroups, c->groups) ||
			  setresgid(c->gid, c->gid, c->gid) ||
			  setresuid(c->uid, c->uid, c->uid) || geteuid() != c->uid))
			as_return(p[1], AS_NOID);
		return 0;
	}
	close(p[1]);
	*fd = p[0];
	return pid;
}

static int as_collect(pid_t pid, int fd)
{
	int v = AS_DIED, st;
	ssize_t n;

	if (pid < 0)
		return AS_DIED;
	do
		n = read(fd, &v, sizeof v);
	while (n < 0 && errno == EINTR);
	if (n != sizeof v)
		v = AS_DIED;
	close(fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return v;
}

/* AS(cred, expr): evaluate int expr in a child running as cred. */
#define AS(c, expr) __extension__ ({					\
	int as_fd_;							\
	pid_t as_pid_ = as_fork((c), &as_fd_);				\
	if (as_pid_ == 0)						\
		as_return(as_fd_, (int)(expr));				\
	as_collect(as_pid_, as_fd_);					\
})

/* ------------------------------------------------------------------ */
/* helpers (all return 0 or an errno unless said otherwise)            */

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int pread_full(int fd, void *buf, size_t n, off_t off, size_t *got)
{
	char *p = buf;
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, p + done, n - done, off + (off_t)done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static int try_open(const char *p, int flags, mode_t mode)
{
	int fd = open(p, flags, mode);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_opendir(const char *p)
{
	DIR *d = opendir(p);

	if (!d)
		return errno;
	closedir(d);
	return 0;
}

static int mkfile(const char *p, mode_t mode, uid_t u, gid_t g, const char *content)
{
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0600), e = 0;

	if (fd < 0)
		return errno;
	if (content)
		e = write_all(fd, content, strlen(content));
	if (!e && fchown(fd, u, g))
		e = errno;
	if (!e && fchmod(fd, mode))
		e = errno;
	close(fd);
	return e;
}

static int mkdirx(const char *p, mode_t mode, uid_t u, gid_t g)
{
	if (mkdir(p, 0700))
		return errno;
	if (chown(p, u, g) || chmod(p, mode))
		return errno;
	return 0;
}

/* Writes content to a new file (O_EXCL), as the calling identity. */
static int put(const char *p, const char *content)
{
	int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644), e;

	if (fd < 0)
		return errno;
	e = write_all(fd, content, strlen(content));
	close(fd);
	return e;
}

/* Reads up to n-1 bytes of p into buf (NUL-terminated): length or -errno. */
static long long slurp(const char *p, char *buf, size_t n)
{
	int fd = open(p, O_RDONLY), e;
	size_t got = 0;

	buf[0] = 0;
	if (fd < 0)
		return -errno;
	e = pread_full(fd, buf, n - 1, 0, &got);
	close(fd);
	if (e)
		return -e;
	buf[got] = 0;
	return (long long)got;
}

static bool expect_content(const char *desc, const char *p, const char *want)
{
	char buf[256];
	long long r = slurp(p, buf, sizeof buf);

	if (r < 0)
		return check(false, desc, "expected \"%s\", got %s", want, vstr(r, false));
	return check(strcmp(buf, want) == 0, desc, "expected \"%s\", got \"%.60s\"", want, buf);
}

/* lstat field helpers: value or -errno */
/* One field of lstat(P), or -errno. */
enum lfield { LF_MODE, LF_UID, LF_GID, LF_NLINK, LF_SIZE, LF_INO, LF_TYPE };

static long long l_stat(const char *p, enum lfield f)
{
	struct stat s;

	if (lstat(p, &s))
		return -errno;
	switch (f) {
	case LF_MODE: return s.st_mode & 07777;
	case LF_UID: return s.st_uid;
	case LF_GID: return s.st_gid;
	case LF_NLINK: return (long long)s.st_nlink;
	case LF_SIZE: return s.st_size;
	case LF_INO: return (long long)s.st_ino;
	case LF_TYPE: return s.st_mode & S_IFMT;
	}
	return -EINVAL;
}

static long long l_mode(const char *p) { return l_stat(p, LF_MODE); }
static long long l_uid(const char *p) { return l_stat(p, LF_UID); }
static long long l_gid(const char *p) { return l_stat(p, LF_GID); }
static long long l_nlink(const char *p) { return l_stat(p, LF_NLINK); }
static long long l_size(const char *p) { return l_stat(p, LF_SIZE); }
static long long l_ino(const char *p) { return l_stat(p, LF_INO); }
static long long l_type(const char *p) { return l_stat(p, LF_TYPE); }

static const char *tname(long long t)
{
	switch (t) {
	case S_IFREG: return "regular file";
	case S_IFDIR: return "directory";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "socket";
	case S_IFCHR: return "char device";
	case S_IFBLK: return "block device";
	default: return vstr(t, true);
	}
}

static bool expect_type(const char *desc, const char *p, long long want)
{
	long long t = l_type(p);

	return check(t == want, desc, "expected %s, got %s", tname(want), tname(t));
}

static void msleep(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

static void fill_pattern(unsigned char *b, size_t n, uint64_t off, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = off + i;
		b[i] = (unsigned char)((x * 2654435761u >> 7) ^ (x >> 12) ^ seed);
	}
}

/* child helpers: create with a given umask and report the mode */
static int c_umask_create(mode_t um, const char *p, mode_t mode, int kind)
{
	struct stat s;
	int r;

	umask(um);
	if (kind == 0)
		r = try_open(p, O_CREAT | O_EXCL | O_WRONLY, mode);
	else if (kind == 1)
		r = ERR(mkdir(p, mode));
	else
		r = ERR(mkfifo(p, mode));
	if (r)
		return -r;
	if (lstat(p, &s))
		return -errno;
	return (int)(s.st_mode & 07777);
}

static int c_write1(const char *p)
{
	int fd = open(p, O_WRONLY), e;

	if (fd < 0)
		return errno;
	e = write_all(fd, "x", 1);
	close(fd);
	return e;
}

static int c_creat_trunc(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int c_fallocate1(const char *p)
{
	int fd = open(p, O_WRONLY), e = 0;

	if (fd < 0)
		return errno;
	if (fallocate(fd, 0, 0, 8192) < 0)
		e = errno;
	close(fd);
	return e;
}

/* execve(path) in a grandchild: errno of execve, or 1000 + exit status. */
static int c_exec(const char *path)
{
	char pbuf[PATH_MAX];
	char *argv[2] = { pbuf, NULL };
	char *envp[1] = { NULL };
	int p[2], e = 0, st = 0;
	ssize_t n;
	pid_t pid;

	snprintf(pbuf, sizeof pbuf, "%s", path);
	if (pipe2(p, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		execve(pbuf, argv, envp);
		e = errno;
		n = write(p[1], &e, sizeof e);
		_exit(n == sizeof e ? 127 : 126);
	}
	close(p[1]);
	n = read(p[0], &e, sizeof e);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (n == sizeof e)
		return e;
	return WIFEXITED(st) ? 1000 + WEXITSTATUS(st) : AS_DIED;
}

/* ------------------------------------------------------------------ */
/* directory listing                                                   */

struct ent {
	char name[256];
	unsigned char type;
	ino_t ino;
};

struct entlist {
	struct ent *v;
	size_t n, cap;
};

static void el_add(struct entlist *l, const char *name, unsigned char type, ino_t ino)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct ent *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			perror("realloc");
			exit(2);
		}
		l->v = v;
		l->cap = cap;
	}
	snprintf(l->v[l->n].name, sizeof l->v[l->n].name, "%s", name);
	l->v[l->n].type = type;
	l->v[l->n].ino = ino;
	l->n++;
}

static void el_free(struct entlist *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

static int el_read(const char *path, struct entlist *l)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return errno;
	errno = 0;
	while ((de = readdir(d)))
		el_add(l, de->d_name, de->d_type, de->d_ino);
	if (errno) {
		int e = errno;
		closedir(d);
		return e;
	}
	closedir(d);
	return 0;
}

static size_t el_count(const struct entlist *l, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < l->n; i++)
		c += strcmp(l->v[i].name, name) == 0;
	return c;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

/* First name listed more than once, or NULL. */
static const char *el_dup(const struct entlist *l)
{
	static char name[256];
	struct ent *v = malloc((l->n + 1) * sizeof *v);
	const char *res = NULL;

	if (!v)
		return "(out of memory)";
	memcpy(v, l->v, l->n * sizeof *v);
	qsort(v, l->n, sizeof *v, cmp_ent);
	for (size_t i = 1; i < l->n; i++)
		if (strcmp(v[i].name, v[i - 1].name) == 0) {
			snprintf(name, sizeof name, "%s", v[i].name);
			res = name;
			break;
		}
	free(v);
	return res;
}

/* Of names PREFIX0..PREFIX(n-1): how many are missing; first in *first. */
static int el_missing(const struct entlist *l, const char *prefix, int n, int *first)
{
	size_t plen = strlen(prefix);
	char *seen = calloc((size_t)n, 1);
	int missing = 0;

	*first = -1;
	if (!seen)
		return n;
	for (size_t i = 0; i < l->n; i++) {
		char *end;
		long k;
		if (strncmp(l->v[i].name, prefix, plen))
			continue;
		k = strtol(l->v[i].name + plen, &end, 10);
		if (*end == 0 && k >= 0 && k < n)
			seen[k] = 1;
	}
	for (int k = 0; k < n; k++)
		if (!seen[k]) {
			if (*first < 0)
				*first = k;
			missing++;
		}
	free(seen);
	return missing;
}

/* Raw getdents64 iteration with a small buffer: reads entries into l until
 * at least `stop` entries were read in this call (0: until the end).
 * Returns 0, an errno, or -1 at end of directory. */
static int raw_read(int fd, struct entlist *l, size_t stop, char *buf, size_t bufsz)
{
	size_t start = l->n;

	for (;;) {
		ssize_t n = getdents64(fd, buf, bufsz);
		if (n < 0)
			return errno;
		if (n == 0)
			return -1;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
			el_add(l, de->d_name, de->d_type, de->d_ino);
			off += de->d_reclen;
		}
		if (stop && l->n - start >= stop)
			return 0;
	}
}

/* ------------------------------------------------------------------ */
/* group: create / open                                                */

#define APP_PROCS 4
#define APP_RECS 200
#define APP_RSZ 128

static void app_record(char *rec, int p, int i)
{
	memset(rec, 'a' + p, APP_RSZ);
	snprintf(rec, 32, "%d:%06d:", p, i);
	rec[APP_RSZ - 1] = '\n';
}

static int c_append(const char *path, int p)
{
	char rec[APP_RSZ];
	int fd = open(path, O_WRONLY | O_APPEND), e = 0;

	if (fd < 0)
		return errno;
	for (int i = 0; i < APP_RECS && !e; i++) {
		app_record(rec, p, i);
		ssize_t w = write(fd, rec, APP_RSZ);  /* one write per record */
		if (w != APP_RSZ)
			e = w < 0 ? errno : EIO;
	}
	close(fd);
	return e;
}

static void check_append(void)
{
	static const struct cred *who[APP_PROCS] = { &U1, &U2, &U3, &U4 };
	const size_t total = (size_t)APP_PROCS * APP_RECS * APP_RSZ;
	int fds[APP_PROCS], res[APP_PROCS], next[APP_PROCS] = { 0 };
	pid_t pids[APP_PROCS];
	char *buf, rec[APP_RSZ];
	long long got;
	int bad = 0, firstbad = -1;

	if (!SETUP(mkfile("append", 0666, 0, 0, NULL)))
		return;
	for (int p = 0; p < APP_PROCS; p++) {
		pids[p] = as_fork(who[p], &fds[p]);
		if (pids[p] == 0)
			as_return(fds[p], c_append("append", p));
	}
	for (int p = 0; p < APP_PROCS; p++)
		res[p] = as_collect(pids[p], fds[p]);
	for (int p = 0; p < APP_PROCS; p++)
		if (res[p])
			return (void)EXPECT_OK("O_APPEND writers ran", res[p]);
	buf = malloc(total + 1);
	if (!buf)
		return;
	got = slurp("append", buf, total + 1);
	check(got == (long long)total, "O_APPEND from 4 processes: size is the sum of all writes",
	      "expected %zu, got %s", total, vstr(got, false));
	for (size_t k = 0; got == (long long)total && k < total / APP_RSZ; k++) {
		const char *r = buf + k * APP_RSZ;
		int p = r[0] - '0';
		int i = atoi(r + 2);
		if (p < 0 || p >= APP_PROCS || i != next[p]) {
			bad++;
		} else {
			app_record(rec, p, i);
			if (memcmp(rec, r, APP_RSZ))
				bad++;
			else
				next[p]++;
		}
		if (bad && firstbad < 0)
			firstbad = (int)k;
	}
	if (got == (long long)total)
		check(bad == 0, "O_APPEND from 4 processes: every record whole, in order, none lost",
		      "expected 0 bad records, got %d (first at record %d)", bad, firstbad);
	free(buf);
}

static int c_write_after_fchmod(const char *p)
{
	char b[4] = "";
	int fd = open(p, O_CREAT | O_EXCL | O_RDWR, 0644), e;

	if (fd < 0)
		return errno;
	if (fchmod(fd, 0))
		e = errno;
	else if ((e = write_all(fd, "abc", 3)) == 0)
		e = pread(fd, b, 3, 0) == 3 && memcmp(b, "abc", 3) == 0 ? 0 : EIO;
	close(fd);
	return e;
}

static int c_create_ro_write(const char *p)
{
	struct stat s;
	int fd = open(p, O_CREAT | O_EXCL | O_RDWR, 0444), e;

	if (fd < 0)
		return errno;
	e = write_all(fd, "hello", 5);
	if (!e && ftruncate(fd, 2))
		e = errno;
	if (!e && (fstat(fd, &s) || s.st_size != 2))
		e = EIO;
	close(fd);
	return e;
}

static void g_create(void)
{
	char name[300], buf[64];
	struct stat s;
	int fd, r;

	if (!SETUP(mkfile("exist", 0644, 0, 0, "0123456789")) || !SETUP(mkdirx("dir", 0755, 0, 0)))
		return;
	EXPECT("O_CREAT|O_EXCL on an existing file -> EEXIST",
	       try_open("exist", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
	EXPECT("O_CREAT|O_EXCL on an existing directory -> EEXIST",
	       try_open("dir", O_CREAT | O_EXCL | O_RDONLY, 0644), EEXIST);
	EXPECT("open of a missing file -> ENOENT", try_open("missing", O_RDONLY, 0), ENOENT);
	EXPECT("O_CREAT in a missing directory -> ENOENT",
	       try_open("nodir/f", O_CREAT | O_WRONLY, 0644), ENOENT);
	EXPECT("open of the empty path -> ENOENT", try_open("", O_RDONLY, 0), ENOENT);
	EXPECT("file used as a directory component -> ENOTDIR", try_open("exist/x", O_RDONLY, 0), ENOTDIR);
	EXPECT("O_CREAT below a file -> ENOTDIR", try_open("exist/x", O_CREAT | O_WRONLY, 0644), ENOTDIR);
	EXPECT("trailing slash on a file -> ENOTDIR", try_open("exist/", O_RDONLY, 0), ENOTDIR);
	EXPECT("O_DIRECTORY on a file -> ENOTDIR", try_open("exist", O_RDONLY | O_DIRECTORY, 0), ENOTDIR);
	EXPECT("O_WRONLY on a directory -> EISDIR", try_open("dir", O_WRONLY, 0), EISDIR);
	EXPECT("O_RDWR on a directory -> EISDIR", try_open("dir", O_RDWR, 0), EISDIR);
	EXPECT("O_CREAT on an existing directory -> EISDIR", try_open("dir", O_CREAT | O_RDONLY, 0644), EISDIR);
	EXPECT("O_CREAT of a new name with a trailing slash -> EISDIR",
	       try_open("newname/", O_CREAT | O_WRONLY, 0644), EISDIR);
	EXPECT_OK("O_RDONLY on a directory", try_open("dir", O_RDONLY, 0));

	/* O_CREAT without O_EXCL on an existing file opens it unchanged */
	r = try_open("exist", O_CREAT | O_RDWR, 0600);
	EXPECT_OK("O_CREAT without O_EXCL opens an existing file", r);
	expect_mode("O_CREAT on an existing file keeps its mode", 0644, l_mode("exist"));
	expect_val("O_CREAT on an existing file keeps its data", 10, l_size("exist"));

	/* O_TRUNC */
	fd = open("exist", O_WRONLY | O_TRUNC);
	if (check(fd >= 0, "O_WRONLY|O_TRUNC opens", "got %s", ename(errno))) {
		expect_val("O_TRUNC empties the file (fstat)", 0, fstat(fd, &s) ? -errno : s.st_size);
		close(fd);
		expect_val("O_TRUNC empties the file (stat)", 0, l_size("exist"));
		expect_val("O_TRUNC empties the file (read)", 0, slurp("exist", buf, sizeof buf));
	}
	/* O_APPEND basic */
	if (SETUP(mkfile("app1", 0644, 0, 0, "start"))) {
		fd = open("app1", O_WRONLY | O_APPEND);
		if (fd >= 0) {
			lseek(fd, 0, SEEK_SET);
			r = write_all(fd, "+end", 4);
			close(fd);
			EXPECT_OK("O_APPEND write", r);
			expect_content("O_APPEND writes at the end even after lseek(0)", "app1", "start+end");
		}
	}
	check_append();

	/* umask */
	expect_mode("umask 022: create 0666 gives 0644", 0644, AS(&U1, c_umask_create(022, "um1", 0666, 0)));
	expect_mode("umask 022: mkdir 0777 gives 0755", 0755, AS(&U1, c_umask_create(022, "um2", 0777, 1)));
	expect_mode("umask 077: create 0666 gives 0600", 0600, AS(&U1, c_umask_create(077, "um3", 0666, 0)));
	expect_mode("umask 077: mkdir 0777 gives 0700", 0700, AS(&U1, c_umask_create(077, "um4", 0777, 1)));
	expect_mode("umask 0: create 0666 gives 0666", 0666, AS(&U1, c_umask_create(0, "um5", 0666, 0)));
	expect_mode("umask 027: mkfifo 0666 gives 0640", 0640, AS(&U1, c_umask_create(027, "um6", 0666, 2)));

	/* ownership of new files */
	r = AS(&U1G, put("own_f", "x"));
	if (SETUP(r)) {
		expect_val("file created by uid 1001 has st_uid 1001", 1001, l_uid("own_f"));
		expect_val("file created by uid 1001 has the caller's gid (not a supplementary one)", 1001,
			   l_gid("own_f"));
	}
	r = AS(&U1G, ERR(mkdir("own_d", 0755)));
	if (SETUP(r)) {
		expect_val("directory created by uid 1001 has st_uid 1001", 1001, l_uid("own_d"));
		expect_val("directory created by uid 1001 has gid 1001", 1001, l_gid("own_d"));
	}
	r = AS(&U1G, ERR(symlink("own_f", "own_l")));
	if (SETUP(r)) {
		expect_val("symlink created by uid 1001 has st_uid 1001", 1001, l_uid("own_l"));
		expect_val("symlink created by uid 1001 has gid 1001", 1001, l_gid("own_l"));
	}
	r = AS(&U1G, ERR(mkfifo("own_p", 0644)));
	if (SETUP(r)) {
		expect_val("fifo created by uid 1001 has st_uid 1001", 1001, l_uid("own_p"));
		expect_val("fifo created by uid 1001 has gid 1001", 1001, l_gid("own_p"));
	}
	r = AS(&U1, c_umask_create(0, "suid_f", 06755, 0));
	expect_mode("owner creating a file with 06755 keeps set-uid and set-gid", 06755, r);

	/* set-gid directory inheritance */
	if (SETUP(mkdirx("sgid", 02777, 0, 2001))) {
		r = AS(&U1, put("sgid/f", "x"));
		if (SETUP(r)) {
			expect_val("file in a set-gid directory gets the directory's gid", 2001, l_gid("sgid/f"));
			expect_val("file in a set-gid directory keeps the creator's uid", 1001, l_uid("sgid/f"));
			expect_mode("file in a set-gid directory does not get S_ISGID", 0644, l_mode("sgid/f"));
		}
		r = AS(&U1, ERR(mkdir("sgid/d", 0755)));
		if (SETUP(r)) {
			expect_val("subdirectory of a set-gid directory gets its gid", 2001, l_gid("sgid/d"));
			expect_mode("subdirectory of a set-gid directory inherits S_ISGID", 02755, l_mode("sgid/d"));
		}
		r = AS(&U1, c_umask_create(022, "sgid/x", 02755, 0));
		expect_mode("non-member creating 02755 in a set-gid dir of another group loses S_ISGID", 0755, r);
		r = AS(&U1G, c_umask_create(022, "sgid/y", 02755, 0));
		expect_mode("member creating 02755 in a set-gid dir keeps S_ISGID", 02755, r);
	}

	/* name length */
	memset(name, 'n', 255);
	name[255] = 0;
	EXPECT_OK("create with a 255-byte name", try_open(name, O_CREAT | O_EXCL | O_WRONLY, 0644));
	EXPECT_OK("stat of a 255-byte name", ERR(stat(name, &s)));
	{
		struct entlist l = { 0 };
		r = el_read(".", &l);
		check(r == 0 && el_count(&l, name) == 1, "255-byte name listed once by readdir",
		      "readdir %s, listed %zu times", ename(r), el_count(&l, name));
		el_free(&l);
	}
	EXPECT_OK("unlink of a 255-byte name", ERR(unlink(name)));
	name[255] = 'n';
	name[256] = 0;
	EXPECT("create with a 256-byte name -> ENAMETOOLONG",
	       try_open(name, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
	EXPECT("stat of a 256-byte name -> ENAMETOOLONG", ERR(stat(name, &s)), ENAMETOOLONG);
	EXPECT("mkdir with a 256-byte name -> ENAMETOOLONG", ERR(mkdir(name, 0755)), ENAMETOOLONG);

	/* an open fd keeps its access mode whatever the file's mode becomes */
	EXPECT_OK("uid 1001: write through an fd after fchmod(fd, 0)", AS(&U1, c_write_after_fchmod("fch0")));
	EXPECT_OK("uid 1001: O_CREAT|O_RDWR with mode 0444 gives a writable fd (write+ftruncate)",
		  AS(&U1, c_create_ro_write("ro444")));

	/* O_TMPFILE */
	fd = open(".", O_TMPFILE | O_RDWR, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		skip("O_TMPFILE", "not supported (%s)", ename(errno));
	} else if (check(fd >= 0, "O_TMPFILE opens", "got %s", ename(errno))) {
		r = write_all(fd, "tmp", 3);
		EXPECT_OK("write to an O_TMPFILE file", r);
		EXPECT_OK("linkat of an O_TMPFILE file",
			  ERR(linkat(fd, "", AT_FDCWD, "tmpf", AT_EMPTY_PATH)));
		expect_content("linked O_TMPFILE file has its data", "tmpf", "tmp");
		close(fd);
	}
}

/* ------------------------------------------------------------------ */
/* group: permissions                                                  */

static int c_utimens(const char *p, int how)
{
	struct timespec now2[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	struct timespec set[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	if (how == 0)
		return ERR(utimensat(AT_FDCWD, p, NULL, 0));
	return ERR(utimensat(AT_FDCWD, p, how == 1 ? now2 : set, 0));
}

static void g_perm(void)
{
	static const char script[] = "#!/bin/sh\nexit 7\n";
	int r;

	if (!SETUP(mkfile("r600", 0600, 0, 0, "secret")) ||
	    !SETUP(mkfile("r644", 0644, 0, 0, "hello")) ||
	    !SETUP(mkfile("z000", 0, 0, 0, "zero")) ||
	    !SETUP(mkfile("sh755", 0755, 0, 0, script)) ||
	    !SETUP(mkfile("sh644", 0644, 0, 0, script)) ||
	    !SETUP(mkdirx("d700", 0700, 0, 0)) || !SETUP(mkfile("d700/f", 0644, 0, 0, "f")) ||
	    !SETUP(mkdirx("d744", 0744, 0, 0)) || !SETUP(mkfile("d744/f", 0644, 0, 0, "f")) ||
	    !SETUP(mkdirx("d711", 0711, 0, 0)) || !SETUP(mkfile("d711/f", 0644, 0, 0, "f")) ||
	    !SETUP(mkfile("g640", 0640, 0, 2001, "group")) ||
	    !SETUP(mkfile("o077", 0077, 1001, 1001, "others")))
		return;

	EXPECT("uid 1002 reads a 0600 root file -> EACCES", AS(&U2, try_open("r600", O_RDONLY, 0)), EACCES);
	EXPECT_OK("uid 1002 reads a 0644 root file", AS(&U2, try_open("r644", O_RDONLY, 0)));
	EXPECT("uid 1002 opens a 0644 root file O_WRONLY -> EACCES", AS(&U2, try_open("r644", O_WRONLY, 0)), EACCES);
	EXPECT("uid 1002 opens a 0644 root file O_RDWR -> EACCES", AS(&U2, try_open("r644", O_RDWR, 0)), EACCES);
	EXPECT("uid 1002 O_TRUNC on a 0644 root file -> EACCES",
	       AS(&U2, try_open("r644", O_RDONLY | O_TRUNC, 0)), EACCES);
	EXPECT("uid 1002 truncate() of a 0644 root file -> EACCES", AS(&U2, ERR(truncate("r644", 0))), EACCES);
	expect_val("denied O_TRUNC/truncate left the data", 5, l_size("r644"));
	EXPECT("uid 1002 access(R_OK) on a 0600 root file -> EACCES", AS(&U2, ERR(access("r600", R_OK))), EACCES);
	EXPECT("uid 1002 access(W_OK) on a 0644 root file -> EACCES", AS(&U2, ERR(access("r644", W_OK))), EACCES);
	EXPECT_OK("uid 1002 access(R_OK) on a 0644 root file", AS(&U2, ERR(access("r644", R_OK))));
	EXPECT_OK("root opens a mode 0000 file O_RDWR", try_open("z000", O_RDWR, 0));
	EXPECT("uid 1001 opens a mode 0000 file -> EACCES", AS(&U1, try_open("z000", O_RDONLY, 0)), EACCES);

	EXPECT("uid 1002 executes a 0644 script -> EACCES", AS(&U2, c_exec("./sh644")), EACCES);
	expect_val("uid 1002 executes a 0755 script (exit status 7)", 1007, AS(&U2, c_exec("./sh755")));
	EXPECT("root executes a file without any x bit -> EACCES", c_exec("./sh644"), EACCES);

	EXPECT("uid 1002 stat below a 0700 root dir -> EACCES", AS(&U2, ERR(access("d700/f", F_OK))), EACCES);
	EXPECT("uid 1002 opendir of a 0700 root dir -> EACCES", AS(&U2, try_opendir("d700")), EACCES);
	EXPECT("uid 1002 stat below a 0744 dir (no search) -> EACCES", AS(&U2, ERR(access("d744/f", F_OK))), EACCES);
	EXPECT_OK("uid 1002 opendir of a 0744 dir (read allowed)", AS(&U2, try_opendir("d744")));
	EXPECT_OK("uid 1002 reads below a 0711 dir (search allowed)", AS(&U2, try_open("d711/f", O_RDONLY, 0)));
	EXPECT("uid 1002 opendir of a 0711 dir -> EACCES", AS(&U2, try_opendir("d711")), EACCES);

	EXPECT("uid 1002 without group 2001 reads a 0640 root:2001 file -> EACCES",
	       AS(&U2, try_open("g640", O_RDONLY, 0)), EACCES);
	EXPECT_OK("uid 1002 with supplementary group 2001 reads a 0640 root:2001 file",
		  AS(&U2G, try_open("g640", O_RDONLY, 0)));
	EXPECT("group members cannot write a 0640 file -> EACCES", AS(&U2G, try_open("g640", O_WRONLY, 0)), EACCES);
	EXPECT("owner of a 0077 file cannot read it (owner class wins) -> EACCES",
	       AS(&U1, try_open("o077", O_RDONLY, 0)), EACCES);
	EXPECT_OK("others can read a 0077 file", AS(&U2, try_open("o077", O_RDONLY, 0)));

	/* chmod / chown */
	if (!SETUP(mkfile("u1f", 0644, 1001, 1001, "u1")))
		return;
	EXPECT("uid 1002 chmod of uid 1001's file -> EPERM", AS(&U2, ERR(chmod("u1f", 0777))), EPERM);
	EXPECT("uid 1002 chown of uid 1001's file to itself -> EPERM", AS(&U2, ERR(chown("u1f", 1002, (gid_t)-1))), EPERM);
	EXPECT("uid 1002 chgrp of uid 1001's file -> EPERM", AS(&U2G, ERR(chown("u1f", (uid_t)-1, 2001))), EPERM);
	{
		int fd = open("u1f", O_RDONLY);
		if (SETUP(fd < 0 ? errno : 0)) {
			EXPECT("uid 1002 fchmod through an fd of uid 1001's file -> EPERM",
			       AS(&U2, ERR(fchmod(fd, 0777))), EPERM);
			EXPECT("uid 1002 fchown through an fd of uid 1001's file -> EPERM",
			       AS(&U2, ERR(fchown(fd, 1002, 1002))), EPERM);
			close(fd);
		}
	}
	EXPECT_OK("owner chmod 0600", AS(&U1, ERR(chmod("u1f", 0600))));
	expect_mode("owner chmod: mode is 0600", 0600, l_mode("u1f"));
	EXPECT("owner chown to another uid -> EPERM", AS(&U1G, ERR(chown("u1f", 1002, (gid_t)-1))), EPERM);
	EXPECT_OK("owner chown to its own uid (no change)", AS(&U1, ERR(chown("u1f", 1001, (gid_t)-1))));
	EXPECT_OK("owner chgrp to a supplementary group it is in", AS(&U1G, ERR(chown("u1f", (uid_t)-1, 2001))));
	expect_val("owner chgrp: st_gid is 2001", 2001, l_gid("u1f"));
	expect_val("owner chgrp: st_uid still 1001", 1001, l_uid("u1f"));
	EXPECT("owner chgrp to a group it is not in -> EPERM", AS(&U1G, ERR(chown("u1f", (uid_t)-1, 2002))), EPERM);
	EXPECT_OK("root chown to 1003:1004", ERR(chown("u1f", 1003, 1004)));
	check(l_uid("u1f") == 1003 && l_gid("u1f") == 1004, "root chown: owner is 1003:1004",
	      "got %s:%s", vstr(l_uid("u1f"), false), vstr(l_gid("u1f"), false));

	if (SETUP(mkfile("sg", 0755, 1001, 2001, "sg"))) {
		EXPECT_OK("owner not in the file's group: chmod 02755 succeeds", AS(&U1, ERR(chmod("sg", 02755))));
		expect_mode("owner not in the file's group: chmod 02755 clears S_ISGID", 0755, l_mode("sg"));
		EXPECT_OK("owner in the file's group: chmod 02755", AS(&U1G, ERR(chmod("sg", 02755))));
		expect_mode("owner in the file's group: S_ISGID kept", 02755, l_mode("sg"));
	}
	if (SETUP(mkfile("chg", 06755, 1001, 1001, "x"))) {
		EXPECT_OK("owner chgrp of a 06755 file", AS(&U1G, ERR(chown("chg", (uid_t)-1, 2001))));
		expect_mode("chgrp by the owner clears set-uid and set-gid", 0755, l_mode("chg"));
	}
	if (SETUP(mkfile("chr", 04755, 1001, 1001, "x"))) {
		EXPECT_OK("root chown of a 04755 file", ERR(chown("chr", 1002, 1002)));
		expect_mode("chown by root clears set-uid (Linux)", 0755, l_mode("chr"));
	}

	/* write/truncate by a process without CAP_FSETID clears set-uid/set-gid */
	if (SETUP(mkfile("kp1", 06777, 1001, 1001, "data")) && SETUP(mkfile("kp2", 06777, 1001, 1001, "data")) &&
	    SETUP(mkfile("kp3", 06777, 1001, 1001, "data")) && SETUP(mkfile("kp4", 06777, 1001, 1001, "data")) &&
	    SETUP(mkfile("kp5", 02777, 1001, 1001, "data"))) {
		EXPECT_OK("uid 1002 writes a 06777 file of uid 1001", AS(&U2, c_write1("kp1")));
		expect_mode("write by a non-owner clears set-uid and set-gid", 0777, l_mode("kp1"));
		EXPECT_OK("owner writes its 06777 file", AS(&U1, c_write1("kp2")));
		expect_mode("write by the owner (no CAP_FSETID) clears set-uid and set-gid", 0777, l_mode("kp2"));
		EXPECT_OK("root writes a 06777 file", c_write1("kp3"));
		expect_mode("write by root (CAP_FSETID) keeps set-uid and set-gid", 06777, l_mode("kp3"));
		EXPECT_OK("uid 1002 truncates a 06777 file of uid 1001", AS(&U2, ERR(truncate("kp4", 1))));
		expect_mode("truncate by a non-owner clears set-uid and set-gid", 0777, l_mode("kp4"));
		EXPECT_OK("uid 1002 writes a 02777 file of uid 1001", AS(&U2, c_write1("kp5")));
		expect_mode("write by a non-owner clears set-gid", 0777, l_mode("kp5"));
	}
	/* ... also through a supplementary group and by fallocate; chown(-1, -1)
	 * clears them for the owner but is refused to anyone else */
	if (SETUP(mkfile("kp6", 02775, 1003, 2001, "data")) && SETUP(mkfile("kp7", 06777, 1001, 1001, "data")) &&
	    SETUP(mkfile("kp8", 04755, 1001, 1001, "data")) && SETUP(mkfile("kp9", 04755, 1001, 1001, "data"))) {
		EXPECT_OK("uid 1002 writes a 02775 file through its supplementary group", AS(&U2G, c_write1("kp6")));
		expect_mode("write by a supplementary-group member clears set-gid", 0775, l_mode("kp6"));
		EXPECT_OK("uid 1002 fallocates in a 06777 file of uid 1001", AS(&U2, c_fallocate1("kp7")));
		expect_mode("fallocate by a non-owner clears set-uid and set-gid", 0777, l_mode("kp7"));
		EXPECT("chown(-1, -1) of another's 04755 file -> EPERM", AS(&U2, ERR(chown("kp8", (uid_t)-1, (gid_t)-1))),
		       EPERM);
		expect_mode("... and its set-uid bit stays", 04755, l_mode("kp8"));
		EXPECT_OK("owner chown(-1, -1) of its 04755 file", AS(&U1, ERR(chown("kp9", (uid_t)-1, (gid_t)-1))));
		expect_mode("chown(-1, -1) by the owner clears set-uid", 0755, l_mode("kp9"));
	}
	if (SETUP(mkfile("kpa", 06777, 1001, 1001, "data"))) {
		EXPECT_OK("uid 1002 open(O_CREAT|O_TRUNC) of an existing 06777 file", AS(&U2, c_creat_trunc("kpa")));
		expect_mode("O_CREAT|O_TRUNC by a non-owner clears set-uid and set-gid", 0777, l_mode("kpa"));
	}

	/* sticky directory */
	if (SETUP(mkdirx("sticky", 01777, 0, 0))) {
		if (SETUP(AS(&U1, put("sticky/a1", "a1"))) && SETUP(AS(&U1, put("sticky/a2", "a2"))) &&
		    SETUP(AS(&U2, put("sticky/c2", "c2")))) {
			EXPECT("sticky dir: uid 1002 unlinks uid 1001's file -> EPERM",
			       AS(&U2, ERR(unlink("sticky/a1"))), EPERM, EACCES);
			EXPECT("sticky dir: uid 1002 renames uid 1001's file -> EPERM",
			       AS(&U2, ERR(rename("sticky/a1", "sticky/b1"))), EPERM, EACCES);
			EXPECT("sticky dir: uid 1002 renames its file over uid 1001's -> EPERM",
			       AS(&U2, ERR(rename("sticky/c2", "sticky/a2"))), EPERM, EACCES);
			expect_content("sticky dir: the protected file is intact", "sticky/a2", "a2");
			EXPECT_OK("sticky dir: owner unlinks its own file", AS(&U1, ERR(unlink("sticky/a1"))));
			EXPECT_OK("sticky dir: uid 1002 renames its own file", AS(&U2, ERR(rename("sticky/c2", "sticky/c3"))));
		}
		if (SETUP(mkdirx("sticky2", 01777, 1003, 1003)) && SETUP(AS(&U1, put("sticky2/f", "f"))))
			EXPECT_OK("sticky dir: the directory's owner unlinks another user's file",
				  AS(&U3, ERR(unlink("sticky2/f"))));
	}

	/* utimensat */
	if (SETUP(mkfile("ut", 0666, 1001, 1001, "ut")) && SETUP(mkfile("ut2", 0644, 1001, 1001, "ut"))) {
		EXPECT_OK("uid 1002 with write permission: utimensat(NULL)", AS(&U2, c_utimens("ut", 0)));
		EXPECT_OK("uid 1002 with write permission: utimensat(UTIME_NOW, UTIME_NOW)", AS(&U2, c_utimens("ut", 1)));
		EXPECT("uid 1002 with write permission: explicit times -> EPERM", AS(&U2, c_utimens("ut", 2)), EPERM);
		EXPECT("uid 1002 without write permission: utimensat(NULL) -> EACCES", AS(&U2, c_utimens("ut2", 0)), EACCES);
		EXPECT_OK("owner sets explicit times", AS(&U1, c_utimens("ut2", 2)));
	}

	/* directory permissions */
	if (SETUP(mkdirx("nw", 0755, 0, 0)) && SETUP(mkfile("nw/y", 0666, 0, 0, "y"))) {
		EXPECT("uid 1002 creates in a 0755 root dir -> EACCES", AS(&U2, put("nw/x", "x")), EACCES);
		EXPECT("uid 1002 mkdir in a 0755 root dir -> EACCES", AS(&U2, ERR(mkdir("nw/z", 0755))), EACCES);
		EXPECT("uid 1002 unlinks in a 0755 root dir -> EACCES", AS(&U2, ERR(unlink("nw/y"))), EACCES);
		EXPECT("uid 1002 renames in a 0755 root dir -> EACCES", AS(&U2, ERR(rename("nw/y", "nw/y2"))), EACCES);
		EXPECT("uid 1002 symlink in a 0755 root dir -> EACCES", AS(&U2, ERR(symlink("y", "nw/l"))), EACCES);
		/* link source owned by 1002 itself: fs.protected_hardlinks would
		 * give EPERM for a foreign source */
		if (SETUP(mkfile("u2own", 0644, 1002, 1002, "mine")))
			EXPECT("uid 1002 link in a 0755 root dir -> EACCES",
			       AS(&U2, ERR(link("u2own", "nw/h"))), EACCES);
	}
	if (SETUP(mkdirx("wnx", 0776, 0, 0)))
		EXPECT("uid 1002 creates in a dir with w but no x -> EACCES", AS(&U2, put("wnx/x", "x")), EACCES);
	if (SETUP(mkdirx("mv", 0777, 0, 0)) && SETUP(mkdirx("mv/a", 0777, 0, 0)) && SETUP(mkdirx("mv/d", 0755, 0, 0))) {
		EXPECT("uid 1002 moves an unwritable dir to another parent -> EACCES",
		       AS(&U2, ERR(rename("mv/d", "mv/a/d"))), EACCES);
		EXPECT_OK("uid 1002 renames an unwritable dir within its parent",
			  AS(&U2, ERR(rename("mv/d", "mv/d2"))));
	}
	r = AS(&U1, ERR(mkdir("u1dir", 0700)));
	if (SETUP(r))
		EXPECT("uid 1002 creates in uid 1001's 0700 dir -> EACCES", AS(&U2, put("u1dir/x", "x")), EACCES);
}

/* ------------------------------------------------------------------ */
/* group: mkdir / rmdir                                                */

static int c_rmdir_cwd(void)
{
	struct entlist l = { 0 };
	int fd, r, e;

	if (mkdir("gone", 0755) || (fd = open("gone", O_RDONLY | O_DIRECTORY)) < 0)
		return -1000;
	if (rmdir("gone")) {
		close(fd);
		return -1001;
	}
	/* after removal: creating inside must fail with ENOENT */
	r = openat(fd, "x", O_CREAT | O_WRONLY, 0644);
	e = r < 0 ? errno : 0;
	if (r >= 0)
		close(r);
	el_free(&l);
	close(fd);
	return e;
}

static void g_dir(void)
{
	struct stat s;
	int r;

	if (!SETUP(ERR(mkdir("d", 0755))) || !SETUP(mkfile("f", 0644, 0, 0, "f")))
		return;
	EXPECT("mkdir of an existing directory -> EEXIST", ERR(mkdir("d", 0755)), EEXIST);
	EXPECT("mkdir over an existing file -> EEXIST", ERR(mkdir("f", 0755)), EEXIST);
	EXPECT("mkdir below a file -> ENOTDIR", ERR(mkdir("f/x", 0755)), ENOTDIR);
	EXPECT("mkdir in a missing directory -> ENOENT", ERR(mkdir("nodir/x", 0755)), ENOENT);
	EXPECT("mkdir of the empty path -> ENOENT", ERR(mkdir("", 0755)), ENOENT);
	r = ERR(mkdir("sticky", 01777));
	if (SETUP(r))
		expect_mode("mkdir keeps the sticky bit", 01755, l_mode("sticky"));
	expect_type("mkdir makes a directory", "d", S_IFDIR);

	if (SETUP(mkfile("d/child", 0644, 0, 0, "c")))
		EXPECT("rmdir of a non-empty directory -> ENOTEMPTY", ERR(rmdir("d")), ENOTEMPTY, EEXIST);
	EXPECT("rmdir of a file -> ENOTDIR", ERR(rmdir("f")), ENOTDIR);
	EXPECT("rmdir of a missing name -> ENOENT", ERR(rmdir("missing")), ENOENT);
	EXPECT("rmdir \".\" -> EINVAL", ERR(rmdir("d/.")), EINVAL);
	EXPECT("rmdir \"..\" -> ENOTEMPTY", ERR(rmdir("d/..")), ENOTEMPTY, EEXIST, EBUSY);
	EXPECT("rmdir of a symlink to a directory -> ENOTDIR",
	       ERR(symlink("d", "ld")) ? errno : ERR(rmdir("ld")), ENOTDIR);

	/* nlink */
	if (SETUP(ERR(mkdir("n", 0755)))) {
		expect_val("new directory has nlink 2", 2, l_nlink("n"));
		r = ERR(mkdir("n/a", 0755)) || ERR(mkdir("n/b", 0755)) || ERR(mkdir("n/c", 0755));
		if (SETUP(r ? EIO : 0))
			expect_val("3 subdirectories: nlink 5", 5, l_nlink("n"));
		SETUP(mkfile("n/file", 0644, 0, 0, NULL));
		expect_val("a file does not change the directory's nlink", 5, l_nlink("n"));
		EXPECT_OK("rmdir of an empty subdirectory", ERR(rmdir("n/b")));
		expect_val("after rmdir of a subdirectory: nlink 4", 4, l_nlink("n"));
		EXPECT("stat of the removed directory -> ENOENT", ERR(stat("n/b", &s)), ENOENT);
	}
	EXPECT("create through an fd of a removed directory -> ENOENT", c_rmdir_cwd(), ENOENT);
	if (SETUP(ERR(mkdir("deep", 0755))) && SETUP(ERR(mkdir("deep/a", 0755))) &&
	    SETUP(ERR(mkdir("deep/a/b", 0755))) && SETUP(mkfile("deep/a/b/f", 0644, 0, 0, "deep")))
		expect_content("nested directories resolve", "deep/a/b/../b/./f", "deep");
	expect_val("\"..\" of a subdirectory is its parent", l_ino("."), l_ino("d/.."));
}

/* ------------------------------------------------------------------ */
/* group: unlink                                                       */

static void g_unlink(void)
{
	struct stat s;
	char buf[64];
	size_t got = 0;
	int fd, r;

	if (!SETUP(ERR(mkdir("d", 0755))) || !SETUP(mkfile("f", 0644, 0, 0, "f")))
		return;
	EXPECT("unlink of a directory -> EISDIR (Linux) or EPERM (POSIX)", ERR(unlink("d")), EISDIR, EPERM);
	EXPECT("unlink of a missing name -> ENOENT", ERR(unlink("missing")), ENOENT);
	EXPECT("unlink with a trailing slash on a file -> ENOTDIR", ERR(unlink("f/")), ENOTDIR);
	EXPECT("unlink below a file -> ENOTDIR", ERR(unlink("f/x")), ENOTDIR);
	EXPECT_OK("unlink of a file", ERR(unlink("f")));
	EXPECT("unlinked name is gone", ERR(lstat("f", &s)), ENOENT);

	if (SETUP(mkfile("t", 0644, 0, 0, "target")) && SETUP(ERR(symlink("t", "l")))) {
		EXPECT_OK("unlink of a symlink", ERR(unlink("l")));
		expect_content("unlink of a symlink leaves its target", "t", "target");
	}
	if (SETUP(ERR(mkfifo("p", 0644))))
		EXPECT_OK("unlink of a fifo", ERR(unlink("p")));

	fd = open("ou", O_CREAT | O_EXCL | O_RDWR, 0644);
	if (!check(fd >= 0, "create for open-then-unlink", "got %s", ename(errno)))
		return;
	r = write_all(fd, "before", 6);
	SETUP(r);
	EXPECT_OK("unlink of an open file", ERR(unlink("ou")));
	EXPECT("unlinked open file: name is gone", ERR(lstat("ou", &s)), ENOENT);
	memset(buf, 0, sizeof buf);
	r = pread_full(fd, buf, 6, 0, &got);
	check(r == 0 && got == 6 && memcmp(buf, "before", 6) == 0, "unlinked open file: data readable through the fd",
	      "read %s, %zu bytes \"%.6s\"", ename(r), got, buf);
	r = ERR(pwrite(fd, " after", 6, 6));
	EXPECT_OK("unlinked open file: writable through the fd", r);
	memset(buf, 0, sizeof buf);
	r = pread_full(fd, buf, sizeof buf - 1, 0, &got);
	check(r == 0 && got == 12 && strcmp(buf, "before after") == 0, "unlinked open file: new data reads back",
	      "read %s, %zu bytes \"%s\"", ename(r), got, buf);
	r = fstat(fd, &s) ? errno : 0;
	check(r == 0 && s.st_nlink == 0 && s.st_size == 12, "unlinked open file: fstat shows nlink 0, size 12",
	      "fstat %s, nlink %lu, size %lld", ename(r), (unsigned long)s.st_nlink, (long long)s.st_size);
	EXPECT_OK("unlinked open file: ftruncate through the fd", ERR(ftruncate(fd, 3)));
	if (SETUP(mkfile("ou", 0644, 0, 0, "new file")))
		expect_content("a new file with the same name is independent", "ou", "new file");
	memset(buf, 0, sizeof buf);
	r = pread_full(fd, buf, sizeof buf - 1, 0, &got);
	check(r == 0 && got == 3 && memcmp(buf, "bef", 3) == 0,
	      "unlinked open file unaffected by the new file", "read %s, %zu bytes \"%s\"", ename(r), got, buf);
	close(fd);

	/* unlinked while open by another user */
	if (SETUP(mkdirx("shared", 0777, 0, 0)) && SETUP(AS(&U1, put("shared/u", "user data"))) &&
	    SETUP(ERR(chmod("shared/u", 0600)))) {
		int p2[2];
		if (SETUP(ERR(pipe(p2)))) {
			int cfd;
			pid_t pid = as_fork(&U1, &cfd);
			if (pid == 0) {
				char b[32] = "";
				char c;
				int ufd = open("shared/u", O_RDWR);
				close(p2[1]);
				if (ufd < 0)
					as_return(cfd, errno);
				/* wait until the parent has unlinked it */
				if (read(p2[0], &c, 1) != 1)
					as_return(cfd, EPIPE);
				if (pread(ufd, b, 9, 0) != 9 || memcmp(b, "user data", 9))
					as_return(cfd, EIO);
				if (pwrite(ufd, "!", 1, 9) != 1)
					as_return(cfd, errno);
				as_return(cfd, 0);
			}
			close(p2[0]);
			msleep(50);
			r = ERR(unlink("shared/u"));
			SETUP(r);
			if (write(p2[1], "g", 1) != 1)
				r = EPIPE;
			close(p2[1]);
			EXPECT_OK("uid 1001 keeps reading and writing its fd after root unlinks the file",
				  as_collect(pid, cfd));
		}
	}
}

/* ------------------------------------------------------------------ */
/* group: rename                                                       */

static void g_rename(void)
{
	long long ino_a, ino_b;
	char buf[16];
	int fd, r;

	/* file over file */
	if (SETUP(mkfile("a", 0644, 0, 0, "AAAA")) && SETUP(mkfile("b", 0600, 0, 0, "BB"))) {
		ino_a = l_ino("a");
		fd = open("b", O_RDONLY);
		EXPECT_OK("rename file over file", ERR(rename("a", "b")));
		expect_val("target has the source's inode number after rename", ino_a, l_ino("b"));
		expect_content("target has the source's data", "b", "AAAA");
		expect_mode("target has the source's mode", 0644, l_mode("b"));
		EXPECT("source name is gone", ERR(access("a", F_OK)), ENOENT);
		if (fd >= 0) {
			memset(buf, 0, sizeof buf);
			r = (int)read(fd, buf, sizeof buf - 1);
			check(r == 2 && strcmp(buf, "BB") == 0, "an fd on the replaced file still reads its old data",
			      "read %d bytes \"%s\"", r, buf);
			close(fd);
		}
	}
	/* dir over empty dir */
	if (SETUP(ERR(mkdir("d1", 0755))) && SETUP(mkfile("d1/in", 0644, 0, 0, "in")) && SETUP(ERR(mkdir("d2", 0755)))) {
		ino_a = l_ino("d1");
		EXPECT_OK("rename dir over an empty dir", ERR(rename("d1", "d2")));
		expect_val("target dir has the source's inode", ino_a, l_ino("d2"));
		expect_content("moved directory keeps its entries", "d2/in", "in");
		EXPECT("old dir name is gone", ERR(access("d1", F_OK)), ENOENT);
	}
	if (SETUP(ERR(mkdir("e1", 0755))) && SETUP(ERR(mkdir("e2", 0755))) && SETUP(mkfile("e2/x", 0644, 0, 0, "x")))
		EXPECT("rename dir over a non-empty dir -> ENOTEMPTY", ERR(rename("e1", "e2")), ENOTEMPTY, EEXIST);
	if (SETUP(mkfile("ff", 0644, 0, 0, "ff"))) {
		EXPECT("rename file over a dir -> EISDIR", ERR(rename("ff", "e1")), EISDIR);
		EXPECT("rename dir over a file -> ENOTDIR", ERR(rename("e1", "ff")), ENOTDIR);
		expect_type("failed rename left the file", "ff", S_IFREG);
		expect_type("failed rename left the dir", "e1", S_IFDIR);
	}
	if (SETUP(ERR(mkdir("e1/sub", 0755)))) {
		EXPECT("rename dir into its own subdir -> EINVAL", ERR(rename("e1", "e1/sub/x")), EINVAL);
		EXPECT("rename dir onto its own subdir -> EINVAL", ERR(rename("e1", "e1/sub")), EINVAL, ENOTEMPTY);
	}
	EXPECT("rename of a missing name -> ENOENT", ERR(rename("missing", "x")), ENOENT);
	EXPECT("rename to a missing directory -> ENOENT", ERR(rename("ff", "nodir/x")), ENOENT);
	EXPECT("rename of \".\" -> EBUSY or EINVAL", ERR(rename("e1/.", "dotdir")), EBUSY, EINVAL);
	ino_a = l_ino("ff");
	EXPECT_OK("rename a file to itself", ERR(rename("ff", "ff")));
	expect_val("rename to itself is a no-op", ino_a, l_ino("ff"));
	if (SETUP(ERR(link("ff", "ff2")))) {
		EXPECT_OK("rename between two links of one inode", ERR(rename("ff", "ff2")));
		check(access("ff", F_OK) == 0 && access("ff2", F_OK) == 0,
		      "rename between two links of one inode leaves both (POSIX no-op)",
		      "ff %s, ff2 %s", ename(ERR(access("ff", F_OK))), ename(ERR(access("ff2", F_OK))));
	}

	/* renameat2 */
	if (SETUP(mkfile("n1", 0644, 0, 0, "n1")) && SETUP(mkfile("n2", 0644, 0, 0, "n2"))) {
		EXPECT("RENAME_NOREPLACE onto an existing name -> EEXIST",
		       ERR(renameat2(AT_FDCWD, "n1", AT_FDCWD, "n2", RENAME_NOREPLACE)), EEXIST);
		expect_content("RENAME_NOREPLACE left the target", "n2", "n2");
		EXPECT_OK("RENAME_NOREPLACE onto a free name",
			  ERR(renameat2(AT_FDCWD, "n1", AT_FDCWD, "n3", RENAME_NOREPLACE)));
		expect_content("RENAME_NOREPLACE moved the file", "n3", "n1");
		ino_a = l_ino("n2");
		ino_b = l_ino("n3");
		EXPECT_OK("RENAME_EXCHANGE of two files", ERR(renameat2(AT_FDCWD, "n2", AT_FDCWD, "n3", RENAME_EXCHANGE)));
		check(l_ino("n2") == ino_b && l_ino("n3") == ino_a, "RENAME_EXCHANGE swapped the inodes",
		      "expected %lld/%lld, got %lld/%lld", ino_b, ino_a, l_ino("n2"), l_ino("n3"));
		expect_content("RENAME_EXCHANGE swapped the data (1)", "n2", "n1");
		expect_content("RENAME_EXCHANGE swapped the data (2)", "n3", "n2");
		EXPECT("RENAME_EXCHANGE with a missing name -> ENOENT",
		       ERR(renameat2(AT_FDCWD, "n2", AT_FDCWD, "n9", RENAME_EXCHANGE)), ENOENT);
		EXPECT("RENAME_EXCHANGE|RENAME_NOREPLACE -> EINVAL",
		       ERR(renameat2(AT_FDCWD, "n2", AT_FDCWD, "n3", RENAME_EXCHANGE | RENAME_NOREPLACE)), EINVAL);
	}
	if (SETUP(mkfile("xf", 0644, 0, 0, "file")) && SETUP(ERR(mkdir("xd", 0755))) &&
	    SETUP(mkfile("xd/kid", 0644, 0, 0, "kid"))) {
		EXPECT_OK("RENAME_EXCHANGE of a file and a directory",
			  ERR(renameat2(AT_FDCWD, "xf", AT_FDCWD, "xd", RENAME_EXCHANGE)));
		expect_type("after exchange the file name is a directory", "xf", S_IFDIR);
		expect_type("after exchange the dir name is a file", "xd", S_IFREG);
		expect_content("exchanged directory keeps its entries", "xf/kid", "kid");
		expect_content("exchanged file keeps its data", "xd", "file");
	}

	/* cross-directory */
	if (SETUP(ERR(mkdir("p1", 0755))) && SETUP(ERR(mkdir("p2", 0755))) && SETUP(ERR(mkdir("p1/s", 0755))) &&
	    SETUP(mkfile("p1/f", 0644, 0, 0, "pf"))) {
		expect_val("parent with one subdir has nlink 3", 3, l_nlink("p1"));
		ino_a = l_ino("p1/s");
		EXPECT_OK("rename a directory to another parent", ERR(rename("p1/s", "p2/s")));
		expect_val("old parent nlink drops to 2", 2, l_nlink("p1"));
		expect_val("new parent nlink rises to 3", 3, l_nlink("p2"));
		expect_val("moved dir keeps its inode", ino_a, l_ino("p2/s"));
		expect_val("\"..\" of the moved dir is the new parent", l_ino("p2"), l_ino("p2/s/.."));
		ino_a = l_ino("p1/f");
		EXPECT_OK("rename a file to another parent", ERR(rename("p1/f", "p2/s/f")));
		expect_val("moved file keeps its inode", ino_a, l_ino("p2/s/f"));
		expect_content("moved file keeps its data", "p2/s/f", "pf");
		if (SETUP(ERR(mkdir("p1/t", 0755))) && SETUP(ERR(mkdir("p2/t", 0755)))) {
			EXPECT_OK("rename dir over an empty dir in another parent", ERR(rename("p1/t", "p2/t")));
			expect_val("source parent nlink drops after replacing rename", 2, l_nlink("p1"));
			expect_val("target parent nlink unchanged after replacing rename", 4, l_nlink("p2"));
		}
	}
	if (SETUP(ERR(mkdir("q1", 0755))) && SETUP(ERR(mkdir("q2", 0755))) && SETUP(ERR(mkdir("q1/dd", 0755))) &&
	    SETUP(mkfile("q2/ff", 0644, 0, 0, "qf"))) {
		EXPECT_OK("RENAME_EXCHANGE of a dir and a file in different parents",
			  ERR(renameat2(AT_FDCWD, "q1/dd", AT_FDCWD, "q2/ff", RENAME_EXCHANGE)));
		expect_val("exchange moved the subdir out: first parent nlink 2", 2, l_nlink("q1"));
		expect_val("exchange moved the subdir in: second parent nlink 3", 3, l_nlink("q2"));
		expect_val("\"..\" of the exchanged dir is its new parent", l_ino("q2"), l_ino("q2/ff/.."));
		expect_content("exchanged file readable in its new parent", "q1/dd", "qf");
	}
	/* rename of an open file keeps the fd working */
	if (SETUP(mkfile("of", 0644, 0, 0, "open"))) {
		fd = open("of", O_RDWR);
		if (fd >= 0) {
			EXPECT_OK("rename an open file", ERR(rename("of", "of2")));
			EXPECT_OK("write through the fd after rename", ERR(pwrite(fd, "OPEN", 4, 0)));
			close(fd);
			expect_content("data written after rename is in the new name", "of2", "OPEN");
		}
	}
}

/* ------------------------------------------------------------------ */
/* group: link / symlink / readlink                                    */

static void g_link(void)
{
	char target[1100], buf[1200];
	struct stat s, ls;
	ssize_t n;
	int r;

	if (!SETUP(mkfile("f", 0644, 0, 0, "one")) || !SETUP(ERR(mkdir("d", 0755))))
		return;
	EXPECT_OK("link", ERR(link("f", "h")));
	expect_val("link: nlink 2 on the original", 2, l_nlink("f"));
	expect_val("link: nlink 2 on the new name", 2, l_nlink("h"));
	expect_val("link: same inode", l_ino("f"), l_ino("h"));
	r = open("h", O_WRONLY | O_APPEND);
	if (r >= 0) {
		SETUP(write_all(r, "+two", 4));
		close(r);
	}
	expect_content("data written through one link reads through the other", "f", "one+two");
	EXPECT("link to a directory -> EPERM", ERR(link("d", "dl")), EPERM);
	EXPECT("link onto an existing name -> EEXIST", ERR(link("f", "h")), EEXIST);
	EXPECT("link of a missing file -> ENOENT", ERR(link("missing", "m2")), ENOENT);
	EXPECT("link into a missing directory -> ENOENT", ERR(link("f", "nodir/x")), ENOENT);
	EXPECT_OK("unlink one of two links", ERR(unlink("f")));
	expect_val("remaining link has nlink 1", 1, l_nlink("h"));
	expect_content("remaining link keeps the data", "h", "one+two");

	/* symlink targets are stored verbatim */
	{
		static const char *const tg[] = { "/abs/path/to/x", "../rel/x", "dangling-nonexistent",
						  "a b\tc//d/./e/../", "." };
		for (size_t i = 0; i < sizeof tg / sizeof tg[0]; i++) {
			char nm[16], desc[160];
			snprintf(nm, sizeof nm, "s%zu", i);
			r = ERR(symlink(tg[i], nm));
			snprintf(desc, sizeof desc, "symlink target \"%s\" stored verbatim", tg[i]);
			if (!SETUP(r))
				continue;
			memset(buf, 0, sizeof buf);
			n = readlink(nm, buf, sizeof buf);
			check(n == (ssize_t)strlen(tg[i]) && memcmp(buf, tg[i], strlen(tg[i])) == 0, desc,
			      "expected \"%s\", got %zd bytes \"%.60s\"", tg[i], n, buf);
			snprintf(desc, sizeof desc, "lstat st_size of symlink to \"%s\" is its length", tg[i]);
			expect_val(desc, (long long)strlen(tg[i]), l_size(nm));
		}
	}
	memset(target, 'x', 1023);
	for (int i = 100; i < 1023; i += 100)
		target[i] = '/';
	target[1023] = 0;
	if (SETUP(ERR(symlink(target, "long")))) {
		memset(buf, 0, sizeof buf);
		n = readlink("long", buf, sizeof buf);
		check(n == 1023 && memcmp(buf, target, 1023) == 0, "1023-byte symlink target round trip",
		      "got %zd bytes%s", n, n == 1023 ? " with different content" : "");
	}
	n = readlink("s0", buf, 5);
	check(n == 5 && memcmp(buf, "/abs/", 5) == 0, "readlink with a small buffer truncates to its size",
	      "expected 5 bytes \"/abs/\", got %zd", n);
	EXPECT("readlink of a regular file -> EINVAL", ERR(readlink("h", buf, sizeof buf)), EINVAL);
	EXPECT("readlink of a directory -> EINVAL", ERR(readlink("d", buf, sizeof buf)), EINVAL);
	EXPECT("readlink of a missing name -> ENOENT", ERR(readlink("missing", buf, sizeof buf)), ENOENT);
	EXPECT("symlink onto an existing name -> EEXIST", ERR(symlink("x", "h")), EEXIST);
	expect_mode("symlink mode is 0777", 0777, l_mode("s0"));

	/* stat vs lstat */
	if (SETUP(ERR(symlink("h", "lh")))) {
		r = stat("lh", &s) ? errno : 0;
		r = r ? r : lstat("lh", &ls) ? errno : 0;
		if (SETUP(r)) {
			check(S_ISLNK(ls.st_mode) && S_ISREG(s.st_mode), "lstat sees the link, stat the target",
			      "lstat type %s, stat type %s", tname(ls.st_mode & S_IFMT), tname(s.st_mode & S_IFMT));
			expect_val("stat through a symlink gives the target's inode", l_ino("h"), (long long)s.st_ino);
			expect_val("stat through a symlink gives the target's size", 7, (long long)s.st_size);
		}
		expect_content("open follows a symlink", "lh", "one+two");
		EXPECT("O_NOFOLLOW on a symlink -> ELOOP", try_open("lh", O_RDONLY | O_NOFOLLOW, 0), ELOOP);
		EXPECT_OK("O_PATH|O_NOFOLLOW opens the link itself", try_open("lh", O_PATH | O_NOFOLLOW, 0));
		EXPECT_OK("lchown of a symlink by root", ERR(lchown("lh", 1001, 1002)));
		check(l_uid("lh") == 1001 && l_gid("lh") == 1002, "lchown changed the link's owner",
		      "expected 1001:1002, got %s:%s", vstr(l_uid("lh"), false), vstr(l_gid("lh"), false));
		check(l_uid("h") == 0 && l_gid("h") == 0, "lchown left the target's owner",
		      "expected 0:0, got %s:%s", vstr(l_uid("h"), false), vstr(l_gid("h"), false));
		EXPECT_OK("chown through a symlink", ERR(chown("lh", 1003, 1003)));
		check(l_uid("h") == 1003 && l_uid("lh") == 1001, "chown follows the symlink to its target",
		      "target uid %s, link uid %s", vstr(l_uid("h"), false), vstr(l_uid("lh"), false));
		EXPECT_OK("chmod through a symlink", ERR(chmod("lh", 0640)));
		expect_mode("chmod follows the symlink to its target", 0640, l_mode("h"));
		expect_mode("chmod through a symlink leaves the link's mode", 0777, l_mode("lh"));
	}
	EXPECT("stat of a dangling symlink -> ENOENT", ERR(stat("s2", &s)), ENOENT);
	EXPECT_OK("lstat of a dangling symlink", ERR(lstat("s2", &s)));
	if (SETUP(ERR(symlink("loop2", "loop1"))) && SETUP(ERR(symlink("loop1", "loop2"))) &&
	    SETUP(ERR(symlink("self", "self")))) {
		EXPECT("open through a symlink loop -> ELOOP", try_open("loop1", O_RDONLY, 0), ELOOP);
		EXPECT("stat of a self-referencing symlink -> ELOOP", ERR(stat("self", &s)), ELOOP);
	}
	if (SETUP(ERR(symlink("dtarget", "dl1")))) {
		EXPECT("O_CREAT|O_EXCL on a dangling symlink -> EEXIST",
		       try_open("dl1", O_CREAT | O_EXCL | O_WRONLY, 0644), EEXIST);
		EXPECT_OK("O_CREAT through a dangling symlink creates the target",
			  try_open("dl1", O_CREAT | O_WRONLY, 0644));
		expect_type("the symlink's target now exists", "dtarget", S_IFREG);
	}
	if (SETUP(ERR(symlink("d", "dirlink"))) && SETUP(mkfile("d/inner", 0644, 0, 0, "inner")))
		expect_content("path through a symlink to a directory", "dirlink/inner", "inner");
	EXPECT("O_CREAT|O_EXCL below a dangling symlink -> ENOENT",
	       try_open("s2/x", O_CREAT | O_EXCL | O_WRONLY, 0644), ENOENT);
}

/* ------------------------------------------------------------------ */
/* group: mknod / mkfifo                                               */

static volatile sig_atomic_t g_alarm;
static void on_alarm(int sig)
{
	(void)sig;
	g_alarm = 1;
}

static void g_mknod(void)
{
	struct stat s;
	char buf[64];
	int r, fd;

	if (!SETUP(ERR(mkfifo("fifo", 0666))))
		return;
	expect_type("mkfifo makes a fifo", "fifo", S_IFIFO);
	expect_mode("fifo mode", 0644, l_mode("fifo"));
	EXPECT("mkfifo on an existing name -> EEXIST", ERR(mkfifo("fifo", 0644)), EEXIST);
	SETUP(ERR(chmod("fifo", 0666)));
	{
		int cfd;
		pid_t pid = as_fork(&U1, &cfd);
		if (pid == 0) {
			int wfd;
			alarm(10);
			wfd = open("fifo", O_WRONLY);
			if (wfd < 0)
				as_return(cfd, errno);
			as_return(cfd, write_all(wfd, "through the fifo", 16));
		}
		alarm(10);
		fd = open("fifo", O_RDONLY);
		r = fd < 0 ? errno : 0;
		memset(buf, 0, sizeof buf);
		if (fd >= 0) {
			size_t got = 0;
			ssize_t n;
			while (got < sizeof buf - 1 && (n = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
				got += (size_t)n;
			close(fd);
		}
		alarm(0);
		EXPECT_OK("fifo: reader opens", r);
		EXPECT_OK("fifo: writer (uid 1001, another process) opens and writes", as_collect(pid, cfd));
		check(strcmp(buf, "through the fifo") == 0, "fifo: data passes from writer to reader",
		      "got \"%s\"", buf);
	}

	EXPECT_OK("mknod S_IFSOCK", ERR(mknod("sock", S_IFSOCK | 0644, 0)));
	expect_type("mknod S_IFSOCK makes a socket", "sock", S_IFSOCK);
	EXPECT_OK("mknod S_IFIFO", ERR(mknod("fifo2", S_IFIFO | 0600, 0)));
	expect_type("mknod S_IFIFO makes a fifo", "fifo2", S_IFIFO);
	EXPECT_OK("mknod with file type 0", ERR(mknod("reg0", 0644, 0)));
	expect_type("mknod with file type 0 makes a regular file", "reg0", S_IFREG);
	EXPECT_OK("mknod S_IFREG", ERR(mknod("reg", S_IFREG | 0644, 0)));
	expect_type("mknod S_IFREG makes a regular file", "reg", S_IFREG);
	EXPECT("mknod S_IFDIR -> EPERM", ERR(mknod("dirnod", S_IFDIR | 0755, 0)), EPERM, EINVAL);
	EXPECT("mknod on an existing name -> EEXIST", ERR(mknod("reg", S_IFREG | 0644, 0)), EEXIST);

	r = ERR(mknod("cdev", S_IFCHR | 0644, makedev(1, 3)));
	if (r == EPERM) {
		skip("char device node by root", "mknod S_IFCHR returned EPERM");
	} else if (EXPECT_OK("mknod S_IFCHR 1:3 by root", r) && SETUP(ERR(lstat("cdev", &s)))) {
		check(S_ISCHR(s.st_mode), "char device node has type S_IFCHR", "got %s", tname(s.st_mode & S_IFMT));
		check(major(s.st_rdev) == 1 && minor(s.st_rdev) == 3, "char device node st_rdev is 1:3",
		      "got %u:%u", major(s.st_rdev), minor(s.st_rdev));
	}
	r = ERR(mknod("bdev", S_IFBLK | 0600, makedev(259, 300)));
	if (r == EPERM) {
		skip("block device node by root", "mknod S_IFBLK returned EPERM");
	} else if (EXPECT_OK("mknod S_IFBLK 259:300 by root", r) && SETUP(ERR(lstat("bdev", &s)))) {
		check(S_ISBLK(s.st_mode), "block device node has type S_IFBLK", "got %s", tname(s.st_mode & S_IFMT));
		check(major(s.st_rdev) == 259 && minor(s.st_rdev) == 300, "block device node st_rdev is 259:300",
		      "got %u:%u", major(s.st_rdev), minor(s.st_rdev));
	}
	SETUP(ERR(chmod(".", 0777)));
	EXPECT("uid 1001 mknod of a char device -> EPERM",
	       AS(&U1, ERR(mknod("ucdev", S_IFCHR | 0644, makedev(1, 3)))), EPERM);
	r = AS(&U1, ERR(mknod("usock", S_IFSOCK | 0644, 0)));
	if (EXPECT_OK("uid 1001 mknod S_IFSOCK", r))
		expect_val("socket node made by uid 1001 has st_uid 1001", 1001, l_uid("usock"));

	/* a bound unix socket works */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int srv = socket(AF_UNIX, SOCK_STREAM, 0), cl = socket(AF_UNIX, SOCK_STREAM, 0), acc = -1;
		snprintf(sa.sun_path, sizeof sa.sun_path, "bound.sock");
		r = srv < 0 || cl < 0 ? errno : 0;
		if (!r)
			r = ERR(bind(srv, (struct sockaddr *)&sa, sizeof sa));
		EXPECT_OK("bind() of a unix socket creates its node", r);
		if (!r) {
			expect_type("bound unix socket node is S_IFSOCK", "bound.sock", S_IFSOCK);
			r = ERR(listen(srv, 1));
			if (!r)
				r = ERR(connect(cl, (struct sockaddr *)&sa, sizeof sa));
			if (!r)
				r = ERR(acc = accept(srv, NULL, NULL));
			if (!r)
				r = write(cl, "ping", 4) == 4 && read(acc, buf, 4) == 4 && memcmp(buf, "ping", 4) == 0
					    ? 0 : EIO;
			EXPECT_OK("connect through the socket node and pass data", r);
		}
		if (acc >= 0)
			close(acc);
		if (srv >= 0)
			close(srv);
		if (cl >= 0)
			close(cl);
	}
}

/* ------------------------------------------------------------------ */
/* group: truncate                                                     */

static bool all_zero(const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static void g_truncate(void)
{
	char buf[8192];
	size_t got = 0;
	int fd, r;

	if (!SETUP(mkfile("t", 0644, 0, 0, "abcdef")) || !SETUP(ERR(mkdir("d", 0755))))
		return;
	EXPECT_OK("truncate grows a file", ERR(truncate("t", 5000)));
	expect_val("grown size", 5000, l_size("t"));
	fd = open("t", O_RDWR);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	memset(buf, 'x', sizeof buf);
	r = pread_full(fd, buf, sizeof buf, 0, &got);
	check(r == 0 && got == 5000 && memcmp(buf, "abcdef", 6) == 0 && all_zero(buf + 6, 4994),
	      "growing keeps the data and fills with zeros", "read %s, %zu bytes", ename(r), got);
	EXPECT_OK("ftruncate shrinks", ERR(ftruncate(fd, 2)));
	expect_val("shrunk size (fstat/stat)", 2, l_size("t"));
	r = pread_full(fd, buf, sizeof buf, 0, &got);
	check(r == 0 && got == 2 && memcmp(buf, "ab", 2) == 0, "shrunk file reads its first bytes only",
	      "read %s, %zu bytes", ename(r), got);
	EXPECT_OK("ftruncate grows again", ERR(ftruncate(fd, 6)));
	memset(buf, 'x', sizeof buf);
	r = pread_full(fd, buf, sizeof buf, 0, &got);
	check(r == 0 && got == 6 && memcmp(buf, "ab\0\0\0\0", 6) == 0,
	      "shrink then grow reads zeros (old data not resurrected)", "read %s, %zu bytes", ename(r), got);
	EXPECT("ftruncate to a negative length -> EINVAL", ERR(ftruncate(fd, -1)), EINVAL);
	EXPECT("truncate to a negative length -> EINVAL", ERR(truncate("t", -1)), EINVAL);
	EXPECT_OK("truncate to 0", ERR(truncate("t", 0)));
	expect_val("truncated to 0", 0, l_size("t"));
	close(fd);
	EXPECT("truncate of a directory -> EISDIR", ERR(truncate("d", 0)), EISDIR);
	EXPECT("truncate of a missing file -> ENOENT", ERR(truncate("missing", 0)), ENOENT);
	fd = open("t", O_RDONLY);
	if (fd >= 0) {
		EXPECT("ftruncate on a read-only fd -> EINVAL or EBADF", ERR(ftruncate(fd, 0)), EINVAL, EBADF);
		close(fd);
	}
	fd = open("d", O_RDONLY);
	if (fd >= 0) {
		EXPECT("ftruncate on a directory fd -> EINVAL or EBADF", ERR(ftruncate(fd, 0)), EINVAL, EBADF, EISDIR);
		close(fd);
	}
	/* truncate by another user with write permission */
	if (SETUP(mkfile("w", 0666, 1001, 1001, "0123456789"))) {
		EXPECT_OK("uid 1002 truncates a 0666 file of uid 1001", AS(&U2, ERR(truncate("w", 4))));
		expect_content("truncate by another user took effect", "w", "0123");
	}
	/* unaligned sizes across page boundaries */
	fd = open("pg", O_CREAT | O_RDWR, 0644);
	if (SETUP(fd < 0 ? errno : 0)) {
		memset(buf, 'p', sizeof buf);
		SETUP(write_all(fd, buf, sizeof buf));
		EXPECT_OK("ftruncate to 4097 (mid page)", ERR(ftruncate(fd, 4097)));
		EXPECT_OK("ftruncate back to 8192", ERR(ftruncate(fd, 8192)));
		memset(buf, 'x', sizeof buf);
		r = pread_full(fd, buf, sizeof buf, 0, &got);
		check(r == 0 && got == 8192 && buf[4096] == 'p' && all_zero(buf + 4097, 8192 - 4097),
		      "tail of a page after truncate+grow is zero", "read %s, %zu bytes, byte 4097 = %d",
		      ename(r), got, got > 4097 ? buf[4097] : -1);
		close(fd);
	}
}

/* ------------------------------------------------------------------ */
/* group: timestamps                                                   */

static bool ts_gt(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

static bool ts_eq(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

struct tsnap {
	struct timespec a, m, c;
	int err;
};

static struct tsnap snap(const char *p)
{
	struct tsnap t;
	struct stat s;

	memset(&t, 0, sizeof t);
	if (lstat(p, &s)) {
		t.err = errno;
		return t;
	}
	t.a = s.st_atim;
	t.m = s.st_mtim;
	t.c = s.st_ctim;
	return t;
}

static int set_old(const char *p)
{
	struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };

	return ERR(utimensat(AT_FDCWD, p, old, AT_SYMLINK_NOFOLLOW));
}

#define TSF "%lld.%09ld"
#define TSA(t) (long long)(t).tv_sec, (t).tv_nsec

static void changed(const char *desc, struct timespec before, struct timespec after)
{
	check(ts_gt(after, before), desc, "expected later than " TSF ", got " TSF, TSA(before), TSA(after));
}

static void unchanged(const char *desc, struct timespec before, struct timespec after)
{
	check(ts_eq(after, before), desc, "expected " TSF ", got " TSF, TSA(before), TSA(after));
}

static void g_time(void)
{
	static const char *const files[] = { "w", "chm", "chw", "lnk", "ren", "unl", "tr", "xa", "rd" };
	static const char *const dirs[] = { "dl", "dr", "du", "dc", "dm" };
	struct tsnap f0[9], d0[5], t;
	struct timespec ts[2];
	char buf[8];
	time_t t0, t1;
	int fd, r;

	for (size_t i = 0; i < 9; i++)
		if (!SETUP(mkfile(files[i], 0644, 0, 0, "data")))
			return;
	for (size_t i = 0; i < 5; i++)
		if (!SETUP(mkdirx(dirs[i], 0755, 0, 0)))
			return;
	if (!SETUP(mkfile("dl/target", 0644, 0, 0, "x")) || !SETUP(mkfile("dr/a", 0644, 0, 0, "x")) ||
	    !SETUP(mkfile("du/a", 0644, 0, 0, "x")) || !SETUP(ERR(link("du/a", "du/b"))) ||
	    !SETUP(ERR(link("unl", "unl2"))))
		return;
	for (size_t i = 0; i < 9; i++)
		SETUP(set_old(files[i]));
	for (size_t i = 0; i < 5; i++)
		SETUP(set_old(dirs[i]));
	SETUP(set_old("du/a"));
	for (size_t i = 0; i < 9; i++)
		f0[i] = snap(files[i]);
	for (size_t i = 0; i < 5; i++)
		d0[i] = snap(dirs[i]);
	t = snap("du/a");
	msleep(30);

	/* one of each operation, then look */
	fd = open("w", O_WRONLY);
	r = fd < 0 ? errno : write_all(fd, "more", 4);
	if (fd >= 0)
		close(fd);
	SETUP(r);
	SETUP(ERR(chmod("chm", 0600)));
	SETUP(ERR(chown("chw", 1001, 1001)));
	SETUP(ERR(link("lnk", "dl/lnk2")));
	SETUP(ERR(rename("dr/a", "dr/b")));
	SETUP(ERR(rename("ren", "dr/ren")));
	SETUP(ERR(unlink("du/b")));
	SETUP(ERR(unlink("unl")));
	SETUP(ERR(truncate("tr", 1)));
	SETUP(ERR(setxattr("xa", "user.t", "v", 1, 0)));
	SETUP(mkfile("dc/new", 0644, 0, 0, NULL));
	SETUP(ERR(mkdir("dm/sub", 0755)));
	r = (int)slurp("rd", buf, sizeof buf);

	{
		struct tsnap w = snap("w"), chm = snap("chm"), chw = snap("chw"), lnk = snap("lnk");
		struct tsnap ren = snap("dr/ren"), unl = snap("unl2"), tr = snap("tr"), xa = snap("xa");
		struct tsnap rd = snap("rd"), dl = snap("dl"), dr = snap("dr"), du = snap("du");
		struct tsnap dc = snap("dc"), dm = snap("dm"), dua = snap("du/a");

		changed("write updates mtime", f0[0].m, w.m);
		changed("write updates ctime", f0[0].c, w.c);
		changed("chmod updates ctime", f0[1].c, chm.c);
		unchanged("chmod leaves mtime", f0[1].m, chm.m);
		changed("chown updates ctime", f0[2].c, chw.c);
		unchanged("chown leaves mtime", f0[2].m, chw.m);
		changed("link updates the file's ctime", f0[3].c, lnk.c);
		changed("link updates the directory's mtime", d0[0].m, dl.m);
		changed("link updates the directory's ctime", d0[0].c, dl.c);
		changed("rename within a directory updates its mtime", d0[1].m, dr.m);
		changed("rename within a directory updates its ctime", d0[1].c, dr.c);
		changed("rename updates the renamed file's ctime", f0[4].c, ren.c);
		unchanged("rename leaves the renamed file's mtime", f0[4].m, ren.m);
		changed("unlink updates the directory's mtime", d0[2].m, du.m);
		changed("unlink updates the directory's ctime", d0[2].c, du.c);
		changed("unlink updates the ctime of the remaining link", t.c, dua.c);
		changed("unlink of a link in the same dir updates the file's ctime", f0[5].c, unl.c);
		changed("truncate updates mtime", f0[6].m, tr.m);
		changed("truncate updates ctime", f0[6].c, tr.c);
		changed("setxattr updates ctime", f0[7].c, xa.c);
		unchanged("setxattr leaves mtime", f0[7].m, xa.m);
		unchanged("read leaves mtime", f0[8].m, rd.m);
		unchanged("read leaves ctime", f0[8].c, rd.c);
		changed("create updates the directory's mtime", d0[3].m, dc.m);
		changed("create updates the directory's ctime", d0[3].c, dc.c);
		changed("mkdir updates the parent's mtime", d0[4].m, dm.m);
		(void)r;
	}
	msleep(30);
	t = snap("dm");
	SETUP(ERR(rmdir("dm/sub")));
	changed("rmdir updates the parent's mtime", t.m, snap("dm").m);

	/* explicit nanosecond times */
	if (!SETUP(mkfile("ns", 0644, 0, 0, "ns")))
		return;
	ts[0] = (struct timespec){ 1234567890, 123456789 };
	ts[1] = (struct timespec){ 1500000000, 987654321 };
	EXPECT_OK("utimensat with nanosecond times", ERR(utimensat(AT_FDCWD, "ns", ts, 0)));
	t = snap("ns");
	unchanged("atime round trips with nanoseconds", ts[0], t.a);
	unchanged("mtime round trips with nanoseconds", ts[1], t.m);
	ts[0] = (struct timespec){ 4102444800LL, 500000000 };
	ts[1] = (struct timespec){ 4102444801LL, 1 };
	EXPECT_OK("utimensat with times after 2038", ERR(utimensat(AT_FDCWD, "ns", ts, 0)));
	t = snap("ns");
	unchanged("atime after 2038 round trips", ts[0], t.a);
	unchanged("mtime after 2038 round trips", ts[1], t.m);
	ts[0] = (struct timespec){ 0, UTIME_OMIT };
	ts[1] = (struct timespec){ 2000000000, 5 };
	EXPECT_OK("utimensat with UTIME_OMIT atime", ERR(utimensat(AT_FDCWD, "ns", ts, 0)));
	{
		struct tsnap u = snap("ns");
		unchanged("UTIME_OMIT leaves atime", t.a, u.a);
		unchanged("mtime set next to UTIME_OMIT", ts[1], u.m);
		t = u;
	}
	ts[0] = (struct timespec){ 0, UTIME_OMIT };
	ts[1] = (struct timespec){ 0, UTIME_NOW };
	t0 = time(NULL);
	EXPECT_OK("utimensat with UTIME_NOW mtime", ERR(utimensat(AT_FDCWD, "ns", ts, 0)));
	t1 = time(NULL);
	{
		struct tsnap u = snap("ns");
		check(u.m.tv_sec >= t0 - 1 && u.m.tv_sec <= t1 + 1, "UTIME_NOW sets mtime to the current time",
		      "expected %lld..%lld, got " TSF, (long long)t0, (long long)t1, TSA(u.m));
		unchanged("UTIME_NOW mtime with UTIME_OMIT atime leaves atime", t.a, u.a);
	}
	ts[0] = (struct timespec){ 0, UTIME_NOW };
	ts[1] = (struct timespec){ 0, UTIME_OMIT };
	t = snap("ns");
	t0 = time(NULL);
	EXPECT_OK("utimensat with UTIME_NOW atime", ERR(utimensat(AT_FDCWD, "ns", ts, 0)));
	{
		struct tsnap u = snap("ns");
		check(u.a.tv_sec >= t0 - 1 && u.a.tv_sec <= time(NULL) + 1, "UTIME_NOW sets atime to the current time",
		      "got " TSF, TSA(u.a));
		unchanged("UTIME_OMIT leaves mtime", t.m, u.m);
	}
	t = snap("ns");
	msleep(30);
	EXPECT_OK("utimensat(NULL)", ERR(utimensat(AT_FDCWD, "ns", NULL, 0)));
	changed("utimensat updates ctime", t.c, snap("ns").c);
	fd = open("ns", O_RDWR);
	if (fd >= 0) {
		ts[0] = (struct timespec){ 1111111111, 111 };
		ts[1] = (struct timespec){ 1222222222, 222 };
		EXPECT_OK("futimens", ERR(futimens(fd, ts)));
		close(fd);
		t = snap("ns");
		check(ts_eq(t.a, ts[0]) && ts_eq(t.m, ts[1]), "futimens times round trip",
		      "got atime " TSF " mtime " TSF, TSA(t.a), TSA(t.m));
	}
	if (SETUP(ERR(symlink("ns", "nsl")))) {
		ts[0] = (struct timespec){ 1300000000, 3 };
		ts[1] = (struct timespec){ 1300000000, 4 };
		t = snap("ns");
		EXPECT_OK("utimensat AT_SYMLINK_NOFOLLOW on a symlink",
			  ERR(utimensat(AT_FDCWD, "nsl", ts, AT_SYMLINK_NOFOLLOW)));
		unchanged("AT_SYMLINK_NOFOLLOW sets the link's mtime", ts[1], snap("nsl").m);
		unchanged("AT_SYMLINK_NOFOLLOW leaves the target's mtime", t.m, snap("ns").m);
	}
	/* mtime of a file written through mmap is not checked: tmpfs does
	 * not update it either until msync on all kernels. */
}

/* ------------------------------------------------------------------ */
/* group: readdir                                                      */

static unsigned char want_dtype(const char *name)
{
	switch (name[0]) {
	case 'f': return DT_REG;
	case 'd': return DT_DIR;
	case 'l': return DT_LNK;
	case 'p': return DT_FIFO;
	case 's': return DT_SOCK;
	default: return DT_UNKNOWN;
	}
}

static void g_readdir(void)
{
	struct entlist l = { 0 }, l2 = { 0 };
	char name[300], *buf;
	const char *dup;
	int r, first, miss, bad;
	size_t extra;

	/* mixed types */
	if (!SETUP(ERR(mkdir("mix", 0755))))
		return;
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "mix/f%d", i);
		SETUP(mkfile(name, 0644, 0, 0, NULL));
	}
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "mix/d%d", i);
		SETUP(ERR(mkdir(name, 0755)));
	}
	SETUP(ERR(symlink("f0", "mix/l0")));
	SETUP(ERR(mkfifo("mix/p0", 0644)));
	SETUP(ERR(mknod("mix/s0", S_IFSOCK | 0644, 0)));
	r = el_read("mix", &l);
	if (EXPECT_OK("readdir of a 17-entry directory", r)) {
		expect_val("\".\" listed exactly once", 1, (long long)el_count(&l, "."));
		expect_val("\"..\" listed exactly once", 1, (long long)el_count(&l, ".."));
		expect_val("number of entries (16 + . + ..)", 18, (long long)l.n);
		dup = el_dup(&l);
		check(!dup, "no name listed twice", "\"%s\" listed twice", dup ? dup : "");
		miss = el_missing(&l, "f", 10, &first);
		check(miss == 0, "every created file is listed", "%d missing, first f%d", miss, first);
		miss = el_missing(&l, "d", 3, &first);
		check(miss == 0, "every created directory is listed", "%d missing, first d%d", miss, first);
		bad = 0;
		name[0] = 0;
		for (size_t i = 0; i < l.n; i++) {
			unsigned char w = want_dtype(l.v[i].name);
			if (l.v[i].name[0] == '.')
				w = DT_DIR;
			if (l.v[i].type != w && !bad++)
				snprintf(name, sizeof name, "%s: d_type %u, expected %u", l.v[i].name, l.v[i].type, w);
		}
		check(bad == 0, "d_type is right for file, dir, symlink, fifo, socket", "%d wrong, first %s", bad, name);
		bad = 0;
		for (size_t i = 0; i < l.n; i++) {
			char p[300];
			if (!strcmp(l.v[i].name, ".."))
				continue;
			snprintf(p, sizeof p, "mix/%s", l.v[i].name);
			if ((long long)l.v[i].ino != l_ino(p) && !bad++)
				snprintf(name, sizeof name, "%s: d_ino %llu, st_ino %lld", l.v[i].name,
					 (unsigned long long)l.v[i].ino, l_ino(p));
		}
		check(bad == 0, "d_ino equals lstat st_ino", "%d differ, first %s", bad, name);
	}
	el_free(&l);
	if (SETUP(ERR(mkdir("empty", 0755)))) {
		r = el_read("empty", &l);
		check(r == 0 && l.n == 2 && el_count(&l, ".") == 1 && el_count(&l, "..") == 1,
		      "empty directory lists only \".\" and \"..\"", "readdir %s, %zu entries", ename(r), l.n);
		el_free(&l);
	}
	if (SETUP(mkfile("notdir", 0644, 0, 0, NULL)))
		EXPECT("opendir of a file -> ENOTDIR", try_opendir("notdir"), ENOTDIR);
	{
		int fd = open("notdir", O_RDONLY);
		char b[256];
		if (fd >= 0) {
			EXPECT("getdents64 on a file fd -> ENOTDIR", ERR(getdents64(fd, b, sizeof b)), ENOTDIR);
			close(fd);
		}
	}

	/* 1000 entries with names of varying length */
	if (!SETUP(ERR(mkdir("big", 0755))))
		return;
	for (int i = 0; i < 1000; i++) {
		int pad = (i * 37) % 200;
		snprintf(name, sizeof name, "big/%d", i);
		if (pad > 10) {
			size_t len = strlen(name);
			name[len] = '_';
			memset(name + len + 1, 'x', (size_t)pad);
			name[len + 1 + (size_t)pad] = 0;
		}
		if (!SETUP(mkfile(name, 0644, 0, 0, NULL)))
			return;
	}
	r = el_read("big", &l);
	if (EXPECT_OK("readdir of a 1000-entry directory", r)) {
		int seen = 0;
		for (size_t i = 0; i < l.n; i++)
			seen += l.v[i].name[0] != '.';
		expect_val("1000-entry directory: 1000 names listed", 1000, seen);
		dup = el_dup(&l);
		check(!dup, "1000-entry directory: no name listed twice", "\"%s\" listed twice", dup ? dup : "");
		/* names are "<n>" or "<n>_xxx": strtol stops at '_' */
		{
			char *seenv = calloc(1000, 1);
			miss = 0;
			for (size_t i = 0; seenv && i < l.n; i++) {
				long k = strtol(l.v[i].name, NULL, 10);
				if (l.v[i].name[0] != '.' && k >= 0 && k < 1000)
					seenv[k] = 1;
			}
			for (int k = 0; seenv && k < 1000; k++)
				miss += !seenv[k];
			free(seenv);
			expect_val("1000-entry directory: every created name listed", 0, miss);
		}
	}

	/* telldir / seekdir */
	{
		DIR *d = opendir("big");
		struct dirent *de;
		long pos[1100];
		size_t n = 0, k;
		if (d) {
			pos[0] = telldir(d);
			while (n < 1099 && (de = readdir(d))) {
				el_add(&l2, de->d_name, de->d_type, de->d_ino);
				pos[++n] = telldir(d);
			}
			/* resume from the middle */
			k = n / 2;
			seekdir(d, pos[k]);
			bad = 0;
			extra = 0;
			for (size_t i = k; (de = readdir(d)); i++) {
				if (i >= n)
					extra++;
				else if (strcmp(de->d_name, l2.v[i].name))
					bad++;
			}
			check(bad == 0 && extra == 0, "seekdir to a telldir position resumes with the same entries",
			      "%d differ, %zu extra", bad, extra);
			seekdir(d, pos[0]);
			de = readdir(d);
			check(de && strcmp(de->d_name, l2.v[0].name) == 0, "seekdir to the first telldir restarts",
			      "got \"%s\"", de ? de->d_name : "(end)");
			seekdir(d, pos[n - 1]);
			de = readdir(d);
			check(de && strcmp(de->d_name, l2.v[n - 1].name) == 0,
			      "seekdir to the last entry's position returns it", "got \"%s\"", de ? de->d_name : "(end)");
			closedir(d);
		}
		el_free(&l2);
	}
	el_free(&l);

	/* raw getdents64 with a small buffer and lseek to a d_off */
	buf = malloc(1024);
	if (!buf)
		return;
	{
		int fd = open("big", O_RDONLY | O_DIRECTORY);
		ssize_t n;
		off_t resume = -1;
		char next_name[256] = "";
		if (fd >= 0) {
			/* read two buffers, remember the d_off of the 10th entry */
			int cnt = 0;
			for (int round = 0; round < 2; round++) {
				n = getdents64(fd, buf, 1024);
				for (ssize_t off = 0; n > 0 && off < n;) {
					struct dirent64 *de = (struct dirent64 *)(void *)(buf + off);
					if (cnt == 10)
						resume = de->d_off;
					if (cnt == 11)
						snprintf(next_name, sizeof next_name, "%s", de->d_name);
					cnt++;
					off += de->d_reclen;
				}
			}
			if (resume >= 0 && next_name[0]) {
				lseek(fd, resume, SEEK_SET);
				n = getdents64(fd, buf, 1024);
				check(n > 0 && strcmp(((struct dirent64 *)(void *)buf)->d_name, next_name) == 0,
				      "lseek to an entry's d_off continues after it", "expected \"%s\", got \"%s\"",
				      next_name, n > 0 ? ((struct dirent64 *)(void *)buf)->d_name : "(end)");
			}
			close(fd);
		}
	}

	/* creating entries during iteration */
	if (SETUP(ERR(mkdir("grow", 0755)))) {
		for (int i = 0; i < 400; i++) {
			snprintf(name, sizeof name, "grow/old%d", i);
			SETUP(mkfile(name, 0644, 0, 0, NULL));
		}
		int fd = open("grow", O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			r = raw_read(fd, &l, 150, buf, 1024);
			for (int i = 0; i < 200; i++) {
				snprintf(name, sizeof name, "grow/new%d", i);
				SETUP(mkfile(name, 0644, 0, 0, NULL));
			}
			if (r == 0)
				r = raw_read(fd, &l, 0, buf, 1024);
			close(fd);
			check(r == -1, "readdir while creating entries completes", "got %s", ename(r));
			dup = el_dup(&l);
			check(!dup, "entries created during readdir: no name listed twice", "\"%s\" listed twice",
			      dup ? dup : "");
			miss = el_missing(&l, "old", 400, &first);
			check(miss == 0, "entries created during readdir: every old name listed",
			      "%d missing, first old%d", miss, first);
		}
		el_free(&l);
	}
	/* removing already-listed entries during iteration */
	if (SETUP(ERR(mkdir("shrink", 0755)))) {
		for (int i = 0; i < 400; i++) {
			snprintf(name, sizeof name, "shrink/e%d", i);
			SETUP(mkfile(name, 0644, 0, 0, NULL));
		}
		int fd = open("shrink", O_RDONLY | O_DIRECTORY);
		if (fd >= 0) {
			int removed = 0;
			r = raw_read(fd, &l, 150, buf, 1024);
			for (size_t i = 0; i < l.n && removed < 100; i++) {
				if (l.v[i].name[0] == '.')
					continue;
				snprintf(name, sizeof name, "shrink/%s", l.v[i].name);
				SETUP(ERR(unlink(name)));
				removed++;
			}
			if (r == 0)
				r = raw_read(fd, &l, 0, buf, 1024);
			close(fd);
			check(r == -1, "readdir while removing entries completes", "got %s", ename(r));
			dup = el_dup(&l);
			check(!dup, "removing listed entries during readdir: no name listed twice",
			      "\"%s\" listed twice", dup ? dup : "");
			miss = el_missing(&l, "e", 400, &first);
			check(miss == 0, "removing listed entries during readdir: no other entry skipped",
			      "%d missing, first e%d", miss, first);
		}
		el_free(&l);
	}
	/* rewinddir sees new entries */
	{
		DIR *d = opendir("mix");
		struct dirent *de;
		size_t before = 0, after = 0;
		bool late = false;
		if (d) {
			while ((de = readdir(d)))
				before++;
			SETUP(mkfile("mix/late", 0644, 0, 0, NULL));
			rewinddir(d);
			while ((de = readdir(d))) {
				after++;
				late |= strcmp(de->d_name, "late") == 0;
			}
			closedir(d);
			check(late && after == before + 1, "rewinddir restarts and sees a new entry",
			      "before %zu, after %zu, new entry %s", before, after, late ? "seen" : "missing");
		}
	}
	free(buf);
}

/* ------------------------------------------------------------------ */
/* group: xattr                                                        */

/* Is name in the listxattr buffer? */
static bool in_list(const char *list, ssize_t n, const char *name)
{
	for (ssize_t off = 0; off < n; off += (ssize_t)strlen(list + off) + 1)
		if (strcmp(list + off, name) == 0)
			return true;
	return false;
}

static void g_xattr(void)
{
	char buf[512], list[4096], big[300];
	unsigned char *val, *rd;
	ssize_t n, n2;
	int fd;

	if (!SETUP(mkfile("f", 0644, 1001, 1001, "x")) || !SETUP(ERR(mkdir("d", 0755))))
		return;
	EXPECT_OK("setxattr user.test", ERR(setxattr("f", "user.test", "value", 5, 0)));
	memset(buf, 0, sizeof buf);
	n = getxattr("f", "user.test", buf, sizeof buf);
	check(n == 5 && memcmp(buf, "value", 5) == 0, "getxattr returns the value",
	      "got %zd \"%.20s\" (%s)", n, buf, n < 0 ? ename(errno) : "");
	n = getxattr("f", "user.test", NULL, 0);
	expect_val("getxattr with size 0 returns the value's size", 5, n < 0 ? -errno : n);
	EXPECT("getxattr into a too small buffer -> ERANGE", ERR(getxattr("f", "user.test", buf, 2)), ERANGE);
	EXPECT("getxattr of a missing name -> ENODATA", ERR(getxattr("f", "user.missing", buf, sizeof buf)), ENODATA);
	EXPECT("XATTR_CREATE on an existing name -> EEXIST",
	       ERR(setxattr("f", "user.test", "v2", 2, XATTR_CREATE)), EEXIST);
	EXPECT("XATTR_REPLACE on a missing name -> ENODATA",
	       ERR(setxattr("f", "user.nope", "v2", 2, XATTR_REPLACE)), ENODATA);
	EXPECT_OK("XATTR_REPLACE on an existing name", ERR(setxattr("f", "user.test", "repl", 4, XATTR_REPLACE)));
	EXPECT_OK("XATTR_CREATE on a new name", ERR(setxattr("f", "user.second", "2", 1, XATTR_CREATE)));
	n = getxattr("f", "user.test", buf, sizeof buf);
	check(n == 4 && memcmp(buf, "repl", 4) == 0, "replaced value reads back", "got %zd", n);
	EXPECT_OK("setxattr with an empty value", ERR(setxattr("f", "user.empty", "", 0, 0)));
	n = getxattr("f", "user.empty", buf, sizeof buf);
	expect_val("empty value has size 0", 0, n < 0 ? -errno : n);
	{
		static const char bin[8] = { 0, 1, 2, 0, (char)0xff, 0, 'z', 0 };
		EXPECT_OK("setxattr with binary data", ERR(setxattr("f", "user.bin", bin, 8, 0)));
		n = getxattr("f", "user.bin", buf, sizeof buf);
		check(n == 8 && memcmp(buf, bin, 8) == 0, "binary value with NUL bytes round trips", "got %zd bytes", n);
	}

	n = listxattr("f", list, sizeof list);
	check(n > 0 && in_list(list, n, "user.test") && in_list(list, n, "user.second") &&
	      in_list(list, n, "user.empty") && in_list(list, n, "user.bin"),
	      "listxattr names every user.* attribute set", "got %zd bytes", n);
	n2 = listxattr("f", NULL, 0);
	if (n2 < 0)
		n2 = -errno;
	expect_val("listxattr with size 0 returns the list's size", n, n2);
	EXPECT("listxattr into a too small buffer -> ERANGE", ERR(listxattr("f", list, 3)), ERANGE);

	EXPECT_OK("removexattr", ERR(removexattr("f", "user.second")));
	EXPECT("getxattr after removexattr -> ENODATA", ERR(getxattr("f", "user.second", buf, sizeof buf)), ENODATA);
	n = listxattr("f", list, sizeof list);
	check(n > 0 && !in_list(list, n, "user.second"), "removed name is no longer listed", "got %zd", n);
	EXPECT("removexattr of a missing name -> ENODATA", ERR(removexattr("f", "user.second")), ENODATA);

	/* 64 KiB value */
	val = malloc(65536);
	rd = malloc(65536 + 16);
	if (val && rd) {
		fill_pattern(val, 65536, 0, 0x5a);
		EXPECT_OK("setxattr with a 64 KiB value", ERR(setxattr("f", "user.big", val, 65536, 0)));
		n = getxattr("f", "user.big", NULL, 0);
		expect_val("size of the 64 KiB value", 65536, n < 0 ? -errno : n);
		n = getxattr("f", "user.big", rd, 65536 + 16);
		check(n == 65536 && memcmp(rd, val, 65536) == 0, "64 KiB value round trips", "got %zd (%s)", n,
		      n < 0 ? ename(errno) : "");
		EXPECT("value larger than 64 KiB -> E2BIG", ERR(setxattr("f", "user.huge", rd, 65537, 0)), E2BIG);
		SETUP(ERR(removexattr("f", "user.big")));
	}
	free(val);
	free(rd);
	memcpy(big, "user.", 5);
	memset(big + 5, 'n', 251);
	big[256] = 0;
	EXPECT("attribute name longer than 255 bytes -> ERANGE", ERR(setxattr("f", big, "v", 1, 0)), ERANGE);
	big[255] = 0;
	EXPECT_OK("attribute name of 255 bytes", ERR(setxattr("f", big, "v", 1, 0)));
	n = getxattr("f", big, buf, sizeof buf);
	expect_val("attribute with a 255-byte name reads back", 1, n < 0 ? -errno : n);
	EXPECT("unknown namespace -> EOPNOTSUPP", ERR(setxattr("f", "bogus.name", "v", 1, 0)), EOPNOTSUPP);

	/* directories, symlinks, fds */
	EXPECT_OK("setxattr on a directory", ERR(setxattr("d", "user.dir", "dv", 2, 0)));
	n = getxattr("d", "user.dir", buf, sizeof buf);
	check(n == 2 && memcmp(buf, "dv", 2) == 0, "directory xattr reads back", "got %zd", n);
	if (SETUP(ERR(symlink("f", "l")))) {
		EXPECT("user.* xattr on a symlink itself -> EPERM", ERR(lsetxattr("l", "user.x", "v", 1, 0)), EPERM);
		n = getxattr("l", "user.test", buf, sizeof buf);
		check(n == 4, "getxattr follows a symlink", "got %zd (%s)", n, n < 0 ? ename(errno) : "");
	}
	fd = open("f", O_RDONLY);
	if (fd >= 0) {
		EXPECT_OK("fsetxattr", ERR(fsetxattr(fd, "user.fd", "fdv", 3, 0)));
		n = fgetxattr(fd, "user.fd", buf, sizeof buf);
		check(n == 3 && memcmp(buf, "fdv", 3) == 0, "fgetxattr reads it back", "got %zd", n);
		n = flistxattr(fd, list, sizeof list);
		check(n > 0 && in_list(list, n, "user.fd"), "flistxattr lists it", "got %zd", n);
		EXPECT_OK("fremovexattr", ERR(fremovexattr(fd, "user.fd")));
		close(fd);
	}

	/* permissions: user.* follows the file's mode */
	EXPECT("uid 1002 setxattr on a 0644 file of uid 1001 -> EACCES",
	       AS(&U2, ERR(setxattr("f", "user.other", "v", 1, 0))), EACCES);
	EXPECT_OK("uid 1002 getxattr on a 0644 file of uid 1001",
		  AS(&U2, ERR(getxattr("f", "user.test", NULL, 0))));
	EXPECT_OK("owner setxattr", AS(&U1, ERR(setxattr("f", "user.owner", "o", 1, 0))));
	if (SETUP(mkfile("ww", 0666, 1001, 1001, NULL)) && SETUP(mkfile("nr", 0600, 1001, 1001, NULL))) {
		EXPECT_OK("uid 1002 setxattr on a 0666 file", AS(&U2, ERR(setxattr("ww", "user.o", "v", 1, 0))));
		SETUP(ERR(setxattr("nr", "user.secret", "s", 1, 0)));
		EXPECT("uid 1002 getxattr on a 0600 file -> EACCES",
		       AS(&U2, ERR(getxattr("nr", "user.secret", NULL, 0))), EACCES);
		EXPECT_OK("owner reads its 0600 file's xattr", AS(&U1, ERR(getxattr("nr", "user.secret", NULL, 0))));
	}
	if (SETUP(mkfile("ro", 0444, 1001, 1001, NULL)))
		EXPECT("owner setxattr on its 0444 file -> EACCES",
		       AS(&U1, ERR(setxattr("ro", "user.o", "v", 1, 0))), EACCES);
}

/* ------------------------------------------------------------------ */
/* group: hidden-xattr (zcfs only)                                     */

static int c_hx_set(const char *p, int flags)
{
	return ERR(lsetxattr(p, OVERRIDE_XATTR, "0:0:4755:file", 13, flags));
}

static int c_hx_get(const char *p)
{
	char b[128];

	return ERR(lgetxattr(p, OVERRIDE_XATTR, b, sizeof b));
}

static bool listed_hidden(const char *p, ssize_t *len, int *err)
{
	char list[4096];
	ssize_t n = llistxattr(p, list, sizeof list);

	*err = n < 0 ? errno : 0;
	*len = n;
	return n > 0 && in_list(list, n, OVERRIDE_XATTR);
}

static void g_hidden_xattr(void)
{
	static const char *const objs[] = { "hf", "hd", "hl", "hp", "." };
	struct stat before, after;
	ssize_t n, n0;
	int r, e;

	if (!g_zcfs) {
		skip("ownership record is hidden from clients", "needs --zcfs (only meaningful on a zcfs mount)");
		return;
	}
	if (!SETUP(AS(&U1, put("hf", "hidden"))) || !SETUP(AS(&U1, ERR(mkdir("hd", 0755)))) ||
	    !SETUP(AS(&U1, ERR(symlink("hf", "hl")))) || !SETUP(AS(&U1, ERR(mkfifo("hp", 0644)))))
		return;
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) {
		char desc[160];
		bool hidden = !listed_hidden(objs[i], &n, &e);
		snprintf(desc, sizeof desc, "listxattr of %s does not show " OVERRIDE_XATTR,
			 objs[i][0] == '.' ? "the mount root" : tname(l_type(objs[i])));
		check(hidden && (e == 0 || e == ENOTSUP), desc, "listxattr %s, %s", ename(e),
		      hidden ? "not listed" : "listed");
		snprintf(desc, sizeof desc, "getxattr " OVERRIDE_XATTR " of %s by root fails",
			 objs[i][0] == '.' ? "the mount root" : tname(l_type(objs[i])));
		EXPECT(desc, c_hx_get(objs[i]), EPERM, ENODATA);
	}
	n0 = listxattr("hf", NULL, 0);
	SETUP(ERR(setxattr("hf", "user.visible", "v", 1, 0)));
	n = listxattr("hf", NULL, 0);
	expect_val("listxattr size counts only visible names", (n0 < 0 ? 0 : n0) + (long long)sizeof "user.visible",
		   n < 0 ? -errno : n);
	{
		char list[4096];
		ssize_t m = listxattr("hf", list, sizeof list);
		check(m > 0 && in_list(list, m, "user.visible") && !in_list(list, m, OVERRIDE_XATTR),
		      "ordinary user.* xattr listed next to the hidden one", "got %zd", m);
		expect_val("listxattr size query matches the list", m, n);
	}
	EXPECT("getxattr " OVERRIDE_XATTR " by the owner (uid 1001) fails", AS(&U1, c_hx_get("hf")), EPERM, ENODATA);

	if (!SETUP(ERR(lstat("hf", &before))))
		return;
	EXPECT("setxattr " OVERRIDE_XATTR " by root is refused", c_hx_set("hf", 0), EPERM, ENODATA);
	EXPECT("setxattr " OVERRIDE_XATTR " by the owner is refused", AS(&U1, c_hx_set("hf", 0)), EPERM, ENODATA);
	EXPECT("setxattr " OVERRIDE_XATTR " XATTR_CREATE by the owner is refused",
	       AS(&U1, c_hx_set("hf", XATTR_CREATE)), EPERM, ENODATA);
	EXPECT("setxattr " OVERRIDE_XATTR " XATTR_REPLACE by root is refused",
	       c_hx_set("hf", XATTR_REPLACE), EPERM, ENODATA);
	EXPECT("setxattr " OVERRIDE_XATTR " on a directory is refused", c_hx_set("hd", 0), EPERM, ENODATA);
	EXPECT("removexattr " OVERRIDE_XATTR " by root is refused", ERR(removexattr("hf", OVERRIDE_XATTR)),
	       EPERM, ENODATA);
	EXPECT("removexattr " OVERRIDE_XATTR " by the owner is refused",
	       AS(&U1, ERR(removexattr("hf", OVERRIDE_XATTR))), EPERM, ENODATA);
	r = ERR(lstat("hf", &after));
	check(r == 0 && after.st_uid == before.st_uid && after.st_gid == before.st_gid &&
	      after.st_mode == before.st_mode,
	      "refused writes left owner and mode unchanged", "before %u:%u 0%o, after %u:%u 0%o (%s)",
	      before.st_uid, before.st_gid, before.st_mode, after.st_uid, after.st_gid, after.st_mode, ename(r));
	check(after.st_uid == 1001 && after.st_gid == 1001 && (after.st_mode & 07777) == 0644,
	      "file made by uid 1001 still shows 1001:1001 0644", "got %u:%u 0%o", after.st_uid, after.st_gid,
	      after.st_mode & 07777);
	expect_content("file data unaffected", "hf", "hidden");
	/* a remount would show a forged record; so would the inode cache after
	 * eviction: drop caches and look again */
	{
		int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "2", 1) != 1)
				(void)0;
			close(fd);
		}
		check(l_uid("hf") == 1001 && l_mode("hf") == 0644, "owner and mode unchanged after dropping caches",
		      "got uid %s mode %s", vstr(l_uid("hf"), false), vstr(l_mode("hf"), true));
	}
}

/* ------------------------------------------------------------------ */
/* group: rw (read/write basics)                                       */

static void g_rw(void)
{
	const size_t big = (3u << 20) + 17;
	unsigned char *w = malloc(big), *r = malloc(big + 100);
	char a[16] = "", b[16] = "", c[16] = "";
	struct iovec iov[3];
	size_t got = 0;
	ssize_t n;
	int fd, fd2, e;

	fd = open("f", O_CREAT | O_RDWR, 0644);
	if (!w || !r || !SETUP(fd < 0 ? errno : 0))
		goto out;
	fill_pattern(w, big, 4095, 0x21);
	n = pwrite(fd, w, big, 4095);
	expect_val("one 3 MiB + 17 byte pwrite at an unaligned offset", (long long)big, n < 0 ? -errno : n);
	n = pread(fd, r, big + 100, 4095);
	check(n == (ssize_t)big && memcmp(w, r, big) == 0, "one pread returns all of it",
	      "got %zd bytes%s", n, n == (ssize_t)big ? " with different content" : "");
	memset(r, 1, 4095);
	e = pread_full(fd, r, 4095, 0, &got);
	check(e == 0 && got == 4095 && all_zero((char *)r, 4095), "gap before the first write reads zeros",
	      "read %s, %zu bytes", ename(e), got);
	n = pread(fd, r, 100, (off_t)(4095 + big));
	expect_val("read at end of file returns 0", 0, n < 0 ? -errno : n);
	n = pread(fd, r, 100, (off_t)(4095 + big - 10));
	expect_val("read across end of file is short", 10, n < 0 ? -errno : n);
	n = pwrite(fd, "x", 1, -1);
	expect_val("pwrite at a negative offset -> EINVAL", -EINVAL, n < 0 ? -errno : n);
	n = write(fd, "", 0);
	expect_val("write of 0 bytes returns 0", 0, n < 0 ? -errno : n);
	expect_val("write of 0 bytes leaves the size", (long long)(4095 + big), l_size("f"));

	/* file offset semantics */
	SETUP(ERR(ftruncate(fd, 0)));
	lseek(fd, 0, SEEK_SET);
	SETUP(write_all(fd, "0123456789", 10));
	expect_val("write advances the offset", 10, lseek(fd, 0, SEEK_CUR));
	fd2 = dup(fd);
	lseek(fd, 2, SEEK_SET);
	n = read(fd2, a, 3);
	check(n == 3 && memcmp(a, "234", 3) == 0, "dup'd fds share the offset", "got %zd \"%.3s\"", n, a);
	close(fd2);
	fd2 = open("f", O_RDWR);
	if (SETUP(fd2 < 0 ? errno : 0)) {
		n = read(fd2, b, 3);
		check(n == 3 && memcmp(b, "012", 3) == 0, "a second open has its own offset", "got %zd \"%.3s\"", n, b);
		SETUP(ERR(pwrite(fd, "ABC", 3, 5)));
		n = pread(fd2, c, 5, 4);
		check(n == 5 && memcmp(c, "4ABC8", 5) == 0, "a write through one fd is seen through another at once",
		      "got %zd \"%.5s\"", n, c);
		close(fd2);
	}
	/* vectored I/O */
	iov[0] = (struct iovec){ "one-", 4 };
	iov[1] = (struct iovec){ "two-", 4 };
	iov[2] = (struct iovec){ "three", 5 };
	n = pwritev(fd, iov, 3, 100);
	expect_val("pwritev of 3 buffers", 13, n < 0 ? -errno : n);
	memset(a, 0, sizeof a);
	memset(b, 0, sizeof b);
	memset(c, 0, sizeof c);
	iov[0] = (struct iovec){ a, 2 };
	iov[1] = (struct iovec){ b, 6 };
	iov[2] = (struct iovec){ c, 10 };
	n = preadv(fd, iov, 3, 100);
	check(n == 13 && !strcmp(a, "on") && !strcmp(b, "e-two-") && !strcmp(c, "three"), "preadv scatters the data",
	      "got %zd \"%s\" \"%s\" \"%s\"", n, a, b, c);
	close(fd);

	fd = open("f", O_RDONLY);
	if (fd >= 0) {
		EXPECT("write on a read-only fd -> EBADF", ERR(write(fd, "x", 1)), EBADF);
		close(fd);
	}
	fd = open("f", O_WRONLY);
	if (fd >= 0) {
		EXPECT("read on a write-only fd -> EBADF", ERR(read(fd, a, 1)), EBADF);
		close(fd);
	}
	fd = open(".", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		EXPECT("read on a directory fd -> EISDIR", ERR(read(fd, a, 1)), EISDIR);
		close(fd);
	}
	/* a file written by one user and read by another */
	if (SETUP(AS(&U1, put("byu1", "written by 1001"))) && SETUP(ERR(chmod("byu1", 0644))))
		EXPECT_OK("uid 1002 reads uid 1001's 0644 file", AS(&U2, try_open("byu1", O_RDONLY, 0)));
	expect_content("data written by uid 1001 reads back as root", "byu1", "written by 1001");
out:
	free(w);
	free(r);
}

/* ------------------------------------------------------------------ */
/* group: persist (attributes survive the kernel forgetting the inodes) */

struct pobj {
	const char *name;
	struct stat st;
	int err;
};

static void g_persist(void)
{
	static const char *const names[] = { "file", "dir", "fifo", "sock", "link", "suid", "cdev", "bdev",
					     "hl1", "hl2", "dir/sub", "dir/sub/deep" };
	struct pobj o[sizeof names / sizeof names[0]];
	size_t n = sizeof names / sizeof names[0];
	int fd, r, devs_ok;

	SETUP(ERR(chmod(".", 0777)));
	if (!SETUP(AS(&U1, put("file", "persistent data"))) || !SETUP(AS(&U1, ERR(mkdir("dir", 02750)))) ||
	    !SETUP(AS(&U1, ERR(mkfifo("fifo", 0604)))) || !SETUP(AS(&U1, ERR(mknod("sock", S_IFSOCK | 0600, 0)))) ||
	    !SETUP(AS(&U1, ERR(symlink("file", "link")))) || !SETUP(mkfile("suid", 04710, 1003, 2001, "s")) ||
	    !SETUP(AS(&U2, put("hl1", "linked"))) || !SETUP(AS(&U2, ERR(link("hl1", "hl2")))) ||
	    !SETUP(ERR(chown("dir", 1001, 2001))) || !SETUP(ERR(chmod("dir", 02750))) || !SETUP(AS(&U1, ERR(mkdir("dir/sub", 0700)))) ||
	    !SETUP(AS(&U1, put("dir/sub/deep", "deep"))))
		return;
	SETUP(ERR(chmod("file", 0640)));
	r = ERR(mknod("cdev", S_IFCHR | 0620, makedev(1, 3)));
	devs_ok = r == 0;
	if (r == 0)
		r = ERR(mknod("bdev", S_IFBLK | 0600, makedev(259, 300)));
	if (r == 0)
		r = ERR(chown("cdev", 1001, 2001));
	if (r == EPERM)
		skip("device nodes survive re-lookup", "mknod returned EPERM");
	else
		SETUP(r);
	for (size_t i = 0; i < n; i++) {
		o[i].name = names[i];
		o[i].err = lstat(names[i], &o[i].st) ? errno : 0;
	}
	/* forget every dentry and inode not in use (FUSE sends FORGETs) */
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "2", 1) != 1) {
		skip("attributes after dropping caches", "cannot write /proc/sys/vm/drop_caches");
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	for (size_t i = 0; i < n; i++) {
		struct stat s;
		char desc[160];
		int e;
		if (o[i].err || (!devs_ok && (!strcmp(names[i], "cdev") || !strcmp(names[i], "bdev"))))
			continue;
		e = lstat(names[i], &s) ? errno : 0;
		snprintf(desc, sizeof desc, "%s (%s): type, mode, owner, rdev, inode, nlink, size unchanged after drop_caches",
			 names[i], tname(o[i].st.st_mode & S_IFMT));
		check(e == 0 && s.st_mode == o[i].st.st_mode && s.st_uid == o[i].st.st_uid &&
		      s.st_gid == o[i].st.st_gid && s.st_rdev == o[i].st.st_rdev && s.st_ino == o[i].st.st_ino &&
		      s.st_nlink == o[i].st.st_nlink && s.st_size == o[i].st.st_size,
		      desc, "before 0%o %u:%u rdev %u:%u ino %llu nlink %lu size %lld; after (%s) 0%o %u:%u rdev %u:%u ino %llu nlink %lu size %lld",
		      o[i].st.st_mode, o[i].st.st_uid, o[i].st.st_gid, major(o[i].st.st_rdev), minor(o[i].st.st_rdev),
		      (unsigned long long)o[i].st.st_ino, (unsigned long)o[i].st.st_nlink, (long long)o[i].st.st_size,
		      ename(e), s.st_mode, s.st_uid, s.st_gid, major(s.st_rdev), minor(s.st_rdev),
		      (unsigned long long)s.st_ino, (unsigned long)s.st_nlink, (long long)s.st_size);
	}
	check(o[8].err == 0 && l_ino("hl1") == l_ino("hl2"), "hard links still share one inode after drop_caches",
	      "hl1 %lld, hl2 %lld", l_ino("hl1"), l_ino("hl2"));
	expect_content("file data after drop_caches", "file", "persistent data");
	expect_content("file data through a symlink after drop_caches", "link", "persistent data");
	expect_content("file data below a set-gid dir after drop_caches", "dir/sub/deep", "deep");
	expect_val("file two levels below a set-gid dir of group 2001 has gid 2001", 2001, l_gid("dir/sub/deep"));
	expect_mode("subdir of the set-gid dir kept S_ISGID", 02700, l_mode("dir/sub"));
	EXPECT("permissions still enforced after drop_caches (uid 1002 reads a 0640 file of 1001)",
	       AS(&U2, try_open("file", O_RDONLY, 0)), EACCES);
	EXPECT("uid 1002 searches uid 1001's 0700 dir after drop_caches -> EACCES",
	       AS(&U2, try_open("dir/sub/deep", O_RDONLY, 0)), EACCES);
}

/* ------------------------------------------------------------------ */
/* group: statfs                                                       */

static void g_statfs(void)
{
	struct statvfs a, b, c;
	unsigned char *blk;
	int fd, r;

	r = ERR(statvfs(".", &a));
	if (!EXPECT_OK("statvfs", r))
		return;
	check(a.f_bsize > 0 && a.f_frsize > 0, "block sizes are positive", "f_bsize %lu f_frsize %lu",
	      a.f_bsize, a.f_frsize);
	check(a.f_blocks > 0 && a.f_bfree <= a.f_blocks && a.f_bavail <= a.f_bfree,
	      "0 < f_blocks, f_bavail <= f_bfree <= f_blocks", "blocks %llu free %llu avail %llu",
	      (unsigned long long)a.f_blocks, (unsigned long long)a.f_bfree, (unsigned long long)a.f_bavail);
	check(a.f_namemax >= 255, "f_namemax is at least 255", "got %lu", a.f_namemax);
	fd = open(".", O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		r = ERR(fstatvfs(fd, &b));
		check(r == 0 && b.f_blocks == a.f_blocks && b.f_bsize == a.f_bsize, "fstatvfs agrees with statvfs",
		      "fstatvfs %s, blocks %llu vs %llu", ename(r), (unsigned long long)b.f_blocks,
		      (unsigned long long)a.f_blocks);
		close(fd);
	}
	/* writing 8 MiB lowers the free count */
	blk = malloc(1 << 20);
	fd = open("fill", O_CREAT | O_RDWR, 0644);
	if (blk && fd >= 0) {
		memset(blk, 0x77, 1 << 20);
		r = 0;
		for (int i = 0; i < 8 && !r; i++)
			r = write_all(fd, blk, 1 << 20);
		if (!r)
			r = ERR(fsync(fd));
		if (SETUP(r) && SETUP(ERR(statvfs(".", &c)))) {
			unsigned long long used = (a.f_bfree - c.f_bfree) * a.f_frsize;
			check(c.f_bfree < a.f_bfree && used >= (4u << 20), "writing 8 MiB lowers f_bfree",
			      "free blocks %llu -> %llu", (unsigned long long)a.f_bfree, (unsigned long long)c.f_bfree);
		}
	}
	if (fd >= 0) {
		close(fd);
		unlink("fill");
	}
	free(blk);
}

/* ------------------------------------------------------------------ */
/* group: sync                                                         */

static void g_sync(void)
{
	int fd, dfd;

	fd = open("f", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	SETUP(write_all(fd, "sync me", 7));
	EXPECT_OK("fsync of a written file", ERR(fsync(fd)));
	EXPECT_OK("fdatasync of a written file", ERR(fdatasync(fd)));
	EXPECT_OK("syncfs", ERR(syncfs(fd)));
	EXPECT_OK("sync_file_range", ERR(sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE |
						      SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER)));
	close(fd);
	fd = open("f", O_RDONLY);
	if (fd >= 0) {
		EXPECT_OK("fsync of a read-only fd", ERR(fsync(fd)));
		close(fd);
	}
	dfd = open(".", O_RDONLY | O_DIRECTORY);
	if (dfd >= 0) {
		EXPECT_OK("fsync of a directory", ERR(fsync(dfd)));
		EXPECT_OK("fdatasync of a directory", ERR(fdatasync(dfd)));
		close(dfd);
	}
	expect_content("data intact after syncs", "f", "sync me");
	fd = open("f", O_WRONLY | O_DSYNC);
	if (fd >= 0) {
		EXPECT_OK("O_DSYNC write", ERR(pwrite(fd, "SYNC", 4, 0)));
		close(fd);
		expect_content("O_DSYNC data reads back", "f", "SYNC me");
	}
	fd = open("f", O_WRONLY | O_SYNC);
	if (fd >= 0) {
		EXPECT_OK("O_SYNC write", ERR(pwrite(fd, "sync", 4, 0)));
		close(fd);
		expect_content("O_SYNC data reads back", "f", "sync me");
	}
}

/* ------------------------------------------------------------------ */
/* group: fallocate                                                    */

static int region_is(int fd, off_t off, size_t len, int byte, off_t *bad)
{
	unsigned char b[65536];
	size_t done = 0;

	while (done < len) {
		size_t chunk = len - done < sizeof b ? len - done : sizeof b, got = 0;
		int e = pread_full(fd, b, chunk, off + (off_t)done, &got);
		if (e)
			return e;
		if (got != chunk) {
			*bad = off + (off_t)done + (off_t)got;
			return EIO;
		}
		for (size_t i = 0; i < chunk; i++)
			if (b[i] != (unsigned char)byte) {
				*bad = off + (off_t)(done + i);
				return EIO;
			}
		done += chunk;
	}
	return 0;
}

static void falloc_region(const char *desc, int fd, off_t off, size_t len, int byte)
{
	off_t bad = -1;
	int e = region_is(fd, off, len, byte, &bad);

	check(e == 0, desc, "%s at offset %lld", ename(e), (long long)bad);
}

static void g_fallocate(void)
{
	const off_t M = 1 << 20;
	unsigned char *blk;
	struct stat s, s2;
	int fd, r;

	fd = open("fa", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	r = ERR(fallocate(fd, 0, 0, M));
	if (r == EOPNOTSUPP) {
		skip("fallocate mode 0", "EOPNOTSUPP");
	} else if (EXPECT_OK("fallocate mode 0 of 1 MiB", r)) {
		r = ERR(fstat(fd, &s));
		check(r == 0 && s.st_size == M, "fallocate mode 0 sets the size", "got %lld", (long long)s.st_size);
		check(r == 0 && s.st_blocks * 512 >= M, "fallocate mode 0 allocates blocks", "st_blocks %lld",
		      (long long)s.st_blocks);
		falloc_region("fallocated range reads zeros", fd, 0, (size_t)M, 0);
		r = ERR(fallocate(fd, 0, 2 * M, M));
		EXPECT_OK("fallocate mode 0 beyond the end", r);
		expect_val("fallocate beyond the end extends the size", 3 * M, fstat(fd, &s) ? -errno : s.st_size);
	}
	close(fd);

	fd = open("fk", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	SETUP(write_all(fd, "head", 4));
	fstat(fd, &s);
	r = ERR(fallocate(fd, FALLOC_FL_KEEP_SIZE, M, M));
	if (r == EOPNOTSUPP) {
		skip("fallocate KEEP_SIZE", "EOPNOTSUPP");
	} else if (EXPECT_OK("fallocate KEEP_SIZE", r)) {
		r = ERR(fstat(fd, &s2));
		check(r == 0 && s2.st_size == 4, "KEEP_SIZE leaves the size", "got %lld", (long long)s2.st_size);
		check(r == 0 && s2.st_blocks >= s.st_blocks + 2048, "KEEP_SIZE allocates blocks",
		      "st_blocks %lld -> %lld", (long long)s.st_blocks, (long long)s2.st_blocks);
	}
	close(fd);

	blk = malloc((size_t)M);
	fd = open("fp", O_CREAT | O_RDWR, 0644);
	if (!blk || !SETUP(fd < 0 ? errno : 0)) {
		free(blk);
		return;
	}
	memset(blk, 0xab, (size_t)M);
	SETUP(write_all(fd, blk, (size_t)M));
	fsync(fd);
	fstat(fd, &s);
	r = ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 256 << 10, 256 << 10));
	if (r == EOPNOTSUPP) {
		skip("fallocate PUNCH_HOLE|KEEP_SIZE", "EOPNOTSUPP");
	} else if (EXPECT_OK("fallocate PUNCH_HOLE|KEEP_SIZE", r)) {
		falloc_region("punched range reads zeros", fd, 256 << 10, 256 << 10, 0);
		falloc_region("data before the hole intact", fd, 0, 256 << 10, 0xab);
		falloc_region("data after the hole intact", fd, 512 << 10, 512 << 10, 0xab);
		r = ERR(fstat(fd, &s2));
		check(r == 0 && s2.st_size == M, "punching keeps the size", "got %lld", (long long)s2.st_size);
		check(r == 0 && s2.st_blocks < s.st_blocks, "punching frees blocks", "st_blocks %lld -> %lld",
		      (long long)s.st_blocks, (long long)s2.st_blocks);
		r = ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1000, 3000));
		EXPECT_OK("PUNCH_HOLE of an unaligned sub-page range", r);
		falloc_region("unaligned punched range reads zeros", fd, 1000, 3000, 0);
		falloc_region("bytes around an unaligned punch intact", fd, 0, 1000, 0xab);
		falloc_region("bytes after an unaligned punch intact", fd, 4000, 1000, 0xab);
	}
	EXPECT("PUNCH_HOLE without KEEP_SIZE -> EOPNOTSUPP",
	       ERR(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096)), EOPNOTSUPP);
	r = ERR(fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096));
	if (r == EOPNOTSUPP)
		skip("fallocate ZERO_RANGE", "EOPNOTSUPP (not supported by this filesystem)");
	else if (EXPECT_OK("fallocate ZERO_RANGE", r))
		falloc_region("zeroed range reads zeros", fd, 0, 4096, 0);
	EXPECT("fallocate with length 0 -> EINVAL", ERR(fallocate(fd, 0, 0, 0)), EINVAL);
	EXPECT("fallocate with a negative offset -> EINVAL", ERR(fallocate(fd, 0, -1, 4096)), EINVAL);
	close(fd);
	fd = open("fp", O_RDONLY);
	if (fd >= 0) {
		EXPECT("fallocate on a read-only fd -> EBADF", ERR(fallocate(fd, 0, 0, 4096)), EBADF);
		close(fd);
	}
	free(blk);
}

/* ------------------------------------------------------------------ */
/* group: seek                                                         */

static void g_seek(void)
{
	const off_t M = 1 << 20;
	char blk[4096];
	off_t o;
	int fd;

	fd = open("sp", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	memset(blk, 'd', sizeof blk);
	if (!SETUP(ERR(pwrite(fd, blk, sizeof blk, 0))) || !SETUP(ERR(pwrite(fd, blk, sizeof blk, M)))) {
		close(fd);
		return;
	}
	expect_val("SEEK_END gives the size", M + 4096, lseek(fd, 0, SEEK_END) < 0 ? -errno : lseek(fd, 0, SEEK_CUR));
	expect_val("SEEK_CUR moves relatively", M + 4096 - 10, lseek(fd, -10, SEEK_CUR));
	EXPECT("SEEK_SET to a negative offset -> EINVAL", ERR(lseek(fd, -1, SEEK_SET)), EINVAL);
	expect_val("seek beyond the end is allowed", 10 * M, lseek(fd, 10 * M, SEEK_SET));
	o = lseek(fd, 0, SEEK_DATA);
	expect_val("SEEK_DATA from 0 finds data at 0", 0, o < 0 ? -errno : o);
	/* POSIX lets a file system report no holes but the one at end of
	 * file (a FUSE writeback cache does): accept both answers, but
	 * nothing in between. */
	o = lseek(fd, 0, SEEK_HOLE);
	check((o >= 4096 && o <= M) || o == M + 4096, "SEEK_HOLE from 0 finds a hole after the first block",
	      "expected 4096..%lld or %lld, got %s", (long long)M, (long long)(M + 4096),
	      vstr(o < 0 ? -errno : o, false));
	o = lseek(fd, 8192, SEEK_DATA);
	check(o == M || o == 8192, "SEEK_DATA from inside the hole finds the second block (or the offset)",
	      "expected %lld or 8192, got %s", (long long)M, vstr(o < 0 ? -errno : o, false));
	o = lseek(fd, M, SEEK_HOLE);
	expect_val("SEEK_HOLE in the last block finds end of file", M + 4096, o < 0 ? -errno : o);
	o = lseek(fd, M + 4096, SEEK_DATA);
	expect_val("SEEK_DATA at end of file -> ENXIO", -ENXIO, o < 0 ? -errno : o);
	o = lseek(fd, M + 8192, SEEK_HOLE);
	expect_val("SEEK_HOLE beyond end of file -> ENXIO", -ENXIO, o < 0 ? -errno : o);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* group: copy                                                         */

static void g_copy(void)
{
	const size_t len = (1 << 20) + 123;
	unsigned char *src, *dst;
	loff_t in, out;
	size_t done = 0, got = 0;
	ssize_t n;
	int s, d, r;

	src = malloc(len);
	dst = malloc(len);
	s = open("src", O_CREAT | O_RDWR, 0644);
	d = open("dst", O_CREAT | O_RDWR, 0644);
	if (!src || !dst || !SETUP(s < 0 || d < 0 ? errno : 0))
		goto out;
	fill_pattern(src, len, 0, 0x33);
	SETUP(write_all(s, src, len));
	r = 0;
	in = 0;
	out = 0;
	while (done < len) {
		n = copy_file_range(s, &in, d, &out, len - done, 0);
		if (n <= 0) {
			r = n < 0 ? errno : EIO;
			break;
		}
		done += (size_t)n;
	}
	if (r == EOPNOTSUPP || r == EXDEV || r == ENOSYS) {
		skip("copy_file_range", "%s", ename(r));
		goto out;
	}
	EXPECT_OK("copy_file_range of 1 MiB + 123 bytes", r);
	check(in == (loff_t)len && out == (loff_t)len, "copy_file_range advances both offsets",
	      "in %lld out %lld", (long long)in, (long long)out);
	r = pread_full(d, dst, len, 0, &got);
	check(r == 0 && got == len && memcmp(src, dst, len) == 0, "copied content equals the source",
	      "read %s, %zu bytes", ename(r), got);
	in = 1000;
	out = 5000;
	n = copy_file_range(s, &in, d, &out, 10000, 0);
	expect_val("copy_file_range with offsets copies the range", 10000, n < 0 ? -errno : n);
	r = pread_full(d, dst, 10000, 5000, &got);
	check(r == 0 && got == 10000 && memcmp(dst, src + 1000, 10000) == 0, "range copied to the right place",
	      "read %s, %zu bytes", ename(r), got);
	r = pread_full(d, dst, 5000, 0, &got);
	check(r == 0 && got == 5000 && memcmp(dst, src, 5000) == 0, "bytes before the copied range untouched",
	      "read %s", ename(r));
	in = (loff_t)len;
	out = 0;
	n = copy_file_range(s, &in, d, &out, 100, 0);
	expect_val("copy_file_range at end of source returns 0", 0, n < 0 ? -errno : n);
	in = 0;
	out = 100;
	n = copy_file_range(s, &in, s, &out, 1000, 0);
	expect_val("overlapping copy within one file -> EINVAL", -EINVAL, n < 0 ? -errno : n);
	{
		int wo = open("src", O_WRONLY);
		if (wo >= 0) {
			in = 0;
			out = 0;
			n = copy_file_range(wo, &in, d, &out, 10, 0);
			expect_val("copy_file_range from a write-only fd -> EBADF", -EBADF, n < 0 ? -errno : n);
			close(wo);
		}
	}
out:
	if (s >= 0)
		close(s);
	if (d >= 0)
		close(d);
	free(src);
	free(dst);
}

/* ------------------------------------------------------------------ */
/* group: sparse (beyond 4 GiB)                                        */

static void g_sparse(void)
{
	const off_t G = 1LL << 30, big = 5 * G;
	char buf[4096];
	struct stat s;
	size_t got = 0;
	int fd, r;

	fd = open("sparse", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	r = ERR(pwrite(fd, "END!", 4, big));
	if (!EXPECT_OK("write at 5 GiB", r)) {
		close(fd);
		return;
	}
	r = ERR(fstat(fd, &s));
	expect_val("size after a write at 5 GiB", big + 4, r ? -r : s.st_size);
	expect_val("stat agrees", big + 4, l_size("sparse"));
	check(r == 0 && s.st_blocks * 512 < (1 << 20), "file stays sparse (few blocks allocated)",
	      "st_blocks %lld", (long long)s.st_blocks);
	memset(buf, 0, sizeof buf);
	r = pread_full(fd, buf, 100, big, &got);
	check(r == 0 && got == 4 && memcmp(buf, "END!", 4) == 0, "read back at 5 GiB (short read at EOF)",
	      "read %s, %zu bytes", ename(r), got);
	memset(buf, 'x', sizeof buf);
	r = pread_full(fd, buf, sizeof buf, 4 * G, &got);
	check(r == 0 && got == sizeof buf && all_zero(buf, sizeof buf), "hole at 4 GiB reads zeros",
	      "read %s, %zu bytes", ename(r), got);
	r = pread_full(fd, buf, sizeof buf, 12345, &got);
	check(r == 0 && got == sizeof buf && all_zero(buf, sizeof buf), "hole near the start reads zeros",
	      "read %s, %zu bytes", ename(r), got);
	r = ERR(pwrite(fd, "ABCD", 4, 4 * G - 2));
	EXPECT_OK("write across the 4 GiB boundary", r);
	memset(buf, 0, sizeof buf);
	r = pread_full(fd, buf, 8, 4 * G - 4, &got);
	check(r == 0 && got == 8 && memcmp(buf, "\0\0ABCD\0\0", 8) == 0,
	      "data across the 4 GiB boundary reads back", "read %s, %zu bytes", ename(r), got);
	r = ERR(ftruncate(fd, 6 * G));
	EXPECT_OK("ftruncate to 6 GiB", r);
	expect_val("size after ftruncate to 6 GiB", 6 * G, l_size("sparse"));
	r = ERR(ftruncate(fd, 3 * G));
	EXPECT_OK("ftruncate down to 3 GiB", r);
	r = pread_full(fd, buf, 8, 4 * G - 4, &got);
	check(r == 0 && got == 0, "no data beyond the truncated size", "read %s, %zu bytes", ename(r), got);
	close(fd);
	unlink("sparse");
}

/* ------------------------------------------------------------------ */
/* group: direct (O_DIRECT)                                            */

/* A read-only O_DIRECT open (FOPEN_DIRECT_IO in zcfs) sees what a
 * buffered open just wrote and extended, still dirty under writeback. */
static void g_direct_rdonly(int nfd, unsigned char *a, unsigned char *b, size_t len)
{
	size_t got = 0;
	int rfd, r;

	rfd = open("dio", O_RDONLY | O_DIRECT);
	if (!EXPECT_OK("open O_RDONLY | O_DIRECT", rfd < 0 ? errno : 0))
		return;
	fill_pattern(a, len, 2 * len, 0x55);
	SETUP(ERR(pwrite(nfd, a, 4096, 4096)));
	SETUP(ERR(pwrite(nfd, a, len, 2 * (off_t)len)));
	memset(b, 0, len);
	r = pread_full(rfd, b, len, 2 * (off_t)len, &got);
	check(r == 0 && got == len && memcmp(a, b, len) == 0,
	      "read-only O_DIRECT read sees a buffered write past the old end", "read %s, %zu bytes", ename(r), got);
	memset(b, 0, 4096);
	r = pread_full(rfd, b, 4096, 4096, &got);
	check(r == 0 && got == 4096 && memcmp(a, b, 4096) == 0, "read-only O_DIRECT read sees a buffered overwrite",
	      "read %s, %zu bytes", ename(r), got);
	close(rfd);
}

static void g_direct(void)
{
	const size_t len = 65536;
	unsigned char *a = NULL, *b = NULL;
	struct tsnap t0, t1;
	size_t got = 0;
	int fd, nfd, r;

	fd = open("dio", O_CREAT | O_RDWR | O_DIRECT, 0644);
	if (fd < 0 && errno == EINVAL) {
		skip("O_DIRECT", "open with O_DIRECT returned EINVAL");
		return;
	}
	if (!EXPECT_OK("open O_DIRECT", fd < 0 ? errno : 0))
		return;
	if (posix_memalign((void **)&a, 4096, len) || posix_memalign((void **)&b, 4096, len))
		goto out;
	SETUP(set_old("dio"));
	t0 = snap("dio");
	msleep(30);
	fill_pattern(a, len, 0, 0x11);
	r = ERR(pwrite(fd, a, len, 0));
	EXPECT_OK("aligned O_DIRECT write of 64 KiB", r);
	fill_pattern(a, len, len, 0x11);
	r = ERR(pwrite(fd, a, len, (off_t)len));
	EXPECT_OK("aligned O_DIRECT write at 64 KiB", r);
	/* the kernel's FOPEN_DIRECT_IO write path moves no times: under
	 * writeback, where the kernel owns them, they would stay old */
	t1 = snap("dio");
	changed("O_DIRECT write updates mtime", t0.m, t1.m);
	changed("O_DIRECT write updates ctime", t0.c, t1.c);
	memset(b, 0, len);
	r = pread_full(fd, b, len, (off_t)len, &got);
	check(r == 0 && got == len && memcmp(a, b, len) == 0, "aligned O_DIRECT read returns the data",
	      "read %s, %zu bytes", ename(r), got);
	nfd = open("dio", O_RDWR);
	if (nfd >= 0) {
		memset(b, 0, len);
		r = pread_full(nfd, b, len, (off_t)len, &got);
		check(r == 0 && got == len && memcmp(a, b, len) == 0, "buffered read sees O_DIRECT writes",
		      "read %s, %zu bytes", ename(r), got);
		fill_pattern(a, 4096, 0, 0x99);
		SETUP(ERR(pwrite(nfd, a, 4096, 0)));
		memset(b, 0, len);
		r = pread_full(fd, b, 4096, 0, &got);
		check(r == 0 && got == 4096 && memcmp(a, b, 4096) == 0, "O_DIRECT read sees buffered writes",
		      "read %s, %zu bytes", ename(r), got);
		g_direct_rdonly(nfd, a, b, len);
		close(nfd);
	}
	expect_val("size after O_DIRECT and buffered writes", 3 * (long long)len, l_size("dio"));
out:
	free(a);
	free(b);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* group: mmap                                                         */

static void g_mmap(void)
{
	const size_t len = 3 * 4096;
	unsigned char *m, buf[3 * 4096];
	size_t got = 0;
	int fd, r;

	fd = open("mm", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	if (!SETUP(ERR(ftruncate(fd, (off_t)len)))) {
		close(fd);
		return;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!EXPECT_OK("mmap MAP_SHARED read/write", m == MAP_FAILED ? errno : 0)) {
		close(fd);
		return;
	}
	memcpy(m + 100, "via mmap", 8);
	memcpy(m + 4096 + 5, "page two", 8);
	EXPECT_OK("msync MS_SYNC", ERR(msync(m, len, MS_SYNC)));
	r = pread_full(fd, buf, len, 0, &got);
	check(r == 0 && got == len && memcmp(buf + 100, "via mmap", 8) == 0 && memcmp(buf + 4101, "page two", 8) == 0,
	      "read() sees data written through a shared mapping", "read %s, %zu bytes", ename(r), got);
	SETUP(ERR(pwrite(fd, "via write", 9, 2 * 4096 + 7)));
	check(memcmp(m + 2 * 4096 + 7, "via write", 9) == 0, "data written with write() is visible in the mapping",
	      "got \"%.9s\"", m + 2 * 4096 + 7);
	munmap(m, len);
	close(fd);
	fd = open("mm", O_RDONLY);
	if (fd >= 0) {
		r = pread_full(fd, buf, len, 0, &got);
		check(r == 0 && memcmp(buf + 100, "via mmap", 8) == 0, "mapped writes persist after munmap and close",
		      "read %s", ename(r));
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		EXPECT("writable shared mapping of a read-only fd -> EACCES", m == MAP_FAILED ? errno : 0, EACCES);
		if (m != MAP_FAILED)
			munmap(m, len);
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (EXPECT_OK("writable private mapping of a read-only fd", m == MAP_FAILED ? errno : 0)) {
			memcpy(m, "private", 7);
			munmap(m, len);
			r = pread_full(fd, buf, 7, 0, &got);
			check(r == 0 && memcmp(buf, "private", 7) != 0, "MAP_PRIVATE writes do not reach the file",
			      "read %s", ename(r));
		}
		close(fd);
	}
	/* grow with ftruncate, then write the new part through a mapping */
	fd = open("mm2", O_CREAT | O_RDWR, 0644);
	if (fd >= 0) {
		SETUP(write_all(fd, "x", 1));
		SETUP(ERR(ftruncate(fd, 8192)));
		m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (EXPECT_OK("mmap of a file grown by ftruncate", m == MAP_FAILED ? errno : 0)) {
			check(m[0] == 'x' && m[4096] == 0, "mapping shows data and zeros", "got %d/%d", m[0], m[4096]);
			memcpy(m + 8000, "tail", 4);
			msync(m, 8192, MS_SYNC);
			munmap(m, 8192);
			r = pread_full(fd, buf, 4, 8000, &got);
			check(r == 0 && got == 4 && memcmp(buf, "tail", 4) == 0, "write in the grown part reaches the file",
			      "read %s, %zu bytes", ename(r), got);
		}
		close(fd);
	}
}

/* ------------------------------------------------------------------ */
/* group: concurrency                                                  */

#define CT_THREADS 4
#define CT_REGION (1 << 20)
#define CT_CHUNK (16 << 10)

struct ct_arg {
	int fd, idx, err;
};

static void *ct_run(void *p)
{
	struct ct_arg *a = p;
	unsigned char buf[CT_CHUNK];

	for (off_t off = 0; off < CT_REGION && !a->err; off += CT_CHUNK) {
		off_t abs = (off_t)a->idx * CT_REGION + off;
		fill_pattern(buf, CT_CHUNK, (uint64_t)abs, 0x42);
		if (pwrite(a->fd, buf, CT_CHUNK, abs) != CT_CHUNK)
			a->err = errno ? errno : EIO;
	}
	return NULL;
}

static int c_make_many(int p)
{
	char name[64];

	for (int i = 0; i < 200; i++) {
		int e;
		snprintf(name, sizeof name, "many/p%d_%03d", p, i);
		e = put(name, name + 5);
		if (e)
			return e;
	}
	return 0;
}

static void g_concurrency(void)
{
	static const struct cred *who[4] = { &U1, &U2, &U3, &U4 };
	struct ct_arg args[CT_THREADS];
	pthread_t th[CT_THREADS];
	unsigned char *all, *want;
	size_t got = 0;
	int fd, r, res[4], fds[4];
	pid_t pids[4];

	fd = open("shared", O_CREAT | O_RDWR, 0644);
	if (!SETUP(fd < 0 ? errno : 0))
		return;
	for (int i = 0; i < CT_THREADS; i++) {
		args[i] = (struct ct_arg){ fd, i, 0 };
		if (pthread_create(&th[i], NULL, ct_run, &args[i]))
			args[i].err = EAGAIN;
	}
	r = 0;
	for (int i = 0; i < CT_THREADS; i++) {
		if (args[i].err != EAGAIN)
			pthread_join(th[i], NULL);
		if (args[i].err && !r)
			r = args[i].err;
	}
	EXPECT_OK("4 threads write disjoint 1 MiB regions of one file", r);
	all = malloc((size_t)CT_THREADS * CT_REGION);
	want = malloc((size_t)CT_THREADS * CT_REGION);
	if (all && want) {
		size_t bad = SIZE_MAX;
		fill_pattern(want, (size_t)CT_THREADS * CT_REGION, 0, 0x42);
		r = pread_full(fd, all, (size_t)CT_THREADS * CT_REGION, 0, &got);
		for (size_t i = 0; r == 0 && i < got; i++)
			if (all[i] != want[i]) {
				bad = i;
				break;
			}
		check(r == 0 && got == (size_t)CT_THREADS * CT_REGION && bad == SIZE_MAX,
		      "concurrently written regions all read back", "read %s, %zu bytes, first bad byte %zd",
		      ename(r), got, bad == SIZE_MAX ? (ssize_t)-1 : (ssize_t)bad);
	}
	free(all);
	free(want);
	close(fd);

	if (!SETUP(mkdirx("many", 0777, 0, 0)))
		return;
	for (int p = 0; p < 4; p++) {
		pids[p] = as_fork(who[p], &fds[p]);
		if (pids[p] == 0)
			as_return(fds[p], c_make_many(p));
	}
	r = 0;
	for (int p = 0; p < 4; p++) {
		res[p] = as_collect(pids[p], fds[p]);
		if (res[p] && !r)
			r = res[p];
	}
	EXPECT_OK("4 processes (uids 1001..1004) each create 200 files in one directory", r);
	{
		struct entlist l = { 0 };
		int missing = 0, wrong = 0, first;
		char name[64], buf[64];
		r = el_read("many", &l);
		expect_val("directory lists 800 files plus . and ..", 802, r ? -r : (long long)l.n);
		for (int p = 0; p < 4; p++) {
			char prefix[16];
			snprintf(prefix, sizeof prefix, "p%d_", p);
			missing += el_missing(&l, prefix, 200, &first);
			for (int i = 0; i < 200; i++) {
				snprintf(name, sizeof name, "many/p%d_%03d", p, i);
				if (slurp(name, buf, sizeof buf) < 0 || strcmp(buf, name + 5) ||
				    l_uid(name) != (long long)who[p]->uid)
					wrong++;
			}
		}
		check(missing == 0 && wrong == 0, "every concurrently created file is listed with its content and owner",
		      "%d missing, %d wrong", missing, wrong);
		el_free(&l);
	}
}

/* ------------------------------------------------------------------ */
/* main                                                                */

struct check_group {
	const char *name;
	void (*fn)(void);
};

static const struct check_group groups[] = {
	{ "create", g_create },
	{ "perm", g_perm },
	{ "dir", g_dir },
	{ "unlink", g_unlink },
	{ "rename", g_rename },
	{ "link", g_link },
	{ "mknod", g_mknod },
	{ "truncate", g_truncate },
	{ "time", g_time },
	{ "readdir", g_readdir },
	{ "rw", g_rw },
	{ "xattr", g_xattr },
	{ "hidden-xattr", g_hidden_xattr },
	{ "statfs", g_statfs },
	{ "sync", g_sync },
	{ "fallocate", g_fallocate },
	{ "seek", g_seek },
	{ "copy", g_copy },
	{ "sparse", g_sparse },
	{ "direct", g_direct },
	{ "mmap", g_mmap },
	{ "concurrency", g_concurrency },
	{ "persist", g_persist },
};

static bool in_csv(const char *csv, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = csv; p && *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

static int rm_cb(const char *p, const struct stat *s, int flag, struct FTW *f)
{
	(void)s;
	(void)f;
	if (flag == FTW_DP)
		return rmdir(p) ? -1 : 0;
	return unlink(p) ? -1 : 0;
}

static void usage(FILE *to)
{
	fprintf(to, "usage: posix_check [--only GROUP[,GROUP...]] [--skip GROUP[,...]] [--zcfs] [--keep] [--list] DIR\n"
		    "  --zcfs   also run zcfs-only groups (hidden-xattr)\n"
		    "  --keep   keep the work tree DIR/posix_check.XXXXXX\n"
		    "  --list   print the group names\n");
}

int main(int argc, char **argv)
{
	const char *only = NULL, *skipgrp = NULL, *dir = NULL;
	bool keep = false;
	char work[PATH_MAX];
	struct sigaction sa;
	int base, top;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strncmp(argv[i], "--only=", 7))
			only = argv[i] + 7;
		else if (!strcmp(argv[i], "--skip") && i + 1 < argc)
			skipgrp = argv[++i];
		else if (!strncmp(argv[i], "--skip=", 7))
			skipgrp = argv[i] + 7;
		else if (!strcmp(argv[i], "--zcfs"))
			g_zcfs = true;
		else if (!strcmp(argv[i], "--keep"))
			keep = true;
		else if (!strcmp(argv[i], "--list")) {
			for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
				printf("%s\n", groups[g].name);
			return 0;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' || dir) {
			usage(stderr);
			return 2;
		} else
			dir = argv[i];
	}
	if (!dir) {
		usage(stderr);
		return 2;
	}
	for (const char *list = only; list; list = NULL)
		for (const char *p = list; *p;) {
			const char *e = strchr(p, ',');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			bool known = false;
			for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
				known |= strlen(groups[g].name) == len && !strncmp(groups[g].name, p, len);
			if (!known) {
				fprintf(stderr, "posix_check: unknown group \"%.*s\" (see --list)\n", (int)len, p);
				return 2;
			}
			p = e ? e + 1 : p + len;
		}
	if (geteuid() != 0) {
		fprintf(stderr, "posix_check: must run as root (checks switch to uids 1001..1004)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;  /* no SA_RESTART: blocking opens return EINTR */
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(022);

	snprintf(work, sizeof work, "posix_check.XXXXXX");
	top = open(dir, O_RDONLY | O_DIRECTORY);
	if (top < 0 || fchdir(top) || !mkdtemp(work) || chmod(work, 0755) || chdir(work)) {
		fprintf(stderr, "posix_check: cannot make a work directory in %s: %s\n", dir, strerror(errno));
		return 2;
	}
	printf("# posix_check in %s/%s%s\n", dir, work, g_zcfs ? " (zcfs)" : "");
	base = open(".", O_RDONLY | O_DIRECTORY);
	if (base < 0) {
		perror("posix_check: open work dir");
		return 2;
	}
	for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
		struct timespec t0, t1;
		if (only && !in_csv(only, groups[g].name))
			continue;
		if (skipgrp && in_csv(skipgrp, groups[g].name))
			continue;
		g_group = groups[g].name;
		if (mkdir(g_group, 0777) || chmod(g_group, 0777) || chdir(g_group)) {
			setup_(errno, "group directory", __LINE__);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		groups[g].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("# %s: %.2fs\n", g_group,
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		if (fchdir(base)) {
			perror("posix_check: fchdir");
			return 2;
		}
	}
	close(base);
	if (keep) {
		printf("# work tree kept: %s/%s\n", dir, work);
	} else if (fchdir(top) == 0) {
		if (nftw(work, rm_cb, 32, FTW_DEPTH | FTW_PHYS))
			printf("# warning: could not remove %s/%s: %s\n", dir, work, strerror(errno));
	}
	close(top);
	if (g_skip)
		printf("%u passed, %u failed, %u skipped\n", g_pass, g_fail, g_skip);
	else
		printf("%u passed, %u failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
