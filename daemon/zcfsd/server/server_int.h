/* server/'s own header: what its files call of each other (and what
 * the unit tests of serve_argv, ready, restart delay and srvlog reach).
 * Nothing outside daemon/zcfsd/server/ includes it: the rest of zcfsd
 * uses server.h. */
#ifndef ZCFSD_SERVER_INT_H
#define ZCFSD_SERVER_INT_H

#include "server.h"

/* supervise.c: server/'s record of V (v->sup), made at V's first server
 * start or re-adoption; 0 when it is there, -ENOMEM. Every entry of the
 * folder that may see a volume no server ran on yet takes v->sup NULL
 * as "nothing of ours to do". */
int zcfsd_sup_attach(struct zcfsd_volume *v);

/* spawn.c: V's server, forked and exec'd as tenant T, not watched yet
 * (zcfsd_server_start does both). With READY_FD the server gets
 * --ready-fd (when zcfs-serve has it) and *READY_FD the read end
 * (ready.c), else -1. -errno with E filled. */
int zcfsd_spawn_server_ready(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct policy_tenant *t, int *ready_fd, struct zcfs_err *e);
/* supervise.c: V's server's pidfd into the loop (its exit: supervision,
 * or the long operation in v->sup->on_exit), its restart and hand-over
 * deadlines bound (the folder arms them by time: zcfsd_deadline_arm),
 * the stall sampler armed. */
int zcfsd_watch_pidfd(struct zcfsd *d, struct zcfsd_volume *v);
/* A planned restart's successor (server/standby.c) into V->next: forked
 * with --resume --ready-fd --standby-fd and pipes of its own, its log
 * pipe and broker socket kept apart until it is promoted; nothing of
 * V's running server is touched. Not watched yet. -errno with E filled;
 * V->next may then hold fds to close. */
int zcfsd_spawn_standby(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
			struct zcfs_err *e);

/* serve_argv.c: zcfs-serve's command line as zcfsd runs it
 * (docs/supervision.md, Spawn). What a volume asks of its server: */
struct zcfsd_serve_opts {
	const char *serve_bin;
	const char *source;		/* STORAGE_DIR, the last argument */
	const char *transport;		/* --transport= */
	uint32_t queue_depth;
	uint32_t max_write;
	uint64_t quota_bytes;		/* --quota-bytes=; 0: --count-inodes ... */
	bool kernel_size;		/* ... unless a project quota enforces the size: neither */
	bool read_only;
	bool ring_memfd;		/* --ring-memfd=ZCFSD_SERVER_RING_FD */
	bool writeback;			/* false: --no-writeback */
	bool broker;			/* --passthrough --broker-fd=ZCFSD_SERVER_BROKER_FD */
	bool zero_copy;			/* --zero-copy=auto, else off */
	bool ready_fd;			/* --ready-fd=ZCFSD_SERVER_READY_FD */
	bool resume;
	bool standby;			/* --standby-fd=ZCFSD_SERVER_STANDBY_FD */
	bool holder_rings;		/* --holder-rings=ZCFS_HOLDER_RING_FD (ring_holder volumes) */
};
#define ZCFSD_SERVE_ARGV_MAX 27
/* The argv and the strings it points to (besides the options' own). */
struct zcfsd_serve_argv {
	char *argv[ZCFSD_SERVE_ARGV_MAX];
	char fd[32], stats[32], transport[32], depth[32], max_write[32], ring[32], broker[32],
	     ready[32], standby[32], quota[48], holder[32];
};
/* V's options for its next server, started with SRC (its storage) and,
 * with READY_FD, --ready-fd. */
void zcfsd_serve_opts_of(const struct zcfsd *d, const struct zcfsd_volume *v,
			 const struct policy_tenant *t, const char *src, bool ready_fd,
			 struct zcfsd_serve_opts *o);
/* Fills A->argv (NULL-terminated) from O alone; the number of arguments. */
size_t zcfsd_serve_argv(const struct zcfsd_serve_opts *o, struct zcfsd_serve_argv *a);
/* The ring holder's (holder.c): --ring-holder on the fuse fd and ring
 * memfd, the geometry of O, SOURCE last (so the orphan sweep knows it). */
size_t zcfsd_holder_argv(const struct zcfsd_serve_opts *o, struct zcfsd_serve_argv *a);

/* holder.c: ring_holder volumes (docs/supervision.md, "Ring holder"). */
/* Its holder runs (started first if none: as the tenant with MEMLOCK,
 * at most 1 s for its ready line, in the event loop); its ring fds
 * (CLOEXEC) in FDS[0..*N), at most ZCFS_HOLDER_RINGS_MAX. -errno with E. */
int zcfsd_holder_rings(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       const char *src, uint64_t memlock, int *fds, unsigned *n, struct zcfs_err *e);
/* Unpublish: SIGKILL; reaped when its pidfd fires. */
void zcfsd_holder_stop(struct zcfsd *d, struct zcfsd_volume *v);
/* After a zcfsd restart: the recorded holder, if it is still that
 * process (start time), watched again. -errno otherwise. */
