/* zcfs-csi: the CSI Identity and Node services (one JSON request on stdin,
 * one JSON answer on stdout) and the Kubernetes FlexVolume driver, both
 * thin clients of zcfsd. Requests are parsed here (csi_request.c), the
 * node operations live in csi_node.c (what a publish asked for is kept in
 * zcfsd's notes), one operation per volume at a time by csi_lock.c,
 * volume statistics in csi_stats.c, FlexVolume in flex.c. */
#ifndef ZCFS_CSI_H
#define ZCFS_CSI_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>
#include "common/zcfs_err.h"
#include "common/version.h"

#define CSI_DRIVER_NAME "csi.zcfs.io"
#define CSI_VENDOR_VERSION ZCFS_VERSION
#define CSI_DEFAULT_STATE_DIR "/var/lib/zcfs/csi"
#define CSI_DEFAULT_ENDPOINT "unix:///csi/csi.sock"
#define CSI_REQUEST_MAX (256 * 1024)
#define CSI_STATS_TIMEOUT_MS 5000
#define CSI_TOPOLOGY_KEY "topology.csi.zcfs.io/node"
#define CSI_NODE_ID_MAX 128
/* zcfsd's note on a volume an ephemeral publish made (csi_node.c) */
#define CSI_EPHEMERAL_NOTE "{\"ephemeral\":true}"

struct csi_ctx {
	const char *socket;	/* zcfsd control socket */
	const char *state_dir;	/* the volumes' locks */
	const char *node_id;
};

enum csi_access_mode {
	CSI_MODE_UNKNOWN = 0,
	CSI_MODE_SINGLE_NODE_WRITER = 1,
	CSI_MODE_SINGLE_NODE_READER_ONLY = 2,
	CSI_MODE_MULTI_NODE_READER_ONLY = 3,
	CSI_MODE_MULTI_NODE_SINGLE_WRITER = 4,
	CSI_MODE_MULTI_NODE_MULTI_WRITER = 5,
	CSI_MODE_SINGLE_NODE_SINGLE_WRITER = 6,
	CSI_MODE_SINGLE_NODE_MULTI_WRITER = 7,
};
const char *csi_access_mode_name(int mode);

/* What a publish (CSI NodePublishVolume or FlexVolume mount) asks for.
 * Strings point into the request document. */
struct csi_publish_req {
	const char *volume_id;
	const char *target_path;
	int access_mode;
	bool readonly;		/* effective: readonly, a reader-only mode or "ro" */
	bool ephemeral;		/* created here, deleted on the last unpublish */
	bool remove_target;	/* CSI: the plugin owns target_path's directory */
	bool provisioned;	/* a CreateVolume id (NAME@NODE): must exist, never created here */
	const char *tenant;	/* volume_context / options: NULL = zcfsd decides */
	const char *transport;	/* data path preference: auto | devfuse | uring */
	uint64_t size;		/* bytes, 0 = none given */
	/* The volume root as clients see it, applied when the volume is
	 * created (volume_context / options uid, gid, mode), and the pod's
	 * fsGroup (volume_mount_group), applied on every first publish. */
	bool has_uid, has_gid, has_mode, has_group;
	uint32_t uid, gid, mount_group;
	unsigned mode;
	json_object *capability; /* canonical record of the request, owned */
};
void csi_publish_req_done(struct csi_publish_req *p);

/* Request parsing (no I/O): strict fields per csi.proto v1.9.0. */
int csi_parse_publish(json_object *req, struct csi_publish_req *p, struct zcfs_err *e) _must_check_;
int csi_parse_unpublish(json_object *req, const char **volume_id, const char **target,
			struct zcfs_err *e) _must_check_;
int csi_parse_stats(json_object *req, const char **volume_id, const char **path,
		    struct zcfs_err *e) _must_check_;
/* volume_context / FlexVolume options shared keys: tenant, size,
 * transport, uid, gid, mode (octal). A key with an orchestrator prefix (csi.storage.k8s.io/,
 * storage.kubernetes.io/, kubernetes.io/) is passed over; other keys
 * are INVALID_ARGUMENT, except the caller's EXTRA keys (NULL-terminated,
 * may be NULL), which are skipped. */
int csi_parse_volume_attrs(json_object *map, const char *what, const char *const *extra,
			   struct csi_publish_req *p, struct zcfs_err *e) _must_check_;
/* One volume_capability into P (access mode, read-only, P->capability). */
int csi_parse_capability(json_object *vc, struct csi_publish_req *p, struct zcfs_err *e) _must_check_;
/* A target path the plugins accept: absolute and normalized. */
int csi_check_target(const char *what, const char *path, struct zcfs_err *e) _must_check_;
int csi_check_volume_id(const char *what, const char *id, struct zcfs_err *e) _must_check_;

