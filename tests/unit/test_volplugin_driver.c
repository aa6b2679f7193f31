/* zcfs-volume-plugin's request handler without a daemon: handshake and
 * list answers, 500 + Err for every refusal (bad JSON, unknown fields and
 * options, fields of the wrong type, ../ names, oversized bodies, unknown
 * endpoints), unknown top-level fields ignored (Docker adds some), a
 * daemon that cannot be reached changing nothing, and the registry:
 * reloaded across a restart, CreatedAt from it in Get/List, tolerant
 * Unmount/Remove, refused when damaged; as a Docker managed plugin, the
 * host's path of its propagated mount from a mount table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "plugin/common/plugin_json.h"
#include "plugin/common/statefile.h"
#include "plugin/volume/vp.h"

static char dir[] = "/tmp/zcfs-test-vp.XXXXXX";
static char sdir[128];

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(sdir, sizeof(sdir), "%s/state", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int call(struct vp *v, const char *ep, const char *body, json_object **resp)
{
	json_object *r = NULL;
	int status = vp_handle(v, ep, body, strlen(body), &r);

	assert_non_null(r);
	if (status != 200) {
		/* every error carries a non-empty Err */
		const char *err = json_object_get_string(json_object_object_get(r, "Err"));
		assert_non_null(err);
		assert_true(strlen(err) > 0);
	}
	if (resp)
		*resp = r;
	else
		json_object_put(r);
	return status;
}

static const char *err_of(json_object *r)
{
	return json_object_get_string(json_object_object_get(r, "Err"));
}

static void test_handshake(void **state)
{
	struct zcfs_err e = { 0 };
	struct vp v;
	json_object *r;

	(void)state;
	assert_int_equal(vp_init(&v, "/nonexistent.sock", sdir, "/mnt/zcfs", &e), 0);
	assert_int_equal(call(&v, "/Plugin.Activate", "", &r), 200);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(json_object_object_get(r, "Implements"), 0)),
			    "VolumeDriver");
	json_object_put(r);
	assert_int_equal(call(&v, "/VolumeDriver.Capabilities", "{}", &r), 200);
	assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(r, "Capabilities"), "Scope")),
			    "local");
	json_object_put(r);
	assert_int_equal(call(&v, "/VolumeDriver.List", "", &r), 200);
	assert_int_equal(json_object_array_length(json_object_object_get(r, "Volumes")), 0);
	json_object_put(r);
	vp_done(&v);
}

