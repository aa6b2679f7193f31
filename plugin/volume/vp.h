/* zcfs-volume-plugin: the Docker/Podman volume plugin protocol (HTTP/1.1
 * on a unix socket, served by libmicrohttpd in vp_http.c) in front of
 * zcfsd. vp_driver.c implements the endpoints on a registry of volumes
 * (vp_registry.c) persisted in the state dir, so a plugin restart keeps
 * every volume and mount reference (`podman volume reload` drops what
 * List omits). Errors are HTTP 500 with {"Err": "..."}: Podman ignores
 * Err on a 200. */
#ifndef ZCFS_VP_H
#define ZCFS_VP_H

#include <pthread.h>
#include <stdbool.h>
#include <json-c/json.h>
#include "common/zcfs_proto.h"

#define VP_DEFAULT_LISTEN "/run/docker/plugins/zcfs.sock"
#define VP_DEFAULT_STATE_DIR "/var/lib/zcfs/volume-plugin"
#define VP_DEFAULT_MOUNT_ROOT "/mnt/zcfs"
#define VP_BODY_MAX (64 * 1024)
#define VP_REGISTRY_FILE "volumes.json"
#define VP_REGISTRY_MAX (16 * 1024 * 1024)
#define VP_ID_MAX 256
#define VP_CONTENT_TYPE "application/vnd.docker.plugins.v1.1+json"
/* All zcfsd calls of one request together (default of --zcfsd-timeout):
 * below Podman's default volume_plugin_timeout of 5 s, so Podman gets our
 * UNAVAILABLE instead of its own timeout (after which it would not know
 * what the plugin did). */
#define VP_ZCFSD_BUDGET_MS 4000
#define VP_ZCFSD_BUDGET_MIN_MS 100
#define VP_ZCFSD_BUDGET_MAX_MS (3600 * 1000)

struct vp {
	const char *socket;	/* zcfsd control socket */
	const char *state_dir;	/* registry */
	const char *mount_root;	/* mountpoints: MOUNT_ROOT/TENANT/NAME */
	/* Where zcfsd mounts MOUNT_ROOT/...: the host's path of mount_root
	 * when the plugin runs in a container (Docker managed plugin), NULL
	 * when the plugin and zcfsd see the same paths. */
	char *host_mount_root;
	json_object *reg;	/* {"volumes": {NAME: entry}} */
	pthread_mutex_t lock;	/* one request at a time touches reg */
	unsigned zcfsd_budget_ms;	/* per request; 0 = VP_ZCFSD_BUDGET_MS */
};

/* Loads (or starts) the registry. A corrupt registry is an error: the
 * plugin refuses to start rather than forget volumes. */
int vp_init(struct vp *v, const char *socket, const char *state_dir, const char *mount_root,
	    struct zcfs_err *e) _must_check_;
void vp_done(struct vp *v);

/* One request: POST ENDPOINT with BODY. Returns the HTTP status (200 or
 * 500) and the JSON answer in *resp (caller puts). */
int vp_handle(struct vp *v, const char *endpoint, const char *body, size_t len, json_object **resp);
/* The same, with the answer's result code in *CODE (the metrics'). */
int vp_handle_code(struct vp *v, const char *endpoint, const char *body, size_t len, json_object **resp,
		   enum zcfs_code *code);

/* Registry (vp_registry.c). */
int vp_registry_load(struct vp *v, struct zcfs_err *e) _must_check_;
int vp_registry_save(struct vp *v, struct zcfs_err *e) _must_check_;
json_object *vp_registry_volumes(struct vp *v);
/* The entry of NAME or NULL. */
json_object *vp_registry_get(struct vp *v, const char *name);
/* Entry accessors. */
const char *vp_entry_str(json_object *entry, const char *key);
json_object *vp_entry_ids(json_object *entry);
bool vp_entry_has_id(json_object *entry, const char *id);
/* Adds or removes ID; returns whether the set changed. */
bool vp_entry_add_id(json_object *entry, const char *id);
bool vp_entry_del_id(json_object *entry, const char *id);

/* The endpoints vp_handle serves, by index: "/VolumeDriver.Mount", ...;
 * NULL past the last. */
const char *vp_endpoint_path(size_t i);

/* The request metrics (vp_metrics.c) that --metrics serves
 * (common/metrics_http.h); one request of ENDPOINT answered with CODE,
 * begun at START_US (opmetrics_now_us; vp_http.c records every request). */
struct opmetrics *vp_metrics(void);
void vp_metrics_record(const char *endpoint, enum zcfs_code code, int64_t start_us);

/* The host's path of MOUNT_ROOT, Docker's propagatedMount of this managed
 * plugin: DATA_ROOT/plugins/ID/propagated-mount, ID from MOUNTINFO's
 * entry for MOUNT_ROOT (vp_hostpath.c). *RET is the caller's to free. */
int vp_docker_host_root(const char *mountinfo, const char *mount_root, const char *data_root,
			char **ret, struct zcfs_err *e) _must_check_;

/* HTTP front (vp_http.c): serves LISTEN_FD (a bound, listening unix
 * socket) until vp_http_stop. */
struct MHD_Daemon;
int vp_http_start(struct vp *v, int listen_fd, struct MHD_Daemon **ret, struct zcfs_err *e) _must_check_;
void vp_http_stop(struct MHD_Daemon *d);

#endif
