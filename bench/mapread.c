/* mapread FILE: what it costs to get a READ's data into an io_uring
 * entry's payload buffer, per size from 4 KiB to 1 MiB, measured the two
 * ways issue 19 asks about:
 *   pread   copy the backing file's pages into the (anonymous, faulted-in)
 *           buffer, as the ring's stock path does;
 *   map     mmap(MAP_PRIVATE|MAP_FIXED|MAP_POPULATE) of the backing file's
 *           page-aligned range over the buffer, so the kernel's copy to
 *           the client would read the page cache directly (MAP_PRIVATE, not
 *           MAP_SHARED: COMMIT_AND_FETCH writes the next request's payload
 *           into the same buffer in the same system call, which must never
 *           reach the file).
 * Each variant then reads the buffer once (memcpy), standing in for the
 * kernel's copy into the client's pages. Prints one line per size with
 * microseconds per operation and which way is cheaper. FILE is created
 * (256 MiB, written) and removed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE (256UL << 20)
#define MAX_SIZE (1UL << 20)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int fill(int fd)
{
	char *w = malloc(MAX_SIZE);
	size_t off;

	if (!w)
		return -ENOMEM;
	memset(w, 7, MAX_SIZE);
	for (off = 0; off < FILE_SIZE; off += MAX_SIZE)
		if (pwrite(fd, w, MAX_SIZE, (off_t)off) != (ssize_t)MAX_SIZE) {
			free(w);
			return -EIO;
		}
	free(w);
	return 0;
}

/* us per op of one variant over iters ops of size bytes; < 0 on error */
static double run(int fd, char *buf, char *dst, size_t size, int iters, int map)
{
	size_t off = 0;
	double t0 = now();
	int i;

	for (i = 0; i < iters; i++) {
		if (map) {
			if (mmap(buf, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd,
				 (off_t)off) == MAP_FAILED)
				return -1;
		} else if (pread(fd, buf, size, (off_t)off) != (ssize_t)size) {
			return -1;
		}
		memcpy(dst, buf, size);
		off = (off + size) % FILE_SIZE;
	}
	return (now() - t0) / iters * 1e6;
}

int main(int argc, char **argv)
{
	char *buf, *dst;
	size_t size;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: mapread FILE (created and removed; put it on the backing fs)\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_SIZE) < 0 || fill(fd) < 0) {
		perror(argv[1]);
		return 1;
	}
	unlink(argv[1]);
	buf = mmap(NULL, MAX_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	dst = malloc(MAX_SIZE);
	if (buf == MAP_FAILED || !dst)
		return 1;
	memset(dst, 1, MAX_SIZE);
	printf("%8s %10s %10s  %s\n", "size", "pread_us", "map_us", "cheaper");
	for (size = 4096; size <= MAX_SIZE; size *= 2) {
		int iters = (int)((128UL << 20) / size);
		double p, m;

		if (iters > 5000)
			iters = 5000;
		/* the buffer anonymous and faulted in again for pread */
		if (mmap(buf, MAX_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
			 -1, 0) == MAP_FAILED)
			return 1;
		p = run(fd, buf, dst, size, iters, 0);
		m = run(fd, buf, dst, size, iters, 1);
		if (p < 0 || m < 0) {
			perror("mapread");
			return 1;
		}
		printf("%8zu %10.1f %10.1f  %s\n", size, p, m, m < p ? "map" : "pread");
	}
	close(fd);
	return 0;
}
