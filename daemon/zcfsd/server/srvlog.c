/* A server's stdout and stderr: the write end of a non-blocking pipe
 * zcfsd drains in its event loop into STATE_DIR/logs/ID.log, a file the
 * server never holds. A compromised server could otherwise fill the
 * state file system (write, fallocate) or truncate its own record.
 *
 * Bounded everywhere: a line is at most SRVLOG_LINE_MAX bytes (the rest
 * is cut, control characters become '?'); lines reach the file at
 * SRVLOG_RATE bytes/s (burst SRVLOG_BURST), the others are dropped and
 * counted (zcfs_volume_log_dropped_bytes_total, and a line in the file);
 * the file is rotated to ID.log.1 at SRVLOG_FILE_MAX, so a volume's logs
 * take at most twice that; zcfsd reads at most SRVLOG_READ_MAX per
 * wakeup and SRVLOG_DISCARD_MAX per second, then stops watching the pipe
 * until the next second (the server's own non-blocking writes then fail:
 * those bytes are lost without zcfsd seeing them). The server's writes
 * never block: when zcfsd is away the pipe fills and its lines are lost.
 *
 * The read end is parked in the server (fd ZCFSD_SERVER_LOG_PARK_FD,
 * like the broker's) so that a restarted zcfsd takes it back with
 * pidfd_getfd(2), and so the server's writes never get EPIPE. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include "common/log.h"
#include "common/parse.h"
#include "server_int.h"

static int log_path(struct zcfsd *d, const struct zcfsd_volume *v, const char *suffix, char **ret)
{
	return asprintf(ret, "%s/logs/%s.log%s", d->state_dir, v->id, suffix) < 0 ? -ENOMEM : 0;
}

static int open_file(struct zcfsd *d, struct zcfsd_volume *v)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	int fd, r;

	r = log_path(d, v, "", &path);
	if (r < 0)
		return r;
	/* O_NONBLOCK: a fifo planted there must not make the open wait. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0640);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	v->sup->log.file_fd = fd;
	v->sup->log.file_size = (uint64_t)st.st_size;
	return 0;
}

static void rotate(struct zcfsd *d, struct zcfsd_volume *v)
{
	_cleanup_free_ char *cur = NULL, *old = NULL;

	v->sup->log.file_fd = safe_close(v->sup->log.file_fd);
	if (log_path(d, v, "", &cur) == 0 && log_path(d, v, ".1", &old) == 0 && rename(cur, old) < 0)
		log_warn("event=server-log-rotate-failed volume=%s error=%m", v->id);
	(void)unlink(cur);	/* if the rename failed: start over rather than grow */
}

/* Appends one line (no newline in TEXT) with time and volume in front. */
static void put_line(struct zcfsd *d, struct zcfsd_volume *v, const char *text, size_t len)
{
	char stamp[32], head[200];
	struct iovec iov[3];
	time_t now = time(NULL);
	struct tm tm;
	ssize_t n;
	int hl;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	hl = snprintf(head, sizeof(head), "%s %s: ", stamp, v->id);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return;
	if (v->sup->log.file_fd >= 0 && v->sup->log.file_size + (size_t)hl + len + 1 > SRVLOG_FILE_MAX)
		rotate(d, v);
	if (v->sup->log.file_fd < 0 && open_file(d, v) < 0)
		return;
	iov[0] = (struct iovec){ head, (size_t)hl };
	iov[1] = (struct iovec){ (void *)text, len };
	iov[2] = (struct iovec){ "\n", 1 };
	n = writev(v->sup->log.file_fd, iov, 3);
	if (n > 0)
		v->sup->log.file_size += (uint64_t)n;
}

static void refill(struct zcfsd_volume *v, int64_t now)
{
	int64_t ms = now - v->sup->log.refill_ms;

	if (ms <= 0)
		return;
	v->sup->log.tokens = MIN((uint64_t)SRVLOG_BURST, v->sup->log.tokens + (uint64_t)ms * SRVLOG_RATE / 1000);
	v->sup->log.refill_ms = now;
}

/* The word after " KEY=" in a line of len bytes (NUL-terminated), into buf. */
static bool line_value(const char *text, size_t len, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key), n;
	const char *p = memmem(text, len, key, kl);

	if (!p)
		return false;
	n = MIN(strcspn(p + kl, " "), (size_t)(text + len - (p + kl)));
	snprintf(buf, size, "%.*s", (int)n, p + kl);
	return true;
}

