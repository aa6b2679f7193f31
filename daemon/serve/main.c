/* zcfs-serve: serve one directory through FUSE until unmounted or
 * signalled. Exit 0 on a normal end, 1 on a runtime failure, 2 on a bad
 * command line. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include "daemon/serve/backend/broker_client.h"
#include "daemon/serve/sandbox/caps.h"
#include "daemon/serve/backend/handle.h"
#include "daemon/serve/backend/inode.h"
#include "common/handover.h"
#include "common/log.h"
#include "daemon/serve/core/mount.h"
#include "daemon/serve/core/options.h"
#include "common/max_read.h"
#include "daemon/serve/sandbox/sandbox.h"
#include "daemon/serve/core/session.h"
#include "daemon/serve/fuse/ops.h"
#include "daemon/serve/backend/prune.h"
#include "daemon/serve/backend/quota.h"
#include "daemon/serve/backend/resume.h"
#include "daemon/serve/backend/source_mount.h"
#include "daemon/serve/transport/transport.h"
#include "common/zcfs_stats.h"
#include "daemon/serve/transport/uring_geometry.h"
#include "daemon/serve/transport/uring_holder.h"
#include "common/version.h"

static int usage_error(const char *msg)
{
	fprintf(stderr, "zcfs-serve: %s\n", msg);
	return 2;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Checks SOURCE and MOUNTPOINT before anything is mounted; returns the
 * O_PATH fd of SOURCE or -1 after printing one line. */
static int open_source(const struct zcfs_options *o)
{
	struct stat st;
	int fd;

	fd = open(o->source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "zcfs-serve: source %s: %s\n", o->source,
			errno == ENOTDIR ? "not a directory" : strerror(errno));
		return -1;
	}
	/* With --fd the mount is already ours to serve: stat() would wait
	 * for the answer only we can give. */
	if (o->mountpoint && o->fuse_fd < 0 &&
	    (stat(o->mountpoint, &st) < 0 || !S_ISDIR(st.st_mode))) {
		fprintf(stderr, "zcfs-serve: mountpoint %s: %s\n", o->mountpoint,
			errno == 0 || S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
		safe_close(fd);
		return -1;
	}
	return fd;
}

static const struct zcfs_transport_ops *choose_transport(struct zcfs_session *se)
{
	char reason[80];
	int r;

	if (se->opts->transport == ZCFS_TRANSPORT_DEVFUSE) {
		snprintf(se->transport_reason, sizeof(se->transport_reason), "requested");
		return &transport_devfuse;
	}
	r = transport_uring_probe(reason, sizeof(reason));
	if (r == 0) {
		snprintf(se->transport_reason, sizeof(se->transport_reason), "%s",
			 se->opts->transport == ZCFS_TRANSPORT_URING ? "requested" : "auto");
		return &transport_uring;
	}
	if (se->opts->transport == ZCFS_TRANSPORT_URING) {
		fprintf(stderr, "zcfs-serve: --transport=uring: %s\n", reason);
		return NULL;
	}
	snprintf(se->transport_reason, sizeof(se->transport_reason), "fallback:%s", reason);
	for (char *p = se->transport_reason; *p; p++)
		if (*p == ' ')
			*p = '_';
	return &transport_devfuse;
}

/* Queue depth and max_write as given, or chosen: on io_uring by the one
 * sizing (what fits the pinned budget on this many CPUs), on /dev/fuse,
 * which pins nothing, the preferred ones. Before anything reads them. */
static void resolve_geometry(struct zcfs_options *o, bool uring)
{
	struct uring_geometry g;
	unsigned ncpu = 1;

	if (uring) {
		if (uring_possible_cpus(&ncpu) < 0)
			ncpu = (unsigned)MAX(get_nprocs_conf(), 1);
		uring_geometry_for_options(&g, o, ncpu, 4096, URING_DEFAULT_CQES_OFF);
		o->queue_depth = g.depth;
		o->max_write = g.max_write;
	}
	if (!o->queue_depth)
		o->queue_depth = URING_PREFERRED_DEPTH;
	if (!o->max_write)
		o->max_write = URING_PREFERRED_MAX_WRITE;
}

/* Beside --print-pinned's figure (stdout, what zcfsd charges), on stderr:
 * what the same options pin with an unregistered buffer pool (7.46),
 * whose pool is not pinned. */
