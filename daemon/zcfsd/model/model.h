/* zcfsd's in-memory model: the daemon, its volumes and their servers,
 * the fd numbers a server gets. The layers above (budget, mounts, broker,
 * state, server, lifecycle, protocol) each have a header of their own and
 * include this one. */
#ifndef ZCFSD_MODEL_H
#define ZCFSD_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "common/policy.h"
#include "common/zcfs_proto.h"

#include "common/zcfs_stats.h"
#include "loop.h"

/* The fds every server gets: the fuse connection (--fd=3), ... */
#define ZCFSD_SERVER_FUSE_FD 3
/* The spawn's error pipe (server/spawn.c): close-on-exec, so it is gone
 * once zcfs-serve runs; a failure before exec writes its errno there. */
#define ZCFSD_SERVER_ERR_FD 4
#define ZCFSD_SERVER_STATS_FD 5	/* shared request counters (zcfs_stats.h) */
/* Passthrough broker (broker/broker.h): the server's end, and zcfsd's end
 * parked in the server (never used there) so that a restarted zcfsd can
 * take it back with pidfd_getfd(2), like the fuse fd and the counters. */
#define ZCFSD_SERVER_BROKER_FD 6
#define ZCFSD_SERVER_BROKER_PARK_FD 7
#define ZCFSD_SERVER_RING_FD 8		/* io_uring buffers (model/ringfd.c) */
/* The read end of the server's log pipe, parked like the broker's end
 * (server/srvlog.c); its stdout and stderr are the write end. */
#define ZCFSD_SERVER_LOG_PARK_FD 9
#define ZCFSD_SERVER_READY_FD 10	/* a publish's "serving" pipe (server/ready.c) */
/* A planned restart's successor: the pipe whose 'G' lets it serve
 * (server/standby.c). The highest number a server gets. */
#define ZCFSD_SERVER_STANDBY_FD 11

/* A ring holder's volume (server/holder.c): ring fd q of the holder (at
 * ZCFS_HOLDER_RING_FD + q there, common/ring_holder.h) is given to
 * each server at the same number, after every fd above. */

/* Requests fail with a struct zcfs_err (common/zcfs_err.h). */

struct zcfsd;
struct zcfsd_volume;
struct zcfsd_unpublish;
struct zcfsd_delete;
struct zcfsd_publish_wait;
struct zcfsd_restart;
struct zcfsd_supervision;

/* A volume's server as the model records it (state.json, status, the
 * metrics): which process it is. How server/ runs it (its watch, restart
 * delay, standby, log pipe, the long operation taking its exit) is
 * server/'s own record, v->sup (server/server.h). */
struct zcfsd_server {
	pid_t pid;			/* 0: none running (stopped or waiting to restart) */
	int pidfd;
	unsigned long long starttime;	/* /proc/PID/stat field 22, guards pid reuse */
	int64_t started_at;		/* wall clock of this server's start */
	unsigned restarts;
};

/* The per-volume process that owns an io_uring volume's rings when the
 * volume asks for it (ring_holder; server/holder.c), as state.json
 * records it. */
struct zcfsd_holder {
	pid_t pid;			/* 0: none */
	unsigned long long starttime;
	unsigned rings;			/* ring fds it holds (one per queue) */
};

/* What the running server's output said and what zcfsd dropped of it
 * (server/srvlog.c; status, metrics), kept across server restarts. */
struct zcfsd_served {
	char served_transport[16];	/* from the server's "serving ..." line */
	char served_bufpool[16];	/* its bufpool= (off, unregistered, registered) */
	uint64_t served_pinned;		/* its pinned=: what it really locked */
	uint64_t dropped_bytes;		/* of its log, since zcfsd started (metrics) */
};

