/* The ring holder of a volume created with ring_holder (docs/supervision.md,
 * "Ring holder"): zcfs-serve --ring-holder, started as the tenant before
 * the first server of a connection, owns the volume's io_uring rings (its
 * SQPOLL threads issue every FUSE command), so a server's death cancels
 * none. zcfsd takes its ring fds with pidfd_getfd(2) for every server
 * start, watches its pidfd, re-adopts it after a zcfsd restart and kills it
 * at unpublish. When it dies, its rings and every command in them go: the
 * server (which can no longer submit) is killed and both are started
 * again, the successor recovering what the old entries held. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common/log.h"
#include "common/ring_holder.h"
#include "daemon/zcfsd/state/state.h"
#include "server_int.h"

/* One volume's holder start: exec, linking, one ring per queue. About
 * 20 ms on a host; under TCG (the 7.3 guest, loaded host) exec and
 * dynamic linking alone took up to 3.4 s, and 1 s failed every third
 * publish of a holder volume there ("did not start: (nothing)"). */
#define HOLDER_READY_TIMEOUT_MS 5000

static void holder_exited(struct zcfsd *d, void *obj, uint32_t events);

static int holder_watch(struct zcfsd *d, struct zcfsd_volume *v)
{
	return zcfsd_watch(d, &v->sup->holder.pidfd_watch, v->sup->holder.pidfd, EPOLLIN, holder_exited, v);
}

/* Child: stdin /dev/null, stdout+stderr OUT, the fuse fd at 3, the ring
 * memfd at 8 and nothing else; the tenant's identity, no capabilities. */
_Noreturn static void holder_child(const struct zcfsd_volume *v, const struct policy_tenant *t,
				   int out, uint64_t memlock, char *const argv[])
{
	char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	struct rlimit rl = { memlock, memlock };
	int fuse = fcntl(v->fuse_fd, F_DUPFD, 16), ring = fcntl(v->ring_fd, F_DUPFD, 16);
	int null = open("/dev/null", O_RDWR);

	(void)setsid();
	if (fuse < 0 || ring < 0 || null < 0 || (out = fcntl(out, F_DUPFD, 16)) < 0 ||
	    dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0 ||
	    dup2(fuse, ZCFSD_SERVER_FUSE_FD) < 0 || dup2(ring, ZCFSD_SERVER_RING_FD) < 0)
		_exit(126);
	for (int fd = ZCFSD_SERVER_FUSE_FD + 1; fd < ZCFSD_SERVER_RING_FD; fd++)
		(void)close(fd);
	if (syscall(SYS_close_range, ZCFSD_SERVER_RING_FD + 1, ~0U, 0) < 0 ||
	    setrlimit(RLIMIT_MEMLOCK, &rl) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    zcfsd_server_identity(t, false) < 0)
		_exit(126);
	execve(argv[0], argv, envp);
	_exit(127);
}

/* The line "ring-holder ready rings=N ..." (its output is bounded to 512
 * bytes; log lines may come first). The holder is the tenant's: anything
 * else, silence or an exit fails the start, with the output in MSG. */
static int holder_ready(struct zcfsd_volume *v, int rfd, unsigned *rings, char *msg, size_t len)
{
	int64_t deadline = zcfsd_now_ms() + HOLDER_READY_TIMEOUT_MS;
	char buf[512];
	const char *line;
	size_t got = 0;

	msg[0] = '\0';
	buf[0] = '\0';
	while (got < sizeof(buf) - 1 && !((line = strstr(buf, ZCFS_HOLDER_READY)) && strchr(line, '\n'))) {
		struct pollfd p = { .fd = rfd, .events = POLLIN };
		int64_t left = deadline - zcfsd_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = read(rfd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
	}
	line = strstr(buf, ZCFS_HOLDER_READY);
	if (!line || !strchr(line, '\n') || sscanf(line + strlen(ZCFS_HOLDER_READY), "%u", rings) != 1 ||
	    !*rings || *rings > ZCFS_HOLDER_RINGS_MAX) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(msg, len, "%.150s", got ? buf : "(nothing)");
		return -EPROTO;
	}
	snprintf(msg, len, "%.*s", (int)MIN(strcspn(line, "\n"), 150), line);
	(void)v;
	return 0;
}

