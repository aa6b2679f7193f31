/* Small shared helpers: ownership-transfer cleanup attributes, errno
 * conversion and array sizes. Error contract: functions return -errno
 * (>= 0 on success) and never report through errno. */
#ifndef ZCFS_UTIL_H
#define ZCFS_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <dirent.h>
#include <stdint.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
/* v rounded up to a multiple of a */
#define ALIGN_UP(v, a) (((v) + (a) - 1) / (a) * (a))

/* libc's "-1 and errno" into "-errno", anything else passes through. */
#define RET_NERRNO(expr) ({ __typeof__(expr) _r = (expr); _r < 0 ? -errno : _r; })

static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -1;
}

/* CLOCK_REALTIME in microseconds: the stamps of the restart-timing log
 * fields (wall_us=, bench/notes/supervision.md "Where a restart's stall goes"),
 * the clock the restart tests' probe logs its stalls in. */
static inline int64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void freep(void *p) { free(*(void **)p); }
static inline void closep(int *fd) { safe_close(*fd); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closedirp(DIR **d) { if (*d) closedir(*d); }

#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))
#define _cleanup_fclose_ __attribute__((cleanup(fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(closedirp)))

/* Whether the NULL-terminated list STRV holds S. */
static inline bool strv_contains(const char *const *strv, const char *s)
{
	for (; *strv; strv++)
		if (!strcmp(*strv, s))
			return true;
	return false;
}

/* Hand an owned value to someone else and leave the sentinel behind. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

#define _must_check_ __attribute__((warn_unused_result))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#endif
