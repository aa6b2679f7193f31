/* probe FILE [INTERVAL_MS] [STALL_LOG]: the client of the restart tests.
 * Every INTERVAL_MS (default 10) it writes 4 KiB (a pattern naming the
 * round) at the next of 256 slots of FILE, fdatasyncs it and reads it
 * back, until SIGTERM/SIGINT. Every failed call and every block read back
 * wrong is counted and printed; a round that took 20 ms or more is a
 * stall, appended to STALL_LOG as "START_US DURATION_US" (CLOCK_REALTIME
 * microseconds) so the test can pair stalls with its kills.
 * Last line: "probe: rounds=N errors=N mismatches=N max_stall_ms=N";
 * exit 0 only with no error and no mismatch. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK 4096
#define SLOTS 256
#define STALL_US 20000

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_us(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void fill(char *buf, uint64_t round)
{
	for (size_t i = 0; i < BLOCK; i += sizeof(round)) {
		uint64_t v = round * 0x9e3779b97f4a7c15ULL + i;
		memcpy(buf + i, &v, sizeof(v));
	}
}

int main(int argc, char **argv)
{
	static char wbuf[BLOCK], rbuf[BLOCK];
	unsigned long interval_ms = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	FILE *stalls = NULL;
	uint64_t rounds = 0, errors = 0, mismatches = 0;
	int64_t max_stall = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: probe FILE [INTERVAL_MS] [STALL_LOG]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (argc > 3) {
		stalls = fopen(argv[3], "a");
		if (!stalls) {
			perror(argv[3]);
			return 2;
		}
		setvbuf(stalls, NULL, _IOLBF, 0);
	}
	fd = open(argv[1], O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	while (!stop) {
		off_t off = (off_t)(rounds % SLOTS) * BLOCK;
		int64_t t0 = now_us(CLOCK_MONOTONIC), wall = now_us(CLOCK_REALTIME), d;
		ssize_t n;

		fill(wbuf, rounds);
		n = pwrite(fd, wbuf, BLOCK, off);
		if (n != BLOCK) {
			errors++;
			printf("probe: round %llu: pwrite: %s\n", (unsigned long long)rounds,
			       n < 0 ? strerror(errno) : "short write");
		} else if (fdatasync(fd) < 0) {
			errors++;
			printf("probe: round %llu: fdatasync: %s\n", (unsigned long long)rounds,
			       strerror(errno));
		} else if ((n = pread(fd, rbuf, BLOCK, off)) != BLOCK) {
			errors++;
			printf("probe: round %llu: pread: %s\n", (unsigned long long)rounds,
			       n < 0 ? strerror(errno) : "short read");
		} else if (memcmp(rbuf, wbuf, BLOCK) != 0) {
			mismatches++;
			printf("probe: round %llu: block at %lld read back wrong\n",
			       (unsigned long long)rounds, (long long)off);
		}
		fflush(stdout);
		d = now_us(CLOCK_MONOTONIC) - t0;
		if (d > max_stall)
			max_stall = d;
		if (stalls && d >= STALL_US)
			fprintf(stalls, "%lld %lld\n", (long long)wall, (long long)d);
		rounds++;
		if (!stop && interval_ms)
			usleep(interval_ms * 1000);
	}
	close(fd);
	printf("probe: rounds=%llu errors=%llu mismatches=%llu max_stall_ms=%lld\n",
	       (unsigned long long)rounds, (unsigned long long)errors,
	       (unsigned long long)mismatches, (long long)(max_stall / 1000));
	return errors || mismatches ? 1 : 0;
}
