/*
 * escape_probe: tries to make a file server touch things outside its
 * SOURCE directory.  Meant to run as an unprivileged uid that has no write
 * access to the sentinel directory natively, so any change there can only
 * come from the (root) server.  It never decides pass/fail about the
 * sentinel itself: the caller compares snapshots before and after.  It
 * fails (exit 1) only when it reads the secret marker, i.e. the server
 * handed out the contents of a file the caller cannot read natively.
 *
 *   escape_probe ops MARKER SCRATCHDIR PATH...
 *       For every PATH run a fixed list of operations on it and under it
 *       (open/creat/mkdir/unlink/rmdir/rename/link/truncate/chmod/chown/
 *       utimensat/setxattr/removexattr/mknod/symlink, followed and not
 *       followed) and print one result line per operation.  SCRATCHDIR is
 *       a writable directory on the same mount used as rename/link peer.
 *
 *   escape_probe race MARKER SWAPDIR WORKDIR TARGET SECONDS THREADS
 *       SWAPDIR holds a directory "d" and the swapper thread keeps
 *       exchanging it with a symlink to TARGET (renameat2 RENAME_EXCHANGE,
 *       or a rename dance if that is not supported).  SWAPDIR is either the
 *       mount (attack through the client) or the backing directory
 *       (concurrent change behind the server).  THREADS workers hammer
 *       WORKDIR/d/NAME through the mount with creating, modifying and
 *       removing operations for SECONDS seconds.
 *
 * MARKER is a string that appears only in the secret file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static const char *marker;
static atomic_int leaks;
static atomic_int stop;

static void note_read(const char *what, const char *path, int fd)
{
	char buf[4096 + 1];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		if (memmem(buf, (size_t)n, marker, strlen(marker))) {
			printf("LEAK: %s %s returned the secret marker\n", what, path);
			fflush(stdout);
			atomic_fetch_add(&leaks, 1);
		}
	}
}

static void result(const char *op, const char *path, int r)
{
	if (r < 0)
		printf("  %-28s %s -> %s\n", op, path, strerror(errno));
	else
		printf("  %-28s %s -> ok\n", op, path);
}

static void join(char *out, size_t len, const char *a, const char *b)
{
	snprintf(out, len, "%s/%s", a, b);
}

static void probe_path(const char *p, const char *scratch)
{
	char sub[4096], tmp[4096], tmp2[4096];
	int fd, r;
	struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };
	int safe = getenv("ESCAPE_PROBE_SAFE") != NULL;

	printf("probe %s\n", p);
	/* reads */
	fd = open(p, O_NONBLOCK | O_RDONLY);
	result("open(O_RDONLY)", p, fd);
	if (fd >= 0) {
		note_read("read", p, fd);
		close(fd);
	}
	join(sub, sizeof(sub), p, "victim");
	fd = open(sub, O_NONBLOCK | O_RDONLY);
	result("open(O_RDONLY)", sub, fd);
	if (fd >= 0) {
		note_read("read", sub, fd);
		close(fd);
	}
	/* writes through the path */
	fd = open(p, O_NONBLOCK | O_WRONLY | O_TRUNC);
	result("open(O_WRONLY|O_TRUNC)", p, fd);
	if (fd >= 0) {
		r = (int)write(fd, "ESCAPED\n", 8);
		result("write", p, r);
		close(fd);
	}
	fd = open(sub, O_NONBLOCK | O_WRONLY | O_APPEND);
	result("open(O_WRONLY|O_APPEND)", sub, fd);
	if (fd >= 0) {
		r = (int)write(fd, "ESCAPED\n", 8);
		result("write", sub, r);
		close(fd);
	}
	if (!safe) {
		fd = open(sub, O_NONBLOCK | O_RDWR | O_CREAT | O_TRUNC, 0666);
		result("open(O_CREAT|O_TRUNC)", sub, fd);
		if (fd >= 0)
			close(fd);
		join(tmp, sizeof(tmp), p, "zcfs-escape-new");
		fd = open(tmp, O_NONBLOCK | O_RDWR | O_CREAT | O_EXCL, 0666);
		result("open(O_CREAT|O_EXCL)", tmp, fd);
		if (fd >= 0)
			close(fd);
		join(tmp, sizeof(tmp), p, "zcfs-escape-dir");
		result("mkdir", tmp, mkdir(tmp, 0777));
		join(tmp, sizeof(tmp), p, "zcfs-escape-fifo");
		result("mknod(fifo)", tmp, mknod(tmp, S_IFIFO | 0666, 0));
		join(tmp, sizeof(tmp), p, "zcfs-escape-link");
		result("symlink", tmp, symlink("/", tmp));
	}
	result("truncate", p, truncate(p, 0));
	result("truncate", sub, truncate(sub, 0));
	result("chmod", p, chmod(p, 0777));
	result("chmod", sub, chmod(sub, 0777));
	result("chown", p, chown(p, getuid(), getgid()));
	result("chown", sub, chown(sub, getuid(), getgid()));
	/* ESCAPE_PROBE_SAFE=1 (for links to / or /etc): skip the no-follow
	 * metadata changes a path-following server would apply to the target */
	if (!safe)
		result("lchown", p, lchown(p, getuid(), getgid()));
	result("utimensat", p, utimensat(AT_FDCWD, p, ts, 0));
	if (!safe)
		result("utimensat(NOFOLLOW)", p, utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW));
	result("utimensat", sub, utimensat(AT_FDCWD, sub, ts, 0));
	result("setxattr(user)", p, setxattr(p, "user.zcfs_escape", "x", 1, 0));
	result("lsetxattr(user)", p, lsetxattr(p, "user.zcfs_escape", "x", 1, 0));
	result("lsetxattr(trusted)", p, lsetxattr(p, "trusted.zcfs_escape", "x", 1, 0));
	result("setxattr(user)", sub, setxattr(sub, "user.zcfs_escape", "x", 1, 0));
	result("removexattr(user.keep)", p, removexattr(p, "user.keep"));
	result("removexattr(user.keep)", sub, removexattr(sub, "user.keep"));
	{
		char val[256];
		ssize_t n = getxattr(sub, "user.keep", val, sizeof(val) - 1);
		result("getxattr", sub, (int)n);
		if (n > 0) {
			val[n] = 0;
			if (strstr(val, marker)) {
				printf("LEAK: getxattr %s returned the secret marker\n", sub);
				atomic_fetch_add(&leaks, 1);
			}
		}
	}
	/* link / rename between the path and the scratch directory */
	join(tmp, sizeof(tmp), scratch, "zcfs-hl");
	result("link(P, scratch)", p, link(p, tmp));
	unlink(tmp);
	result("linkat(FOLLOW)", p, linkat(AT_FDCWD, p, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW));
	unlink(tmp);
	result("link(P/victim, scratch)", sub, link(sub, tmp));
	unlink(tmp);
	join(tmp, sizeof(tmp), scratch, "zcfs-src");
	fd = open(tmp, O_NONBLOCK | O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, "ESCAPED\n", 8) < 0)
			perror("write scratch");
		close(fd);
	}
	join(tmp2, sizeof(tmp2), p, "zcfs-escape-moved");
	if (!safe) {
		result("rename(scratch, P/x)", tmp2, rename(tmp, tmp2));
		result("rename(scratch, P/victim)", sub, rename(tmp, sub));
		result("link(scratch, P/x)", tmp2, link(tmp, tmp2));
	}
	unlink(tmp);
	join(tmp, sizeof(tmp), scratch, "zcfs-stolen");
	result("rename(P/victim, scratch)", sub, rename(sub, tmp));
	rename(tmp, sub); /* put back if it moved */
	result("unlink(P/victim)", sub, unlink(sub));
	join(tmp, sizeof(tmp), p, "subdir");
	result("rmdir(P/subdir)", tmp, rmdir(tmp));
	/* finally operations on P itself that may remove it */
	join(tmp, sizeof(tmp), scratch, "zcfs-moved-link");
	r = rename(p, tmp);
	result("rename(P, scratch)", p, r);
	if (r == 0)
		result("rename back", p, rename(tmp, p));
	result("rmdir(P)", p, rmdir(p));
	result("unlink(P)", p, unlink(p));
	fflush(stdout);
}

