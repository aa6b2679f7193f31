/* libFuzzer target: arbitrary bytes as a zcfs-csi request. The first byte
 * picks the CSI method (or FlexVolume `mount` options), the rest is the
 * request. No zcfsd is reachable, so a request that passes parsing ends
 * in UNAVAILABLE; whatever the bytes, the answer must be a response or a
 * coded error with a message, never a crash, leak or out-of-bounds read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/csi/csi.h"
#include "common/log.h"
#include "plugin/common/plugin_json.h"
#include "tests/fuzz/fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const methods[] = {
	"GetPluginInfo", "GetPluginCapabilities", "Probe", "NodeGetInfo", "NodeGetCapabilities",
	"NodePublishVolume", "NodeUnpublishVolume", "NodeGetVolumeStats", "NodeStageVolume",
	"NodeUnstageVolume", "NodeExpandVolume", "Bogus",
};

static struct csi_ctx ctx = { .socket = "/nonexistent/zcfs-fuzz.sock", .node_id = "fuzz-node" };

static char dir[] = "/tmp/zcfs-fuzz-csi.XXXXXX";

static void setup_once(void)
{
	if (!fuzz_dir_once(dir))
		return;
	ctx.state_dir = dir;
	log_set_level(LOG_CRIT);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zcfs_err e = { 0 };
	json_object *resp = NULL;
	unsigned sel;
	char *body;
	int r;

	setup_once();
	if (size < 1)
		return 0;
	sel = data[0] % (ARRAY_SIZE(methods) + 1);
	body = malloc(size);
	if (!body)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	if (sel == ARRAY_SIZE(methods)) {
		/* FlexVolume mount options (an argv string: up to the first NUL) */
		struct csi_publish_req p;
		json_object *doc = NULL;
		char id[256];
		r = flex_parse_mount("/var/lib/kubelet/pods/u/volumes/zcfs.io~zcfs/v", body, &doc, &p, id,
				     sizeof(id), &e);
		if (r == 0 && (!p.volume_id || !p.target_path))
			abort();
		csi_publish_req_done(&p);
		if (doc)
			json_object_put(doc);
	} else {
		r = csi_handle(&ctx, methods[sel], body, size - 1, &resp, &e);
		if (r == 0 && !resp)
			abort();
		if (resp)
			(void)json_object_to_json_string(resp);
		json_object_put(resp);
	}
	if (r < 0 && (e.code == ZCFS_OK || !e.msg[0]))
		abort();	/* every failure carries a code and a message */
	free(body);
	return 0;
}