static void test_refusals(void **state)
{
	static const struct { const char *ep, *body, *code; } bad[] = {
		{ "/VolumeDriver.Create", "{\"Name\":", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "[]", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":1}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":\"x\",\"Labels\":{}}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Mount", "{\"Name\":\"a\",\"ID\":[]}", "INVALID_ARGUMENT" },
		/* unknown top-level fields are ignored: this one got as far as zcfsd */
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Labels\":{\"k\":\"v\"},\"X\":[1]}", "UNAVAILABLE" },
		{ "/VolumeDriver.Create", "{\"Name\":\"../a\"}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":{\"colour\":\"red\"}}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":{\"size\":\"1Q\"}}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":{\"tenant\":\"a/b\"}}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":{\"size\":7}}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Create", "{\"Name\":\"a\",\"Opts\":{\"tenant\":\"t1\"}}", "UNAVAILABLE" },
		{ "/VolumeDriver.Mount", "{\"Name\":\"a\",\"ID\":\"x\"}", "NOT_FOUND" },
		{ "/VolumeDriver.Path", "{\"Name\":\"a\"}", "NOT_FOUND" },
		{ "/VolumeDriver.Get", "{\"Name\":\"a\"}", "NOT_FOUND" },
		{ "/VolumeDriver.Get", "{}", "INVALID_ARGUMENT" },
		{ "/VolumeDriver.Nope", "{}", "UNIMPLEMENTED" },
		{ "/../VolumeDriver.List", "{}", "UNIMPLEMENTED" },
	};
	struct zcfs_err e = { 0 };
	struct vp v;
	json_object *r;

	(void)state;
	assert_int_equal(vp_init(&v, "/nonexistent.sock", sdir, "/mnt/zcfs", &e), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(call(&v, bad[i].ep, bad[i].body, &r), 500);
		if (strncmp(err_of(r), bad[i].code, strlen(bad[i].code)))
			fail_msg("%s %s: %s", bad[i].ep, bad[i].body, err_of(r));
		json_object_put(r);
	}
	/* tolerated: nothing to undo */
	assert_int_equal(call(&v, "/VolumeDriver.Unmount", "{\"Name\":\"a\",\"ID\":\"x\"}", NULL), 200);
	assert_int_equal(call(&v, "/VolumeDriver.Remove", "{\"Name\":\"a\"}", NULL), 200);
	/* nothing was registered by the failed Create */
	assert_int_equal(json_object_object_length(vp_registry_volumes(&v)), 0);
	vp_done(&v);
}

static void test_body_cap(void **state)
{
	size_t n = VP_BODY_MAX + 1;
	char *big = malloc(n + 1);
	struct zcfs_err e = { 0 };
	json_object *r = NULL;
	struct vp v;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', n);
	big[n] = '\0';
	assert_int_equal(vp_init(&v, "/nonexistent.sock", sdir, "/mnt/zcfs", &e), 0);
	assert_int_equal(vp_handle(&v, "/VolumeDriver.List", big, n, &r), 500);
	assert_non_null(strstr(err_of(r), "larger than"));
	json_object_put(r);
	free(big);
	vp_done(&v);
}

static void put_registry(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The plugin refuses to start with mount root ROOT and the registry as it is. */
static void start_refused(const char *root)
{
	struct zcfs_err e = { 0 };
	struct vp v;

	assert_true(vp_init(&v, "/nonexistent.sock", sdir, root, &e) < 0);
	vp_done(&v);
}

static void test_registry_restart(void **state)
{
	const char *reg = "{\"volumes\":{\"v1\":{\"tenant\":\"t1\",\"mountpoint\":\"/mnt/zcfs/t1/v1\","
			  "\"opts\":{\"tenant\":\"t1\"},\"ids\":[\"A\"],\"created_at\":1700000000}}}";
	char path[256];
	struct zcfs_err e = { 0 };
	struct vp v;
	json_object *r;

	(void)state;
	snprintf(path, sizeof(path), "%s/%s", sdir, VP_REGISTRY_FILE);
	assert_int_equal(mkdir_p(sdir, 0700), 0);
	put_registry(path, reg);
	assert_int_equal(vp_init(&v, "/nonexistent.sock", sdir, "/mnt/zcfs", &e), 0);
	assert_int_equal(call(&v, "/VolumeDriver.List", "{}", &r), 200);
	assert_string_equal(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(r, "Volumes"), 0), "Mountpoint")), "/mnt/zcfs/t1/v1");
	assert_string_equal(json_object_get_string(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(r, "Volumes"), 0), "CreatedAt")), "2023-11-14T22:13:20Z");
	json_object_put(r);
	/* a field Docker may add to List is ignored */
	assert_int_equal(call(&v, "/VolumeDriver.List", "{\"Filters\":{}}", NULL), 200);
	assert_int_equal(call(&v, "/VolumeDriver.Path", "{\"Name\":\"v1\"}", &r), 200);
	assert_string_equal(json_object_get_string(json_object_object_get(r, "Mountpoint")), "/mnt/zcfs/t1/v1");
	json_object_put(r);
	/* Get answers from the registry even when zcfsd is away */
	assert_int_equal(call(&v, "/VolumeDriver.Get", "{\"Name\":\"v1\"}", &r), 200);
	if (!json_object_object_get(json_object_object_get(json_object_object_get(r, "Volume"), "Status"), "zcfsd"))
		fail_msg("%s", json_object_to_json_string(r));
	assert_string_equal(json_object_get_string(json_object_object_get(json_object_object_get(r, "Volume"),
									   "CreatedAt")), "2023-11-14T22:13:20Z");
	json_object_put(r);
	/* in use: Remove refused; the last Unmount needs zcfsd: refused, kept */
	assert_int_equal(call(&v, "/VolumeDriver.Remove", "{\"Name\":\"v1\"}", NULL), 500);
	assert_int_equal(call(&v, "/VolumeDriver.Unmount", "{\"Name\":\"v1\",\"ID\":\"A\"}", NULL), 500);
	assert_true(vp_entry_has_id(vp_registry_get(&v, "v1"), "A"));
	/* an unknown caller ID is tolerated */
	assert_int_equal(call(&v, "/VolumeDriver.Unmount", "{\"Name\":\"v1\",\"ID\":\"B\"}", NULL), 200);
	vp_done(&v);

	/* damaged registries stop the start */
	put_registry(path, "{\"volumes\":{\"../x\":{\"tenant\":\"t1\",\"mountpoint\":\"/m\",\"ids\":[]}}}");
	start_refused("/mnt/zcfs");
	put_registry(path, "not json");
	start_refused("/mnt/zcfs");
	unlink(path);
	start_refused("relative");
}

