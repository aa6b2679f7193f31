/* Starting a volume server: fork, give the child only the fuse fd, its
 * log pipe (server/srvlog.c) and the tenant's identity (no supplementary groups, no_new_privs, no
 * capabilities, RLIMIT_MEMLOCK = the granted bytes), exec zcfs-serve
 * --sandbox. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cap-ng.h>
#include "common/log.h"
#include "common/openat2.h"
#include "common/ring_holder.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/broker/broker.h"
#include "server_int.h"

/* Child side of the spawn, step by step; each returns -errno. */

/* Its own session; zcfsd runs at OOMScoreAdjust=-900 (the node's volumes
 * depend on it), a server is restarted by zcfsd, so it goes back to 0. */
static void child_session(void)
{
	int fd;

	(void)setsid();
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "0", 1);
		close(fd);
	}
}

/* An fd the server gets: zcfsd's FD at AT in the server, when WANT. */
struct child_fd {
	int fd;
	int at;
	bool want;
};

/* Every fd we keep is first lifted above the highest number a server
 * gets (a holder's rings come last), so that placing them cannot
 * overwrite one another. */
#define CHILD_FD_LIFT(nrings) (ZCFS_HOLDER_RING_FD + (int)(nrings))

/* What one new server gets besides the volume's fuse fd, counters and
 * ring memfd (-1: not given). The parent closes log_w, ready_w and go_r
 * once the child has them. */
struct spawn_fds {
	int log_w;		/* its stdout and stderr */
	int log_park;		/* that pipe's read end, parked */
	int ready_w;		/* --ready-fd */
	int go_r;		/* --standby-fd */
	int broker_peer;	/* --broker-fd */
	int broker_park;	/* zcfsd's end of the broker socket, parked */
	/* ring_holder volumes: the holder's ring fds, at ZCFS_HOLDER_RING_FD.. */
	int rings[ZCFS_HOLDER_RINGS_MAX];
	unsigned nrings;
};

#define SPAWN_FDS_INIT { .log_w = -1, .ready_w = -1, .go_r = -1, .broker_peer = -1, \
			 .broker_park = -1 }

static void spawn_fds_close_rings(struct spawn_fds *f)
{
	for (unsigned i = 0; i < f->nrings; i++)
		f->rings[i] = safe_close(f->rings[i]);
	f->nrings = 0;
}

/* Stdin /dev/null, the fds of model/model.h's ZCFSD_SERVER_*_FD list
 * (0..11), a holder's rings (12..) and nothing else. *ERRFD, the error pipe, ends at
 * ZCFSD_SERVER_ERR_FD. */
static int child_fds(const struct zcfsd_volume *v, const struct spawn_fds *f, int *errfd)
{
	struct child_fd keep[] = {	/* in the order of AT */
		{ f->log_w, STDOUT_FILENO, true },
		{ f->log_w, STDERR_FILENO, true },
		{ v->fuse_fd, ZCFSD_SERVER_FUSE_FD, true },
		{ v->stats_fd, ZCFSD_SERVER_STATS_FD, true },
		{ f->broker_peer, ZCFSD_SERVER_BROKER_FD, f->broker_peer >= 0 },
		{ f->broker_park, ZCFSD_SERVER_BROKER_PARK_FD, f->broker_peer >= 0 },
		{ v->ring_fd, ZCFSD_SERVER_RING_FD, v->ring_fd >= 0 },
		{ f->log_park, ZCFSD_SERVER_LOG_PARK_FD, true },
		{ f->ready_w, ZCFSD_SERVER_READY_FD, f->ready_w >= 0 },
		{ f->go_r, ZCFSD_SERVER_STANDBY_FD, f->go_r >= 0 },
	};
	int efd, null, last = 0;

	int rings[ZCFS_HOLDER_RINGS_MAX];

	efd = fcntl(*errfd, F_DUPFD_CLOEXEC, CHILD_FD_LIFT(f->nrings));
	if (efd < 0)
		return -errno;
	*errfd = efd;
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (keep[i].want && (keep[i].fd = fcntl(keep[i].fd, F_DUPFD, CHILD_FD_LIFT(f->nrings))) < 0)
			return -errno;
	for (unsigned i = 0; i < f->nrings; i++)
		if ((rings[i] = fcntl(f->rings[i], F_DUPFD, CHILD_FD_LIFT(f->nrings))) < 0)
			return -errno;
	null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup3(efd, ZCFSD_SERVER_ERR_FD, O_CLOEXEC) < 0)
		return -errno;
	*errfd = ZCFSD_SERVER_ERR_FD;
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++) {
		if (!keep[i].want)
			continue;
		if (dup2(keep[i].fd, keep[i].at) < 0)
			return -errno;
		last = keep[i].at;
	}
	for (unsigned i = 0; i < f->nrings; i++) {
		if (dup2(rings[i], ZCFS_HOLDER_RING_FD + (int)i) < 0)
			return -errno;
		last = ZCFS_HOLDER_RING_FD + (int)i;
	}
	if (syscall(SYS_close_range, last + 1, ~0U, 0) < 0)
		return -errno;
	return 0;
}

