/* Supervision: a server that dies is restarted on the same fuse
 * connection (our dup of its fd) with backoff, and the kernel is told to
 * resend what the dead server had read but not answered. After a daemon
 * restart, running servers are re-adopted through their pidfds. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "common/log.h"
#include "kernel/zcfs_fuse_abi.h"
#include "daemon/zcfsd/mounts/mounts.h"
#include "daemon/zcfsd/broker/broker.h"
#include "daemon/zcfsd/state/state.h"
#include "server_int.h"

/* V's record let go with V (model/volume.c calls it): the log pipe and
 * file, a standby's pipes (the standby, given up and killed, reaped if
 * it is gone already), the holder's pidfd (reaped likewise). */
static void sup_free(struct zcfsd_volume *v)
{
	struct zcfsd_supervision *s = v->sup;

	safe_close(s->log.rfd);
	safe_close(s->log.file_fd);
	free(s->log.line);
	if (s->standby.pidfd >= 0)
		(void)waitid(P_PIDFD, (id_t)s->standby.pidfd, &(siginfo_t){ 0 }, WEXITED | WNOHANG);
	safe_close(s->standby.pidfd);
	safe_close(s->standby.ready_fd);
	safe_close(s->standby.go_fd);
	safe_close(s->standby.log_rfd);
	safe_close(s->standby.broker_fd);
	if (s->holder.pidfd >= 0 && !s->holder.adopted)
		(void)waitid(P_PIDFD, (id_t)s->holder.pidfd, &(siginfo_t){ 0 }, WEXITED | WNOHANG);
	safe_close(s->holder.pidfd);
	free(s);
	v->sup = NULL;
	v->sup_free = NULL;
}

int zcfsd_sup_attach(struct zcfsd_volume *v)
{
	struct zcfsd_supervision *s;

	if (v->sup)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->holder.pidfd = -1;
	s->standby = (struct zcfsd_standby){ .pidfd = -1, .ready_fd = -1, .go_fd = -1, .log_rfd = -1,
					     .broker_fd = -1 };
	s->log.rfd = -1;
	s->log.file_fd = -1;
	v->sup = s;
	v->sup_free = sup_free;
	return 0;
}

unsigned zcfsd_restart_delay_ms(unsigned *unserved, bool served)
{
	unsigned n, ms = RESTART_BACKOFF_MIN_MS;

	if (served) {
		*unserved = 0;
		return 0;
	}
	n = ++*unserved;
	if (n <= RESTART_FREE_TRIES)
		return 0;
	for (n -= RESTART_FREE_TRIES + 1; n && ms < RESTART_BACKOFF_MAX_MS; n--)
		ms *= 2;
	return MIN(ms, RESTART_BACKOFF_MAX_MS);
}

/* Served: stayed up long enough that it is not failing at start. (The
 * request counters cannot tell: a restarted io_uring server answers its
 * own kick, and a server under attack could move them at will.) A server
 * killed under load is back at once; one that crashes at start backs off. */
static bool server_served(const struct zcfsd_volume *v)
{
	return zcfsd_now_ms() - v->sup->started_ms >= RESTART_SERVED_MS;
}

/* A connection that is aborted polls as an error on every device file
 * (fuse_dev_poll: EPOLLERR once !connected), our dup included. */
static bool conn_aborted(int fuse_fd)
{
	struct pollfd p = { .fd = fuse_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLNVAL));
}

/* SI of the exited server PID. Not reapable yet (a ptrace tracer, such as
 * a debugger or an attacker's injector, reaps it first; SI is zeroed):
 * its status from /proc, so a seccomp kill is not logged as signal=0. */
static void exit_status(struct zcfsd_volume *v, pid_t pid, siginfo_t *si)
{
	int st;

	if (!si->si_pid && !v->sup->adopted && pid > 0 && zcfsd_proc_exit_status(pid, &st) == 0 &&
	    (WIFEXITED(st) || WIFSIGNALED(st))) {
		si->si_code = WIFEXITED(st) ? CLD_EXITED : CLD_KILLED;
		si->si_status = WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st);
	}
	if (si->si_code != CLD_EXITED && si->si_status == SIGSYS)
		v->seccomp_kills++;
}