int zcfsd_holder_readopt(struct zcfsd *d, struct zcfsd_volume *v);

/* ready.c: a new server's readiness. zcfs-serve --ready-fd writes one
 * 'R' into a pipe and closes it once INIT is answered and its transport
 * serves, so a publish is answered when the target serves instead of
 * after a fixed wait (lifecycle/publish_wait.c, in the event loop). The
 * server is untrusted: every wait is bounded, and anything but 'R'
 * (another byte, EOF, silence) is not "ready". */

/* pipe2 for --ready-fd: fds[0] zcfsd's non-blocking read end, fds[1] the
 * server's; both close-on-exec (the child dups fds[1] to its place). */
int zcfsd_ready_pipe(int fds[2]);


/* caps.c: whether the server starts with CAP_SYS_ADMIN (zero-copy
 * tenants on the ring only), and the child's switch to the tenant
 * (-errno; it keeps CAP_SYS_ADMIN across execve when sys_admin). */
bool zcfsd_server_gets_sys_admin(const struct zcfsd_volume *v, const struct policy_tenant *t);
int zcfsd_server_identity(const struct policy_tenant *t, bool sys_admin);

/* supervise.c: restarts, hand-over deadlines, re-adoption */
/* The delay before restarting a server that exited: none when it served
 * (ran RESTART_SERVED_MS), none for the first
 * RESTART_FREE_TRIES exits in a row before serving, then doubling from
 * RESTART_BACKOFF_MIN_MS up to RESTART_BACKOFF_MAX_MS (a crash loop).
 * *unserved counts those exits in a row. */
#define RESTART_SERVED_MS 1000
#define RESTART_FREE_TRIES 2
#define RESTART_BACKOFF_MIN_MS 100
#define RESTART_BACKOFF_MAX_MS 10000
unsigned zcfsd_restart_delay_ms(unsigned *unserved, bool served);
/* V's server started again at DUE_MS (re-armed when one was pending). */
void zcfsd_server_restart_at(struct zcfsd *d, struct zcfsd_volume *v, int64_t due_ms);
/* notify.c: FUSE_NOTIFY_RESEND on a connection (a successor's first
 * step: what its predecessor had read is queued again). */
int zcfsd_send_resend(int fuse_fd);

/* standby.c (the rest in server.h): V's server exited (seen,
 * forgotten): a ready standby takes over; true if it did. */
bool zcfsd_standby_promote(struct zcfsd *d, struct zcfsd_volume *v);

/* stall.c: hung servers, sampled every STALL_SAMPLE_MS while a server
 * runs and the policy has a stall_timeout_ms. arm: the sampler started
 * if it is not (a server started; a policy reload). */
void zcfsd_stall_arm(struct zcfsd *d);


/* srvlog.c: the server's stdout/stderr through a pipe into
 * STATE_DIR/logs/ID.log (ID.log.1 after rotation), bounded in line
 * length, rate, file size and zcfsd's reading. */
#define SRVLOG_LINE_MAX 1024		/* bytes of a line kept; the rest is cut */
#define SRVLOG_RATE 16384		/* bytes/s into the file ... */
#define SRVLOG_BURST 65536		/* ... after a burst of this much */
#define SRVLOG_FILE_MAX (1024 * 1024)	/* then ID.log -> ID.log.1 */
#define SRVLOG_READ_MAX 65536		/* read per wakeup */
#define SRVLOG_DISCARD_MAX (4 * 1024 * 1024)	/* read per second; then not watched */
/* A new pipe for the server about to start: *WFD is the write end for
 * its stdout/stderr (the caller closes it after fork), the read end is
 * watched (and parked in the server at ZCFSD_SERVER_LOG_PARK_FD). */
int zcfsd_srvlog_pipe(struct zcfsd *d, struct zcfsd_volume *v, int *wfd) _must_check_;
/* A promoted standby's pipe (server/standby.c), read end RFD, becomes
 * the volume's log (taken: closed on failure). */
int zcfsd_srvlog_take(struct zcfsd *d, struct zcfsd_volume *v, int rfd);
/* After a zcfsd restart: the parked read end, if it is one. */
void zcfsd_srvlog_adopt(struct zcfsd *d, struct zcfsd_volume *v, int pidfd);
/* Drains what is left and stops watching (the server is gone). */
void zcfsd_srvlog_close(struct zcfsd *d, struct zcfsd_volume *v);
/* read(2) of a server's log pipe that never waits: its read end is
 * parked in the server, the same open file as zcfsd's, so O_NONBLOCK is
 * the server's to clear (RWF_NOWAIT is per call). -1 and errno EAGAIN
 * when empty. */
ssize_t zcfsd_srvlog_read(int fd, void *buf, size_t len);


/* scope.c: PID into its own transient scope (server.h: the modes). */
int zcfsd_scope_move(struct zcfsd *d, pid_t pid, const char *volume);

/* stop.c: the steps of zcfsd_server_stop; a server seen exiting is
 * forgotten with zcfsd_server_reap (server.h). */

#endif