/* ---- race ---- */

static const char *swapdir, *workdir, *target;

static int xrenameat2(const char *a, const char *b, unsigned flags)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

static atomic_long swaps, swap_errs;

static void *swapper(void *arg)
{
	char d[4096], s[4096], t[4096];
	int use_exchange = 1;
	(void)arg;
	join(d, sizeof(d), swapdir, "d");
	join(s, sizeof(s), swapdir, "d.sym");
	join(t, sizeof(t), swapdir, "d.real");
	unlink(s);
	if (symlink(target, s) < 0) {
		perror("swapper: symlink");
		return NULL;
	}
	while (!atomic_load(&stop)) {
		if (use_exchange) {
			if (xrenameat2(d, s, RENAME_EXCHANGE) == 0) {
				atomic_fetch_add(&swaps, 1);
				continue;
			}
			if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
				printf("swapper: RENAME_EXCHANGE not supported on %s (%s), using rename dance\n",
				       swapdir, strerror(errno));
				use_exchange = 0;
			} else {
				atomic_fetch_add(&swap_errs, 1);
				usleep(1000);
			}
			continue;
		}
		/* d (dir) -> d.real, d.sym -> d, ..., d -> d.sym, d.real -> d */
		if (rename(d, t) < 0) {
			atomic_fetch_add(&swap_errs, 1);
			usleep(1000);
			continue;
		}
		if (rename(s, d) < 0)
			atomic_fetch_add(&swap_errs, 1);
		sched_yield();
		if (rename(d, s) < 0)
			atomic_fetch_add(&swap_errs, 1);
		if (rename(t, d) < 0)
			atomic_fetch_add(&swap_errs, 1);
		atomic_fetch_add(&swaps, 1);
	}
	/* leave "d" as the real directory */
	struct stat st;
	if (lstat(d, &st) == 0 && S_ISLNK(st.st_mode)) {
		if (use_exchange)
			xrenameat2(d, s, RENAME_EXCHANGE);
		else {
			rename(d, s);
			rename(t, d);
		}
	}
	return NULL;
}

