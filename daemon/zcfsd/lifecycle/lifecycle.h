/* A volume's life as the methods see it: create, publish, unpublish,
 * resize, delete; and the start-up cleanup of what a crash left half done. */
#ifndef ZCFSD_LIFECYCLE_H
#define ZCFSD_LIFECYCLE_H

#include "daemon/zcfsd/model/model.h"
#include "daemon/zcfsd/mounts/rootown.h"

/* A checked volume.create (protocol/volume_params.c). */
struct zcfsd_volume_spec {
	const char *id;
	const struct policy_tenant *tenant;
	uint32_t queue_depth;
	uint32_t max_write;
	enum policy_transport transport;
	bool read_only;
	bool ring_holder;		/* io_uring rings owned by a holder (server/holder.c) */
	uint64_t size;			/* 0: no limit */
	struct zcfsd_root_owner owner;	/* the volume root's uid/gid/mode, if given */
	const char *note;		/* the client's note (model.h), or NULL */
};

int zcfsd_volume_create(struct zcfsd *d, const struct zcfsd_volume_spec *s,
			struct zcfsd_volume **ret, struct zcfs_err *e);

/* size.c: how a volume's size is enforced (mounts/projquota.h). Before a
 * first target's server starts: a project quota on V's storage directory
 * when its storage root has them (the id recorded in state.json first),
 * else the server counts; FAILED_PRECONDITION naming what the storage
 * root lacks when the tenant's policy says size_enforcement: kernel.
 * Sets v->size_enf and v->size_why (logged). */
int zcfsd_size_prepare(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       struct zcfs_err *e);
/* At start-up: every recorded project id set again on its directory with
 * its limits (what a crash between the two left is repaired). */
void zcfsd_size_readopt(struct zcfsd *d);
/* volume.delete, once the storage is gone: the project's limits removed. */
void zcfsd_size_release(struct zcfsd_volume *v, const struct policy_tenant *t);
/* volume.resize's hook (lifecycle/resize.c), before the new size is
 * recorded: V's project quota set to NEW_SIZE when the kernel enforces
 * V's size; 0 and nothing done when its server counts (the caller tells
 * the server through the shared counters); -errno with E, nothing
 * changed. V's size and the state are the caller's. */
int zcfsd_size_set_limit(struct zcfsd *d, struct zcfsd_volume *v, uint64_t new_size, struct zcfs_err *e);
/* publish_end.c, its ends (publish.c, publish_wait.c): a first target given up (server killed,
 * mount, target, connection and charge undone; storage and target
 * directory removed when this publish made them), or done (state saved,
 * logged). */
void zcfsd_publish_undo_first(struct zcfsd *d, struct zcfsd_volume *v, bool created_storage,
			      bool created_target);
void zcfsd_publish_done(struct zcfsd *d, struct zcfsd_volume *v, const char *target, bool ro);

int zcfsd_volume_unpublish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			   struct zcfs_err *e);
/* Its steps, for the deferred unpublish (unpublish.c): the
 * index of TARGET among v's targets (n_targets: not published there) or
 * -errno with E set; E for a failed unmount R; state saved and logged. */
int zcfsd_unpublish_target_index(const struct zcfsd_volume *v, const char *target,
				 struct zcfs_err *e) _must_check_;
int zcfsd_unpublish_failed(const struct zcfsd_volume *v, const char *target, int r, struct zcfs_err *e);
void zcfsd_unpublish_done(struct zcfsd *d, const struct zcfsd_volume *v, const char *target);

/* resize.c: volume.resize, grow only (OUT_OF_RANGE for a shrink, a
 * volume without a size, or more than the tenant's capacity); the running
 * server enforces the new size at once. Capacity: the free bytes of the
 * tenant's storage_root file system less the sizes its volumes commit
 * (*committed), 0 at worst; what GetCapacity reports. */