/* One just SIGKILLed may still be exiting: reaped by the loop then
 * (model/reap.c), not waited for here. */
static void holder_reap(struct zcfsd *d, struct zcfsd_volume *v)
{
	zcfsd_unwatch(d, &v->sup->holder.pidfd_watch);
	zcfsd_reap_release(d, v->sup->holder.pidfd, !v->sup->holder.adopted, NULL);
	v->sup->holder.pidfd = -1;
	v->holder.pid = 0;
	v->holder.rings = 0;
}

static int holder_start(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			const char *src, uint64_t memlock, struct zcfs_err *e)
{
	struct zcfsd_serve_opts o;
	struct zcfsd_serve_argv a;
	char msg[160];
	int p[2], r;
	int64_t start_ms, ready_ms;
	pid_t pid;

	/* One still recorded (its rings could not be taken): killed and
	 * reaped (now, or by the loop), not overwritten. */
	if (v->sup->holder.pidfd >= 0) {
		(void)syscall(SYS_pidfd_send_signal, v->sup->holder.pidfd, SIGKILL, NULL, 0);
		holder_reap(d, v);
	}
	zcfsd_serve_opts_of(d, v, t, src, false, &o);
	zcfsd_holder_argv(&o, &a);
	if (pipe2(p, O_CLOEXEC) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -errno, "pipe: %m");
	start_ms = zcfsd_now_ms();
	pid = fork();
	if (pid == 0)
		holder_child(v, t, p[1], memlock, a.argv);
	r = pid < 0 ? -errno : 0;
	safe_close(p[1]);
	if (pid < 0) {
		safe_close(p[0]);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "fork: %s", strerror(-r));
	}
	v->holder = (struct zcfsd_holder){ .pid = pid };
	v->sup->holder.pidfd = pidfd_open(pid, 0);
	v->sup->holder.pidfd_watch = (struct zcfsd_watch){ 0 };
	v->sup->holder.adopted = false;
	if (v->sup->holder.pidfd < 0) {
		r = -errno;
		(void)kill(pid, SIGKILL);
		(void)waitpid(pid, NULL, 0);
		v->holder.pid = 0;
		safe_close(p[0]);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "pidfd_open: %s", strerror(-r));
	}
	v->holder.starttime = zcfsd_proc_starttime(pid);
	r = holder_ready(v, p[0], &v->holder.rings, msg, sizeof(msg));
	safe_close(p[0]);
	ready_ms = zcfsd_now_ms() - start_ms;
	if (r < 0) {
		(void)syscall(SYS_pidfd_send_signal, v->sup->holder.pidfd, SIGKILL, NULL, 0);
		holder_reap(d, v);
		return zcfs_fail(e, ZCFS_INTERNAL, r, "ring holder of volume %s did not start: %s (after %lld ms)",
				 v->id, msg, (long long)ready_ms);
	}
	(void)zcfsd_scope_move(d, pid, v->id);
	r = holder_watch(d, v);
	if (r < 0)
		log_warn("event=watch-failed volume=%s holder=%d error=%s", v->id, (int)pid, strerror(-r));
	log_info("event=holder-start volume=%s pid=%d uid=%u rings=%u memlock=%llu ready_ms=%lld said=\"%s\"",
		 v->id, (int)pid, (unsigned)t->uid, v->holder.rings, (unsigned long long)memlock,
		 (long long)ready_ms, msg);
	/* Recorded at once: a zcfsd that dies before its next save would
	 * leave this holder to no one (its connection is a published one,
	 * which the orphan sweep leaves alone). */
	(void)zcfsd_state_save(d);
	return 0;
}

