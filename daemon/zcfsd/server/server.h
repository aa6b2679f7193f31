/* A volume's server: spawn as the tenant, identity and caps, supervision
 * (exit, restart delay, --resume, FUSE_NOTIFY_RESEND), re-adoption after
 * a zcfsd restart, hung-server detection, systemd scopes, teardown. */
#ifndef ZCFSD_SERVER_H
#define ZCFSD_SERVER_H

#include <signal.h>
#include "daemon/zcfsd/model/model.h"

/* spawn.c */
int zcfsd_spawn_server(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       struct zcfs_err *e);
/* The same; with READY_FD the server gets --ready-fd (when zcfs-serve has
 * it) and *READY_FD the read end (ready.c), else -1. */
int zcfsd_spawn_server_ready(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct policy_tenant *t, int *ready_fd, struct zcfs_err *e);
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
/* Its pidfd (ZCFSD_EV_HOLDER) fired. */
void zcfsd_holder_event(struct zcfsd *d, int pidfd);
/* After a zcfsd restart: the recorded holder, if it is still that
 * process (start time), watched again. -errno otherwise. */
int zcfsd_holder_readopt(struct zcfsd *d, struct zcfsd_volume *v);

/* ready.c: a new server's readiness. zcfs-serve --ready-fd writes one
 * 'R' into a pipe and closes it once INIT is answered and its transport
 * serves, so a publish is answered when the target serves instead of
 * after a fixed wait (protocol/publish_wait.c, in the event loop). The
 * server is untrusted: every wait is bounded, and anything but 'R'
 * (another byte, EOF, silence) is not "ready". */
/* How long a publish waits for a new server to say it serves. Past it a
 * live server keeps its mount (clients wait for its INIT as they did
 * before readiness existed; stall.c kills one that hangs), so this only
 * bounds how late a publish is answered. */
#define ZCFSD_READY_TIMEOUT_MS 1000

/* pipe2 for --ready-fd: fds[0] zcfsd's non-blocking read end, fds[1] the
 * server's; both close-on-exec (the child dups fds[1] to its place). */
int zcfsd_ready_pipe(int fds[2]);
/* One non-blocking read of the pipe: 0 'R' (ready), -EAGAIN nothing yet,
 * -EPIPE closed unwritten, -EPROTO anything else (garbage, more than the
 * byte), or the read's -errno. Never reads more than a few bytes. */
int zcfsd_ready_read(int ready_fd);

/* "exit status 2", "killed by signal 31 (Bad system call)" for SI. */
void zcfsd_exit_describe(const siginfo_t *si, char *buf, size_t len);

/* caps.c: whether the server starts with CAP_SYS_ADMIN (zero-copy
 * tenants on the ring only), and the child's switch to the tenant
 * (-errno; it keeps CAP_SYS_ADMIN across execve when sys_admin). */
bool zcfsd_server_gets_sys_admin(const struct zcfsd_volume *v, const struct policy_tenant *t);
int zcfsd_server_identity(const struct policy_tenant *t, bool sys_admin);

/* supervise.c */
int zcfsd_stop_server(struct zcfsd *d, struct zcfsd_volume *v);
/* Its first step, which never waits: broker stopped, connection aborted,
 * our dup closed. The server's exit then comes as an ordinary pidfd event
 * (no restart: no targets). zcfsd_server_forget: unwatched, reaped,
 * logged as stopped (nothing if already gone). */
void zcfsd_stop_server_begin(struct zcfsd *d, struct zcfsd_volume *v);
void zcfsd_server_forget(struct zcfsd *d, struct zcfsd_volume *v);
/* The same for a server that exited, with how (*SI, si_pid 0 when not
 * our child), nothing logged. */
void zcfsd_server_reap(struct zcfsd *d, struct zcfsd_volume *v, siginfo_t *si);
/* zcfsd_stop_server without any wait: begun, SIGKILL (logged with WHY),
 * forgotten, reaped later (model/reap.c). For a server that failed its
 * start: nothing of it is worth a wait in the event loop. */
