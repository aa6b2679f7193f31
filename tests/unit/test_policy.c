/* Policy parsing: a valid document, every kind of problem reported (all
 * of them, each naming file and field), size strings, defaults, merging
 * rules (the path/id checks: test_names.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "common/policy.h"

#define TENANT(extra) \
	"{\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"storage_root\": \"/srv/zcfs/t1\"," \
	" \"allowed_target_prefixes\": [\"/var/lib/kubelet/pods\"]" extra "}"

static bool has_error(const struct policy_errors *e, const char *needle)
{
	for (size_t i = 0; i < e->n; i++)
		if (strstr(e->msgs[i], needle))
			return true;
	return false;
}

static void test_valid(void **state)
{
	const char *doc = "{\"admin_group\": \"0\","
			  " \"defaults\": {\"queue_depth\": 16, \"max_write\": \"256K\", \"transport\": \"uring\"},"
			  " \"metrics\": {\"listen\": \"/run/zcfs/metrics.sock\"},"
			  " \"tenants\": [" TENANT(", \"memlock_budget\": \"64M\", \"max_volumes\": 3,"
			  " \"default_quota\": 1073741824, \"size_enforcement\": \"kernel\","
			  " \"data_paths\": {\"io_uring\": true, \"zero_copy\": true, \"passthrough\": false,"
			  " \"ring_holder\": true}") "]}";
	struct policy_errors e = { 0 };
	struct policy *p = NULL;
	const struct policy_tenant *t;

	(void)state;
	assert_int_equal(policy_load_string("a.json", doc, &p, &e), 0);
	assert_int_equal(e.n, 0);
	assert_int_equal(p->queue_depth, 16);
	assert_int_equal(p->max_write, 256 * 1024);
	assert_int_equal(p->transport, POLICY_TRANSPORT_URING);
	assert_true(p->has_admin_gid);
	assert_int_equal(p->admin_gid, 0);
	assert_string_equal(p->metrics_listen, "/run/zcfs/metrics.sock");
	t = policy_find_tenant(p, "t1");
	assert_non_null(t);
	assert_int_equal(t->uid, 2001);
	assert_int_equal(t->memlock_budget, 64ULL << 20);
	assert_int_equal(t->max_volumes, 3);
	assert_int_equal(t->default_quota, 1ULL << 30);
	assert_int_equal(t->size_enforcement, POLICY_SIZE_KERNEL);
	assert_true(t->io_uring && t->zero_copy && !t->passthrough && t->ring_holder);
	assert_int_equal(t->n_prefixes, 1);
	assert_null(policy_find_tenant(p, "t2"));
	policy_free(p);
}

static void test_defaults(void **state)
{
	struct policy_errors e = { 0 };
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_load_string("d.json", "{\"tenants\": [" TENANT("") "]}", &p, &e), 0);
	/* 0: chosen per volume by the io_uring geometry */
	assert_int_equal(p->queue_depth, 0);
	assert_int_equal(p->max_write, 0);
	assert_int_equal(p->transport, POLICY_TRANSPORT_AUTO);
	assert_false(p->has_admin_gid);
	assert_int_equal(p->tenants[0].memlock_budget, 0);
	assert_int_equal(p->tenants[0].max_volumes, 64);
	assert_false(p->tenants[0].io_uring);
	assert_int_equal(p->tenants[0].size_enforcement, POLICY_SIZE_AUTO);
	policy_free(p);
}

/* Every problem is reported, not just the first, and names file + field. */
static void test_all_errors_reported(void **state)
{
	const char *doc = "{\"bogus\": 1, \"defaults\": {\"queue_depth\": 0, \"max_write\": \"5000\","
			  " \"transport\": \"fast\", \"extra\": true},"
			  " \"tenants\": [{\"name\": \"../x\", \"uid\": 0, \"gid\": \"x\","
			  " \"memlock_budget\": \"64Q\", \"storage_root\": \"rel/path\","
			  " \"allowed_target_prefixes\": [\"/a/../b\", \"/\"], \"colour\": \"red\","
			  " \"size_enforcement\": \"strict\","
			  " \"data_paths\": {\"io_uring\": false, \"zero_copy\": true, \"ring_holder\": true, \"warp\": 1}}]}";
	struct policy_errors e = { 0 };
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_load_string("bad.json", doc, &p, &e), -EINVAL);
	assert_null(p);
	assert_true(has_error(&e, "bad.json: bogus: unknown field"));
	assert_true(has_error(&e, "bad.json: defaults.queue_depth:"));
	assert_true(has_error(&e, "bad.json: defaults.max_write:"));
	assert_true(has_error(&e, "bad.json: defaults.transport:"));
	assert_true(has_error(&e, "bad.json: defaults.extra: unknown field"));
	assert_true(has_error(&e, "bad.json: tenants[0].name:"));
	assert_true(has_error(&e, "bad.json: tenants[0].uid:"));
	assert_true(has_error(&e, "bad.json: tenants[0].gid: expected an integer"));
	assert_true(has_error(&e, "bad.json: tenants[0].memlock_budget:"));
	assert_true(has_error(&e, "bad.json: tenants[0].storage_root:"));
	assert_true(has_error(&e, "bad.json: tenants[0].allowed_target_prefixes[0]:"));
	assert_true(has_error(&e, "bad.json: tenants[0].allowed_target_prefixes[1]:"));
	assert_true(has_error(&e, "bad.json: tenants[0].colour: unknown field"));
	assert_true(has_error(&e, "bad.json: tenants[0].size_enforcement: expected \"auto\", \"kernel\" or \"server\""));
	assert_true(has_error(&e, "bad.json: tenants[0].data_paths.warp: unknown field"));
	assert_true(has_error(&e, "bad.json: tenants[0].data_paths: zero_copy needs io_uring"));
	assert_true(has_error(&e, "bad.json: tenants[0].data_paths: ring_holder needs io_uring"));
	assert_true(e.n >= 15);
	policy_errors_clear(&e);
}

