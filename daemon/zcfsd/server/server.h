/* A volume's server, as the rest of zcfsd sees it: started as the tenant
 * (and readiness), stopped one way, supervised from the event loop
 * (restart delay, --resume, FUSE_NOTIFY_RESEND, hand-over, hung servers,
 * its log), re-adopted after a zcfsd restart, systemd scopes, teardown.
 * The folder's own declarations are in server_int.h. */
#ifndef ZCFSD_SERVER_H
#define ZCFSD_SERVER_H

#include <signal.h>
#include "daemon/zcfsd/model/model.h"

/* A planned restart's successor, started before its predecessor hands
 * over (standby.c): set up, sandboxed, reading nothing until zcfsd
 * writes 'G' into its go pipe once the predecessor is gone. */
struct zcfsd_standby {
	pid_t pid;			/* 0: none */
	int pidfd;			/* watched: an exit before its promotion gives it up */
	struct zcfsd_watch pidfd_watch;
	unsigned long long starttime;
	int ready_fd;			/* its --ready-fd's read end, watched until 'R'; -1 after */
	struct zcfsd_watch ready_watch;	/* both watched by the planned restart (lifecycle/restart.c) */
	int go_fd;			/* the write end of its --standby-fd */
	int log_rfd;			/* its stdout/stderr pipe: the volume's log once promoted */
	int broker_fd;			/* zcfsd's end of its broker socket; -1: none */
	bool ready;			/* said 'R': its predecessor was asked to hand over */
	int64_t fork_us, exec_us;
};

/* The running server's output: a pipe zcfsd drains into a capped file
 * (srvlog.c); what it said is the model's (v->log). Kept across server
 * restarts. */
struct zcfsd_srvlog {
	int rfd;			/* the pipe's read end; -1: none */
	struct zcfsd_watch watch;
	struct zcfsd_deadline unmute;	/* muted: watched again then */
	int file_fd;			/* STATE_DIR/logs/ID.log; -1: not open */
	uint64_t file_size;
	char *line;			/* SRVLOG_LINE_MAX bytes, once a pipe was made */
	size_t line_len;
	bool line_cut;			/* skipping the rest of a cut line */
	bool muted;			/* not watched for the rest of the second */
	uint64_t tokens;		/* bytes the file may take now (rate limit) */
	int64_t refill_ms;
	int64_t second_ms;		/* start of the second read_this_second counts */
	uint64_t read_this_second;
	unsigned mutes;
	uint64_t dropped_unreported;	/* not yet said in the file */
};

/* server/'s own record of a volume (v->sup): how it runs the server,
 * its standby, ring holder and log, and samples it for stalls. */
struct zcfsd_supervision {
	struct zcfsd_watch pidfd_watch;	/* the server's exit (supervise.c) */
	/* Who takes its exit instead of supervision (a restart): a long
	 * operation of lifecycle/ waiting on this server (a first publish,
	 * the end of an unpublish, a planned restart); NULL: none. */
	void (*on_exit)(struct zcfsd *d, struct zcfsd_volume *v);
	unsigned backoff_ms;		/* the restart delay last decided */
	struct zcfsd_deadline restart;	/* armed: a restart pending */
	int64_t started_ms;		/* monotonic start of this server */
	unsigned unserved_exits;	/* consecutive exits before serving (crash loop) */
	bool adopted;			/* not our child (taken over after a daemon restart) */
	int64_t fork_us, exec_us;	/* wall_us() before its fork, after its exec (logged) */
	struct zcfsd_standby standby;	/* a planned restart's successor, if one is starting */
	struct {			/* ring_holder volumes (holder.c) */
		int pidfd;		/* watched: its death restarts both */
		struct zcfsd_watch pidfd_watch;
		bool adopted;		/* not our child (taken over after a zcfsd restart) */
	} holder;
	struct zcfsd_srvlog log;
	/* stall.c */
	uint64_t stall_requests;	/* answered requests at the last sample */
	int64_t stall_since_ms;		/* monotonic: first sample with that count and requests waiting; 0: none */
};

/* supervise.c: V's server, forked and exec'd as tenant T (spawn.c) and
 * watched: its exit is supervision's (a restart) unless a long operation
 * takes it (v->sup->on_exit). With READY_FD the server gets --ready-fd
 * (when zcfs-serve has it) and *READY_FD the read end (ready.c), else
 * -1. -errno with E filled. */
int zcfsd_server_start(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       int *ready_fd, struct zcfs_err *e);

/* stop.c: the one way to stop V's server.
 *   ABORT   never waits: standby given up, ring holder and broker
 *           stopped, the connection aborted if still ours, our dup
 *           closed, no restart; the exit comes as an ordinary pidfd event
 *   KILL    SIGKILL (logged with WHY), still watched
 *   FORGET  unwatched, reaped now or by the loop once it exits (no
 *           wait, no zombie), logged as stopped
 *   NOW     ABORT, KILL, FORGET: a server that failed its start
 *   WAIT    ABORT, at most 1.5 s for its exit, KILL, 3 s more, FORGET
 *           (teardown; the only one that waits)
 * Each step is a no-op once the server is gone. */