static void print_pinned_pool(const struct zcfs_session *se, const struct uring_geometry *g)
{
	struct zcfs_options o = *se->opts;
	struct uring_geometry p;

	o.buffer_pool = ZCFS_BUFPOOL_ON;
	uring_geometry_for_options(&p, &o, g->nr_queues, g->page_size, g->cqes_off);
	fprintf(stderr, "zcfs-serve: pinned %llu bytes as laid out (%u queues x %u entries, max_write %u); "
		"with an unregistered buffer pool %llu bytes (%u entries, max_write %u; the pool, %u x %zu "
		"bytes per queue, is not pinned)\n", (unsigned long long)uring_pinned_bytes(g), g->nr_queues,
		g->depth, g->max_write, (unsigned long long)uring_pinned_bytes(&p), p.depth, p.max_write,
		p.payload_bufs, p.payload_size);
}

/* --print-pinned: the bytes this volume would pin, from the same sizing
 * the transport allocates with; mounts nothing. */
static int print_pinned(const struct zcfs_session *se)
{
	struct uring_geometry g;
	uint64_t bytes = 0;
	int r;

	if (se->transport == &transport_uring) {
		r = uring_geometry_for_session(&g, se);
		if (r < 0) {
			fprintf(stderr, "zcfs-serve: --print-pinned: %s\n", strerror(-r));
			return 1;
		}
		bytes = uring_pinned_bytes(&g);
		print_pinned_pool(se, &g);
	}
	printf("%llu\n", (unsigned long long)bytes);
	return 0;
}

/* --sandbox: after SOURCE and the fuse fd are open, before the transport
 * creates any thread (Landlock and seccomp reach only the calling thread
 * and its future children). */
static int enter_sandbox(struct zcfs_session *se)
{
	/* Readers beyond the first open /dev/fuse to clone the connection. */
	struct sandbox_config c = { .root_fd = se->root_fd, .dev_fuse = se->nthreads > 1,
				    .backing_ioctls = se->opts->passthrough && !se->broker,
				    .broker = se->broker != NULL, .broker_fd = se->opts->broker_fd,
				    .rings = se->transport == &transport_uring };
	struct sandbox_report rep;
	int r = sandbox_apply(&c, &rep);

	if (r < 0)
		return r;
	if (rep.landlock_abi > 0)
		log_info("sandbox: no_new_privs=1 seccomp=kill-process allowed_syscalls=%u landlock_abi=%d",
			 rep.nr_syscalls, rep.landlock_abi);
	else
		log_warn("sandbox: no_new_privs=1 seccomp=kill-process allowed_syscalls=%u landlock=off "
			 "reason=\"%s\"", rep.nr_syscalls, rep.landlock_why);
	return 0;
}

/* Before the sandbox: the passthrough broker, and CAP_SYS_ADMIN given
 * for zero-copy alone is dropped at once when zero-copy cannot happen
 * (otherwise the transport drops it after INIT, caps.h). */
static int setup_privileges(struct zcfs_session *se)
{
	const struct zcfs_options *o = se->opts;
	int r;

	if (o->broker_fd >= 0) {
		r = broker_client_new(o->broker_fd, &se->broker);
		if (r < 0)
			return r;
	}
	r = caps_prepare(o);
	if (r < 0 || !caps_only_for_zero_copy(o))
		return r;
	if (se->transport != &transport_uring)
		return caps_drop_sys_admin("zero-copy impossible: transport devfuse");
	if (o->zero_copy == ZCFS_ZEROCOPY_OFF)
		return caps_drop_sys_admin("zero-copy impossible: --zero-copy=off");
	return 0;
}

/* Forks; the parent exits with the child's verdict once it is serving. */
static int daemonize(int *notify_fd)
{
	int p[2];
	pid_t pid;
	char st = 1;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		safe_close(p[1]);
		if (read(p[0], &st, 1) != 1)
			st = 1;
		_exit(st);
	}
	safe_close(p[0]);
	(void)setsid();
	*notify_fd = p[1];
	return 0;
}

static void notify_parent(int *fd, char status)
{
	if (*fd < 0)
		return;
	if (write(*fd, &status, 1) < 0)
		log_warn("could not notify parent: %m");
	*fd = safe_close(*fd);
	if (status == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		struct stat st;

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			/* Logs stay in a file stderr was sent to; a terminal or
			 * the pipe of whoever started us (mount(8), a script
			 * reading our output) is let go, as daemons do. */
			if (fstat(STDERR_FILENO, &st) == 0 && !S_ISREG(st.st_mode))
				dup2(null, STDERR_FILENO);
			safe_close(null);
		}
	}
}