static void test_missing_and_malformed(void **state)
{
	struct policy_errors e = { 0 };
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_load_string("m.json", "{\"tenants\": [{\"name\": \"t\"}]}", &p, &e), -EINVAL);
	assert_true(has_error(&e, "m.json: tenants[0].uid: required field missing"));
	assert_true(has_error(&e, "m.json: tenants[0].allowed_target_prefixes: required field missing"));
	policy_errors_clear(&e);
	assert_int_equal(policy_load_string("j.json", "{\"tenants\": [", &p, &e), -EINVAL);
	assert_true(has_error(&e, "j.json: (document): not valid JSON"));
	policy_errors_clear(&e);
	assert_int_equal(policy_load_string("a.json", "[1]", &p, &e), -EINVAL);
	assert_true(has_error(&e, "a.json: (document): expected a JSON object"));
	policy_errors_clear(&e);
	assert_int_equal(policy_load_string("g.json", "{\"admin_group\": \"no-such-group-zcfs\"}", &p, &e), -EINVAL);
	assert_true(has_error(&e, "g.json: admin_group: no group named"));
	policy_errors_clear(&e);
}

static void test_cross_checks(void **state)
{
	const char *doc = "{\"tenants\": [" TENANT("") "," TENANT("") "]}";
	struct policy_errors e = { 0 };
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_load_string("x.json", doc, &p, &e), -EINVAL);
	assert_true(has_error(&e, "tenant 't1' also defined in x.json"));
	assert_true(has_error(&e, "share uid 2001"));
	assert_true(has_error(&e, "share /srv/zcfs/t1"));
	policy_errors_clear(&e);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A directory merges *.json in name order; a global section set twice
 * is an error naming both files; other files are ignored. */