static atomic_long nops, nok;

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)(id * 7919 + 17);
	char p[4096], q[4096], victim[4096], dpath[1024];
	struct timespec ts[2] = { { 0, 0 }, { 0, 0 } };
	int dfd = -1;
	long n = 0;

	join(dpath, sizeof(dpath), workdir, "d");
	join(victim, sizeof(victim), dpath, "victim");
	while (!atomic_load(&stop)) {
		int r = -1, fd;
		n++;
		snprintf(p, sizeof(p), "%s/zcfs-escape-%ld-%ld", dpath, id, n % 8);
		snprintf(q, sizeof(q), "%s/zcfs-escape-%ld-%ld", dpath, id, (n + 3) % 8);
		switch (rand_r(&seed) % 18) {
		case 0:
			fd = open(p, O_NONBLOCK | O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd >= 0) {
				r = (int)write(fd, "ESCAPED\n", 8);
				close(fd);
			}
			break;
		case 1:
			r = unlink(p);
			break;
		case 2:
			r = mkdir(p, 0755);
			break;
		case 3:
			r = rmdir(p);
			break;
		case 4:
			r = rename(p, q);
			break;
		case 5:
			r = link(victim, p);
			break;
		case 6:
			r = truncate(victim, 0);
			break;
		case 7:
			r = chmod(victim, 0777);
			break;
		case 8:
			r = chown(victim, getuid(), getgid());
			break;
		case 9:
			r = setxattr(victim, "user.zcfs_escape", "x", 1, 0);
			break;
		case 10:
			r = utimensat(AT_FDCWD, victim, ts, 0);
			break;
		case 11:
			fd = open(victim, O_NONBLOCK | O_RDONLY);
			if (fd >= 0) {
				note_read("race read", victim, fd);
				close(fd);
				r = 0;
			}
			break;
		case 12:
			fd = open(victim, O_NONBLOCK | O_WRONLY | O_APPEND);
			if (fd >= 0) {
				r = (int)write(fd, "ESCAPED\n", 8);
				close(fd);
			}
			break;
		case 13:
			r = mknod(p, S_IFIFO | 0644, 0);
			break;
		case 14:
			r = symlink("zcfs-escape-target", p);
			break;
		case 15:
			r = removexattr(victim, "user.keep");
			break;
		case 16:
			/* operations relative to a held directory descriptor */
			if (dfd < 0 || rand_r(&seed) % 8 == 0) {
				if (dfd >= 0)
					close(dfd);
				dfd = open(dpath, O_NONBLOCK | O_RDONLY | O_DIRECTORY);
			}
			if (dfd >= 0) {
				char nm[64];
				snprintf(nm, sizeof(nm), "zcfs-escape-at-%ld", id);
				fd = openat(dfd, nm, O_NONBLOCK | O_WRONLY | O_CREAT | O_TRUNC, 0644);
				if (fd >= 0)
					close(fd);
				r = unlinkat(dfd, nm, 0);
				fd = openat(dfd, "victim", O_NONBLOCK | O_RDONLY);
				if (fd >= 0) {
					note_read("race openat read", victim, fd);
					close(fd);
				}
			}
			break;
		default:
			fd = open(victim, O_NONBLOCK | O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd >= 0) {
				r = (int)write(fd, "ESCAPED\n", 8);
				close(fd);
			}
			break;
		}
		atomic_fetch_add(&nops, 1);
		if (r >= 0)
			atomic_fetch_add(&nok, 1);
	}
	if (dfd >= 0)
		close(dfd);
	return NULL;
}