/* A complete line from the server (len bytes, already cut and cleaned). */
static void on_line(struct zcfsd *d, struct zcfsd_volume *v, const char *text, size_t len)
{
	char num[24];

	/* What the server says it serves with, for status (state/state.c)
	 * and metrics: kept here rather than searched for in the file later. */
	if (len < SRVLOG_LINE_MAX && memmem(text, len, "serving ", 8) &&
	    line_value(text, len, " transport=", v->log.served_transport, sizeof(v->log.served_transport))) {
		/* a metrics label: the server is not trusted to write one */
		if (!line_value(text, len, " bufpool=", v->log.served_bufpool, sizeof(v->log.served_bufpool)) ||
		    v->log.served_bufpool[strspn(v->log.served_bufpool, "abcdefghijklmnopqrstuvwxyz_")])
			snprintf(v->log.served_bufpool, sizeof(v->log.served_bufpool), "%s",
				 memmem(text, len, " bufpool=", 9) ? "unknown" : "off");
		if (!line_value(text, len, " pinned=", num, sizeof(num)) ||
		    parse_u64(num, 0, UINT64_MAX, &v->log.served_pinned) < 0)
			v->log.served_pinned = 0;
	}
	refill(v, zcfsd_now_ms());
	if (v->sup->log.tokens < len + 1) {
		v->log.dropped_bytes += len + 1;
		v->sup->log.dropped_unreported += len + 1;
		return;
	}
	if (v->sup->log.dropped_unreported) {
		char note[128];
		int n = snprintf(note, sizeof(note), "zcfsd: %llu bytes of this server's log dropped "
				 "(over %d bytes/s)", (unsigned long long)v->sup->log.dropped_unreported, SRVLOG_RATE);
		put_line(d, v, note, (size_t)n);
		v->sup->log.dropped_unreported = 0;
	}
	v->sup->log.tokens -= len + 1;
	put_line(d, v, text, len);
}

/* Splits what was read into lines; a line longer than the buffer is cut
 * (marked) and the rest of it skipped up to its newline. */
static void take(struct zcfsd *d, struct zcfsd_volume *v, const char *buf, size_t n)
{
	static const char cut[] = " [cut by zcfsd]";

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == '\n') {
			if (!v->sup->log.line_cut)
				on_line(d, v, v->sup->log.line, v->sup->log.line_len);
			v->sup->log.line_len = 0;
			v->sup->log.line_cut = false;
			continue;
		}
		if (v->sup->log.line_cut) {
			v->log.dropped_bytes++;
			continue;
		}
		if (v->sup->log.line_len == SRVLOG_LINE_MAX - sizeof(cut)) {
			memcpy(v->sup->log.line + v->sup->log.line_len, cut, sizeof(cut) - 1);
			on_line(d, v, v->sup->log.line, v->sup->log.line_len + sizeof(cut) - 1);
			v->log.dropped_bytes++;
			v->sup->log.line_len = 0;
			v->sup->log.line_cut = true;
			continue;
		}
		v->sup->log.line[v->sup->log.line_len++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
}

static void unmute(struct zcfsd *d, void *obj);

/* Muted: not read until the second is over. */
static void watch(struct zcfsd *d, struct zcfsd_volume *v, bool on)
{
	(void)zcfsd_watch_events(d, &v->sup->log.watch, on ? EPOLLIN : 0);
	v->sup->log.muted = !on;
	if (on)
		zcfsd_deadline_cancel(d, &v->sup->log.unmute);
	else
		zcfsd_deadline_at(d, &v->sup->log.unmute, v->sup->log.second_ms + 1000, unmute, v);
}

static void unmute(struct zcfsd *d, void *obj)
{
	struct zcfsd_volume *v = obj;

	if (v->sup->log.rfd >= 0 && v->sup->log.muted)
		watch(d, v, true);
}

ssize_t zcfsd_srvlog_read(int fd, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
}

/* Reads what is there, within the per-wakeup and per-second budgets.
 * Returns 0 at EOF (no writer left), 1 otherwise. */