/* io_uring charges pinned pages to the uid and compares the uid's total
 * with the caller's limit, so the limit is what the tenant was granted
 * in total (this volume's share included). */
static int child_limits(uint64_t memlock)
{
	struct rlimit rl = { memlock, memlock };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* Becomes ARGV (serve_argv.c) as the tenant; a failed step's errno goes
 * to zcfsd through ERRFD. Never returns. */
_Noreturn static void child_exec(const struct zcfsd_volume *v, const struct policy_tenant *t,
				 const struct spawn_fds *f, int errfd, uint64_t memlock,
				 bool sys_admin, char *const argv[])
{
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	int r, err;

	child_session();
	r = child_fds(v, f, &errfd);
	if (r == 0)
		r = child_limits(memlock);
	if (r == 0)
		r = zcfsd_server_identity(t, sys_admin);
	if (r == 0) {
		execve(argv[0], argv, envp);
		r = -errno;
	}
	err = r < 0 ? -r : EIO;
	if (write(errfd, &err, sizeof(err)) < 0) {
		/* nothing left to report through */
	}
	_exit(127);
}

/* zcfs-serve opens SOURCE by path and follows symlinks: a storage dir
 * replaced by a symlink (or by something not the tenant's) since the
 * publish checked it would have a restarted server serve whatever it
 * points to. Refused with -ENOTDIR. */
static int check_storage(const char *src, const struct policy_tenant *t)
{
	_cleanup_close_ int fd = open_nofollow(src, O_PATH | O_DIRECTORY);
	struct stat st;

	if (fd < 0)
		return fd == -ENOENT ? -ENOENT : -ENOTDIR;
	if (fstat(fd, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) && st.st_uid == t->uid ? 0 : -ENOTDIR;
}

/* --ready-fd's pipe: *rd zcfsd's end, *wr the server's. */
static int spawn_ready_pipe(int *rd, int *wr)
{
	int y[2], r = zcfsd_ready_pipe(y);

	if (r < 0)
		return r;
	*rd = y[0];
	*wr = y[1];
	return 0;
}

static void log_start(const struct zcfsd_volume *v, const struct policy_tenant *t, pid_t pid,
		      uint64_t memlock, int64_t fork_us, int64_t exec_us, const char *how)
{
	log_info("event=server-start volume=%s tenant=%s pid=%d uid=%u memlock=%llu restarts=%u "
		 "passthrough=%s caps=%s%s fork_us=%lld exec_ms=%.1f", v->id, v->tenant, (int)pid,
		 (unsigned)t->uid, (unsigned long long)memlock, v->srv.restarts,
		 v->broker ? "brokered" : "off",
		 zcfsd_server_gets_sys_admin(v, t) ? "CAP_SYS_ADMIN-until-rings-registered" : "none",
		 how, (long long)fork_us, (double)(exec_us - fork_us) / 1000);
}

/* The child PID (PIDFD) runs zcfs-serve: V's server from now on. */
static void spawn_record(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			 pid_t pid, int pidfd, uint64_t memlock)
{
	v->srv.pid = pid;
	v->srv.pidfd = pidfd;
	v->srv.starttime = zcfsd_proc_starttime(pid);
	v->srv.started_at = zcfsd_wall();
	v->sup->started_ms = zcfsd_now_ms();
	v->stalled = false;
	v->sup->stall_since_ms = 0;
	v->sup->adopted = false;
	zcfsd_changed(d);
	(void)zcfsd_scope_move(d, pid, v->id);	/* logs its own failure */
	log_start(v, t, pid, memlock, v->sup->fork_us, v->sup->exec_us, "");
}


/* What V's server needs before it can start: *SRC, its storage path
 * (the caller frees it), still the tenant's directory, the request
 * counters, for io_uring the ring memfd. */
static int spawn_prepare(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			 char **srcp, struct spawn_fds *f, uint64_t memlock, struct zcfs_err *e)
{
	const char *src;
	int r;

	if (zcfsd_storage_path(d, v, srcp) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	src = *srcp;
	r = check_storage(src, t);
	if (r < 0)
		return zcfs_fail(e, ZCFS_FAILED_PRECONDITION, r,
				 "storage %s of volume %s is %s", src, v->id,
				 r == -ENOENT ? "gone" : "no longer a directory owned by the tenant "
				 "(replaced, or a symlink)");
	r = zcfsd_stats_ensure(v);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "request counters of volume %s: %s", v->id,
				 strerror(-r));
	/* Kept for the connection: a restarted server takes the ring over. */
	if (zcfsd_volume_uses_uring(v, t)) {
		r = zcfsd_ringfd_ensure(v);
		if (r < 0)
			return zcfs_fail(e, ZCFS_INTERNAL, r, "ring memfd of volume %s: %s", v->id,
					 strerror(-r));
		/* The rings of its holder (started now if it is not running). */
		if (v->ring_holder)
			return zcfsd_holder_rings(d, v, t, src, memlock, f->rings, &f->nrings, e);
	}
	return 0;
}

/* Forks a server of V with argv from O and the fds of F (log_w, ready_w
 * and go_r are closed here once the child has them, or the fork failed).
 * 0 with the child's *PID and *PIDFD once it exec'd, *FORK_US and
 * *EXEC_US stamped; -errno with E filled when it did not. */
static int spawn_fork(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		      const struct zcfsd_serve_opts *o, struct spawn_fds *f, uint64_t memlock,
		      int64_t stamps[2], pid_t *pidp, int *pidfdp, struct zcfs_err *e)
{
	struct zcfsd_serve_argv a;
	int p[2], child_err = 0, pidfd, r;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		return zcfs_fail(e, ZCFS_INTERNAL, r, "pipe: %s", strerror(-r));
	}
	zcfsd_serve_argv(o, &a);
	stamps[0] = wall_us();
	pid = fork();
	if (pid == 0)
		child_exec(v, t, f, p[1], memlock, o->zero_copy, a.argv);
	r = pid < 0 ? -errno : 0;
	safe_close(p[1]);
	f->log_w = safe_close(f->log_w);	/* the server's now: EOF when it is gone */
	f->ready_w = safe_close(f->ready_w);	/* EOF once the server closes or exits */
	f->go_r = safe_close(f->go_r);
	if (pid < 0) {
		safe_close(p[0]);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "fork: %s", strerror(-r));
	}
	/* The pid is our unreaped child: pidfd_open cannot race with reuse. */
	pidfd = pidfd_open(pid, 0);
	r = pidfd < 0 ? -errno : 0;
	do
		n = read(p[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	stamps[1] = wall_us();
	safe_close(p[0]);
	if (n > 0 || pidfd < 0) {
		r = n > 0 ? -child_err : r;
		if (pidfd >= 0)
			safe_close(pidfd);
		(void)waitpid(pid, NULL, 0);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "starting %s for volume %s: %s", d->serve_bin,
				 v->id, strerror(-r));
	}
	*pidp = pid;
	*pidfdp = pidfd;
	return 0;
}

/* mlock is bounded per process: a server may lock its own share and no
 * more (with the tenant's total, one server could lock what its siblings
 * were granted). io_uring's registered buffers are charged to the uid
 * and checked against the registering process's limit, so a zero-copy
 * tenant's servers get the tenant total (docs/security.md). */
static uint64_t server_memlock(struct zcfsd *d, const struct zcfsd_volume *v,
			       const struct policy_tenant *t)
{
	return t->zero_copy ? zcfsd_tenant_used(d, t->name) : v->pinned;
}

/* zcfsd_spawn_server_ready once spawn_prepare gave SRC and F's rings. */
static int spawn_server_with(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			     const char *src, int *ready_fd, struct spawn_fds *f, uint64_t memlock,
			     struct zcfs_err *e)
{
	_cleanup_close_ int ready_r = -1;
	struct zcfsd_serve_opts o;
	int64_t stamps[2];
	int pidfd, r;
	pid_t pid;

	if (ready_fd && d->serve_can_signal_ready && (r = spawn_ready_pipe(&ready_r, &f->ready_w)) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "pipe: %s", strerror(-r));
	/* Its stdout and stderr: a pipe zcfsd drains into a capped file, so
	 * the server never holds the file (it could fill or truncate it). */
	r = zcfsd_srvlog_pipe(d, v, &f->log_w);
	if (r < 0) {
		safe_close(f->ready_w);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "log pipe of volume %s: %s", v->id, strerror(-r));
	}
	f->log_park = v->sup->log.rfd;
	zcfsd_broker_prepare(d, v, t, src);
	if (v->broker && v->broker->fd >= 0) {
		f->broker_peer = v->broker->peer;
		f->broker_park = v->broker->fd;
	}
	/* After the broker exists: a first start has none before. */
	zcfsd_serve_opts_of(d, v, t, src, f->ready_w >= 0, &o);
	o.broker = f->broker_peer >= 0;
	r = spawn_fork(d, v, t, &o, f, memlock, stamps, &pid, &pidfd, e);
	zcfsd_broker_spawned(d, v, r == 0);
	if (r < 0) {
		zcfsd_srvlog_close(d, v);
		return r;
	}
	v->sup->fork_us = stamps[0];
	v->sup->exec_us = stamps[1];
	spawn_record(d, v, t, pid, pidfd, memlock);
	if (ready_fd)
		*ready_fd = TAKE_FD(ready_r);
	return 0;
}

