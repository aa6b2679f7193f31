/* zcfsd's tenant.list (protocol/methods.c): a peer sees the tenants it
 * manages, and the answer owns everything it made for the others too
 * (under ASan, make check-asan: no leak of the tenants left out); the
 * sizes a tenant's volumes commit saturate instead of wrapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "daemon/zcfsd/protocol/protocol.h"

static const char *const two =
	"{\"tenants\": [{\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"memlock_budget\": \"8M\","
	" \"storage_root\": \"/srv/t1\", \"allowed_target_prefixes\": [\"/mnt\"], \"admin_uids\": [3001]},"
	" {\"name\": \"t2\", \"uid\": 2002, \"gid\": 2002, \"memlock_budget\": \"8M\","
	" \"storage_root\": \"/srv/t2\", \"allowed_target_prefixes\": [\"/mnt\"]},"
	" {\"name\": \"t3\", \"uid\": 2003, \"gid\": 2003, \"memlock_budget\": \"8M\","
	" \"storage_root\": \"/srv/t3\", \"allowed_target_prefixes\": [\"/mnt\"]}]}";

static void scoped(void **state)
{
	struct policy_errors pe = { 0 };
	struct zcfsd d = { 0 };
	struct zcfsd_peer t1admin = { .uid = 3001, .gid = 3001 };
	struct zcfs_err e = { .code = ZCFS_OK };
	json_object *params = json_object_new_object(), *res, *ts, *name;

	(void)state;
	assert_int_equal(policy_load_string("p.json", two, &d.policy, &pe), 0);
	/* Over and over: a leak per tenant left out would pile up. */
	for (int i = 0; i < 100; i++) {
		res = zcfsd_dispatch(&d, &t1admin, "tenant.list", params, &e);
		assert_non_null(res);
		assert_int_equal(e.code, ZCFS_OK);
		assert_true(json_object_object_get_ex(res, "tenants", &ts));
		assert_int_equal(json_object_array_length(ts), 1);
		assert_true(json_object_object_get_ex(json_object_array_get_idx(ts, 0), "name", &name));
		assert_string_equal(json_object_get_string(name), "t1");
		json_object_put(res);
	}
	json_object_put(params);
	policy_free(d.policy);
}

/* 16 volumes of 2^60 bytes (the most one may be) commit more than 2^64:
 * nothing is left, and size_committed says the most JSON holds. */
static void committed_saturates(void **state)
{
	struct policy_errors pe = { 0 };
	struct zcfsd_volume v[16];
	struct zcfsd d = { 0 };
	uint64_t avail = 1, committed = 0;
	struct zcfsd_peer root = { .uid = 0 };
	struct zcfs_err e = { .code = ZCFS_OK };
	json_object *params = json_object_new_object(), *res, *ts, *x;

	(void)state;
	assert_int_equal(policy_load_string("p.json", two, &d.policy, &pe), 0);
	memset(v, 0, sizeof(v));
	for (int i = 0; i < 16; i++) {
		v[i] = (struct zcfsd_volume){ .id = "v", .tenant = "t1", .size = 1ULL << 60, .fuse_fd = -1,
					      .srv = { .pidfd = -1 }, .next = i < 15 ? &v[i + 1] : NULL };
	}
	d.volumes = &v[0];
	assert_int_equal(zcfsd_tenant_capacity(&d, &d.policy->tenants[0], &avail, &committed), 0);
	assert_true(committed == UINT64_MAX);
	assert_true(avail == 0);
	res = zcfsd_dispatch(&d, &root, "tenant.list", params, &e);
	assert_non_null(res);
	assert_true(json_object_object_get_ex(res, "tenants", &ts));
	assert_true(json_object_object_get_ex(json_object_array_get_idx(ts, 0), "size_committed", &x));
	assert_true(json_object_get_int64(x) == INT64_MAX);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(ts, 0), "capacity_available", &x));
	assert_int_equal(json_object_get_int64(x), 0);
	json_object_put(res);
	json_object_put(params);
	policy_free(d.policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scoped),
		cmocka_unit_test(committed_saturates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