enum zcfsd_stop { ZCFSD_STOP_ABORT, ZCFSD_STOP_KILL, ZCFSD_STOP_FORGET, ZCFSD_STOP_NOW, ZCFSD_STOP_WAIT };
void zcfsd_server_stop(struct zcfsd *d, struct zcfsd_volume *v, enum zcfsd_stop how, const char *why);
/* V's server exited (its pidfd fired): forgotten and reaped, how in *SI
 * (si_pid 0 when not our child); nothing logged, no restart. */
void zcfsd_server_reap(struct zcfsd *d, struct zcfsd_volume *v, siginfo_t *si);
/* "exit status 2", "killed by signal 31 (Bad system call)" for SI. */
void zcfsd_exit_describe(const siginfo_t *si, char *buf, size_t len);

/* ready.c: a new server's readiness. zcfs-serve --ready-fd writes one
 * 'R' into a pipe and closes it once INIT is answered and its transport
 * serves, so a publish is answered when the target serves instead of
 * after a fixed wait (lifecycle/publish_wait.c, in the event loop). The
 * server is untrusted: every wait is bounded, and anything but 'R'
 * (another byte, EOF, silence) is not "ready". */
/* How long a publish waits for a new server to say it serves. Past it a
 * live server keeps its mount (clients wait for its INIT as they did
 * before readiness existed; stall.c kills one that hangs), so this only
 * bounds how late a publish is answered. */
#define ZCFSD_READY_TIMEOUT_MS 1000
/* One non-blocking read of the pipe: 0 'R' (ready), -EAGAIN nothing yet,
 * -EPIPE closed unwritten, -EPROTO anything else (garbage, more than the
 * byte), or the read's -errno. Never reads more than a few bytes. */
int zcfsd_ready_read(int ready_fd);

/* The event loop's side is watches and deadlines the folder registers
 * itself (model/loop.h): each server's and holder's pidfd, the log pipe;
 * restart and log-rate deadlines, the stall sampler. */
/* V's server exited (its pidfd fired) and a long operation that took
 * its exit (v->sup->on_exit) hands it back: supervision's handling, PLANNED
 * for a hand-over (no restart delay; a ready standby takes over, else a
 * new server starts at once). */
void zcfsd_server_exited(struct zcfsd *d, struct zcfsd_volume *v, bool planned);
/* A planned restart's parts (its state machine: lifecycle/restart.c).
 * notify.c: the hand-over request to V's server (SIGUSR1: zcfs-serve
 * hands its requests over and exits). standby.c: the successor started
 * first (--standby-fd: exec, linking, sandbox, tables and rings while the
 * old server still serves), not watched (its pidfd and ready_fd are the
 * caller's to watch, in v->standby's watches); its ready pipe read once
 * it is readable: 0 'R' (ready), -EAGAIN nothing yet, -EPIPE closed,
 * -EPROTO anything else (then unwatched and closed); given up (also
 * once it exited before its promotion: how, logged): killed, reaped now
 * or by the loop, nothing of it left. Once the old server's exit is seen a ready
 * standby gets 'G' and serves (zcfsd_server_exited). */
int zcfsd_server_signal_handover(struct zcfsd_volume *v);
int zcfsd_standby_start(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e);
int zcfsd_standby_ready_read(struct zcfsd *d, struct zcfsd_volume *v);
void zcfsd_standby_give_up(struct zcfsd *d, struct zcfsd_volume *v, const char *why);
/* After a zcfsd restart: every recorded server taken over (pidfd, fuse
 * fd, counters, log, holder, broker), or cleaned up. */
void zcfsd_readopt(struct zcfsd *d);

/* teardown.c: unmounts every target and stops the server (unpublish of
 * the last target; cleanup when re-adoption fails: LAZY). */
int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy);

/* scope.c: PID into a transient systemd scope of its own so that a
 * restart of zcfsd.service, or the end of zcfsd's pod, leaves it
 * running. Mode (--server-scopes): auto, under a systemd service only;
 * systemd, always (a pod with the host's /run/systemd and hostPID);
 * off. init: d->scopes in mode NAME (again: the mode changed); -EINVAL
 * for another name, -ENOMEM. done lets it go. */
enum zcfsd_scope_mode { ZCFSD_SCOPES_AUTO, ZCFSD_SCOPES_SYSTEMD, ZCFSD_SCOPES_OFF };
int zcfsd_scope_init(struct zcfsd *d, const char *name);
bool zcfsd_scope_wanted(struct zcfsd *d);
void zcfsd_scope_done(struct zcfsd *d);

#endif