int zcfsd_volume_resize(struct zcfsd *d, struct zcfsd_volume *v, uint64_t size, struct zcfs_err *e);
int zcfsd_tenant_capacity(struct zcfsd *d, const struct policy_tenant *t, uint64_t *avail,
			  uint64_t *committed) _must_check_;

/* How a long operation (a first publish's wait for its server, the
 * unpublish of a last target) answers, handed in by its caller
 * (protocol/): defer, called once when the operation goes on in the event
 * loop, gives a token (0: nobody to answer); done, called once with it
 * when the operation is over: E's code ZCFS_OK (V published, or
 * unpublished) or its failure. */
struct zcfsd_answer {
	uint64_t (*defer)(const void *ctx, const char *method);
	const void *ctx;
	void (*done)(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token, const struct zcfs_err *e);
};

/* volume.publish: TARGET read-only when READ_ONLY (or the volume is),
 * with the client's NOTE (NULL: none; model.h); MOUNT_GROUP >= 0 applied
 * to the volume root (group, set-gid, group rwx) on the first target; on
 * a later one it must match. The same target again is done when alike:
 * the same read-only flag, and NOTE NULL, the same, or the first one it
 * gets (a target published without one adopts it). 0 done; 1 for
 * a first target, whose server is started and waited for in the event
 * loop (publish_wait.c), answered through A; or -errno with E set and
 * nothing changed. */
int zcfsd_volume_publish(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			 bool read_only, int64_t mount_group, const char *note,
			 const struct zcfsd_answer *a, struct zcfs_err *e);

/* An unpublish of the last target under way, answered when done
 * (unpublish.c): no wait on a server blocks the loop. */
struct zcfsd_unpublish {
	int phase;			/* ZCFSD_UNPUB_*: 0 none */
	uint64_t token;			/* its deferred answer, for done */
	/* the caller's completion (lifecycle.h struct zcfsd_answer) */
	void (*done)(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token, const struct zcfs_err *e);
	int sync_pidfd;			/* the syncfs child; -1: none */
	struct zcfsd_watch sync_watch;	/* its exit */
	struct zcfsd_deadline due;	/* the phase's deadline */
	bool killed;			/* the server was sent SIGKILL */
	char *target;
};
#define ZCFSD_UNPUB_SYNCING 1	/* dirty pages written back (syncfs child, 10 s) */
#define ZCFSD_UNPUB_STOPPING 2	/* unmounted; the server exits (1.5 s, then SIGKILL) */
/* A publish of the first target waiting for its new server to say it
 * serves, answered then (publish_wait.c): the wait is on a server, so it
 * is a state the loop polls, not a poll(2). */
struct zcfsd_publish_wait {
	uint64_t token;			/* its deferred answer; 0: no publish waiting */
	void (*done)(struct zcfsd *d, struct zcfsd_volume *v, uint64_t token, const struct zcfs_err *e);
	int ready_fd;			/* the --ready-fd read end, watched; -1: none or EOF */
	struct zcfsd_watch ready_watch;
	bool eof;			/* closed unwritten: only its exit is awaited */
	int64_t started_ms;		/* monotonic */
	struct zcfsd_deadline due;	/* answered as published (or failed) then */
	bool created_storage;		/* made by this publish: removed if it fails */
	bool created_target;
	bool read_only;
};

/* publish_wait.c: a first target's publish waiting for its server in
 * the event loop. begin (zcfsd_volume_publish's last step, W what it
 * started: its ready pipe, what to undo): 1, the answer deferred (or -errno with E, everything undone); publishing: true (E
 * set, UNAVAILABLE) while one waits. */
int zcfsd_publish_wait_begin(struct zcfsd *d, struct zcfsd_volume *v,
			     const struct zcfsd_publish_wait *w, const struct zcfsd_answer *a,
			     struct zcfs_err *e);
