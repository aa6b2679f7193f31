/* libFuzzer target: arbitrary bytes as a Docker/Podman volume plugin
 * request. The first byte picks the endpoint, the rest is the body. The
 * registry holds a mounted and an unmounted volume; no zcfsd is reachable,
 * so every call that would change zcfsd fails — and must then leave the
 * registry exactly as it was. Every answer is 200, or 500 with an Err. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "plugin/common/plugin_json.h"
#include "plugin/common/statefile.h"
#include "plugin/volume/vp.h"
#include "tests/fuzz/fuzz_dir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const endpoints[] = {
	"/Plugin.Activate", "/VolumeDriver.Create", "/VolumeDriver.Remove", "/VolumeDriver.Mount",
	"/VolumeDriver.Unmount", "/VolumeDriver.Path", "/VolumeDriver.Get", "/VolumeDriver.List",
	"/VolumeDriver.Capabilities", "/VolumeDriver.Bogus",
};

static struct vp v;
static char *reg_text;

static char dir[] = "/tmp/zcfs-fuzz-vp.XXXXXX";

static void setup_once(void)
{
	static char state[128], root[128];
	struct zcfs_err e = { 0 };
	json_object *reg;

	if (!fuzz_dir_once(dir))
		return;
	log_set_level(LOG_CRIT);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(root, sizeof(root), "%s/mnt", dir);
	if (mkdir_p(state, 0700) < 0)
		abort();
	reg = json_tokener_parse(
		"{\"volumes\":{\"v1\":{\"tenant\":\"t1\",\"mountpoint\":\"/mnt/zcfs/t1/v1\",\"opts\":{\"tenant\":\"t1\"},"
		"\"ids\":[\"A\"]},\"v2\":{\"tenant\":\"t1\",\"mountpoint\":\"/mnt/zcfs/t1/v2\",\"opts\":{},\"ids\":[]}}}");
	if (!reg || sf_write_json(state, VP_REGISTRY_FILE, reg) < 0)
		abort();
	json_object_put(reg);
	if (vp_init(&v, "/nonexistent/zcfs-fuzz.sock", state, root, &e) < 0)
		abort();
	reg_text = strdup(json_object_to_json_string(v.reg));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *resp = NULL, *err;
	int status;

	setup_once();
	if (size < 1)
		return 0;
	status = vp_handle(&v, endpoints[data[0] % ARRAY_SIZE(endpoints)], (const char *)data + 1, size - 1,
			   &resp);
	if (!resp || (status != 200 && status != 500))
		abort();
	if (status == 500 && (!json_object_object_get_ex(resp, "Err", &err) ||
			      !json_object_get_string_len(err)))
		abort();
	(void)json_object_to_json_string(resp);
	json_object_put(resp);
	/* Mount of a new caller ID or Unmount of an unknown one may change
	 * the registry only when zcfsd agreed, and it never does here. */
	if (strcmp(json_object_to_json_string(v.reg), reg_text))
		abort();
	return 0;
}
