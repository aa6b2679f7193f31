/* zcfsd's in-memory model: the daemon, its volumes and their servers.
 * Every file of daemon/zcfsd works on these; each file owns one concern
 * (control socket, methods, volume mechanics, spawn, supervision, state,
 * budget, mount table). */
#ifndef ZCFSD_H
#define ZCFSD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "daemon/common/policy.h"
#include "daemon/common/zcfs_proto.h"

/* The fuse fd's number inside every server (--fd=3). */
#include "daemon/common/zcfs_stats.h"

#define ZCFSD_SERVER_FUSE_FD 3
#define ZCFSD_SERVER_STATS_FD 5	/* shared request counters (zcfs_stats.h) */
/* Passthrough broker (zcfsd_broker.h): the server's end, and zcfsd's end
 * parked in the server (never used there) so that a restarted zcfsd can
 * take it back with pidfd_getfd(2), like the fuse fd and the counters. */
#define ZCFSD_SERVER_BROKER_FD 6
#define ZCFSD_SERVER_BROKER_PARK_FD 7
#define ZCFSD_SERVER_RING_FD 8		/* io_uring buffers (zcfsd_ringfd.c) */

/* An error for the client: CSI code and a message a person can act on. */
struct zcfsd_err {
	enum zcfs_code code;
	char msg[512];
};
int zcfsd_fail(struct zcfsd_err *e, enum zcfs_code code, int r, const char *fmt, ...) _printf_(4, 5);

struct zcfsd_server {
	pid_t pid;			/* 0: none running (stopped or waiting to restart) */
	int pidfd;
	unsigned long long starttime;	/* /proc/PID/stat field 22, guards pid reuse */
	int64_t started_at;		/* wall clock of this server's start */
	unsigned restarts;
	unsigned backoff_ms;
	int64_t restart_due_ms;		/* monotonic; 0: no restart pending */
	int64_t started_ms;		/* monotonic start of this server */
	unsigned unserved_exits;	/* consecutive exits before serving (crash loop) */
	bool adopted;			/* not our child (taken over after a daemon restart) */
};

struct zcfsd_volume {
	char *id;
	char *tenant;
	uint32_t queue_depth;
	uint32_t max_write;
	enum policy_transport transport;	/* what the server is asked for */
	bool read_only;
	uint64_t size;			/* bytes the volume may hold (--quota-bytes), 0: no limit */
	char **targets;			/* targets[0] is the fuse mount, the rest bind mounts */
	size_t n_targets;
	/* Published state: live while n_targets > 0. */
	int fuse_fd;			/* the daemon's dup of the connection, -1 if none */
	unsigned conn;			/* /sys/fs/fuse/connections/<conn> */
	uint64_t pinned;		/* bytes charged to the tenant */
	struct zcfsd_server srv;
	struct zcfsd_broker *broker;	/* passthrough broker of the running server, or NULL */
	/* Why zcfsd last unpublished the volume on its own (a static
	 * string, e.g. its connection was aborted); NULL after a publish. */
	const char *detached_reason;
	/* Request counters shared with the server; stats_fd is valid only
	 * while stats is set. Kept across server restarts. */
	struct zcfs_stats *stats;
	int stats_fd;
	/* Hung-server detection (zcfsd_stall.c). */
	uint64_t stall_requests;	/* answered requests at the last sample */
	int64_t stall_since_ms;		/* monotonic: first sample with that count and requests waiting; 0: none */
	bool stalled;			/* detected; cleared when its successor starts */
	unsigned stalls;		/* detections since zcfsd started */
	/* io_uring volumes: the ring-buffer memfd of the current connection. */
	bool has_ring_fd;
	int ring_fd;
	struct zcfsd_volume *next;
};

struct zcfsd {
	struct policy *policy;
	const char *policy_path;
	const char *state_dir;
	const char *socket_path;
	const char *serve_bin;
	bool serve_can_resume;		/* zcfs-serve has --resume (restart on a live connection) */
	unsigned ncpus;			/* possible CPUs */
	struct zcfsd_volume *volumes;
	int epoll_fd;
	int listen_fd;
	int signal_fd;
	int64_t started_at;
	bool quit;
};

