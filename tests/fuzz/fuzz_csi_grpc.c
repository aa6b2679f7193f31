/* libFuzzer target: arbitrary bytes as the protobuf request of a zcfs-csi
 * gRPC method. The first byte picks the method (every request type of
 * csi.proto and pluginregistration.proto), the rest is the message:
 * protobuf-c unpack, the conversion to the JSON request the shared CSI
 * methods take, and the method itself (no zcfsd is reachable: a request
 * that passes parsing ends in UNAVAILABLE). Whatever the bytes: an answer
 * or a gRPC status with a message, never a crash, leak or bad read. */
#include <grpc/status.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/csi/csi_grpc.h"
#include "common/log.h"
#include "tests/fuzz/fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
	"/csi.v1.Identity/GetPluginInfo", "/csi.v1.Identity/GetPluginCapabilities", "/csi.v1.Identity/Probe",
	"/csi.v1.Controller/ControllerGetCapabilities", "/csi.v1.Controller/CreateVolume",
	"/csi.v1.Controller/DeleteVolume", "/csi.v1.Node/NodeGetInfo", "/csi.v1.Node/NodeGetCapabilities",
	"/csi.v1.Node/NodePublishVolume", "/csi.v1.Node/NodeUnpublishVolume",
	"/csi.v1.Node/NodeGetVolumeStats", "/csi.v1.Node/NodeStageVolume", "/csi.v1.Node/NodeUnstageVolume",
	"/csi.v1.Node/NodeExpandVolume", "/pluginregistration.Registration/GetInfo",
	"/pluginregistration.Registration/NotifyRegistrationStatus",
};

static struct csi_ctx ctx = { .socket = "/nonexistent/zcfs-fuzz.sock", .node_id = "fuzz-node" };
static const struct csi_serve_opts opts = { .endpoint = "unix:///nonexistent/csi.sock",
					    .kubelet_endpoint = "/nonexistent/csi.sock" };
static char dir[] = "/tmp/zcfs-fuzz-csi-grpc.XXXXXX";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct csi_grpc_method *m;
	struct csi_grpc_result res;

	if (fuzz_dir_once(dir)) {
		ctx.state_dir = dir;
		log_set_level(LOG_CRIT);
	}
	if (size < 1)
		return 0;
	m = csi_grpc_method_find(paths[data[0] % (sizeof(paths) / sizeof(paths[0]))],
				 strlen(paths[data[0] % (sizeof(paths) / sizeof(paths[0]))]));
	if (!m)
		abort();
	csi_grpc_call(&ctx, &opts, m, data + 1, size - 1, &res);
	if (res.status == GRPC_STATUS_OK ? (!res.resp && res.resp_len) : (!res.msg[0] || res.resp))
		abort();
	free(res.resp);
	return 0;
}