static int race(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: escape_probe race MARKER SWAPDIR WORKDIR TARGET SECONDS THREADS\n");
		return 2;
	}
	swapdir = argv[3];
	workdir = argv[4];
	target = argv[5];
	int secs = atoi(argv[6]), nthreads = atoi(argv[7]);
	if (secs < 1 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "escape_probe: bad SECONDS/THREADS\n");
		return 2;
	}
	pthread_t sw, th[64];
	if (pthread_create(&sw, NULL, swapper, NULL)) {
		fprintf(stderr, "escape_probe: pthread_create failed\n");
		return 2;
	}
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			fprintf(stderr, "escape_probe: pthread_create failed\n");
			return 2;
		}
	sleep((unsigned)secs);
	atomic_store(&stop, 1);
	pthread_join(sw, NULL);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	printf("race: %ld swaps (%ld swap errors), %ld worker ops, %ld succeeded, %d leaks\n",
	       atomic_load(&swaps), atomic_load(&swap_errs), atomic_load(&nops), atomic_load(&nok),
	       atomic_load(&leaks));
	return atomic_load(&leaks) ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3)
		marker = argv[2];
	if (argc >= 5 && !strcmp(argv[1], "ops")) {
		for (int i = 4; i < argc; i++)
			probe_path(argv[i], argv[3]);
		printf("ops: %d leaks\n", atomic_load(&leaks));
		return atomic_load(&leaks) ? 1 : 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "race"))
		return race(argc, argv);
	fprintf(stderr, "usage: escape_probe ops MARKER SCRATCHDIR PATH...\n"
			"       escape_probe race MARKER SWAPDIR WORKDIR TARGET SECONDS THREADS\n");
	return 2;
}