bool zcfsd_publishing(const struct zcfsd_volume *v, struct zcfs_err *e);
void zcfsd_publish_wait_release(struct zcfsd *d, struct zcfsd_volume *v);
/* unpublish.c: volume.unpublish without a wait in the event loop. begin:
 * 0 done (E untouched), 1 deferred (answered through A when done),
 * -errno (E). unpublishing: true (E: UNAVAILABLE) while one is under way. */
int zcfsd_unpublish_begin(struct zcfsd *d, struct zcfsd_volume *v, const char *target,
			  const struct zcfsd_answer *a, struct zcfs_err *e);
bool zcfsd_unpublishing(const struct zcfsd_volume *v, struct zcfs_err *e);
/* restart.c: volume.restart, the planned restart of V's server (standby
 * first, then the hand-over) as a state machine in v->restart: 0 once
 * asked (the protocol answers then), -errno with E and nothing under way.
 * release: ended without a word (the volume unpublished or deleted, zcfsd's exit). */
int zcfsd_volume_restart(struct zcfsd *d, struct zcfsd_volume *v, struct zcfs_err *e);
void zcfsd_restart_release(struct zcfsd *d, struct zcfsd_volume *v);

/* delete.c: volume.delete of an unpublished V: 0 done (V freed), 1 when
 * its storage is removed by a child and A answers once it ends (V freed
 * then if it succeeded), -errno with E and nothing changed. While it
 * runs, deleting fails E UNAVAILABLE; release kills the child (zcfsd's
 * exit), V stays. */
int zcfsd_volume_delete(struct zcfsd *d, struct zcfsd_volume *v, const struct zcfsd_answer *a,
			struct zcfs_err *e);
bool zcfsd_deleting(const struct zcfsd_volume *v, struct zcfs_err *e);
void zcfsd_delete_release(struct zcfsd *d, struct zcfsd_volume *v);

/* At zcfsd's exit: what an operation still under way on V holds is let
 * go (no answer: the clients' connections close with zcfsd). Each
 * operation owns its watches (a publish's ready pipe, an unpublish's
 * syncfs child), its deadline, and its server's exit (v->sup->on_exit)
 * while it waits on it. */
void zcfsd_lifecycle_release(struct zcfsd *d, struct zcfsd_volume *v);

/* orphans.c: after re-adoption, undo the fuse.zcfs mounts (and their
 * servers) zcfsd made but never recorded (killed during a publish). */
void zcfsd_clean_orphans(struct zcfsd *d);

/* upgrade.c: zcfsd re-execs its own binary keeping the volumes, one
 * state machine in d->upgrade (WANTED, DRAINING, DUE). What it needs of
 * the layers above, handed in at init: the control socket's accepting
 * (off while draining) and whether a client waits for an answer; due,
 * its completion (the exec may go: main.c ends the loop). */
struct zcfsd_upgrade_ops {
	void (*accepting)(struct zcfsd *d, bool on);
	bool (*pending)(struct zcfsd *d);
	void (*due)(struct zcfsd *d);
};
/* init records the path at start (before the file can be replaced);
 * request marks it wanted (-errno when that binary cannot be run) and
 * binds d->changed to its step, run again at each zcfsd_changed (blocked
 * while a published volume has no running server, a hand-over, a
 * standby, a publish or an unpublish is under way: zcfsd's dup would then
 * be all that holds a connection, and the exec would close it); due:
 * decided; exec returns only on failure. */
int zcfsd_upgrade_init(struct zcfsd *d, const struct zcfsd_upgrade_ops *ops);
void zcfsd_upgrade_free(struct zcfsd *d);
const char *zcfsd_upgrade_binary(struct zcfsd *d);
const char *zcfsd_upgrade_blocker(struct zcfsd *d);
int zcfsd_upgrade_request(struct zcfsd *d, const char *via, struct zcfs_err *e);
bool zcfsd_upgrade_due(struct zcfsd *d);
int zcfsd_upgrade_exec(struct zcfsd *d, char **argv);

#endif
