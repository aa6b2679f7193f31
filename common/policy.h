/* Node policy: tenants, their budgets and where their volumes may go.
 * Parsed strictly from one JSON file or a directory of *.json (merged);
 * shared by zcfsd (enforcement) and zcfsctl (policy check). */
#ifndef ZCFS_POLICY_H
#define ZCFS_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "util.h"

enum policy_transport { POLICY_TRANSPORT_AUTO, POLICY_TRANSPORT_DEVFUSE, POLICY_TRANSPORT_URING };
/* How a tenant's volume sizes are enforced (size_enforcement): auto,
 * project quotas where the storage root has them, else the server counts;
 * kernel, project quotas or no publish; server, the server counts. */
enum policy_size_enforcement { POLICY_SIZE_AUTO, POLICY_SIZE_KERNEL, POLICY_SIZE_SERVER };

struct policy_tenant {
	char *name;
	uid_t uid;
	gid_t gid;
	uint64_t memlock_budget;	/* bytes */
	uint32_t max_volumes;
	uint64_t default_quota;		/* bytes, 0 = none */
	enum policy_size_enforcement size_enforcement;
	char *storage_root;
	char **prefixes;		/* allowed_target_prefixes */
	size_t n_prefixes;
	bool io_uring, zero_copy, passthrough;
	/* data_paths.ring_holder: the tenant's io_uring volumes get a ring
	 * holder unless volume.create says ring_holder false. */
	bool ring_holder;
	/* Who besides root may manage the tenant's volumes on the control
	 * socket: peers with one of these uids, or one of these gids among
	 * their groups (admin_uids / admin_gids; none: root only). */
	uid_t *admin_uids;
	size_t n_admin_uids;
	gid_t *admin_gids;
	size_t n_admin_gids;
	/* volume_root: the root of a volume created without uid, gid or
	 * mode, as its clients see it (a container running as uid 1000 needs
	 * a root it may write); what is not set stays the tenant's uid and
	 * gid, 0700. mode includes S_ISGID when setgid is true. */
	struct policy_volume_root {
		bool has_uid, has_gid, has_mode;
		uid_t uid;
		gid_t gid;
		mode_t mode;
	} volume_root;
	char *file;			/* where it was defined, for messages */
};

struct policy {
	char *admin_group;		/* NULL: root only */
	gid_t admin_gid;
	bool has_admin_gid;
	uint32_t queue_depth;
	uint32_t max_write;
	enum policy_transport transport;
	uint64_t dirty_limit;		/* per-volume writeback cache (bdi max_bytes); 0: off */
	uint32_t stall_timeout_ms;	/* a server holding requests without answering this long is
					 * restarted (zcfsd/server/stall.c); 0: never */
	char *metrics_listen;		/* NULL: no metrics endpoint; "/path" or IP:PORT */
	/* Who reads every tenant's series on a unix metrics socket besides
	 * root (metrics.full_view_uids / full_view_gids: a Prometheus); anyone
	 * else sees the tenants it manages. */
	uid_t *metrics_uids;
	size_t n_metrics_uids;
	gid_t *metrics_gids;
	size_t n_metrics_gids;
	struct policy_tenant *tenants;
	size_t n_tenants;
};

/* Every problem found while loading, one "FILE: FIELD: message" each. */
struct policy_errors {
	char **msgs;
	size_t n;
};

/* Loads PATH (a file, or a directory whose *.json files are merged in
 * name order). Returns 0 and *ret, or -EINVAL with every problem in
 * *errs (also on success errs may be empty), or another -errno. */
int policy_load(const char *path, struct policy **ret, struct policy_errors *errs) _must_check_;
/* Same for one in-memory document named NAME (unit tests). */
int policy_load_string(const char *name, const char *json, struct policy **ret,
		       struct policy_errors *errs) _must_check_;
void policy_free(struct policy *p);
void policy_errors_clear(struct policy_errors *e);

const struct policy_tenant *policy_find_tenant(const struct policy *p, const char *name);
const char *policy_transport_name(enum policy_transport t);
const char *policy_size_enforcement_name(enum policy_size_enforcement s);

/* "IP:PORT" or "[IPv6]:PORT" (numeric address, port 1..65535) into HOST
 * and *PORT: AF_INET or AF_INET6, or -EINVAL. */
int policy_parse_tcp_listen(const char *s, char *host, size_t hostlen, unsigned *port) _must_check_;

#endif
