/* Starting a volume server: fork, give the child only the fuse fd, its
 * log pipe (server/srvlog.c) and the tenant's identity (no supplementary groups, no_new_privs, no
 * capabilities, RLIMIT_MEMLOCK = the granted bytes), exec zcfs-serve
 * --sandbox. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cap-ng.h>
#include "daemon/common/log.h"
#include "daemon/common/openat2.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/broker/broker.h"
#include "server.h"

unsigned long long zcfsd_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may hold spaces and parens: fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu", &st) != 1)
		return 0;
	return st;
}

pid_t zcfsd_proc_ppid(pid_t pid)
{
	char path[64], buf[1024], *p;
	_cleanup_close_ int fd = -1;
	int ppid = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

/* Child side; reports a failed step as errno through ERRFD, never returns. */
_Noreturn static void child_exec(struct zcfsd *d, struct zcfsd_volume *v,
				 const struct policy_tenant *t, int log_fd, int errfd, int ready_w,
				 uint64_t memlock, char *src)
{
	char fdarg[32], tr[32], qd[32], mw[32], sarg[32], barg[32], rarg[32], yarg[32];
	char *argv[26];
	char quota[48];
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	struct rlimit rl = { memlock, memlock };
	int fd, lfd, lpark, efd, sfd, bfd = -1, pfd = -1, rfd = -1, yfd = -1, k = 0, err = 0, null;
	bool sys_admin = zcfsd_server_gets_sys_admin(v, t);

	(void)setsid();
	/* zcfsd runs at OOMScoreAdjust=-900 (the node's volumes depend on
	 * it); a server is restarted by zcfsd, so it goes back to 0. */
	null = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		(void)!write(null, "0", 1);
		close(null);
	}
	/* Lift every fd we keep above 10 first so that placing them at 0..4
	 * cannot overwrite one another. */
	efd = fcntl(errfd, F_DUPFD_CLOEXEC, 10);
	if (efd < 0)
		goto fail;
	errfd = efd;
	fd = fcntl(v->fuse_fd, F_DUPFD, 10);
	lfd = fcntl(log_fd, F_DUPFD, 10);
	lpark = fcntl(v->log.rfd, F_DUPFD, 10);
	sfd = fcntl(v->stats_fd, F_DUPFD, 10);
	if (v->broker) {
		bfd = fcntl(v->broker->peer, F_DUPFD, 10);
		pfd = fcntl(v->broker->fd, F_DUPFD, 10);
		if (bfd < 0 || pfd < 0)
			goto fail;
	}
	if (v->ring_fd >= 0 && (rfd = fcntl(v->ring_fd, F_DUPFD, 10)) < 0)
		goto fail;
	if (ready_w >= 0 && (yfd = fcntl(ready_w, F_DUPFD, 10)) < 0)
		goto fail;
	null = open("/dev/null", O_RDWR);
	if (fd < 0 || lfd < 0 || lpark < 0 || sfd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(lfd, 1) < 0 ||
	    dup2(lfd, 2) < 0 || dup2(fd, ZCFSD_SERVER_FUSE_FD) < 0 || dup3(efd, 4, O_CLOEXEC) < 0 ||
	    dup2(sfd, ZCFSD_SERVER_STATS_FD) < 0)
		goto fail;
	errfd = 4;
	if (v->broker && (dup2(bfd, ZCFSD_SERVER_BROKER_FD) < 0 ||
			  dup2(pfd, ZCFSD_SERVER_BROKER_PARK_FD) < 0))
		goto fail;
	if (rfd >= 0 && dup2(rfd, ZCFSD_SERVER_RING_FD) < 0)
		goto fail;
	if (dup2(lpark, ZCFSD_SERVER_LOG_PARK_FD) < 0)
		goto fail;
	if (yfd >= 0 && dup2(yfd, ZCFSD_SERVER_READY_FD) < 0)
		goto fail;
	if (syscall(SYS_close_range, yfd >= 0 ? ZCFSD_SERVER_READY_FD + 1 : ZCFSD_SERVER_LOG_PARK_FD + 1,
		    ~0U, 0) < 0)
		goto fail;
	/* io_uring charges pinned pages to the uid and compares the uid's
	 * total with the caller's limit, so the limit is what the tenant
	 * was granted in total (this volume's share included). */
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		goto fail;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		goto fail;
	k = zcfsd_server_identity(t, sys_admin);
	if (k < 0) {
		errno = -k;
		goto fail;
	}
	k = 0;
	snprintf(fdarg, sizeof(fdarg), "--fd=%d", ZCFSD_SERVER_FUSE_FD);
	snprintf(tr, sizeof(tr), "--transport=%s",
		 zcfsd_uses_uring(v->transport, t) ? policy_transport_name(v->transport) : "devfuse");
	snprintf(qd, sizeof(qd), "--queue-depth=%u", v->queue_depth);
	snprintf(mw, sizeof(mw), "--max-write=%u", v->max_write);
	argv[k++] = (char *)d->serve_bin;
	argv[k++] = fdarg;
	snprintf(sarg, sizeof(sarg), "--stats-fd=%d", ZCFSD_SERVER_STATS_FD);
	argv[k++] = sarg;
	argv[k++] = "--ownership=xattr";
	argv[k++] = "--foreground";
	/* Always: seccomp + Landlock + no_new_privs inside the server
	 * (docs/security.md). No policy switch turns it off. */
	argv[k++] = "--sandbox";
	argv[k++] = tr;
	argv[k++] = qd;
	argv[k++] = mw;
	/* The volume's storage belongs to this server alone: the kernel may
	 * cache entries, attributes and pages for long (docs/architecture.md). */
	argv[k++] = "--cache=exclusive";
	/* One reader: requests a dead server read through a cloned fd are
	 * failed by the kernel, those on the shared fd can be resent
	 * (docs/supervision.md). */
	argv[k++] = "--threads=1";
	if (v->read_only)
		argv[k++] = "--read-only";
	if (rfd >= 0) {
		snprintf(rarg, sizeof(rarg), "--ring-memfd=%d", ZCFSD_SERVER_RING_FD);
		argv[k++] = rarg;
	}
	/* Exclusive volumes cache writes back unless the policy says no. */
	if (!d->policy->dirty_limit)
		argv[k++] = "--no-writeback";
	/* Passthrough through zcfsd (zcfsd/broker/broker.c): the server has no
	 * CAP_SYS_ADMIN for FUSE_DEV_IOC_BACKING_OPEN. */
	if (v->broker) {
		argv[k++] = "--passthrough";
		snprintf(barg, sizeof(barg), "--broker-fd=%d", ZCFSD_SERVER_BROKER_FD);
		argv[k++] = barg;
	}
	argv[k++] = sys_admin ? "--zero-copy=auto" : "--zero-copy=off";
	if (v->size) {
		snprintf(quota, sizeof(quota), "--quota-bytes=%llu", (unsigned long long)v->size);
		argv[k++] = quota;
	} else {
		argv[k++] = "--count-inodes";	/* statfs's inodes in use are the volume's */
	}
	if (yfd >= 0) {
		snprintf(yarg, sizeof(yarg), "--ready-fd=%d", ZCFSD_SERVER_READY_FD);
		argv[k++] = yarg;
	}
	/* A restart serves a connection whose INIT was answered before. */
	if (v->srv.restarts && d->serve_can_resume)
		argv[k++] = "--resume";
	/* No MOUNTPOINT: zcfs-serve would stat() it, a request to itself. */
	argv[k++] = src;
	argv[k] = NULL;
	execve(argv[0], argv, envp);