static void on_server_exit(struct zcfsd *d, struct zcfsd_volume *v, bool planned)
{
	int64_t ran = zcfsd_wall() - v->srv.started_at, seen_us = wall_us();
	bool served = planned || server_served(v);
	siginfo_t si;
	pid_t pid = v->srv.pid;
	zcfsd_server_reap(d, v, &si);
	exit_status(v, pid, &si);
	/* Its backing ids stay for its successor (zcfsd_broker_carry). */
	zcfsd_broker_server_gone(d, v);
	if (!v->n_targets || v->fuse_fd < 0) {
		zcfsd_standby_give_up(d, v, "volume-stopped");
		zcfsd_broker_stop(d, v);
		return;
	}
	if (conn_aborted(v->fuse_fd)) {
		/* Aborted (fusectl abort, or the kernel gave up on it): every
		 * server started on it would exit at once and the mount only
		 * answers ENOTCONN, so restarting would loop forever and a
		 * publish of the same target would claim success on a dead
		 * mount. Unpublish instead; the data stays, a publish starts
		 * over on a new connection. */
		log_err("event=connection-aborted volume=%s conn=%u pid=%d action=unpublish targets=%zu",
			v->id, v->conn, (int)pid, v->n_targets);
		zcfsd_volume_teardown(d, v, true);
		v->detached_reason = "its fuse connection was aborted; zcfsd unmounted its targets (publish again to serve it)";
		return;
	}
	v->sup->backoff_ms = zcfsd_restart_delay_ms(&v->sup->unserved_exits, served);
	zcfsd_server_restart_at(d, v, zcfsd_now_ms() + v->sup->backoff_ms);
	if (v->sup->adopted)
		log_warn("event=server-exit volume=%s pid=%d status=unknown(adopted) ran_s=%lld restart_in_ms=%u wall_us=%lld",
			 v->id, (int)pid, (long long)ran, v->sup->backoff_ms, (long long)seen_us);
	else
		log_msg(si.si_status == SIGSYS && si.si_code != CLD_EXITED ? LOG_ERR : LOG_WARNING,
			"event=server-exit volume=%s pid=%d %s=%d%s ran_s=%lld restart_in_ms=%u%s wall_us=%lld",
			v->id, (int)pid, si.si_code == CLD_EXITED ? "status" : "signal", si.si_status,
			si.si_status == SIGSYS && si.si_code != CLD_EXITED ? " reason=seccomp-kill" : "",
			(long long)ran, v->sup->backoff_ms, planned ? " planned=yes" : "", (long long)seen_us);
	/* A ready standby serves now; one still starting is of no use to
	 * a restart that is due at once. */
	if (zcfsd_standby_promote(d, v)) {
		zcfsd_deadline_cancel(d, &v->sup->restart);
		if (zcfsd_watch_pidfd(d, v) < 0)
			log_warn("event=watch-failed volume=%s pid=%d", v->id, (int)v->srv.pid);
	} else
		zcfsd_standby_give_up(d, v, "predecessor-exited-first");
}

static void restart(struct zcfsd *d, void *obj)
{
	struct zcfsd_volume *v = obj;
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	struct zcfs_err e = { 0 };
	int r;

	zcfsd_deadline_cancel(d, &v->sup->restart);
	if (!t) {
		log_err("event=restart-failed volume=%s reason=tenant-not-in-policy action=teardown", v->id);
		zcfsd_volume_teardown(d, v, true);
		(void)zcfsd_state_save(d);
		return;
	}
	v->srv.restarts++;
	r = zcfsd_server_start(d, v, t, NULL, &e);
	if (r == -ENOTDIR || r == -ENOENT) {
		/* Retrying cannot help and clients would wait on a connection
		 * nobody serves: unpublish; the operator restores the dir. */
		log_err("event=restart-failed volume=%s error=\"%s\" action=unpublish", v->id, e.msg);
		zcfsd_volume_teardown(d, v, true);
		v->detached_reason = "its storage directory was removed or replaced; zcfsd unmounted its targets";
		(void)zcfsd_state_save(d);
		return;
	}
	if (r < 0) {
		log_err("event=restart-failed volume=%s error=\"%s\"", v->id, e.msg);
		v->sup->backoff_ms = zcfsd_restart_delay_ms(&v->sup->unserved_exits, false);
		zcfsd_server_restart_at(d, v, zcfsd_now_ms() + v->sup->backoff_ms);
		(void)zcfsd_state_save(d);
		return;
	}
	/* Requests the dead server had read stay on the connection's
	 * processing list; RESEND puts them back in the queue for the new
	 * one. */
	r = zcfsd_send_resend(v->fuse_fd);
	log_info("event=server-restart volume=%s pid=%d restarts=%u resend=%s wall_us=%lld", v->id,
		 (int)v->srv.pid, v->srv.restarts, r < 0 ? strerror(-r) : "ok", (long long)wall_us());
	(void)zcfsd_state_save(d);
}