/* time */
int64_t zcfsd_now_ms(void);
int64_t zcfsd_wall(void);

/* volume lookup and lifetime (zcfsd_volume.c) */
struct zcfsd_volume *zcfsd_volume_find(struct zcfsd *d, const char *id);
void zcfsd_volume_free(struct zcfsd_volume *v);
size_t zcfsd_tenant_volume_count(struct zcfsd *d, const char *tenant);
int zcfsd_volume_create(struct zcfsd *d, json_object *params, struct zcfsd_volume **ret,
			struct zcfsd_err *e);
int zcfsd_volume_publish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			 struct zcfsd_err *e);
/* The same with a per-target read-only flag (volume.publish read_only). */
int zcfsd_volume_publish_ro(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			    bool read_only, struct zcfsd_err *e);
/* The same, and MOUNT_GROUP >= 0 applied to the volume root (group,
 * set-gid, group rwx) on the first target; on a later one it must match. */
int zcfsd_volume_publish_group(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			       bool read_only, int64_t mount_group, struct zcfsd_err *e);
int zcfsd_volume_unpublish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			   struct zcfsd_err *e);
int zcfsd_volume_delete(struct zcfsd *d, struct zcfsd_volume *v, struct zcfsd_err *e);
/* Unmounts every target and stops the server (used when re-adoption fails). */
int zcfsd_volume_teardown(struct zcfsd *d, struct zcfsd_volume *v, bool lazy);
/* syncfs(2) of the mount at target, waiting at most timeout_ms. */
int zcfsd_syncfs_bounded(const char *target, int timeout_ms) _must_check_;
int zcfsd_storage_path(struct zcfsd *d, const struct zcfsd_volume *v, char **ret);

/* budget (zcfsd_budget.c) */
bool zcfsd_uses_uring(enum policy_transport t, const struct policy_tenant *tenant);
/* A new volume's queue depth and max_write (0: not given): on io_uring
 * the default geometry of ncpus queues (daemon/common/uring_sizing.h,
 * at most URING_DEFAULT_PINNED_BUDGET), else the preferred ones. */
void zcfsd_resolve_geometry(unsigned ncpus, bool uring, uint32_t *depth, uint32_t *max_write);
/* Deepest queue (1..1024) whose pinned bytes fit in FREE; 0 if none. */
uint32_t zcfsd_depth_that_fits(unsigned ncpus, uint32_t max_write, uint64_t free_bytes);
/* The bytes V's servers pin (0 on /dev/fuse), exactly what zcfs-serve
 * --print-pinned reports for the options zcfsd passes. */
int zcfsd_pinned_bytes(struct zcfsd *d, const struct zcfsd_volume *v,
		       const struct policy_tenant *t, uint64_t *ret);
uint64_t zcfsd_tenant_used(struct zcfsd *d, const char *tenant);
unsigned zcfsd_possible_cpus(void);
/* zcfs-serve --help mentions OPTION (features appear as options). */
bool zcfsd_serve_has_option(const char *serve_bin, const char *option);

/* mounts (zcfsd_mountinfo.c) */
/* The fuse connection (device minor) mounted at PATH on top, or -ENOENT. */
int zcfsd_mount_conn_at(const char *path, unsigned *conn);
int zcfsd_conn_abort(unsigned conn);
int zcfsd_fusectl_ensure(void);
bool zcfsd_conn_exists(unsigned conn);

/* spawn and supervision (zcfsd_spawn.c, zcfsd_supervise.c) */
/* zcfsd_methods.c: request parameter helpers. A string parameter, or
 * NULL; INVALID_ARGUMENT for any key not in allowed (NULL-terminated). */
const char *zcfsd_param_string(json_object *params, const char *key);
int zcfsd_only_params(json_object *params, const char *const *allowed, struct zcfsd_err *e);

/* zcfsd_stats.c: the memfd of a volume's request counters. */
int zcfsd_stats_ensure(struct zcfsd_volume *v);
int zcfsd_stats_adopt(struct zcfsd_volume *v, int pidfd);
void zcfsd_stats_release(struct zcfsd_volume *v);
int zcfsd_ringfd_ensure(struct zcfsd_volume *v);
void zcfsd_ringfd_adopt(struct zcfsd_volume *v, int pidfd);
void zcfsd_ringfd_release(struct zcfsd_volume *v);

