/* Giving up CAP_SYS_ADMIN (caps.h). Capabilities belong to threads and
 * no call changes them for a whole process, so the caller drops its own
 * and signals every other thread to drop theirs, like glibc's setuid
 * broadcast; then capget(2) on each thread verifies. The caller waits
 * for the answers on a futex (the handlers count and wake it), with a
 * deadline, not by polling.
 *
 * Under the sandbox nothing here may open /proc (Landlock) or call
 * prctl(2) beyond PR_SET_NAME (seccomp). libcap-ng reads
 * /proc/sys/kernel/cap_last_cap once and /proc/TID/status (bounding set,
 * falling back to prctl) in capng_get_caps_process(), so it is primed
 * in caps_prepare() before the sandbox and only capng_clear() +
 * capng_apply() run afterwards. */
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <cap-ng.h>
#include "caps.h"
#include "common/log.h"
#include "common/parse.h"

#define DROP_SIGNAL (SIGRTMIN + 2)
#define ADMIN_IDX CAP_TO_INDEX(CAP_SYS_ADMIN)
#define ADMIN_BIT CAP_TO_MASK(CAP_SYS_ADMIN)

typedef struct __user_cap_data_struct capdata[_LINUX_CAPABILITY_U32S_3];

static int task_dir = -1;	/* /proc/self/task, opened before the sandbox */
static bool prepared;		/* caps_prepare() ran: no task_dir means nothing to drop */
static bool clear_all;		/* the capability is all the server has: clear every set */
static bool capng_ready;	/* libcap-ng knows cap_last_cap */
static _Atomic uint32_t drop_acks;	/* futex word: threads that dropped */

bool caps_only_for_zero_copy(const struct zcfs_options *o)
{
	return o->fuse_fd >= 0 && !(o->passthrough && o->broker_fd < 0);
}

static int cap_get(pid_t tid, capdata d)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = tid };

	return syscall(SYS_capget, &h, d) < 0 ? -errno : 0;
}

static bool holds_admin(const capdata d)
{
	return (d[ADMIN_IDX].effective | d[ADMIN_IDX].permitted | d[ADMIN_IDX].inheritable) & ADMIN_BIT;
}

bool caps_have_sys_admin(void)
{
	capdata d;

	return cap_get(0, d) == 0 && (d[ADMIN_IDX].permitted & ADMIN_BIT);
}

int caps_prepare(const struct zcfs_options *o)
{
	clear_all = caps_only_for_zero_copy(o);
	prepared = true;
	if (!caps_have_sys_admin())
		return 0;
	capng_ready = capng_get_caps_process() == 0;
	task_dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return task_dir < 0 ? -errno : 0;
}

bool caps_drop_ready(void)
{
	return task_dir >= 0;
}

DIR *caps_open_tasks(void)
{
	DIR *d;
	int fd;

	if (task_dir < 0)
		return opendir("/proc/self/task");
	fd = fcntl(task_dir, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		safe_close(fd);
		return NULL;
	}
	rewinddir(d);	/* the offset is shared with task_dir */
	return d;
}

/* Async-signal-safe (the handler runs it): system calls only. */
static int drop_raw(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	capdata d;

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	if (clear_all) {
		memset(d, 0, sizeof(d));
	} else {
		d[ADMIN_IDX].effective &= ~ADMIN_BIT;
		d[ADMIN_IDX].permitted &= ~ADMIN_BIT;
		d[ADMIN_IDX].inheritable &= ~ADMIN_BIT;
	}
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int caps_drop_self(void)
{
	if (!clear_all || !capng_ready)
		return drop_raw();	/* keep what else a standalone root server has */
	capng_setpid((int)syscall(SYS_gettid));
	capng_clear(CAPNG_SELECT_CAPS);
	return capng_apply(CAPNG_SELECT_CAPS) < 0 ? -EPERM : 0;
}

static void drop_handler(int sig)
{
	int saved = errno;

	(void)sig;
	if (drop_raw() == 0) {
		atomic_fetch_add(&drop_acks, 1);
		syscall(SYS_futex, &drop_acks, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	}
	errno = saved;
}

void caps_keep_drop_signal(sigset_t *set)
{
	sigdelset(set, DROP_SIGNAL);
}

/* Until n handlers have answered or 1 s has passed: a thread that exited
 * after it was signalled never answers. */
static void wait_acks(uint32_t n)
{
	struct timespec now, end, left;
	uint32_t seen;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 1;
	while ((seen = atomic_load(&drop_acks)) < n) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0)
			return;
		/* Returns at once when a handler counted since the load. */
		syscall(SYS_futex, &drop_acks, FUTEX_WAIT_PRIVATE, seen, &left, NULL, 0);
	}
}

/* Every thread but the caller; *sent = how many were signalled. */
static int signal_others(unsigned *sent)
{
	struct sigaction sa = { .sa_handler = drop_handler, .sa_flags = SA_RESTART };
	_cleanup_closedir_ DIR *d = caps_open_tasks();
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *de;

	*sent = 0;
	if (!d)
		return -errno;
	sigemptyset(&sa.sa_mask);
	if (sigaction(DROP_SIGNAL, &sa, NULL) < 0)
		return -errno;
	atomic_store(&drop_acks, 0);
	while ((de = readdir(d))) {
		uint64_t tid;
		if (parse_u64(de->d_name, 1, INT32_MAX, &tid) < 0 || (pid_t)tid == self)
			continue;
		if (syscall(SYS_tgkill, getpid(), (pid_t)tid, DROP_SIGNAL) == 0)
			(*sent)++;
	}
	wait_acks(*sent);
	return 0;
}

/* Threads that still hold the capability, by capget(2) on each. */
static int holders(unsigned *threads, unsigned *holding)
{
	_cleanup_closedir_ DIR *d = caps_open_tasks();
	struct dirent *de;
	capdata c;

	*threads = *holding = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		uint64_t tid;
		if (parse_u64(de->d_name, 1, INT32_MAX, &tid) < 0 || cap_get((pid_t)tid, c) < 0)
			continue;
		(*threads)++;
		*holding += holds_admin(c);
	}
	return 0;
}

int caps_drop_sys_admin(const char *why)
{
	unsigned sent = 0, threads, holding;
	capdata main_caps = { { 0 } };
	int r;

	/* Capabilities never come back: without one at the start, none now
	 * (and the sandbox would not let us list the threads anyway). */
	if (prepared && task_dir < 0)
		return 0;
	r = holders(&threads, &holding);
	if (r == 0 && holding == 0)
		return 0;	/* never had it, or already gone */
	if (r == 0)
		r = caps_drop_self();
	if (r == 0)
		r = signal_others(&sent);
	if (r == 0)
		r = holders(&threads, &holding);
	if (r == 0 && holding)
		r = -EPERM;
	(void)cap_get(getpid(), main_caps);
	if (r < 0) {
		log_err("caps: dropping CAP_SYS_ADMIN (%s) failed: %s threads=%u holding=%u", why,
			strerror(-r), threads, holding);
		return r;
	}
	log_info("caps: CAP_SYS_ADMIN dropped (%s) threads=%u CapEff=%08x%08x CapPrm=%08x%08x", why,
		 threads, main_caps[1].effective, main_caps[0].effective, main_caps[1].permitted,
		 main_caps[0].permitted);
	return 0;
}