/* Maps the counters zcfsd shares with us. */
/* The volume's counters (--stats-fd), shared with zcfsd and every
 * server of the volume; their server_starts gives this server the epoch
 * of its fhs (handle.c). A memfd of an older zcfsd has no such counter:
 * the epoch stays random. */
static int map_stats(struct zcfs_session *se, int fd)
{
	struct zcfs_stats *st;
	struct stat sb;
	int r = 0;

	if (fstat(fd, &sb) < 0)
		r = -errno;
	else if ((size_t)sb.st_size < ZCFS_STATS_SIZE_V1)
		r = -EINVAL;
	if (r == 0) {
		st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (st == MAP_FAILED)
			r = -errno;
		else if (st->magic != ZCFS_STATS_MAGIC || st->version != ZCFS_STATS_VERSION) {
			munmap(st, sizeof(*st));
			r = -EPROTO;
		} else {
			se->stats = st;
			if ((size_t)sb.st_size >= sizeof(*st)) {
				se->size_channel = &st->quota_bytes;
				quota_set_live(se, se->size_channel);
			}
			if ((size_t)sb.st_size >= ZCFS_STATS_SIZE_V2)
				handle_table_set_epoch(se->handles,
						       (uint32_t)__atomic_add_fetch(&st->server_starts, 1,
										    __ATOMIC_RELAXED));
		}
	}
	/* The fd stays open: a restarted zcfsd takes it back with
	 * pidfd_getfd(2) to read the same counters. */
	return r;
}

/* The signals main waits for; every other thread has them blocked.
 * SIGHUP and SIGUSR2 (zcfsd's upgrade, not ours) are taken and change
 * nothing; ZCFS_HANDOVER_SIGNAL is zcfsd's hand-over request. */
static void server_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR2);
	sigaddset(set, ZCFS_HANDOVER_SIGNAL);
}

/* What main waits on: the signals of server_signals() through a
 * signalfd and se->wake_fd, the eventfd session_exit() writes; both in
 * one epoll. Made before the sandbox (signalfd4 is not in it). */
struct main_wait {
	int epfd;
	int sig_fd;
};

static int main_wait_open(struct zcfs_session *se, const sigset_t *set, struct main_wait *w)
{
	struct epoll_event ev = { .events = EPOLLIN };

	w->sig_fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	se->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->sig_fd < 0 || se->wake_fd < 0 || w->epfd < 0)
		return -errno;
	ev.data.fd = w->sig_fd;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->sig_fd, &ev) < 0)
		return -errno;
	ev.data.fd = se->wake_fd;
	return RET_NERRNO(epoll_ctl(w->epfd, EPOLL_CTL_ADD, se->wake_fd, &ev));
}

static void main_wait_close(struct zcfs_session *se, struct main_wait *w)
{
	w->epfd = safe_close(w->epfd);
	w->sig_fd = safe_close(w->sig_fd);
	se->wake_fd = safe_close(se->wake_fd);
}