int zcfsd_spawn_server(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       struct zcfsd_err *e);
/* zcfsd_caps.c: whether the server starts with CAP_SYS_ADMIN (zero-copy
 * tenants on the ring only), and the child's switch to the tenant
 * (-errno; it keeps CAP_SYS_ADMIN across execve when sys_admin). */
bool zcfsd_server_gets_sys_admin(const struct zcfsd_volume *v, const struct policy_tenant *t);
int zcfsd_server_identity(const struct policy_tenant *t, bool sys_admin);
int zcfsd_stop_server(struct zcfsd *d, struct zcfsd_volume *v);
void zcfsd_on_server_exit(struct zcfsd *d, struct zcfsd_volume *v);
void zcfsd_run_due_restarts(struct zcfsd *d);
/* Hung servers (zcfsd_stall.c): call from the event loop; the ms until
 * the next check is due (for epoll's timeout), -1 when nothing to watch. */
void zcfsd_check_stalls(struct zcfsd *d);
int zcfsd_stall_timeout_ms(struct zcfsd *d);
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
void zcfsd_readopt(struct zcfsd *d);
/* zcfsd_orphans.c: after re-adoption, undo the fuse.zcfs mounts (and
 * their servers) zcfsd made but never recorded (killed during a publish). */
void zcfsd_clean_orphans(struct zcfsd *d);
int zcfsd_watch_pidfd(struct zcfsd *d, struct zcfsd_volume *v);
/* zcfsd_scope.c: under a systemd service, PID into a transient scope of
 * its own so that a restart of zcfsd.service leaves it running. */
bool zcfsd_scope_wanted(void);
int zcfsd_scope_move(pid_t pid, const char *volume);
void zcfsd_scope_done(void);
unsigned long long zcfsd_proc_starttime(pid_t pid);
/* zcfsd_unmount.c: unmount TARGET's mount of fuse connection CONN, found
 * by mount id (also after a rename or symlink swap on its path), never
 * another mount; KEEP are the volume's other targets. 0 when no such
 * mount is left, -ENOTUNIQ when several moved mounts could be it. */
int zcfsd_unmount_target(unsigned conn, const char *target, const char *const *keep, size_t n_keep,
			 bool lazy, const char *volume);
/* Every mount of CONN; 0 when none is left, -EBUSY otherwise. */
int zcfsd_unmount_conn(unsigned conn, bool lazy, const char *volume);
/* 0 if FD is an open /dev/fuse (character device 10:229), else -errno. */
int zcfsd_check_dev_fuse(int fd);

/* state (zcfsd_state.c) */
int zcfsd_state_save(struct zcfsd *d);
int zcfsd_state_load(struct zcfsd *d);
json_object *zcfsd_volume_json(struct zcfsd *d, const struct zcfsd_volume *v, bool for_state);

/* control socket (zcfsd_control.c) and methods (zcfsd_methods.c) */
/* A listening unix socket at PATH for root and the admin group, its
 * directory made when missing. What a previous zcfsd left at PATH is
 * removed: anything when REPLACE_ANY, else only a socket (-EEXIST for
 * anything else). */
int zcfsd_listen_unix(struct zcfsd *d, const char *path, int backlog, bool replace_any,
		      int *ret) _must_check_;
int zcfsd_control_listen(struct zcfsd *d);
void zcfsd_control_accept(struct zcfsd *d);
void zcfsd_control_client_event(struct zcfsd *d, int fd, uint32_t events);
json_object *zcfsd_dispatch(struct zcfsd *d, const char *method, json_object *params,
			    struct zcfsd_err *e);
int zcfsd_policy_reload(struct zcfsd *d, struct zcfsd_err *e);

/* epoll tags: the low 32 bits carry the fd */
#define ZCFSD_EV_LISTEN  (1ULL << 32)
#define ZCFSD_EV_SIGNAL  (2ULL << 32)
#define ZCFSD_EV_CLIENT  (3ULL << 32)
#define ZCFSD_EV_PIDFD   (4ULL << 32)
#define ZCFSD_EV_BROKER  (5ULL << 32)

#endif
