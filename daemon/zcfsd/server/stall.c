/* Hung-server detection. A server that holds requests without answering
 * (SIGSTOP, a deadlock, a backing store that never returns) leaves its
 * clients in D state while its process looks alive. zcfsd samples, per
 * published volume, the kernel's count of requests waiting on the
 * connection (fusectl `waiting`: allocated and not yet ended) and the
 * answered-requests counter the server shares (zcfs_stats.h). Requests
 * waiting and the counter frozen for the policy's stall_timeout_ms: the
 * volume is `stalled`, logged, and the server is killed; the ordinary
 * restart path takes its requests over (resend on /dev/fuse, the ring
 * memfd on io_uring). Nothing here blocks: a fusectl read answers from a
 * counter, the shared counters are plain memory, the kill is a signal. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/log.h"
#include "common/parse.h"
#include "server_int.h"

#define STALL_SAMPLE_MS 250

/* -1 when the connection cannot be read (gone, fusectl not mounted). */
static long long conn_waiting(unsigned conn)
{
	char path[64], buf[32];
	_cleanup_close_ int fd = -1;
	uint64_t n;
	ssize_t len;

	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/waiting", conn);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len <= 0)
		return -1;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		len--;
	buf[len] = '\0';
	return parse_u64(buf, 0, INT64_MAX, &n) == 0 ? (long long)n : -1;
}

static void check_volume(struct zcfsd *d, struct zcfsd_volume *v, int64_t now)
{
	uint32_t limit = d->policy->stall_timeout_ms;
	uint64_t answered;
	long long waiting;

	if (!v->sup)
		return;	/* no server ran here yet */
	if (!v->n_targets || !v->srv.pid || v->srv.pidfd < 0 || !v->stats || v->stalled) {
		v->sup->stall_since_ms = 0;
		return;
	}
	answered = zcfs_stats_read(&v->stats->requests);
	waiting = conn_waiting(v->conn);
	if (waiting <= 0 || answered != v->sup->stall_requests) {
		v->sup->stall_requests = answered;
		v->sup->stall_since_ms = 0;
		return;
	}
	if (!v->sup->stall_since_ms) {
		v->sup->stall_since_ms = now;
		return;
	}
	if (now - v->sup->stall_since_ms < limit)
		return;
	v->stalled = true;
	v->stalls++;
	log_warn("event=server-stalled volume=%s pid=%d waiting=%lld answered=%llu frozen_ms=%lld "
		 "timeout_ms=%u action=kill", v->id, (int)v->srv.pid, waiting,
		 (unsigned long long)answered, (long long)(now - v->sup->stall_since_ms), limit);
	/* The pidfd pins the process: never another one that got its pid. */
	if (syscall(SYS_pidfd_send_signal, v->srv.pidfd, SIGKILL, NULL, 0) < 0)
		log_err("event=stall-kill-failed volume=%s pid=%d error=\"%m\"", v->id, (int)v->srv.pid);
}

/* The sampler: every STALL_SAMPLE_MS while a server runs (with no
 * stall_timeout_ms in the policy it samples nothing, and a reload that
 * sets one finds it running); it stops with the last server. */
static void sample(struct zcfsd *d, void *obj)
{
	int64_t now = zcfsd_now_ms();
	bool running = false;

	(void)obj;
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		if (d->policy->stall_timeout_ms)
			check_volume(d, v, now);
		running |= v->n_targets && v->srv.pid;
	}
	if (running)
		zcfsd_deadline_at(d, &d->stall_sample, now + STALL_SAMPLE_MS, sample, NULL);
}

void zcfsd_stall_arm(struct zcfsd *d)
{
	if (!zcfsd_deadline_armed(&d->stall_sample))
		zcfsd_deadline_at(d, &d->stall_sample, zcfsd_now_ms() + STALL_SAMPLE_MS, sample, NULL);
}