/* Its ring fds into FDS; -ESRCH when it is dead. */
static int holder_take_rings(struct zcfsd_volume *v, int *fds)
{
	for (unsigned i = 0; i < v->holder.rings; i++) {
		fds[i] = (int)syscall(SYS_pidfd_getfd, v->sup->holder.pidfd, ZCFS_HOLDER_RING_FD + (int)i, 0);
		if (fds[i] < 0) {
			int r = -errno;
			while (i-- > 0)
				fds[i] = safe_close(fds[i]);
			return r;
		}
		(void)fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	}
	return 0;
}

/* Dead, its pidfd event not handled yet (the server's exit came first). */
static void holder_gone(struct zcfsd *d, struct zcfsd_volume *v)
{
	log_warn("event=holder-exit volume=%s pid=%d found=at-server-start", v->id, (int)v->holder.pid);
	holder_reap(d, v);
}

int zcfsd_holder_rings(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       const char *src, uint64_t memlock, int *fds, unsigned *n, struct zcfs_err *e)
{
	int r = -ESRCH;

	*n = 0;
	if (v->holder.pid) {
		r = holder_take_rings(v, fds);
		if (r == -ESRCH)
			holder_gone(d, v);
	}
	if (r == -ESRCH) {
		r = holder_start(d, v, t, src, memlock, e);
		if (r < 0)
			return r;
		r = holder_take_rings(v, fds);
	}
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "rings of the holder of volume %s: %s", v->id,
				 strerror(-r));
	*n = v->holder.rings;
	return 0;
}

/* Killed and forgotten at once, its exit the reaper's (model/reap.c):
 * nothing of it stays in V, which a volume.delete may free before the
 * exit is seen (a watch of it left on was a zombie, or an event for
 * freed memory). */
void zcfsd_holder_stop(struct zcfsd *d, struct zcfsd_volume *v)
{
	if (!v->sup || !v->holder.pid)
		return;
	log_info("event=holder-stop volume=%s pid=%d", v->id, (int)v->holder.pid);
	(void)syscall(SYS_pidfd_send_signal, v->sup->holder.pidfd, SIGKILL, NULL, 0);
	holder_reap(d, v);
}

/* Its death ended its rings and every command in them: the server cannot
 * submit any more (its io_uring_enter fails) and is killed; its exit
 * restarts it (server_exit), which starts a new holder first. */
static void holder_exited(struct zcfsd *d, void *obj, uint32_t events)
{
	struct zcfsd_volume *v = obj;
	siginfo_t si = { 0 };

	(void)events;
	if (!v->sup->holder.adopted)
		(void)waitid(P_PIDFD, (id_t)v->sup->holder.pidfd, &si, WEXITED | WNOHANG | WNOWAIT);
	/* planned=no always: one zcfsd stops is the reaper's (holder_stop) */
	log_warn("event=holder-exit volume=%s pid=%d %s=%d planned=no%s", v->id, (int)v->holder.pid,
		 si.si_code == CLD_EXITED ? "status" : "signal", si.si_status,
		 v->srv.pid ? " action=restart-server" : "");
	holder_reap(d, v);
	if (!v->n_targets)
		return;
	if (v->srv.pidfd >= 0 && v->srv.pid)
		(void)syscall(SYS_pidfd_send_signal, v->srv.pidfd, SIGKILL, NULL, 0);
	else if (!zcfsd_deadline_armed(&v->sup->restart))
		zcfsd_deadline_arm(d, &v->sup->restart, zcfsd_now_ms());
}

int zcfsd_holder_readopt(struct zcfsd *d, struct zcfsd_volume *v)
{
	pid_t pid = v->holder.pid;

	if (!v->ring_holder || !pid)
		return 0;
	v->holder.pid = 0;
	v->sup->holder.pidfd = pidfd_open(pid, 0);
	if (v->sup->holder.pidfd < 0)
		return -errno;
	/* As for servers: the start time checked after the pidfd pins it. */
	if (zcfsd_proc_starttime(pid) != v->holder.starttime) {
		v->sup->holder.pidfd = safe_close(v->sup->holder.pidfd);
		return -ESRCH;
	}
	v->holder.pid = pid;
	v->sup->holder.adopted = zcfsd_proc_ppid(pid) != getpid();
	return holder_watch(d, v);
}