fail:
	err = errno ? errno : EIO;
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

/* The child PID (PIDFD) runs zcfs-serve: V's server from now on. */
static void spawn_record(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			 pid_t pid, int pidfd, uint64_t memlock)
{
	int r;

	v->srv.pid = pid;
	v->srv.pidfd = pidfd;
	v->srv.starttime = zcfsd_proc_starttime(pid);
	v->srv.started_at = zcfsd_wall();
	v->srv.started_ms = zcfsd_now_ms();
	v->stalled = false;
	v->stall_since_ms = 0;
	v->srv.adopted = false;
	(void)zcfsd_scope_move(pid, v->id);	/* logs its own failure */
	r = zcfsd_watch_pidfd(d, v);
	if (r < 0)
		log_warn("event=watch-failed volume=%s error=%s", v->id, strerror(-r));
	zcfsd_broker_spawned(d, v, true);
	log_info("event=server-start volume=%s tenant=%s pid=%d uid=%u memlock=%llu restarts=%u "
		 "passthrough=%s caps=%s", v->id, v->tenant, (int)pid, (unsigned)t->uid,
		 (unsigned long long)memlock, v->srv.restarts, v->broker ? "brokered" : "off",
		 zcfsd_server_gets_sys_admin(v, t) ? "CAP_SYS_ADMIN-until-rings-registered" : "none");
}

