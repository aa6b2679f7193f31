/* A planned restart's successor started first (server.h,
 * docs/supervision.md "Planned restart"): the standby runs zcfs-serve
 * --resume --standby-fd up to the point where it would read the
 * connection, says 'R', and waits; its predecessor is asked to hand over
 * only then, and the standby is let go ('G') as soon as that one's exit
 * is seen. The client-visible gap is the hand-over, the exit and the
 * standby's resume, not the successor's whole start. This file is the
 * standby's process and pipes; when each step happens is the planned
 * restart's state machine (lifecycle/restart.c), which watches its
 * ready pipe and pidfd (the watches live in v->sup->standby, so a give-up
 * here turns them off). */
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/log.h"
#include "daemon/zcfsd/broker/broker.h"
#include "server_int.h"

static void unwatch_ready(struct zcfsd *d, struct zcfsd_standby *n)
{
	if (n->ready_fd < 0)
		return;
	zcfsd_unwatch(d, &n->ready_watch);
	n->ready_fd = safe_close(n->ready_fd);
}

/* Closes every fd of N but its pidfd. */
static void close_pipes(struct zcfsd *d, struct zcfsd_standby *n)
{
	unwatch_ready(d, n);
	n->go_fd = safe_close(n->go_fd);
	n->log_rfd = safe_close(n->log_rfd);
	n->broker_fd = safe_close(n->broker_fd);
}

/* Forgotten: its watches off, the record empty. */
static void clear(struct zcfsd *d, struct zcfsd_standby *n)
{
	zcfsd_unwatch(d, &n->pidfd_watch);
	zcfsd_unwatch(d, &n->ready_watch);
	*n = (struct zcfsd_standby){ .pidfd = -1, .ready_fd = -1, .go_fd = -1, .log_rfd = -1,
				     .broker_fd = -1 };
	zcfsd_changed(d);
}

/* What a standby that failed said: its pipe is not the volume's log
 * (the predecessor's is), so it goes into zcfsd's own, bounded. */
static void log_output(const struct zcfsd_volume *v, int rfd)
{
	char buf[2048], *line, *save = NULL;
	ssize_t n;

	if (rfd < 0)
		return;
	n = zcfsd_srvlog_read(rfd, buf, sizeof(buf) - 1);	/* it may be alive still */
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_warn("event=standby-output volume=%s line=\"%.300s\"", v->id, line);
}

int zcfsd_standby_start(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	struct zcfsd_standby *n = &v->sup->standby;
	int r;

	if (!t)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, -ENOENT,
				 "volume '%s': tenant '%s' is not in the policy", v->id, v->tenant);
	if (n->pid)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EBUSY,
				 "volume '%s': the last standby is still exiting", v->id);
	r = zcfsd_spawn_standby(d, v, t, e);
	if (r < 0) {
		close_pipes(d, n);
		if (n->pidfd >= 0) {
			(void)syscall(SYS_pidfd_send_signal, n->pidfd, SIGKILL, NULL, 0);
			zcfsd_reap_release(d, n->pidfd, true, NULL);
		}
		clear(d, n);
		return r;
	}
	zcfsd_changed(d);
	log_info("event=server-standby volume=%s pid=%d old_pid=%d wall_us=%lld", v->id, (int)n->pid,
		 (int)v->srv.pid, (long long)wall_us());
	return 0;
}

/* Exited already (before its promotion): how, logged. */
static void log_exit(const struct zcfsd_volume *v)
{
	siginfo_t si = { 0 };
	char how[96];

	if (waitid(P_PIDFD, (id_t)v->sup->standby.pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || !si.si_pid)
		return;
	zcfsd_exit_describe(&si, how, sizeof(how));
	log_warn("event=standby-exit volume=%s pid=%d how=\"%s\"", v->id, (int)v->sup->standby.pid, how);
}

void zcfsd_standby_give_up(struct zcfsd *d, struct zcfsd_volume *v, const char *why)
{
	struct zcfsd_standby *n = v->sup ? &v->sup->standby : NULL;

	if (!n || !n->pid)
		return;
	log_exit(v);
	log_warn("event=standby-given-up volume=%s pid=%d reason=%s", v->id, (int)n->pid, why);
	log_output(v, n->log_rfd);
	/* It has read nothing of the connection: a kill loses nothing. It
	 * is reaped now or, still exiting, by the loop (model/reap.c). */
	(void)syscall(SYS_pidfd_send_signal, n->pidfd, SIGKILL, NULL, 0);
	close_pipes(d, n);
	zcfsd_unwatch(d, &n->pidfd_watch);
	zcfsd_reap_release(d, n->pidfd, true, NULL);
	clear(d, n);
}

int zcfsd_standby_ready_read(struct zcfsd *d, struct zcfsd_volume *v)
{
	char buf[8];
	ssize_t n = read(v->sup->standby.ready_fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -EAGAIN;
	unwatch_ready(d, &v->sup->standby);
	if (n != 1 || buf[0] != 'R')
		return n == 0 ? -EPIPE : -EPROTO;
	v->sup->standby.ready = true;
	log_info("event=server-standby-ready volume=%s pid=%d exec_to_ready_ms=%.1f wall_us=%lld",
		 v->id, (int)v->sup->standby.pid, (double)(wall_us() - v->sup->standby.exec_us) / 1000,
		 (long long)wall_us());
	return 0;
}

bool zcfsd_standby_promote(struct zcfsd *d, struct zcfsd_volume *v)
{
	struct zcfsd_standby *n = &v->sup->standby;
	int64_t go_us;
	int r;

	if (!n->pid || !n->ready)
		return false;
	/* Its pidfd is the server's now: watched as the server's (supervise.c). */
	zcfsd_unwatch(d, &n->pidfd_watch);
	v->srv.restarts++;
	v->srv.pid = n->pid;
	v->srv.pidfd = n->pidfd;
	v->srv.starttime = n->starttime;
	v->srv.started_at = zcfsd_wall();
	v->sup->started_ms = zcfsd_now_ms();
	v->sup->fork_us = n->fork_us;
	v->sup->exec_us = n->exec_us;
	v->sup->adopted = false;
	v->stalled = false;
	v->sup->stall_since_ms = 0;
	if (zcfsd_srvlog_take(d, v, n->log_rfd) < 0)
		log_warn("event=srvlog-failed volume=%s effect=\"its output is lost\"", v->id);
	zcfsd_broker_standby_take(d, v, n->broker_fd);
	/* What the predecessor had read from /dev/fuse and not answered goes
	 * back to the queue before the successor reads. */
	r = zcfsd_send_resend(v->fuse_fd);
	go_us = wall_us();
	if (write(n->go_fd, "G", 1) != 1)	/* it died: its pidfd, now v->srv's, says so */
		log_warn("event=standby-go-failed volume=%s pid=%d error=%m", v->id, (int)n->pid);
	log_info("event=server-restart volume=%s pid=%d restarts=%u resend=%s standby=yes wall_us=%lld",
		 v->id, (int)v->srv.pid, v->srv.restarts, r < 0 ? strerror(-r) : "ok",
		 (long long)go_us);
	safe_close(n->go_fd);
	unwatch_ready(d, n);
	clear(d, n);
	return true;
}
