/* The control protocol: the unix socket (framing, peer credentials,
 * limits), the methods, volume.create's parameters. */
#ifndef ZCFSD_PROTOCOL_H
#define ZCFSD_PROTOCOL_H

#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "daemon/zcfsd/model/model.h"

/* A listening unix socket at PATH for root and the admin group, its
 * directory made when missing. What a previous zcfsd left at PATH is
 * removed: anything when REPLACE_ANY, else only a socket (-EEXIST for
 * anything else). */
int zcfsd_listen_unix(struct zcfsd *d, const char *path, int backlog, bool replace_any,
		      int *ret) _must_check_;
struct zcfsd_peer;
/* What answers a request: zcfsd_dispatch (methods.c), handed in by main.c. */
typedef json_object *zcfsd_dispatch_fn(struct zcfsd *d, const struct zcfsd_peer *peer, const char *method,
				       json_object *params, struct zcfs_err *e);
/* The control socket (inherited from an upgrade's predecessor, or made)
 * in the loop (d->control: the socket's watch, each connection's watch
 * and deadline); its requests go to DISPATCH. free: every connection
 * closed, the record gone (zcfsd's exit; the socket itself is main's). */
int zcfsd_control_listen(struct zcfsd *d, zcfsd_dispatch_fn *dispatch);
void zcfsd_control_free(struct zcfsd *d);
/* Limits of the control socket (control.c says why). */
#define CONTROL_MAX_CLIENTS 128
#define CONTROL_MAX_PER_UID 32
#define CONTROL_IDLE_MS 15000		/* connected, no request */
#define CONTROL_REQUEST_MS 5000		/* first byte of a request to its newline */
#define CONTROL_WRITE_MS 5000		/* an answer queued to taken */
#define CONTROL_REQUESTS_PER_WAKEUP 4
struct zcfsd_control_counts {
	unsigned long long accepted;
	unsigned evicted_uid, evicted_total;	/* made room for a new connection */
	unsigned dropped_idle, dropped_request, dropped_write, dropped_error;
};
const struct zcfsd_control_counts *zcfsd_control_counts(struct zcfsd *d);
unsigned zcfsd_control_clients(struct zcfsd *d);
/* A method that answers later calls defer with the peer it was handed
 * (the token of that client's request; 0 for a peer that is no
 * connection) and returns; complete sends the answer (RESULT taken, or
 * E) to that client if it is still connected. Meanwhile nothing more is
 * read from it. */
uint64_t zcfsd_control_defer(const struct zcfsd_peer *p, const char *method);
void zcfsd_control_complete(struct zcfsd *d, uint64_t token, json_object *result,
			    const struct zcfs_err *e);
/* Answers still queued are sent (at most ~100 ms each): before an exec. */
void zcfsd_control_flush(struct zcfsd *d);
/* Before an upgrade's exec: no new connection is accepted (they wait in
 * the listen backlog, which the exec hands over), and whether a connected
 * client still has a request zcfsd has not answered (bytes buffered or on
 * its socket, an answer being written, a deferred one): the exec would
 * close it unanswered. */
void zcfsd_control_stop_accepting(struct zcfsd *d);
/* Undoes zcfsd_control_stop_accepting (an upgrade's drain that is put
 * off: a volume blocks it again). */
void zcfsd_control_resume_accepting(struct zcfsd *d);
/* A client with something unanswered: a request read or arriving, an
 * answer not sent (or deferred), or a connection that has not sent its
 * first request yet. */
bool zcfsd_control_pending(struct zcfsd *d);
/* Who sent a request (SO_PEERCRED, SO_PEERGROUPS at accept). */
#define ZCFSD_PEER_GROUPS_MAX 256
struct zcfsd_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[ZCFSD_PEER_GROUPS_MAX];
	void *client;		/* its connection (control.c), for a deferred answer; NULL: none */
};
/* Root manages every tenant; anyone else the tenants whose admin_uids
 * holds its uid or whose admin_gids one of its groups (methods.c). */
bool zcfsd_peer_manages(const struct zcfsd_peer *p, const struct policy_tenant *t);
/* Same for a volume: a volume of a tenant no longer in the policy is root's. */
bool zcfsd_peer_manages_volume(struct zcfsd *d, const struct zcfsd_peer *p,
			       const struct zcfsd_volume *v);
/* P from the unix socket FD's peer (SO_PEERCRED, SO_PEERGROUPS when not
 * root: -ERANGE past ZCFSD_PEER_GROUPS_MAX): 0 or -errno. */
int zcfsd_peer_read(int fd, struct zcfsd_peer *p);
json_object *zcfsd_dispatch(struct zcfsd *d, const struct zcfsd_peer *peer, const char *method,
			    json_object *params, struct zcfs_err *e);
int zcfsd_policy_reload(struct zcfsd *d, struct zcfs_err *e);

/* params.c: request parameter helpers. A string parameter, or NULL;
 * INVALID_ARGUMENT for any key not in allowed (NULL-terminated). */
const char *zcfsd_param_string(json_object *params, const char *key);
int zcfsd_only_params(json_object *params, const char *const *allowed, struct zcfs_err *e);
/* params.note (volume.create, volume.publish): *NOTE (into PARAMS) or
 * NULL when absent; INVALID_ARGUMENT saying why when not a note zcfsd
 * keeps (zcfsd_note_check). */
int zcfsd_note_param(json_object *params, const char **note, struct zcfs_err *e);

/* volume_params.c: volume.create's params checked into *S. */
int zcfsd_volume_spec_parse(struct zcfsd *d, json_object *params, struct zcfsd_volume_spec *s,
			    struct zcfs_err *e);

#endif