#define PID "0b8affd5ddc235ca6630ef8fd128027574a25e2e6b614c97561cad0e0fbb3d2c"

/* host_root MOUNTINFO_LINES DATA_ROOT: vp_docker_host_root on a mount
 * table of these lines for /mnt/zcfs; the answer (caller frees) or NULL. */
static char *host_root(const char *lines, const char *data_root)
{
	char path[160], *ret = NULL;
	struct zcfs_err e = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/mountinfo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(lines, f);
	fclose(f);
	if (vp_docker_host_root(path, "/mnt/zcfs", data_root, &ret, &e) < 0) {
		assert_null(ret);
		assert_true(e.code == ZCFS_FAILED_PRECONDITION || e.code == ZCFS_INVALID_ARGUMENT);
	}
	unlink(path);
	return ret;
}

/* As a Docker managed plugin: the host's path of the propagated mount,
 * the plugin id taken from the mount's root field (escapes decoded, the
 * topmost mount wins); anything else refused. */
static void test_docker_host_root(void **state)
{
	const char *other = "20 1 0:5 / / rw - overlay overlay rw\n";
	char *r;

	(void)state;
	r = host_root("22 20 254:0 /var/lib/docker/plugins/" PID "/propagated-mount /mnt/zcfs rw shared:3 - ext4 /dev/vda rw\n",
		      "/var/lib/docker");
	assert_string_equal(r, "/var/lib/docker/plugins/" PID "/propagated-mount");
	free(r);
	/* a data root on its own file system: only the end of the root field counts */
	r = host_root("22 20 254:1 /plugins/" PID "/propagated-mount /mnt/zcfs rw - xfs /dev/vdb rw\n", "/srv/docker");
	assert_string_equal(r, "/srv/docker/plugins/" PID "/propagated-mount");
	free(r);
	r = host_root("22 20 254:1 /my\\040docker/plugins/" PID "/propagated-mount /mnt/zcfs rw - xfs x rw\n"
		      "23 22 0:9 /x/plugins/" PID "/propagated-mount /mnt/zcfs/t1 rw - xfs x rw\n", "/d");
	assert_string_equal(r, "/d/plugins/" PID "/propagated-mount");
	free(r);
	assert_null(host_root(other, "/var/lib/docker"));	/* not a mount point */
	assert_null(host_root("22 20 254:0 /srv/zcfs /mnt/zcfs rw - ext4 x rw\n", "/var/lib/docker"));
	assert_null(host_root("22 20 254:0 /plugins/" PID "x/propagated-mount /mnt/zcfs rw - ext4 x rw\n",
			      "/var/lib/docker"));
	assert_null(host_root("22 20 254:0 /plugins/" "0B8AFFD5DDC235CA6630EF8FD128027574A25E2E6B614C97561CAD0E0FBB3D2C"
			      "/propagated-mount /mnt/zcfs rw - ext4 x rw\n", "/var/lib/docker"));
	assert_null(host_root("22 20 254:0 /var/lib/docker/plugins/" PID "/propagated-mount /mnt/zcfs rw - ext4 x rw\n",
			      "var/lib/docker"));
	assert_null(host_root("22 20 254:0 /var/lib/docker/plugins/" PID "/propagated-mount /mnt/zcfs rw - ext4 x rw\n",
			      "/var/lib/../docker"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_body_cap),
		cmocka_unit_test(test_registry_restart),
		cmocka_unit_test(test_docker_host_root),
	};
	return cmocka_run_group_tests_name("volplugin", tests, setup, teardown);
}