void zcfsd_server_restart_at(struct zcfsd *d, struct zcfsd_volume *v, int64_t due_ms)
{
	zcfsd_deadline_at(d, &v->sup->restart, due_ms, restart, v);
}

/* zcfsd's end of the server's passthrough broker, parked in the server;
 * a server without one (tenant without passthrough) simply has none. */
static void readopt_broker(struct zcfsd *d, struct zcfsd_volume *v)
{
	const struct policy_tenant *t = policy_find_tenant(d->policy, v->tenant);
	_cleanup_free_ char *storage = NULL;
	int r;

	if (!t || !t->passthrough || zcfsd_storage_path(d, v, &storage) < 0)
		return;
	r = zcfsd_broker_adopt(v->id, v->srv.pidfd, v->fuse_fd, storage, t->uid, t->gid, &v->broker);
	if (r == 0)
		r = zcfsd_broker_watch(d, v);
	if (r < 0)
		log_warn("event=readopt-broker-failed volume=%s error=%s effect=\"no new passthrough opens\"",
			 v->id, strerror(-r));
}

/* Takes over one published volume recorded by a previous zcfsd. */
static int readopt_one(struct zcfsd *d, struct zcfsd_volume *v, const char **why)
{
	size_t i;
	unsigned conn;
	int r;

	*why = "no-server-recorded";
	if (v->srv.pid <= 0)
		return -ESRCH;
	*why = "server-gone";
	v->srv.pidfd = pidfd_open(v->srv.pid, 0);
	if (v->srv.pidfd < 0) {
		v->srv.pid = 0;
		return -errno;
	}
	v->sup->adopted = true;
	/* Checked after pidfd_open: if the pid was reused, the start time
	 * differs; if not, the pidfd now pins the right process. */
	*why = "pid-reused";
	if (zcfsd_proc_starttime(v->srv.pid) != v->srv.starttime) {
		/* Someone else's process now: never signal it. */
		v->srv.pidfd = safe_close(v->srv.pidfd);
		v->srv.pid = 0;
		return -ESRCH;
	}
	/* After an upgrade (re-exec) the servers are still our children:
	 * ours to reap, or they stay zombies. */
	v->sup->adopted = zcfsd_proc_ppid(v->srv.pid) != getpid();
	*why = "pidfd_getfd-failed";
	v->fuse_fd = (int)syscall(SYS_pidfd_getfd, v->srv.pidfd, ZCFSD_SERVER_FUSE_FD, 0);
	if (v->fuse_fd < 0)
		return -errno;
	(void)fcntl(v->fuse_fd, F_SETFD, FD_CLOEXEC);
	/* The server may have put anything at that number: a pipe it filled
	 * would make zcfsd's next FUSE_NOTIFY_RESEND write block forever. */
	*why = "fuse-fd-not-dev-fuse";
	r = zcfsd_check_dev_fuse(v->fuse_fd);
	if (r < 0) {
		v->fuse_fd = safe_close(v->fuse_fd);
		return r;
	}
	/* The counters it keeps: the same memory, if it has them. */
	(void)zcfsd_stats_adopt(v, v->srv.pidfd);
	zcfsd_ringfd_adopt(v, v->srv.pidfd);
	zcfsd_srvlog_adopt(d, v, v->srv.pidfd);
	/* Its rings' owner. If it is gone, so are the rings: the server
	 * cannot go on and is restarted with a new holder. */
	r = zcfsd_holder_readopt(d, v);
	if (r < 0) {
		log_warn("event=readopt-holder-failed volume=%s holder=%d error=%s action=restart-server",
			 v->id, (int)v->holder.pid, strerror(-r));
		v->holder.pid = 0;
		(void)syscall(SYS_pidfd_send_signal, v->srv.pidfd, SIGKILL, NULL, 0);
	}
	readopt_broker(d, v);
	*why = "connection-gone";
	if (!zcfsd_conn_exists(v->conn))
		return -ENOTCONN;
	/* Keep the targets still mounted on this connection. */
	for (i = 0; i < v->n_targets;) {
		if (zcfsd_mount_conn_at(v->targets[i], &conn) == 0 && conn == v->conn) {
			i++;
			continue;
		}
		log_warn("event=readopt-target-gone volume=%s target=%s", v->id, v->targets[i]);
		free(v->targets[i]);
		memmove(&v->targets[i], &v->targets[i + 1], (v->n_targets - i - 1) * sizeof(char *));
		v->n_targets--;
	}
	*why = "no-target-mounted";
	if (!v->n_targets)
		return -ENOENT;
	r = zcfsd_watch_pidfd(d, v);
	*why = "epoll";
	return r;
}