/* Volume ids and topology (csi_topology.c). A CSI volume id is NAME (a
 * static PV's or an inline volume's: this node's zcfsd volume NAME) or
 * NAME@NODE (CreateVolume's: zcfsd volume NAME on node NODE). */
struct csi_volref {
	char name[129];		/* zcfsd's volume id */
	const char *node;	/* into the parsed id; NULL: no node named */
};
int csi_volref_parse(const char *what, const char *id, struct csi_volref *ref, struct zcfs_err *e) _must_check_;
/* The same, and the id must be this node's: FAILED_PRECONDITION (-EXDEV)
 * naming both nodes otherwise. */
int csi_volref_local(struct csi_ctx *c, const char *id, struct csi_volref *ref, struct zcfs_err *e) _must_check_;
/* NAME@<this node> into BUF. */
int csi_volume_id_of(struct csi_ctx *c, const char *name, char *buf, size_t len, struct zcfs_err *e) _must_check_;
/* A Topology object {segments: {CSI_TOPOLOGY_KEY: NODE}}. */
json_object *csi_topology_of(const char *node);
/* Topology T names a node and it is not this one. */
bool csi_topology_is_other_node(struct csi_ctx *c, json_object *t);
/* CreateVolume's accessibility_requirements (NULL: none) include this
 * node; RESOURCE_EXHAUSTED naming it otherwise. */
int csi_check_accessibility(struct csi_ctx *c, json_object *req, struct zcfs_err *e) _must_check_;

/* Node operations (csi_node.c); on failure nothing is left changed. */
int csi_publish(struct csi_ctx *c, struct csi_publish_req *p, struct zcfs_err *e) _must_check_;
int csi_unpublish(struct csi_ctx *c, const char *volume_id, const char *target,
		  bool remove_target, struct zcfs_err *e) _must_check_;
int csi_volume_stats(struct csi_ctx *c, const char *volume_id, const char *path,
		     json_object **ret, struct zcfs_err *e) _must_check_;

/* The Controller service (csi_controller.c: CreateVolume, DeleteVolume,
 * ValidateVolumeCapabilities; csi_capacity.c: GetCapacity, ListVolumes;
 * csi_expand.c: ControllerExpandVolume and NodeExpandVolume). Each
 * zcfs-csi serves its own node's volumes (external-provisioner
 * --node-deployment). */
int csi_create_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
/* csi_zcfsd.c: zcfsd's volume.create of volume NAME as P asks, SIZE bytes (0: the default). */
int csi_zcfsd_create(struct csi_ctx *c, const char *name, const struct csi_publish_req *p,
		     uint64_t size, json_object **vol, struct zcfs_err *e) _must_check_;
int csi_delete_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
int csi_validate_volume(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
int csi_get_capacity(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
int csi_list_volumes(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
int csi_controller_expand(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
int csi_node_expand(struct csi_ctx *c, json_object *req, json_object **resp, struct zcfs_err *e) _must_check_;
/* The policy's tenant of PARAMS.tenant (NULL: the only one) as tenant.list
 * shows it (*ret, caller puts); NOT_FOUND / INVALID_ARGUMENT otherwise. */
/* CreateVolume's / the expands' capacity_range (absent: both 0). */
int csi_parse_range(json_object *req, int64_t *req_b, int64_t *lim_b, struct zcfs_err *e) _must_check_;
int csi_tenant_get(struct csi_ctx *c, const char *tenant, json_object **ret, struct zcfs_err *e) _must_check_;

/* csi_lock.c: takes volume ID's lock without waiting: the fd, or ABORTED
 * when another operation on ID holds it. */
int csi_lock(struct csi_ctx *c, const char *id, struct zcfs_err *e) _must_check_;
void csi_unlock(struct csi_ctx *c, const char *id, int fd);

/* statvfs of PATH in a child bounded by TIMEOUT_MS: 0 and *st, -ETIMEDOUT,
 * or the -errno statvfs failed with. */
struct statvfs;
int csi_statvfs_bounded(const char *path, int timeout_ms, struct statvfs *st) _must_check_;

/* The whole request: METHOD with BODY. 0 and *resp, or an error in E. */
int csi_handle(struct csi_ctx *c, const char *method, const char *body, size_t len,
	       json_object **resp, struct zcfs_err *e) _must_check_;

/* The same with the request already a JSON object (the gRPC front). */
int csi_handle_json(struct csi_ctx *c, const char *method, json_object *req, json_object **resp,
		    struct zcfs_err *e) _must_check_;

/* FlexVolume: argv as kubelet passes it (argv[0] = operation). Returns
 * the exit status and the JSON to print in *out. */
int flex_main(struct csi_ctx *c, int argc, char **argv, json_object **out);
/* The options of `mount DIR JSON` into a publish request. */
int flex_parse_mount(const char *dir, const char *opts_json, json_object **doc,
		     struct csi_publish_req *p, char *idbuf, size_t idlen, struct zcfs_err *e) _must_check_;

#endif
