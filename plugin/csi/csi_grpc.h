/* zcfs-csi serve: the CSI Identity and Node services over gRPC (gRPC's C
 * core, protobuf-c messages compiled from plugin/proto/csi.proto), and
 * kubelet's plugin registration service on a second socket. The gRPC
 * front converts messages to the JSON requests of csi_handle_json() and
 * back; the method logic is the one the JSON and FlexVolume fronts run. */
#ifndef ZCFS_CSI_GRPC_H
#define ZCFS_CSI_GRPC_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>
#include "csi.h"

/* Largest request message the server takes (gRPC answers RESOURCE_EXHAUSTED
 * past it): the JSON front's cap, so both fronts accept the same. */
#define CSI_GRPC_MSG_MAX CSI_REQUEST_MAX
/* Calls served at once; more get RESOURCE_EXHAUSTED. */
#define CSI_GRPC_INFLIGHT_MAX 64
/* After SIGTERM, in-flight calls get this long before they are cancelled. */
#define CSI_GRPC_GRACE_S 30
#define CSI_REGISTRATION_TYPE "CSIPlugin"

struct csi_serve_opts {
	const char *endpoint;		/* unix:///path (CSI_ENDPOINT) */
	const char *registration;	/* kubelet registration socket path, or NULL */
	const char *kubelet_endpoint;	/* the CSI socket as kubelet sees it (GetInfo) */
	unsigned grace_s;
	int socket_gid;			/* --socket-group: the endpoint 0660 to this group; -1: 0700 */
	const char *metrics;		/* --metrics: unix socket path or IP:PORT, or NULL */
};

/* The gRPC methods zcfs-csi knows (grpc_dispatch.c). */
struct csi_grpc_method {
	const char *path;		/* "/csi.v1.Node/NodePublishVolume" */
	const char *name;		/* csi_handle_json() method */
	const ProtobufCMessageDescriptor *req, *resp;
	bool registration;		/* served on the registration socket only */
	bool inline_ok;			/* cheap, no zcfsd call: answered on the queue thread */
};
/* The method for PATH[0..LEN), or NULL. */
const struct csi_grpc_method *csi_grpc_method_find(const char *path, size_t len);

/* The result of one call: the packed answer, or a gRPC status and message. */
struct csi_grpc_result {
	int status;			/* grpc_status_code */
	char msg[512];
	uint8_t *resp;			/* malloc'ed, on status 0 */
	size_t resp_len;
};

/* Decodes BUF as M's request, runs it, encodes the answer (no gRPC here:
 * the fuzz target and unit tests call it). */
void csi_grpc_call(struct csi_ctx *c, const struct csi_serve_opts *o, const struct csi_grpc_method *m,
		   const uint8_t *buf, size_t len, struct csi_grpc_result *res);
/* The first half of that: protobuf request -> the JSON request object. */
int csi_grpc_decode(const struct csi_grpc_method *m, const uint8_t *buf, size_t len,
		    json_object **req, struct zcfs_err *e) _must_check_;
/* The gRPC status code of a zcfs/CSI error code. */
int csi_grpc_status(enum zcfs_code code);

/* The gRPC call metrics (csi_metrics.c) that --metrics serves
 * (common/metrics_http.h); a call of M (NULL: unknown) answered with gRPC
 * STATUS, begun at START_US (opmetrics_now_us). */
struct opmetrics *csi_metrics(void);
void csi_metrics_record(const struct csi_grpc_method *m, int status, int64_t start_us);

/* Runs the server until SIGTERM/SIGINT; returns the exit status. */
int csi_serve(struct csi_ctx *c, const struct csi_serve_opts *o);

#endif