int zcfsd_spawn_server(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       struct zcfs_err *e)
{
	return zcfsd_spawn_server_ready(d, v, t, NULL, e);
}

int zcfsd_spawn_server_ready(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct policy_tenant *t, int *ready_fd, struct zcfs_err *e)
{
	_cleanup_free_ char *src = NULL;
	_cleanup_close_ int log_fd = -1, ready_r = -1, ready_w = -1;
	int p[2], child_err = 0, pidfd, r;
	/* mlock is bounded per process: a server may lock its own share and
	 * no more (with the tenant's total, one server could lock what its
	 * siblings were granted). io_uring's registered buffers are charged
	 * to the uid and checked against the registering process's limit, so
	 * a zero-copy tenant's servers get the tenant total (docs/security.md). */
	uint64_t memlock = t->zero_copy ? zcfsd_tenant_used(d, t->name) : v->pinned;
	ssize_t n;
	pid_t pid;

	if (zcfsd_storage_path(d, v, &src) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
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
	if (zcfsd_uses_uring(v->transport, t)) {
		r = zcfsd_ringfd_ensure(v);
		if (r < 0)
			return zcfs_fail(e, ZCFS_INTERNAL, r, "ring memfd of volume %s: %s", v->id,
					 strerror(-r));
	}
	if (ready_fd && d->serve_can_signal_ready && (r = spawn_ready_pipe(&ready_r, &ready_w)) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "pipe: %s", strerror(-r));
	/* Its stdout and stderr: a pipe zcfsd drains into a capped file, so
	 * the server never holds the file (it could fill or truncate it). */
	r = zcfsd_srvlog_pipe(d, v, &log_fd);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "log pipe of volume %s: %s", v->id, strerror(-r));
	if (pipe2(p, O_CLOEXEC) < 0) {
		r = -errno;
		zcfsd_srvlog_close(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "pipe: %s", strerror(-r));
	}
	zcfsd_broker_prepare(d, v, t, src);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		zcfsd_broker_spawned(d, v, false);
		safe_close(p[0]);
		safe_close(p[1]);
		zcfsd_srvlog_close(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "fork: %s", strerror(-r));
	}
	if (pid == 0)
		child_exec(d, v, t, log_fd, p[1], ready_w, memlock, src);
	safe_close(p[1]);
	log_fd = safe_close(log_fd);	/* the server's now: EOF when it is gone */
	ready_w = safe_close(ready_w);	/* EOF once the server closes or exits */
	/* The pid is our unreaped child: pidfd_open cannot race with reuse. */
	pidfd = pidfd_open(pid, 0);
	do
		n = read(p[0], &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	safe_close(p[0]);
	if (n > 0 || pidfd < 0) {
		r = n > 0 ? -child_err : -errno;
		if (pidfd >= 0)
			safe_close(pidfd);
		(void)waitpid(pid, NULL, 0);
		zcfsd_broker_spawned(d, v, false);
		zcfsd_srvlog_close(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "starting %s for volume %s: %s", d->serve_bin,
				 v->id, strerror(-r));
	}
	spawn_record(d, v, t, pid, pidfd, memlock);
	if (ready_fd)
		*ready_fd = TAKE_FD(ready_r);
	return 0;
}
