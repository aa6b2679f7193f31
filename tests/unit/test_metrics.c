/* zcfsd's Prometheus text (zcfsd_metrics_write): every family has HELP
 * and TYPE, per-volume state is one-hot, per-tenant pinned bytes count
 * only published volumes, and label values are escaped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/version.h"
#include "daemon/zcfsd/protocol/metrics.h"
#include "daemon/zcfsd/protocol/protocol.h"

static const char *const doc =
	"{\"tenants\": [{\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"memlock_budget\": \"8M\","
	" \"max_volumes\": 5, \"storage_root\": \"/srv/t1\", \"allowed_target_prefixes\": [\"/mnt\"]}]}";

static char *render_for(struct zcfsd *d, const struct zcfsd_peer *peer)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(zcfsd_metrics_write(d, peer, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *render(struct zcfsd *d)
{
	return render_for(d, NULL);
}

static void exposition(void **state)
{
	struct policy_errors e = { 0 };
	char *targets[] = { "/mnt/a" };
	struct zcfsd_volume pub = { .id = "v1", .tenant = "t1", .targets = targets, .n_targets = 1,
				    .fuse_fd = -1, .pinned = 4096, .transport = POLICY_TRANSPORT_AUTO,
				    .fallback = "RLIMIT_MEMLOCK: io_uring needs 9 bytes pinned, 8 free",
				    .srv = { .pid = 0, .pidfd = -1, .restarts = 3 } };
	struct zcfsd_volume created = { .id = "v\"2\\", .tenant = "t1", .fuse_fd = -1, .pinned = 777,
					.srv = { .pidfd = -1 }, .next = &pub };
	struct zcfsd d = { .volumes = &created, .started_at = 1700000000 };
	char *out;

	(void)state;
	assert_int_equal(policy_load_string("p.json", doc, &d.policy, &e), 0);
	out = render(&d);
	assert_non_null(strstr(out, "# TYPE zcfs_volume_state gauge\n"));
	assert_non_null(strstr(out, "# TYPE zcfs_volume_restarts_total counter\n"));
	/* published with no server pid: "restarting" */
	assert_non_null(strstr(out, "zcfs_volume_state{volume=\"v1\",tenant=\"t1\",state=\"restarting\"} 1\n"));
	assert_non_null(strstr(out, "zcfs_volume_state{volume=\"v1\",tenant=\"t1\",state=\"published\"} 0\n"));
	assert_non_null(strstr(out, "zcfs_volume_state{volume=\"v1\",tenant=\"t1\",state=\"publishing\"} 0\n"));
	assert_non_null(strstr(out, "zcfs_volume_server_up{volume=\"v1\",tenant=\"t1\"} 0\n"));
	assert_non_null(strstr(out, "zcfs_volume_restarts_total{volume=\"v1\",tenant=\"t1\"} 3\n"));
	assert_non_null(strstr(out, "zcfs_volume_targets{volume=\"v1\",tenant=\"t1\"} 1\n"));
	/* transport auto's fallback: the path and why */
	assert_non_null(strstr(out, "zcfs_volume_data_path{volume=\"v1\",tenant=\"t1\",path=\"devfuse\","
				    "reason=\"transport auto fell back to /dev/fuse: RLIMIT_MEMLOCK: io_uring needs 9 "
				    "bytes pinned, 8 free\"} 1\n"));
	/* the id with a quote and a backslash is escaped */
	assert_non_null(strstr(out, "zcfs_volume_state{volume=\"v\\\"2\\\\\",tenant=\"t1\",state=\"created\"} 1\n"));
	/* only the published volume's bytes count for the tenant */
	assert_non_null(strstr(out, "zcfs_tenant_pinned_bytes{tenant=\"t1\"} 4096\n"));
	assert_non_null(strstr(out, "zcfs_tenant_memlock_budget_bytes{tenant=\"t1\"} 8388608\n"));
	assert_non_null(strstr(out, "zcfs_tenant_volumes{tenant=\"t1\"} 2\n"));
	assert_non_null(strstr(out, "zcfs_tenant_max_volumes{tenant=\"t1\"} 5\n"));
	assert_non_null(strstr(out, "zcfs_daemon_start_time_seconds 1700000000\n"));
	assert_non_null(strstr(out, "# TYPE zcfs_build_info gauge\n"));
	assert_non_null(strstr(out, "zcfs_build_info{version=\"" ZCFS_VERSION "\",fuse_protocol=\"7."));
	/* zcfsd's own process metrics, as the client libraries name them */
	assert_non_null(strstr(out, "# TYPE process_cpu_seconds_total counter\n"));
	assert_non_null(strstr(out, "\nprocess_resident_memory_bytes "));
	assert_non_null(strstr(out, "\nprocess_open_fds "));
	assert_non_null(strstr(out, "\nprocess_max_fds "));
	assert_non_null(strstr(out, "\nprocess_start_time_seconds "));
	/* one prefix: every family is zcfs_* or the standard process_* */
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "# TYPE ", 7))
			assert_true(!strncmp(l + 7, "zcfs_", 5) || !strncmp(l + 7, "process_", 8));
	}
	free(out);
	policy_free(d.policy);
}