struct zcfsd_volume {
	char *id;
	char *tenant;
	uint32_t queue_depth;
	uint32_t max_write;
	enum policy_transport transport;	/* what the server is asked for */
	bool read_only;
	bool ring_holder;		/* io_uring rings owned by a holder process (volume option) */
	uint64_t size;			/* bytes the volume may hold, 0: no limit */
	/* How SIZE is enforced (lifecycle/size.c): by a project quota on
	 * its storage directory (PROJID, kept in state.json from before it
	 * is set on the directory, 0: none) or by its server counting
	 * (--quota-bytes; SIZE_WHY says why not the kernel). */
	uint32_t projid;
	enum zcfsd_size_enf { ZCFSD_SIZE_NONE, ZCFSD_SIZE_SERVER, ZCFSD_SIZE_PROJECT } size_enf;
	char size_why[256];
	/* transport auto that took /dev/fuse at this connection's first
	 * publish (budget, RLIMIT_MEMLOCK or kernel): why; "" when it did
	 * not. Kept in state.json: the running server is on /dev/fuse. */
	char fallback[160];
	/* Notes a client keeps with the volume (volume.create) and with each
	 * target (volume.publish): opaque to zcfsd, at most ZCFSD_NOTE_MAX
	 * bytes without a NUL, kept in state.json; NULL: none. zcfs-csi
	 * keeps there what an orchestrator asked for (ephemeral, capability). */
	char *note;
	char **targets;			/* targets[0] is the fuse mount, the rest bind mounts */
	char **target_notes;		/* targets[i]'s note */
	size_t n_targets;
	/* Published state: live while n_targets > 0. */
	int fuse_fd;			/* the daemon's dup of the connection, -1 if none */
	unsigned conn;			/* /sys/fs/fuse/connections/<conn> */
	uint64_t pinned;		/* bytes charged to the tenant */
	struct zcfsd_server srv;
	struct zcfsd_holder holder;	/* ring_holder volumes: the rings' owner */
	struct zcfsd_broker *broker;	/* passthrough broker of the running server, or NULL */
	/* Why zcfsd last unpublished the volume on its own (a static
	 * string, e.g. its connection was aborted); NULL after a publish. */
	const char *detached_reason;
	/* Request counters shared with the server: the memfd (-1 if none)
	 * and its mapping (NULL exactly when stats_fd is -1). Kept across
	 * server restarts. */
	struct zcfs_stats *stats;
	int stats_fd;
	/* Hung servers (server/stall.c) and seccomp kills, since zcfsd started. */
	bool stalled;			/* detected; cleared when its successor starts */
	unsigned stalls;
	unsigned seccomp_kills;
	/* io_uring volumes: the ring-buffer memfd of the current connection, -1 if none. */
	int ring_fd;
	struct zcfsd_served log;
	/* server/'s own record of how it runs the volume's processes
	 * (server/server.h): made at the first server start or re-adoption
	 * (NULL: no server ran here yet), let go by zcfsd_volume_free
	 * through sup_free, which server/ sets with it. */
	struct zcfsd_supervision *sup;
	void (*sup_free)(struct zcfsd_volume *v);
	/* The long operations under way on the volume, lifecycle/'s state
	 * machines (their records: lifecycle/lifecycle.h): an unpublish of
	 * the last target, a first publish waiting for its new server to say
	 * it serves, a planned restart (volume.restart), a delete removing the
 * storage. NULL: none. The
	 * model knows only that one runs. */
	struct zcfsd_unpublish *unpub;
	struct zcfsd_publish_wait *pubwait;
	struct zcfsd_restart *restart;
	struct zcfsd_delete *del;	/* volume.delete's removal child */
	struct zcfsd_volume *next;
};

/* Children zcfsd gives up waiting for at once (model/reap.c); more
 * stay zombies. */
#define ZCFSD_REAP_MAX 64

struct zcfsd {
	struct policy *policy;
	const char *policy_path;
	const char *state_dir;
	const char *socket_path;
	const char *serve_bin;
	bool serve_can_resume;		/* zcfs-serve has --resume (restart on a live connection) */
	bool serve_can_signal_ready;	/* zcfs-serve has --ready-fd (server/ready.c) */
	bool serve_can_standby;		/* zcfs-serve has --standby-fd (server/standby.c) */
	unsigned ncpus;			/* possible CPUs */
	struct zcfsd_volume *volumes;
	struct zcfsd_loop loop;		/* the event loop's watches and deadlines (loop.h) */
	int listen_fd;
	int signal_fd;
	struct zcfsd_watch signal_watch;
	struct zcfsd_deadline stall_sample;	/* hung servers (server/stall.c) */
	/* Bound by an operation waiting for the volumes to settle (the
	 * upgrade: lifecycle/upgrade.c) while it waits; zcfsd_changed arms
	 * it for now. Unbound: nothing. */
	struct zcfsd_deadline changed;
	struct zcfsd_control *control;	/* the control socket's connections (protocol/control.c) */
	struct zcfsd_metrics *metrics;	/* the metrics listener (protocol/metrics.c) */
	struct zcfsd_scopes *scopes;	/* the servers' systemd scopes (server/scope.c) */
	/* Children given up on (model/reap.c), reaped when their pidfd fires. */
	struct zcfsd_reaping {
		int pidfd;		/* a slot is in use while its watch is on */
		struct zcfsd_watch watch;
	} reaping[ZCFSD_REAP_MAX];
	int64_t started_at;
	char status[160];		/* what systemd was told last (STATUS=, main.c) */
	bool quit;
	struct zcfsd_upgrade *upgrade;	/* re-exec of zcfsd (lifecycle/upgrade.c) */
};