/* A signal main was waiting for. */
static void on_signal(struct zcfs_session *se, int sig)
{
	if (sig == ZCFS_HANDOVER_SIGNAL && se->opts->fuse_fd >= 0) {
		/* zcfsd's planned restart (volume.restart): a successor takes
		 * the connection over. */
		int64_t t0 = wall_us();
		int r = se->transport->hand_over ? se->transport->hand_over(se) : 0;
		log_info("hand-over to a successor: %s wall_us=%lld took_ms=%.1f",
			 r < 0 ? strerror(-r) : "ready", (long long)t0, (double)(wall_us() - t0) / 1000);
		session_exit(se, 0);
	} else if (sig == SIGTERM || sig == SIGINT) {
		log_info("signal %s: unmounting", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		session_exit(se, 0);
	}
}

static void wait_for_end(struct zcfs_session *se, struct zcfs_mount *m, const struct main_wait *w)
{
	struct signalfd_siginfo si;
	struct epoll_event ev;

	while (!atomic_load(&se->exiting)) {
		if (epoll_wait(w->epfd, &ev, 1, -1) < 1)
			continue;
		/* The wake-up needs no reading: exiting is set before it. */
		while (read(w->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			on_signal(se, (int)si.ssi_signo);
	}
	/* Make sure every reader wakes: detach and abort our mount. */
	zcfs_unmount(m);
}

/* With --fd the mount and a dup of the connection belong to zcfsd, which
 * may start a new server on it: leave both alone and end the process
 * without waiting for readers blocked on the live connection. */
static void leave_inherited_connection(struct zcfs_session *se)
{
	if (se->opts->fuse_fd < 0 || !atomic_load(&se->exiting) || session_exit_status(se) != 0)
		return;
	if (se->transport && se->transport->log_counts)
		se->transport->log_counts(se);
	log_info("exiting status=0 (connection left to its owner)");
	fflush(stderr);
	_exit(0);
}

/* What the command line settles before anything is opened: -1 to go on,
 * else the exit status. */
static int settle_options(struct zcfs_options *o)
{
	if (o->help) {
		options_usage("zcfs-serve");
		return 0;
	}
	if (o->version) {
		zcfs_print_version("zcfs-serve");
		return 0;
	}
	log_set_ident("zcfs-serve");
	if (o->debug)
		log_set_level(LOG_DEBUG);
	if (o->ownership == ZCFS_OWNERSHIP_DEFAULT)
		o->ownership = geteuid() == 0 ? ZCFS_OWNERSHIP_NATIVE : ZCFS_OWNERSHIP_XATTR;
	if (o->ownership == ZCFS_OWNERSHIP_NATIVE && geteuid() != 0)
		return usage_error("--ownership=native needs root to chown; use --ownership=xattr");
	/* Ours alone: nothing we may start (fusermount3) holds it open. */
	if (o->ready_fd >= 0 && fcntl(o->ready_fd, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "zcfs-serve: --ready-fd=%d: %m\n", o->ready_fd);
		return 2;
	}
	if (o->standby_fd >= 0 && fcntl(o->standby_fd, F_SETFD, FD_CLOEXEC) < 0) {
		fprintf(stderr, "zcfs-serve: --standby-fd=%d: %m\n", o->standby_fd);
		return 2;
	}
	if (o->ring_holder) {	/* a volume's ring holder: no session, no SOURCE */
		raise_nofile();
		return uring_holder_run(o);
	}
	return -1;
}

/* The session's settings from the options, its transport and geometry
 * (se->transport NULL: none possible, said on stderr). */
static void session_setup(struct zcfs_session *se, struct zcfs_options *o, int root_fd)
{
	se->opts = o;
	se->ready_fd = o->ready_fd;
	se->standby = o->standby_fd >= 0;
	se->root_fd = root_fd;
	se->proc_fd_dir = -1;
	se->xattr_owner = o->ownership == ZCFS_OWNERSHIP_XATTR;
	se->server_uid = geteuid();
	se->nthreads = o->threads ? (int)o->threads : get_nprocs();
	se->entry_timeout = se->attr_timeout = o->cache == ZCFS_CACHE_EXCLUSIVE ? 86400.0 :
					       o->cache == ZCFS_CACHE_NONE ? 0.0 : 1.0;
	se->keep_cache = o->cache == ZCFS_CACHE_EXCLUSIVE;
	se->backing_atime = source_mount_atime_flags(root_fd);
	se->transport = choose_transport(se);
	resolve_geometry(o, se->transport == &transport_uring);
	se->max_write = o->max_write;
	se->max_pages = o->max_write / 4096;
	se->bufsize = o->max_write + 4096;
}

/* --quota-bytes / --count-inodes: what SOURCE holds now; logged. */
static int session_quota(struct zcfs_session *se)
{
	const struct zcfs_options *o = se->opts;
	int r;

	if (!o->quota_bytes && !o->count_inodes)
		return 0;
	r = quota_init(se, o->quota_bytes);
	if (r < 0)
		log_err("--quota-bytes: counting what %s holds: %s", o->source, strerror(-r));
	return r;
}

/* Inode and handle tables (the inode table owns *ROOT_FD from then on:
 * -1), quota; logged. */
static int session_tables(struct zcfs_session *se, int *root_fd)
{
	const struct zcfs_options *o = se->opts;
	int r = inode_table_new(*root_fd, &se->inodes);

	if (r == 0)
		r = handle_table_new(&se->handles);
	if (r < 0) {
		log_err("setup: %s", strerror(-r));
		return r;
	}
	*root_fd = -1;
	/* A standby counts once its predecessor is gone: what that one
	 * writes meanwhile would be missing from an earlier count. */
	return o->standby_fd >= 0 ? 0 : session_quota(se);
}

/* The connection: zcfsd's (--fd) or a mount of our own (*MNT); logged. */
static int connect_fuse(struct zcfs_session *se, struct zcfs_mount **mnt)
{
	const struct zcfs_options *o = se->opts;
	int r;

	if (o->fuse_fd >= 0) {
		se->fuse_fd = o->fuse_fd;
		return 0;
	}
	r = zcfs_mount(o, zcfs_mount_max_read(o->max_write, se->transport == &transport_uring),
		       mnt, &se->fuse_fd);
	if (r < 0) {
		fprintf(stderr, "zcfs-serve: mount %s: %s\n", o->mountpoint, strerror(-r));
		return r;
	}
	/* FUSE's default 1% strict dirty share throttles a writeback mount
	 * after a few MiB (measured: 4 KiB random writes at 0.2x of what a
	 * 1G limit allows). */
	if (o->writeback && o->dirty_limit) {
		r = zcfs_mount_set_dirty_limit(*mnt, o->dirty_limit);
		if (r < 0)
			log_warn("--dirty-limit: %s; the kernel's default limit stays", strerror(-r));
	}
	return 0;
}

/* Between the connection and the transport: zcfsd's counters, privileges,
 * the sandbox, --resume's index; logged. */
static int session_confine(struct zcfs_session *se)
{
	const struct zcfs_options *o = se->opts;
	int r;

	/* Reopens of handles go through it (ops_file.c): the walk of
	 * "/proc/self/fd/" on each costs ~1 us here. /proc/self is resolved
	 * at the open: so after daemonize's fork (main), and before the
	 * sandbox (Landlock judges what the magic link leads to, not /proc). */
	se->proc_fd_dir = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->stats_fd >= 0) {
		r = map_stats(se, o->stats_fd);
		if (r < 0) {
			log_err("--stats-fd=%d: %s", o->stats_fd, strerror(-r));
			return r;
		}
	}
	r = setup_privileges(se);
	if (r < 0) {
		log_err("privileges: %s", strerror(-r));
		return r;
	}
	if (o->sandbox) {
		r = enter_sandbox(se);
		if (r < 0) {
			log_err("sandbox: %s", strerror(-r));
			return r;
		}
	}
	return o->resume ? resume_index_new(&se->resume) : 0;
}

/* --standby-fd: everything is set up and no thread reads the connection
 * (session_wait_go). Says so on --ready-fd, then waits in main's epoll
 * for the predecessor to be gone: 0 on 'G'; 1 when zcfsd gave the
 * standby up (EOF, another byte, SIGTERM/SIGINT): the session ends with
 * status 0 having touched nothing. */
static int standby_wait(struct zcfs_session *se, const struct main_wait *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = se->opts->standby_fd };
	int64_t t0 = wall_us();
	struct signalfd_siginfo si;
	char c = 0;	/* 'G' go; 'T' a signal, 'X' the session ended, else the byte read */
	ssize_t n;

	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, se->opts->standby_fd, &ev) < 0)
		return -errno;
	log_info("standby: prepared, waiting for the predecessor to leave");
	session_ready(se);
	while (!c) {
		if (epoll_wait(w->epfd, &ev, 1, -1) < 1)
			continue;
		if (ev.data.fd == se->opts->standby_fd) {
			do
				n = read(se->opts->standby_fd, &c, 1);
			while (n < 0 && errno == EINTR);
			c = n == 1 && c ? c : 'E';
			break;
		}
		while (read(w->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				c = 'T';
		if (!c && atomic_load(&se->exiting))
			c = 'X';
	}
	(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, se->opts->standby_fd, NULL);
	if (c != 'G') {
		log_info("standby: given up (%s) after %.1f ms; exiting untouched",
			 c == 'T' ? "signal" : c == 'X' ? "session ended" : c == 'E' ? "EOF" : "unexpected byte",
			 (double)(wall_us() - t0) / 1000);
		session_exit(se, 0);
		return 1;
	}
	log_info("standby: go wall_us=%lld waited_ms=%.1f", (long long)wall_us(),
		 (double)(wall_us() - t0) / 1000);
	return 0;
}

/* The prune thread and the transport, then --resume's adoption; a
 * standby waits for its go in between. 1: a standby given up. */
static int session_start(struct zcfs_session *se, const struct main_wait *w)
{
	int r = prune_start(se, &se->prune);

	if (r == 0)
		r = se->transport->start(se);
	/* atomic: the transport's threads may already log INIT (start_steps) */
	__atomic_store_n(&se->start_us[START_TRANSPORT], wall_us(), __ATOMIC_RELAXED);
	/* The transport seals as soon as its rings exist (before any request
	 * is read); this catches a start path that did not. */
	if (r == 0 && se->opts->sandbox && se->transport == &transport_uring && !sandbox_rings_sealed()) {
		log_warn("sandbox: io_uring transport started without sealing ring creation; sealing now");
		r = sandbox_seal_rings();
	}
	if (r == 0 && se->opts->standby_fd >= 0) {
		r = standby_wait(se, w);
		se->start_us[START_STANDBY] = wall_us();
		if (r == 0)
			session_go(se);
		if (r == 0)
			r = session_quota(se);
	}
	if (r == 0 && se->opts->resume)
		r = session_resume(se);
	if (r < 0)
		log_err("transport %s: %s", se->transport->name, strerror(-r));
	return r;
}

int main(int argc, char **argv)
{
	struct zcfs_options opts;
	struct zcfs_session se = { .fuse_fd = -1, .root_fd = -1, .ready_fd = -1, .wake_fd = -1,
				   .init_lock = PTHREAD_MUTEX_INITIALIZER,
				   .init_cond = PTHREAD_COND_INITIALIZER };
	struct zcfs_mount *mnt = NULL;
	struct main_wait w = { .epfd = -1, .sig_fd = -1 };
	char err[256];
	sigset_t set;
	int notify_fd = -1, root_fd, r, status = 1;

	se.start_us[START_MAIN] = wall_us();
	if (options_parse(argc, argv, &opts, err, sizeof(err)) < 0)
		return usage_error(err);
	r = settle_options(&opts);
	if (r >= 0)
		return r;
	root_fd = open_source(&opts);
	if (root_fd < 0)
		return 2;
	r = source_mount_attrs(&root_fd, opts.mount_flags, opts.read_only);
	if (r < 0)
		log_info("backing atime and read-only follow %s's own mount: a mount with this mount's "
			 "flags (open_tree): %s", opts.source, strerror(-r));
	se.start_us[START_SOURCE] = wall_us();
	umask(0);	/* the kernel already applied the client's umask */
	raise_nofile();
	session_setup(&se, &opts, root_fd);
	if (!se.transport || opts.print_pinned) {
		status = se.transport ? print_pinned(&se) : 1;
		safe_close(root_fd);
		return status;
	}
	if (session_tables(&se, &root_fd) < 0)
		goto out;
	se.start_us[START_TABLES] = wall_us();
	if (!opts.foreground && daemonize(&notify_fd) < 0) {
		log_err("daemonize: %m");
		goto out;
	}
	/* Signals go to main only: workers inherit the blocked mask. */
	server_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	r = main_wait_open(&se, &set, &w);
	if (r < 0) {
		log_err("signalfd/eventfd/epoll: %s", strerror(-r));
		goto out;
	}
	if (connect_fuse(&se, &mnt) < 0 || session_confine(&se) < 0)
		goto out;
	se.start_us[START_CONFINE] = wall_us();
	if ((r = session_start(&se, &w)) != 0) {
		atomic_store(&se.exiting, true);
		zcfs_unmount(mnt);
		status = r > 0 ? session_exit_status(&se) : 1;
		goto stop;
	}
	notify_parent(&notify_fd, 0);
	wait_for_end(&se, mnt, &w);
	leave_inherited_connection(&se);
	status = session_exit_status(&se);
	log_info("exiting status=%d", status);
stop:
	se.transport->stop(&se);
	prune_stop(se.prune);
out:
	notify_parent(&notify_fd, (char)(status ? status : 0));
	zcfs_mount_free(mnt);
	if (opts.fuse_fd < 0)
		safe_close(se.fuse_fd);
	resume_index_free(se.resume);
	handle_table_free(se.handles);
	inode_table_free(se.inodes);
	quota_free(&se);
	broker_client_free(se.broker);
	safe_close(root_fd);
	main_wait_close(&se, &w);	/* last: a thread not joined may still wake main */
	return status;
}
