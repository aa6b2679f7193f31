/* zcfs-csi request handling without a daemon: strict CSI parsing, access
 * modes and capabilities, volume_context keys, FlexVolume options, the
 * identity answers, and the codes of every refusal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "plugin/csi/csi.h"
#include "plugin/common/plugin_json.h"

static char state_dir[] = "/tmp/zcfs-test-csi.XXXXXX";
/* A request's strings live in its document: parse_pub keeps the last two
 * alive (tests compare two parsed requests). */
static json_object *docs[2];
static struct csi_ctx ctx = { .socket = "/nonexistent/zcfsd.sock", .state_dir = state_dir,
			      .node_id = "node-1" };

static int setup(void **state)
{
	(void)state;
	return mkdtemp(state_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++)
		if (docs[i])
			json_object_put(docs[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", state_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static enum zcfs_code handle(const char *method, const char *body, json_object **resp)
{
	struct zcfs_err e = { 0 };
	json_object *r = NULL;
	int rc = csi_handle(&ctx, method, body, strlen(body), &r, &e);

	if (resp)
		*resp = r;
	else if (r)
		json_object_put(r);
	assert_true(rc < 0 ? e.code != ZCFS_OK && *e.msg : e.code == ZCFS_OK);
	return rc < 0 ? e.code : ZCFS_OK;
}

static enum zcfs_code parse_pub(const char *body, struct csi_publish_req *p)
{
	struct zcfs_err e = { 0 };
	json_object *o = NULL;
	int r;

	if (docs[1])
		json_object_put(docs[1]);
	docs[1] = docs[0];
	docs[0] = NULL;
	memset(p, 0, sizeof(*p));
	if (pj_parse_object(body, strlen(body), true, &o, &e) < 0)
		return e.code;
	docs[0] = o;
	r = csi_parse_publish(o, p, &e);
	return r < 0 ? e.code : ZCFS_OK;
}

#define PUB(extra) "{\"volume_id\":\"v1\",\"target_path\":\"/k/pods/a/mount\"," \
	"\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":\"SINGLE_NODE_WRITER\"}}" extra "}"

static void test_identity(void **state)
{
	json_object *r;

	(void)state;
	assert_int_equal(handle("GetPluginInfo", "", &r), ZCFS_OK);
	assert_string_equal(json_object_get_string(json_object_object_get(r, "name")), CSI_DRIVER_NAME);
	json_object_put(r);
	/* CONTROLLER_SERVICE, VOLUME_ACCESSIBILITY_CONSTRAINTS, online expansion */
	assert_int_equal(handle("GetPluginCapabilities", "{}", &r), ZCFS_OK);
	assert_int_equal(json_object_array_length(json_object_object_get(r, "capabilities")), 3);
	json_object_put(r);
	/* the topology of this node even without zcfsd (max_volumes_per_node 0) */
	assert_int_equal(handle("NodeGetInfo", " {} ", &r), ZCFS_OK);
	assert_string_equal(json_object_get_string(json_object_object_get(r, "node_id")), "node-1");
	assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(
		json_object_object_get(r, "accessible_topology"), "segments"), CSI_TOPOLOGY_KEY)), "node-1");
	json_object_put(r);
	assert_int_equal(handle("NodeGetCapabilities", "{}", NULL), ZCFS_OK);
	/* no daemon behind the socket */
	assert_int_equal(handle("Probe", "{}", NULL), ZCFS_UNAVAILABLE);
	assert_int_equal(handle("ListVolumes", "{}", NULL), ZCFS_UNAVAILABLE);
	assert_int_equal(handle("NodeStageVolume", "{}", NULL), ZCFS_UNIMPLEMENTED);
	assert_int_equal(handle("NodeUnstageVolume", "{}", NULL), ZCFS_UNIMPLEMENTED);
	assert_int_equal(handle("NodeExpandVolume", "{}", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("ControllerExpandVolume", "{\"volume_id\":\"v1\"}", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("CreateVolume", "{}", NULL), ZCFS_INVALID_ARGUMENT);
	/* checked before zcfsd is asked: parameters, size, topology */
#define CV(extra) "{\"name\":\"pv1\",\"volume_capabilities\":[{\"mount\":{},\"access_mode\":{\"mode\":1}}]" extra "}"
	assert_int_equal(handle("CreateVolume", CV(",\"parameters\":{\"tenant\":\"t1\"}"), NULL), ZCFS_UNAVAILABLE);
	assert_int_equal(handle("CreateVolume", CV(",\"parameters\":{\"color\":\"red\"}"), NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("CreateVolume", CV(",\"parameters\":{\"size\":\"1G\"}"), NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("CreateVolume", CV(",\"accessibility_requirements\":{\"requisite\":[{\"segments\":"
						   "{\"" CSI_TOPOLOGY_KEY "\":\"node-2\"}}]}"), NULL),
			 ZCFS_RESOURCE_EXHAUSTED);
	/* another node's volume: refused naming both, before zcfsd */
	assert_int_equal(handle("NodePublishVolume", "{\"volume_id\":\"v1@node-2\",\"target_path\":\"/k/a\","
				"\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}", NULL),
			 ZCFS_FAILED_PRECONDITION);
	assert_int_equal(handle("NodeUnpublishVolume", "{\"volume_id\":\"v1@node-2\",\"target_path\":\"/k/a\"}", NULL),
			 ZCFS_OK);
	assert_int_equal(handle("DeleteVolume", "{\"volume_id\":\"v1@node-2\"}", NULL), ZCFS_FAILED_PRECONDITION);
	assert_int_equal(handle("DeleteVolume", "{\"volume_id\":\"../x\"}", NULL), ZCFS_OK);
	assert_int_equal(handle("CreateVolume",
				"{\"name\":\"pv1\",\"volume_capabilities\":[{\"block\":{},\"access_mode\":{\"mode\":1}}]}",
				NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("GetPluginInfo", "{\"x\":1}", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("GetPluginInfo", "[]", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("GetPluginInfo", "{} x", NULL), ZCFS_INVALID_ARGUMENT);
}

static void test_publish_ok(void **state)
{
	struct csi_publish_req p;

	(void)state;
	assert_int_equal(parse_pub(PUB(""), &p), ZCFS_OK);
	assert_string_equal(p.volume_id, "v1");
	assert_int_equal(p.access_mode, CSI_MODE_SINGLE_NODE_WRITER);
	assert_false(p.readonly);
	assert_false(p.ephemeral);
	assert_true(p.remove_target);
	csi_publish_req_done(&p);

	assert_int_equal(parse_pub(PUB(",\"readonly\":true,\"volume_context\":{\"tenant\":\"t1\",\"size\":\"1G\","
				       "\"transport\":\"uring\",\"csi.storage.k8s.io/ephemeral\":\"true\","
				       "\"csi.storage.k8s.io/pod.uid\":\"u\"},\"secrets\":{\"a\":\"b\"}"), &p),
			 ZCFS_OK);
	assert_true(p.readonly);
	assert_true(p.ephemeral);
	assert_string_equal(p.tenant, "t1");
	assert_string_equal(p.transport, "uring");
	assert_int_equal(p.size, 1ULL << 30);
	assert_false(p.has_uid || p.has_gid || p.has_mode || p.has_group);
	csi_publish_req_done(&p);

	/* the volume root's owner, mode and the pod's fsGroup */
	assert_int_equal(parse_pub("{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":"
				   "{\"mount\":{\"volume_mount_group\":\"2000\"},\"access_mode\":{\"mode\":7}},"
				   "\"volume_context\":{\"uid\":\"1000\",\"gid\":\"0\",\"mode\":\"2770\"}}", &p),
			 ZCFS_OK);
	assert_true(p.has_uid && p.has_gid && p.has_mode && p.has_group);
	assert_int_equal(p.uid, 1000);
	assert_int_equal(p.gid, 0);
	assert_int_equal(p.mode, 02770);
	assert_int_equal(p.mount_group, 2000);
	csi_publish_req_done(&p);

	/* integer access modes (proto enum numbers) and reader-only => ro */
	assert_int_equal(parse_pub("{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":"
				   "{\"mount\":{\"mount_flags\":[\"ro\"]},\"access_mode\":{\"mode\":3}}}", &p),
			 ZCFS_OK);
	assert_int_equal(p.access_mode, CSI_MODE_MULTI_NODE_READER_ONLY);
	assert_true(p.readonly);
	csi_publish_req_done(&p);
}

static void test_publish_equivalent_capabilities(void **state)
{
	struct csi_publish_req a, b;

	(void)state;
	assert_int_equal(parse_pub(PUB(""), &a), ZCFS_OK);
	assert_int_equal(parse_pub("{\"volume_id\":\"v1\",\"target_path\":\"/k/pods/a/mount\",\"volume_capability\":"
				   "{\"mount\":{\"fs_type\":\"zcfs\"},\"access_mode\":{\"mode\":1}}}", &b), ZCFS_OK);
	assert_true(json_object_equal(a.capability, b.capability));
	csi_publish_req_done(&b);
	assert_int_equal(parse_pub(PUB(",\"readonly\":true"), &b), ZCFS_OK);
	assert_false(json_object_equal(a.capability, b.capability));
	csi_publish_req_done(&b);
	csi_publish_req_done(&a);
}

static void test_publish_refused(void **state)
{
	static const char *const bad[] = {
		"{\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\"}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"block\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"block\":{},\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":0}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":8}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":\"ANY\"}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{\"fs_type\":\"ext4\"},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{\"mount_flags\":[\"exec\"]},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{\"mount_flags\":\"ro\"},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{\"volume_mount_group\":\"staff\"},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{\"volume_mount_group\":\"-1\"},\"access_mode\":{\"mode\":1}}}",
		PUB(",\"volume_context\":{\"uid\":\"4294967295\"}"),
		PUB(",\"volume_context\":{\"gid\":\"x\"}"),
		PUB(",\"volume_context\":{\"mode\":\"0778\"}"),
		PUB(",\"volume_context\":{\"mode\":\"17777\"}"),
		PUB(",\"bogus\":1"),
		PUB(",\"readonly\":\"true\""),
		PUB(",\"volume_context\":{\"colour\":\"red\"}"),
		PUB(",\"volume_context\":{\"size\":\"-1\"}"),
		PUB(",\"volume_context\":{\"tenant\":\"../t\"}"),
		PUB(",\"volume_context\":{\"transport\":\"x\"}"),
		PUB(",\"volume_context\":{\"csi.storage.k8s.io/ephemeral\":\"yes\"}"),
		PUB(",\"volume_context\":{\"tenant\":1}"),
		PUB(",\"secrets\":[]"),
		"{\"volume_id\":\"../etc\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v\\u0000x\",\"target_path\":\"/k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k/../m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"k/m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":\"v1\",\"target_path\":\"/k//m\",\"volume_capability\":{\"mount\":{},\"access_mode\":{\"mode\":1}}}",
		"{\"volume_id\":",
		"",
		"7",
	};
	struct csi_publish_req p;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		enum zcfs_code c = parse_pub(bad[i], &p);
		if (c != ZCFS_INVALID_ARGUMENT)
			fail_msg("accepted or wrong code %d: %s", c, bad[i]);
		csi_publish_req_done(&p);
	}
}

static void test_unpublish_and_stats_parse(void **state)
{
	(void)state;
	/* valid requests get past parsing to the (absent) daemon */
	/* an unreachable daemon is never "unknown volume, nothing to do" */
	assert_int_equal(handle("NodeUnpublishVolume", "{\"volume_id\":\"v1\",\"target_path\":\"/k/m\"}", NULL),
			 ZCFS_UNAVAILABLE);
	assert_int_equal(handle("NodePublishVolume", PUB(""), NULL), ZCFS_UNAVAILABLE);
	assert_int_equal(handle("NodeGetVolumeStats", "{\"volume_id\":\"v1\",\"volume_path\":\"/k/m\"}", NULL),
			 ZCFS_UNAVAILABLE);
	assert_int_equal(handle("NodeUnpublishVolume", "{\"volume_id\":\"v1\"}", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("NodeUnpublishVolume", "{\"volume_id\":\"a/b\",\"target_path\":\"/k\"}", NULL),
			 ZCFS_INVALID_ARGUMENT);
	/* a path that cannot be a target: the volume is not there (zcfsd asked) */
	assert_int_equal(handle("NodeGetVolumeStats", "{\"volume_id\":\"v1\",\"volume_path\":\"rel\"}", NULL),
			 ZCFS_UNAVAILABLE);
	assert_int_equal(handle("NodeGetVolumeStats", "{\"volume_id\":\"v1\"}", NULL), ZCFS_INVALID_ARGUMENT);
	assert_int_equal(handle("NodeGetVolumeStats", "{\"volume_id\":\"v1\",\"volume_path\":\"/k\",\"x\":1}", NULL),
			 ZCFS_INVALID_ARGUMENT);
}

static void test_request_cap(void **state)
{
	size_t n = CSI_REQUEST_MAX + 16;
	char *big = malloc(n + 1);
	struct zcfs_err e = { 0 };
	json_object *r = NULL;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	big[n] = '\0';
	big[0] = '{';
	big[n - 1] = '}';
	assert_true(csi_handle(&ctx, "GetPluginInfo", big, n, &r, &e) < 0);
	assert_int_equal(e.code, ZCFS_INVALID_ARGUMENT);
	free(big);
}

static enum zcfs_code flex(const char *dir, const char *opts, struct csi_publish_req *p, char *id)
{
	json_object *doc = NULL;
	struct zcfs_err e = { 0 };
	int r = flex_parse_mount(dir, opts, &doc, p, id, 256, &e);

	if (docs[1])
		json_object_put(docs[1]);
	docs[1] = docs[0];
	docs[0] = doc;
	return r < 0 ? e.code : ZCFS_OK;
}

static void test_flex_options(void **state)
{
	struct csi_publish_req p;
	char id[256];

	(void)state;
	assert_int_equal(flex("/k/pods/u1/volumes/zcfs.io~zcfs/data",
			      "{\"kubernetes.io/pod.uid\":\"u1\",\"kubernetes.io/pvOrVolumeName\":\"data\","
			      "\"kubernetes.io/readwrite\":\"ro\",\"kubernetes.io/fsType\":\"\",\"tenant\":\"t1\","
			      "\"kubernetes.io/secret/key\":\"c2VjcmV0\"}", &p, id), ZCFS_OK);
	assert_string_equal(p.volume_id, "flex-u1-data");
	assert_true(p.ephemeral);
	assert_true(p.readonly);
	assert_false(p.remove_target);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"volumeID\":\"pv1\"}", &p, id), ZCFS_OK);
	assert_string_equal(p.volume_id, "pv1");
	assert_false(p.ephemeral);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"volumeID\":\"../x\"}", &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"tenant\":\"t1\"}", &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"volumeID\":\"pv1\",\"kubernetes.io/fsType\":\"xfs\"}", &p, id),
			 ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"volumeID\":\"pv1\",\"kubernetes.io/readwrite\":\"rx\"}", &p, id),
			 ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"volumeID\":\"pv1\",\"other\":\"x\"}", &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("k/m", "{\"volumeID\":\"pv1\"}", &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", NULL, &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
	assert_int_equal(flex("/k/m", "{\"kubernetes.io/pod.uid\":\"a/b\",\"kubernetes.io/pvOrVolumeName\":\"d\"}",
			      &p, id), ZCFS_INVALID_ARGUMENT);
	csi_publish_req_done(&p);
}

static void test_flex_main(void **state)
{
	char *init[] = { "init" }, *attach[] = { "attach", "x", "y" }, *bad[] = { "mount", "/k/m" };
	json_object *out;

	(void)state;
	assert_int_equal(flex_main(&ctx, 1, init, &out), 0);
	assert_string_equal(json_object_get_string(json_object_object_get(out, "status")), "Success");
	assert_false(json_object_get_boolean(json_object_object_get(json_object_object_get(out, "capabilities"), "attach")));
	json_object_put(out);
	assert_int_equal(flex_main(&ctx, 3, attach, &out), 1);
	assert_string_equal(json_object_get_string(json_object_object_get(out, "status")), "Not supported");
	json_object_put(out);
	assert_int_equal(flex_main(&ctx, 2, bad, &out), 1);
	assert_string_equal(json_object_get_string(json_object_object_get(out, "status")), "Failure");
	json_object_put(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_publish_ok),
		cmocka_unit_test(test_publish_equivalent_capabilities),
		cmocka_unit_test(test_publish_refused),
		cmocka_unit_test(test_unpublish_and_stats_parse),
		cmocka_unit_test(test_request_cap),
		cmocka_unit_test(test_flex_options),
		cmocka_unit_test(test_flex_main),
	};
	return cmocka_run_group_tests_name("csi", tests, setup, teardown);
}