/* A peer that manages t1 alone sees no series of t2 (nor its name); one
 * that manages no tenant sees only zcfsd's own families. */
static void scoped(void **state)
{
	static const char *const two =
		"{\"tenants\": [{\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"memlock_budget\": \"8M\","
		" \"storage_root\": \"/srv/t1\", \"allowed_target_prefixes\": [\"/mnt\"], \"admin_uids\": [3001]},"
		" {\"name\": \"t2\", \"uid\": 2002, \"gid\": 2002, \"memlock_budget\": \"8M\","
		" \"storage_root\": \"/srv/t2\", \"allowed_target_prefixes\": [\"/mnt\"], \"admin_gids\": [4002]}]}";
	struct policy_errors e = { 0 };
	struct zcfsd_volume b1 = { .id = "b1", .tenant = "t2", .fuse_fd = -1, .srv = { .pidfd = -1 } };
	struct zcfsd_volume a1 = { .id = "a1", .tenant = "t1", .fuse_fd = -1, .srv = { .pidfd = -1 },
				   .next = &b1 };
	struct zcfsd d = { .volumes = &a1 };
	struct zcfsd_peer t1admin = { .uid = 3001, .gid = 0 };
	struct zcfsd_peer t2admin = { .uid = 3002, .gid = 0, .n_groups = 1, .groups = { 4002 } };
	struct zcfsd_peer nobody = { .uid = 3003, .gid = 0 };
	char *out;

	(void)state;
	assert_int_equal(policy_load_string("p.json", two, &d.policy, &e), 0);
	out = render_for(&d, &t1admin);
	assert_non_null(strstr(out, "zcfs_volume_server_up{volume=\"a1\",tenant=\"t1\"} 0\n"));
	assert_non_null(strstr(out, "zcfs_tenant_volumes{tenant=\"t1\"} 1\n"));
	assert_null(strstr(out, "t2"));
	assert_null(strstr(out, "b1"));
	free(out);
	out = render_for(&d, &t2admin);
	assert_non_null(strstr(out, "zcfs_volume_server_up{volume=\"b1\",tenant=\"t2\"} 0\n"));
	assert_null(strstr(out, "\"t1\""));
	assert_null(strstr(out, "a1"));
	free(out);
	out = render_for(&d, &nobody);
	assert_null(strstr(out, "tenant="));
	assert_non_null(strstr(out, "\nprocess_open_fds "));
	free(out);
	out = render(&d);
	assert_non_null(strstr(out, "volume=\"a1\""));
	assert_non_null(strstr(out, "volume=\"b1\""));
	free(out);
	policy_free(d.policy);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exposition),
		cmocka_unit_test(scoped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