void zcfsd_stop_server_now(struct zcfsd *d, struct zcfsd_volume *v, const char *why);
void zcfsd_on_server_exit(struct zcfsd *d, struct zcfsd_volume *v);
void zcfsd_run_due_restarts(struct zcfsd *d);
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
int64_t zcfsd_next_restart_ms(struct zcfsd *d);
int zcfsd_send_resend(int fuse_fd);
/* Planned restart (volume.restart): SIGUSR2 asks the server to hand its
 * requests over and exit (zcfs-serve hand_over); its exit is restarted at
 * once, and a server still running after HANDOVER_TIMEOUT_MS is killed. */
#define HANDOVER_TIMEOUT_MS 5000
int zcfsd_server_handover(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e);
/* Sends the hand-over request (SIGUSR2) to V's server; its deadline. */
int zcfsd_server_signal_handover(struct zcfsd_volume *v);
void zcfsd_readopt(struct zcfsd *d);

/* standby.c: a planned restart starts the successor first (--standby-fd):
 * exec, linking, sandbox, tables and rings happen while the old server
 * still serves; once the successor says 'R', the old one is asked to
 * hand over, and when its exit is seen the successor gets 'G' and
 * serves at once. A standby that fails, lies or is not ready within
 * STANDBY_READY_TIMEOUT_MS is killed and the restart goes on without
 * one (hand-over, then an ordinary restart). */
#define STANDBY_READY_TIMEOUT_MS 3000
int zcfsd_standby_start(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e);
/* Its ready pipe (ZCFSD_EV_STANDBY) became readable. */
void zcfsd_standby_event(struct zcfsd *d, int fd);
/* Its pidfd fired before it was promoted: reaped and forgotten. */
void zcfsd_standby_exited(struct zcfsd *d, struct zcfsd_volume *v);
/* V's server exited (seen, forgotten): a ready standby takes over; true
 * if it did. */
bool zcfsd_standby_promote(struct zcfsd *d, struct zcfsd_volume *v);
/* Kills a standby not promoted (none: nothing); its exit is reaped later. */
void zcfsd_standby_give_up(struct zcfsd *d, struct zcfsd_volume *v, const char *why);
/* One not ready by its deadline is given up; the ms of the next one (0: none). */
void zcfsd_standby_deadline(struct zcfsd *d, struct zcfsd_volume *v, int64_t now);
int64_t zcfsd_standby_due_ms(const struct zcfsd_volume *v);
int zcfsd_watch_pidfd(struct zcfsd *d, struct zcfsd_volume *v);

/* stall.c: hung servers; call from the event loop; the ms until the
 * next check is due (for epoll's timeout), -1 when nothing to watch. */
void zcfsd_check_stalls(struct zcfsd *d);
int zcfsd_stall_timeout_ms(struct zcfsd *d);

/* scope.c: PID into a transient systemd scope of its own so that a
 * restart of zcfsd.service, or the end of zcfsd's pod, leaves it
 * running. Mode (--server-scopes): auto, under a systemd service only;
 * systemd, always (a pod with the host's /run/systemd and hostPID);
 * off. set_mode: -EINVAL for another name. */
enum zcfsd_scope_mode { ZCFSD_SCOPES_AUTO, ZCFSD_SCOPES_SYSTEMD, ZCFSD_SCOPES_OFF };
int zcfsd_scope_set_mode(const char *name);
bool zcfsd_scope_wanted(void);
int zcfsd_scope_move(pid_t pid, const char *volume);
void zcfsd_scope_done(void);

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
void zcfsd_srvlog_event(struct zcfsd *d, int fd);
int zcfsd_srvlog_timeout_ms(struct zcfsd *d);
void zcfsd_srvlog_tick(struct zcfsd *d);

/* teardown.c: unmounts every target and stops the server (unpublish of
 * the last target; cleanup when re-adoption fails: LAZY). */
int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy);
/* Its unmounting part: every target and whatever else of the connection
 * is mounted; the server is left running. */
int zcfsd_volume_unmount_all(struct zcfsd_volume *v, bool lazy) _must_check_;

#endif