/* time */
int64_t zcfsd_now_ms(void);
int64_t zcfsd_wall(void);

/* volume lookup and lifetime (model/volume.c) */
struct zcfsd_volume *zcfsd_volume_find(struct zcfsd *d, const char *id);
/* A volume with no fds (every fd of the record is -1: none), or NULL. */
struct zcfsd_volume *zcfsd_volume_alloc(void);
void zcfsd_volume_free(struct zcfsd_volume *v);
size_t zcfsd_tenant_volume_count(struct zcfsd *d, const char *tenant);
int zcfsd_storage_path(struct zcfsd *d, const struct zcfsd_volume *v, char **ret);
/* "none", "server-count", "project-quota" (volume get, state.json). */
const char *zcfsd_size_enf_name(enum zcfsd_size_enf e);
#define ZCFSD_NOTE_MAX 4096
/* TARGET with its NOTE (copied; NULL: none) as the last target. */
int zcfsd_volume_add_target(struct zcfsd_volume *v, const char *target, const char *note);
/* NOTE (copied) as the note of targets[I], replacing any. */
int zcfsd_volume_set_target_note(struct zcfsd_volume *v, size_t i, const char *note);
void zcfsd_volume_remove_target(struct zcfsd_volume *v, size_t i);
/* What status and the metrics call its state: created, publishing (its
 * first target's server has not said it serves yet), restarting (no
 * server running), stalled, published. */
const char *zcfsd_volume_state(const struct zcfsd_volume *v);
/* The volume published at TARGET (its index in *idx), or NULL. */
struct zcfsd_volume *zcfsd_target_owner(struct zcfsd *d, const char *target, size_t *idx);

/* What an operation waiting for the volumes to settle waits for may have
 * begun or ended: a server started or went, a standby, a publish's wait,
 * an unpublish or a planned restart began or ended, a target went, a
 * control client was answered or left. d->changed armed for now, if it
 * is bound, so that operation is not stepped per round of the loop. */
void zcfsd_changed(struct zcfsd *d);

/* model/stats.c: the memfd of a volume's request counters;
 * model/ringfd.c: the memfd of its io_uring connection's ring buffers. */
int zcfsd_stats_ensure(struct zcfsd_volume *v);
int zcfsd_stats_adopt(struct zcfsd_volume *v, int pidfd);
void zcfsd_stats_release(struct zcfsd_volume *v);
/* v->size into the counters' quota_bytes, which the running server
 * enforces at once (online resize); -EOPNOTSUPP: an older memfd without
 * the field (the size takes effect at the next server start). */
int zcfsd_stats_set_size(struct zcfsd_volume *v);
int zcfsd_ringfd_ensure(struct zcfsd_volume *v);
void zcfsd_ringfd_adopt(struct zcfsd_volume *v, int pidfd);
void zcfsd_ringfd_release(struct zcfsd_volume *v);

/* model/reap.c: a child given up on (PIDFD consumed, SIGKILL sent by
 * the caller) is reaped by the loop once it exits (its pidfd watched). */
void zcfsd_reap_later(struct zcfsd *d, int pidfd);
/* PIDFD let go: an exited child of OURS reaped now (*SI, when not NULL,
 * as waitid(2) fills it; si_pid 0 when not reaped here), one still
 * exiting left to zcfsd_reap_later, anything else just closed. */
void zcfsd_reap_release(struct zcfsd *d, int pidfd, bool ours, siginfo_t *si);

/* 0 if FD is an open /dev/fuse (character device 10:229), else -errno. */
int zcfsd_check_dev_fuse(int fd);
/* Whether a volume of TRANSPORT of TENANT's runs on io_uring (auto may:
 * it is charged and started as one). */
bool zcfsd_uses_uring(enum policy_transport t, const struct policy_tenant *tenant);
/* O is a note zcfsd keeps: a string of at most ZCFSD_NOTE_MAX bytes
 * without a NUL. 0, or -EINVAL (not a string), -E2BIG, -EILSEQ (a NUL). */
int zcfsd_note_check(json_object *o);

/* model/proc.c: /proc/PID/stat's start time (0 when unknown), which
 * guards against a reused pid, and parent (0 when unknown). */
unsigned long long zcfsd_proc_starttime(pid_t pid);
pid_t zcfsd_proc_ppid(pid_t pid);
/* The exit status (waitpid(2)'s form) of PID from /proc/PID/stat: for an
 * exited child zcfsd cannot reap yet (a ptrace tracer reaps it first). */
int zcfsd_proc_exit_status(pid_t pid, int *status);

#endif