static void test_directory_merge(void **state)
{
	char dir[] = "/tmp/zcfs-policy-test.XXXXXX", path[256];
	struct policy_errors e = { 0 };
	struct policy *p = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/10-global.json", dir);
	write_file(path, "{\"defaults\": {\"queue_depth\": 4}}");
	snprintf(path, sizeof(path), "%s/20-t1.json", dir);
	write_file(path, "{\"tenants\": [" TENANT("") "]}");
	snprintf(path, sizeof(path), "%s/README", dir);
	write_file(path, "not json");
	assert_int_equal(policy_load(dir, &p, &e), 0);
	assert_int_equal(p->queue_depth, 4);
	assert_int_equal(p->n_tenants, 1);
	policy_free(p);
	p = NULL;
	snprintf(path, sizeof(path), "%s/30-more.json", dir);
	write_file(path, "{\"defaults\": {\"queue_depth\": 2}}");
	assert_int_equal(policy_load(dir, &p, &e), -EINVAL);
	assert_true(has_error(&e, "30-more.json: defaults: already set in"));
	assert_true(has_error(&e, "10-global.json"));
	policy_errors_clear(&e);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/* admin_uids/admin_gids: numeric ids, every bad entry reported. */
static void test_tenant_admins(void **state)
{
	struct policy_errors e = { 0 };
	struct policy *p = NULL;
	const struct policy_tenant *t;

	(void)state;
	assert_int_equal(policy_load_string("a.json", "{\"tenants\": [" TENANT(", \"admin_uids\": [3001, 0],"
					    " \"admin_gids\": [4001]") "]}", &p, &e), 0);
	t = policy_find_tenant(p, "t1");
	assert_int_equal(t->n_admin_uids, 2);
	assert_int_equal(t->admin_uids[0], 3001);
	assert_int_equal(t->admin_uids[1], 0);
	assert_int_equal(t->n_admin_gids, 1);
	assert_int_equal(t->admin_gids[0], 4001);
	policy_free(p);
	p = NULL;
	assert_int_equal(policy_load_string("b.json", "{\"tenants\": [" TENANT("") "]}", &p, &e), 0);
	assert_int_equal(p->tenants[0].n_admin_uids + p->tenants[0].n_admin_gids, 0);
	policy_free(p);
	p = NULL;
	assert_int_equal(policy_load_string("c.json", "{\"tenants\": [" TENANT(", \"admin_uids\": [\"alice\", -1],"
					    " \"admin_gids\": 5") "]}", &p, &e), -EINVAL);
	assert_true(has_error(&e, "tenants[0].admin_uids[0]"));
	assert_true(has_error(&e, "tenants[0].admin_uids[1]"));
	assert_true(has_error(&e, "tenants[0].admin_gids"));
	policy_errors_clear(&e);
}

/* volume_root: owner, group, octal mode and setgid of new volume roots;
 * bad values and unknown fields reported, nothing set without it. */
static void test_volume_root(void **state)
{
	struct policy_errors e = { 0 };
	struct policy *p = NULL;
	const struct policy_tenant *t;

	(void)state;
	assert_int_equal(policy_load_string("a.json", "{\"tenants\": [" TENANT(", \"volume_root\":"
					    " {\"uid\": 1000, \"gid\": 0, \"mode\": \"0770\", \"setgid\": true}")
					    "]}", &p, &e), 0);
	t = policy_find_tenant(p, "t1");
	assert_true(t->volume_root.has_uid && t->volume_root.has_gid && t->volume_root.has_mode);
	assert_int_equal(t->volume_root.uid, 1000);
	assert_int_equal(t->volume_root.gid, 0);
	assert_int_equal(t->volume_root.mode, 02770);
	policy_free(p);
	p = NULL;
	assert_int_equal(policy_load_string("b.json", "{\"tenants\": [" TENANT(", \"volume_root\": {\"mode\": \"1777\"}")
					    "]}", &p, &e), 0);
	t = policy_find_tenant(p, "t1");
	assert_true(!t->volume_root.has_uid && !t->volume_root.has_gid && t->volume_root.has_mode);
	assert_int_equal(t->volume_root.mode, 01777);
	policy_free(p);
	p = NULL;
	assert_int_equal(policy_load_string("c.json", "{\"tenants\": [" TENANT("") "]}", &p, &e), 0);
	t = policy_find_tenant(p, "t1");
	assert_false(t->volume_root.has_uid || t->volume_root.has_gid || t->volume_root.has_mode);
	policy_free(p);
	p = NULL;
	assert_int_equal(policy_load_string("d.json", "{\"tenants\": [" TENANT(", \"volume_root\": {\"uid\": -1,"
					    " \"gid\": \"users\", \"mode\": 770, \"setgid\": 1, \"owner\": 1000}")
					    "]}", &p, &e), -EINVAL);
	assert_true(has_error(&e, "tenants[0].volume_root.uid"));
	assert_true(has_error(&e, "tenants[0].volume_root.gid"));
	assert_true(has_error(&e, "tenants[0].volume_root.mode"));
	assert_true(has_error(&e, "tenants[0].volume_root.setgid"));
	assert_true(has_error(&e, "tenants[0].volume_root.owner: unknown field"));
	policy_errors_clear(&e);
	for (const char *const *m = (const char *const[]){ "\"2770\"", "\"4755\"", "\"0x1ff\"", "\"\"",
							   "\"0778\"", NULL }; *m; m++) {
		char doc[512];
		snprintf(doc, sizeof(doc), "{\"tenants\": [" TENANT(", \"volume_root\": {\"mode\": %s}") "]}", *m);
		assert_int_equal(policy_load_string("e.json", doc, &p, &e), -EINVAL);
		assert_true(has_error(&e, "tenants[0].volume_root.mode"));
		policy_errors_clear(&e);
	}
	assert_int_equal(policy_load_string("f.json", "{\"tenants\": [" TENANT(", \"volume_root\": []") "]}",
					    &p, &e), -EINVAL);
	assert_true(has_error(&e, "tenants[0].volume_root: expected an object"));
	policy_errors_clear(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_all_errors_reported),
		cmocka_unit_test(test_missing_and_malformed),
		cmocka_unit_test(test_cross_checks),
		cmocka_unit_test(test_directory_merge),
		cmocka_unit_test(test_tenant_admins),
		cmocka_unit_test(test_volume_root),
	};
	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