void zcfsd_readopt(struct zcfsd *d)
{
	for (struct zcfsd_volume *v = d->volumes; v; v = v->next) {
		const char *why;
		int r;

		if (!v->n_targets)
			continue;
		r = zcfsd_sup_attach(v);
		why = "out-of-memory";
		if (r == 0)
			r = readopt_one(d, v, &why);
		if (r == 0) {
			log_info("event=readopt volume=%s pid=%d conn=%u targets=%zu", v->id,
				 (int)v->srv.pid, v->conn, v->n_targets);
			if (v->ring_holder)
				log_info("event=readopt-holder volume=%s holder=%d", v->id, (int)v->holder.pid);
			continue;
		}
		/* What cannot be taken over is cleaned up, never left stale:
		 * lazy unmounts, and the server (if any) is stopped. */
		log_err("event=readopt-failed volume=%s pid=%d reason=%s error=%s action=cleanup",
			v->id, (int)v->srv.pid, why, strerror(-r));
		if (v->srv.pidfd >= 0 && v->fuse_fd < 0)
			(void)syscall(SYS_pidfd_send_signal, v->srv.pidfd, SIGKILL, NULL, 0);
		if (v->fuse_fd < 0 && v->conn && zcfsd_conn_ours(v->conn, v->id))
			(void)zcfsd_conn_abort(v->conn);
		/* Its ring holder, if it is still the recorded process: the
		 * teardown kills it (not left pinning the tenant's memory). */
		if (v->ring_holder && v->sup && v->sup->holder.pidfd < 0 && zcfsd_holder_readopt(d, v) < 0)
			v->holder.pid = 0;
		zcfsd_volume_teardown(d, v, true);
	}
	(void)zcfsd_state_save(d);
}

/* V's server's pidfd fired: a long operation waiting on it takes it
 * (server.h on_exit), else supervision. */
static void server_exited(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;

	(void)events;
	if (v->sup->on_exit)
		v->sup->on_exit(d, v);
	else
		zcfsd_server_exited(d, v, false);
}

void zcfsd_server_exited(struct zcfsd *d, struct zcfsd_volume *v, bool planned)
{
	on_server_exit(d, v, planned);
	/* A restart due now saves state.json itself, after the fork: the
	 * save's fsync stood between the exit and the successor (9-17 ms
	 * p50, up to 98 ms under load, bench/notes/supervision.md "Where a
	 * restart's stall goes"). */
	if (zcfsd_deadline_armed(&v->sup->restart) && v->sup->restart.due_ms <= zcfsd_now_ms())
		restart(d, v);
	else
		(void)zcfsd_state_save(d);
}

int zcfsd_watch_pidfd(struct zcfsd *d, struct zcfsd_volume *v)
{
	int r = zcfsd_watch(d, &v->sup->pidfd_watch, v->srv.pidfd, EPOLLIN, server_exited, v);

	/* What the rest of the folder arms by time (holder.c). */
	zcfsd_deadline_init(&v->sup->restart, restart, v);
	if (r == 0)
		zcfsd_stall_arm(d);
	return r;
}

int zcfsd_server_start(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       int *ready_fd, struct zcfs_err *e)
{
	int r = zcfsd_sup_attach(v);

	if (r < 0) {
		if (ready_fd)
			*ready_fd = -1;
		return zcfs_fail(e, ZCFS_INTERNAL, r, "out of memory");
	}
	r = zcfsd_spawn_server_ready(d, v, t, ready_fd, e);
	if (r == 0 && (r = zcfsd_watch_pidfd(d, v)) < 0) {
		log_warn("event=watch-failed volume=%s error=%s", v->id, strerror(-r));
		r = 0;
	}
	return r;
}