/* Its pipes: --ready-fd's, the go pipe, its own log pipe (read end
 * parked in it, installed as the volume's log when it is promoted). */
static int standby_pipes(struct zcfsd_standby *n, struct spawn_fds *f)
{
	int go[2], lg[2], r = spawn_ready_pipe(&n->ready_fd, &f->ready_w);

	if (r < 0)
		return r;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	f->go_r = go[0];
	n->go_fd = go[1];
	if (pipe2(lg, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	n->log_rfd = f->log_park = lg[0];
	f->log_w = lg[1];
	return 0;
}

static int spawn_standby_with(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			      const char *src, struct spawn_fds *f, uint64_t memlock, struct zcfs_err *e)
{
	_cleanup_close_ int broker_peer = -1;
	struct zcfsd_standby *n = &v->sup->standby;
	struct zcfsd_serve_opts o;
	int64_t stamps[2];
	int r;

	r = standby_pipes(n, f);
	if (r == 0)
		r = zcfsd_broker_standby_socket(d, v, t, src, &n->broker_fd, &broker_peer);
	if (r < 0) {
		safe_close(f->log_w);
		safe_close(f->ready_w);
		safe_close(f->go_r);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "standby pipes of volume %s: %s", v->id,
				 strerror(-r));
	}
	f->broker_peer = broker_peer;
	f->broker_park = n->broker_fd;
	zcfsd_serve_opts_of(d, v, t, src, true, &o);
	o.broker = broker_peer >= 0;
	o.resume = true;
	o.standby = true;
	r = spawn_fork(d, v, t, &o, f, memlock, stamps, &n->pid, &n->pidfd, e);
	if (r < 0)
		return r;
	n->fork_us = stamps[0];
	n->exec_us = stamps[1];
	n->starttime = zcfsd_proc_starttime(n->pid);
	(void)zcfsd_scope_move(d, n->pid, v->id);
	log_start(v, t, n->pid, memlock, n->fork_us, n->exec_us, " standby=yes");
	return 0;
}

/* V's server (or, with STANDBY, a planned restart's successor): the
 * storage, fds and rings prepared once, then forked. */
static int spawn(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t, bool standby,
		 int *ready_fd, struct zcfs_err *e)
{
	_cleanup_free_ char *src = NULL;
	struct spawn_fds f = SPAWN_FDS_INIT;
	uint64_t memlock = server_memlock(d, v, t);
	int r;

	r = spawn_prepare(d, v, t, &src, &f, memlock, e);
	if (r == 0)
		r = standby ? spawn_standby_with(d, v, t, src, &f, memlock, e)
			    : spawn_server_with(d, v, t, src, ready_fd, &f, memlock, e);
	spawn_fds_close_rings(&f);	/* the server's copies are its own */
	return r;
}

int zcfsd_spawn_standby(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			struct zcfs_err *e)
{
	return spawn(d, v, t, true, NULL, e);
}

int zcfsd_spawn_server_ready(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct policy_tenant *t, int *ready_fd, struct zcfs_err *e)
{
	return spawn(d, v, t, false, ready_fd, e);
}

