/*
 * fsloop: a client that keeps a mount busy until the file system goes away.
 *
 *   fsloop MODE DIR MAXSECS
 *
 * MODE is one of
 *   read       open DIR/data, pread 64 KiB at a random offset, close
 *   directread open DIR/data once with O_DIRECT, pread in a loop
 *   write      create DIR/fsloop.PID, write 64 KiB, fsync, close, unlink
 *   stat       stat a new nonexistent name in DIR (ENOENT expected), stat DIR
 *   readdir    list DIR
 *   hold       open DIR/data once and read it from the start every 50 ms
 *              (buffered: any error or EOF is an acceptable end once the
 *              server is gone, exit 0)
 * DIR/data must exist (at least 1 MiB) for the read modes.
 *
 * Prints "started" once 10 operations succeeded.  It loops until an
 * operation fails; it then keeps going (for at most 5 s) until it sees
 * ENOTCONN, printing the errors on the way.
 * With FSLOOP_ANY_ERROR=1 in the environment any error ends it with exit 0
 * (after an orderly unmount the path may just lead to the directory below).
 * Exit: 0 got ENOTCONN; 1 failed with other errors only; 3 no error within
 * MAXSECS; 2 usage/setup error.  In hold mode an EOF/short read counts like
 * an error ("eof") and exit 0 is also used for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char path_data[4096], path_dir[4096];
static unsigned long iter;
static int hold_fd = -1;
static void *buf;

/* one operation: 0 ok, -1 error (errno set), 1 eof (hold mode) */
static int one(const char *mode)
{
	char p[4200];
	int fd;
	ssize_t r;
	iter++;
	if (!strcmp(mode, "read")) {
		fd = open(path_data, O_RDONLY);
		if (fd < 0)
			return -1;
		r = pread(fd, buf, 65536, (off_t)((iter * 7919) % 16) * 65536);
		int e = errno;
		close(fd);
		errno = e;
		return r < 0 ? -1 : 0;
	}
	if (!strcmp(mode, "directread")) {
		if (hold_fd < 0) {
			hold_fd = open(path_data, O_RDONLY | O_DIRECT);
			if (hold_fd < 0)
				return -1;
		}
		r = pread(hold_fd, buf, 65536, (off_t)((iter * 7919) % 16) * 65536);
		return r < 0 ? -1 : 0;
	}
	if (!strcmp(mode, "write")) {
		snprintf(p, sizeof(p), "%s/fsloop.%d", path_dir, (int)getpid());
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return -1;
		r = write(fd, buf, 65536);
		int e = errno;
		if (r >= 0 && fsync(fd) < 0) {
			r = -1;
			e = errno;
		}
		close(fd);
		if (r >= 0 && unlink(p) < 0)
			return -1;
		errno = e;
		return r < 0 ? -1 : 0;
	}
	if (!strcmp(mode, "stat")) {
		struct stat st;
		snprintf(p, sizeof(p), "%s/nonexistent.%d.%lu", path_dir, (int)getpid(), iter);
		if (stat(p, &st) == 0 || errno != ENOENT) {
			if (errno == 0 || errno == ENOENT)
				errno = EEXIST;
			return -1;
		}
		return stat(path_dir, &st) < 0 ? -1 : 0;
	}
	if (!strcmp(mode, "readdir")) {
		DIR *d = opendir(path_dir);
		if (!d)
			return -1;
		errno = 0;
		while (readdir(d))
			;
		int e = errno;
		closedir(d);
		errno = e;
		return e ? -1 : 0;
	}
	if (!strcmp(mode, "hold")) {
		if (hold_fd < 0) {
			hold_fd = open(path_data, O_RDONLY);
			if (hold_fd < 0)
				return -1;
		}
		usleep(50000);
		r = pread(hold_fd, buf, 65536, 0);
		if (r < 0)
			return -1;
		return r == 0 ? 1 : 0;
	}
	fprintf(stderr, "fsloop: unknown mode %s\n", mode);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fsloop read|directread|write|stat|readdir|hold DIR MAXSECS\n");
		return 2;
	}
	const char *mode = argv[1];
	double maxsecs = atof(argv[3]);
	snprintf(path_dir, sizeof(path_dir), "%s", argv[2]);
	snprintf(path_data, sizeof(path_data), "%s/data", argv[2]);
	if (posix_memalign(&buf, 4096, 65536)) {
		fprintf(stderr, "fsloop: out of memory\n");
		return 2;
	}
	memset(buf, 'x', 65536);
	setvbuf(stdout, NULL, _IOLBF, 0);

	double t0 = now(), tfirst = 0;
	int started = 0, errs = 0;
	while (now() - t0 < maxsecs) {
		errno = 0;
		int r = one(mode);
		if (r == 0) {
			if (!started && iter >= 10) {
				printf("started\n");
				started = 1;
			}
			continue;
		}
		if (!tfirst)
			tfirst = now();
		if (r == 1) {
			printf("%s: eof after %lu ops (%.3f s after the first problem)\n", mode, iter,
			       now() - tfirst);
			return 0;
		}
		if (!strcmp(mode, "hold") || getenv("FSLOOP_ANY_ERROR")) {
			printf("%s: error after %lu ops: %s\n", mode, iter, strerror(errno));
			return 0;
		}
		if (errno == ENOTCONN) {
			printf("%s: ENOTCONN after %lu ops (%.3f s after the first error)\n", mode, iter,
			       now() - tfirst);
			return 0;
		}
		if (errs++ < 5)
			printf("%s: error after %lu ops: %s\n", mode, iter, strerror(errno));
		if (now() - tfirst > 5) {
			printf("%s: no ENOTCONN within 5 s of the first error\n", mode);
			return 1;
		}
		if (!strcmp(mode, "directread") || !strcmp(mode, "hold")) {
			/* the descriptor may be dead for good: reopen */
			if (hold_fd >= 0)
				close(hold_fd);
			hold_fd = -1;
		}
		usleep(10000);
	}
	printf("%s: no error within %.0f s (%lu ops)\n", mode, maxsecs, iter);
	return 3;
}