static int drain(struct zcfsd *d, struct zcfsd_volume *v, size_t budget)
{
	char buf[16384];
	int64_t now = zcfsd_now_ms();

	if (now - v->sup->log.second_ms >= 1000) {
		v->sup->log.second_ms = now;
		v->sup->log.read_this_second = 0;
	}
	while (budget) {
		ssize_t n = zcfsd_srvlog_read(v->sup->log.rfd, buf, MIN(sizeof(buf), budget));
		if (n == 0)
			return 0;
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 1 : 0;
		budget -= (size_t)n;
		v->sup->log.read_this_second += (uint64_t)n;
		take(d, v, buf, (size_t)n);
		if (v->sup->log.read_this_second >= SRVLOG_DISCARD_MAX) {
			if (!v->sup->log.muted && v->sup->log.mutes++ % 100 == 0)
				log_warn("event=server-log-flood volume=%s action=\"not read for the rest of "
					 "the second\" times=%u", v->id, v->sup->log.mutes);
			watch(d, v, false);
			return 1;
		}
	}
	return 1;
}

void zcfsd_srvlog_close(struct zcfsd *d, struct zcfsd_volume *v)
{
	if (v->sup->log.rfd < 0)
		return;
	/* What a dead server wrote last is still in the pipe. */
	(void)drain(d, v, SRVLOG_READ_MAX);
	zcfsd_unwatch(d, &v->sup->log.watch);
	zcfsd_deadline_cancel(d, &v->sup->log.unmute);
	v->sup->log.rfd = safe_close(v->sup->log.rfd);
	v->sup->log.file_fd = safe_close(v->sup->log.file_fd);
	v->sup->log.line_len = 0;
	v->sup->log.line_cut = false;
	v->sup->log.muted = false;
}

static void readable(struct zcfsd *d, void *obj, uint32_t events);

static int install(struct zcfsd *d, struct zcfsd_volume *v, int rfd)
{
	int r;

	if (!v->sup->log.line && !(v->sup->log.line = malloc(SRVLOG_LINE_MAX)))
		return -ENOMEM;
	r = zcfsd_watch(d, &v->sup->log.watch, rfd, EPOLLIN, readable, v);
	if (r < 0)
		return r;
	v->sup->log.rfd = rfd;
	v->sup->log.tokens = SRVLOG_BURST;
	v->sup->log.refill_ms = zcfsd_now_ms();
	return 0;
}

int zcfsd_srvlog_pipe(struct zcfsd *d, struct zcfsd_volume *v, int *wfd)
{
	int p[2], r;

	zcfsd_srvlog_close(d, v);
	v->log.served_transport[0] = '\0';	/* the new server says its own */
	v->log.served_bufpool[0] = '\0';
	v->log.served_pinned = 0;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	r = install(d, v, p[0]);
	if (r < 0) {
		safe_close(p[0]);
		safe_close(p[1]);
		return r;
	}
	*wfd = p[1];
	return 0;
}

int zcfsd_srvlog_take(struct zcfsd *d, struct zcfsd_volume *v, int rfd)
{
	int r;

	zcfsd_srvlog_close(d, v);
	v->log.served_transport[0] = '\0';
	v->log.served_bufpool[0] = '\0';
	v->log.served_pinned = 0;
	r = install(d, v, rfd);
	if (r < 0)
		safe_close(rfd);
	return r;
}

void zcfsd_srvlog_adopt(struct zcfsd *d, struct zcfsd_volume *v, int pidfd)
{
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, ZCFSD_SERVER_LOG_PARK_FD, 0), fl;
	const char *why = NULL;
	struct stat st;

	/* Whatever the server put at that number: only a pipe's read end is
	 * drained (non-blocking), anything else could make a read wait. */
	if (fd < 0)
		why = "no-fd";
	else if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))
		why = "not-a-pipe";
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || (fl & O_ACCMODE) != O_RDONLY ||
		 fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		why = "not-a-read-end";
	else if (install(d, v, fd) < 0)
		why = "epoll";
	if (why) {
		log_warn("event=server-log-not-adopted volume=%s reason=%s effect=\"this server's "
			 "output is lost until it is restarted\"", v->id, why);
		safe_close(fd);
	}
}

static void readable(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;

	(void)events;
	if (drain(d, v, SRVLOG_READ_MAX) == 0) {
		/* EOF: every writer is gone; a server exit follows. */
		zcfsd_unwatch(d, &v->sup->log.watch);
		zcfsd_deadline_cancel(d, &v->sup->log.unmute);
		v->sup->log.rfd = safe_close(v->sup->log.rfd);
		v->sup->log.file_fd = safe_close(v->sup->log.file_fd);
	}
}
