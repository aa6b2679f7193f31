/* The one io_uring sizing (common/uring_sizing.c): the default
 * geometry for 2, 16, 64 and 256 CPUs stays within the 32 MiB budget,
 * what is asked for is kept, and zcfs-serve (--print-pinned's sizing),
 * zcfsd (the tenant's charge) and zcfsctl (the default figure) come to
 * the same bytes for the same volume. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/uring_sizing.h"
#include "daemon/serve/core/options.h"
#include "daemon/serve/transport/uring_geometry.h"
#include "daemon/zcfsd/budget/budget.h"

#define MiB (1ULL << 20)
#define KiB 1024u

static void choose(unsigned ncpus, unsigned depth, uint32_t mw, uint64_t budget, struct uring_geometry *g)
{
	const struct uring_sizing s = { .ncpus = ncpus, .depth = depth, .max_write = mw, .budget = budget,
					.page_size = 4096, .cqes_off = URING_DEFAULT_CQES_OFF };

	uring_geometry_choose(g, &s);
}

static void test_default_per_cpu_count(void **state)
{
	static const struct { unsigned cpus, depth; uint32_t mw; } want[] = {
		{ 2, 8, 1024 * KiB },	/* what 2-CPU nodes always had */
		{ 16, 3, 512 * KiB },
		{ 64, 3, 128 * KiB },
		{ 256, 3, 32 * KiB },
	};
	struct uring_geometry g;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		choose(want[i].cpus, 0, 0, 0, &g);
		assert_int_equal(g.nr_queues, want[i].cpus);
		assert_int_equal(g.depth, want[i].depth);
		assert_int_equal(g.max_write, want[i].mw);
		assert_true(uring_pinned_bytes(&g) <= URING_DEFAULT_PINNED_BUDGET);
		assert_int_equal(uring_pinned_bytes(&g), uring_default_pinned_bytes(want[i].cpus));
	}
	/* today's 2-CPU figure, unchanged */
	assert_int_equal(uring_default_pinned_bytes(2), 16859136);
	/* the bound: <= 32 MiB per default volume on 64 CPUs */
	assert_true(uring_default_pinned_bytes(64) <= 32 * MiB);
}

/* Every CPU count up to 1024: within budget, at least one entry, a
 * payload of at least max_write, and nothing bigger would have fitted at
 * the chosen depth (max_write as large as the budget allows). */
static void test_default_is_within_budget_everywhere(void **state)
{
	struct uring_geometry g, bigger;
	unsigned n;

	(void)state;
	for (n = 1; n <= 1024; n++) {
		choose(n, 0, 0, 0, &g);
		assert_true(uring_pinned_bytes(&g) <= URING_DEFAULT_PINNED_BUDGET);
		assert_true(g.depth >= 1 && g.depth <= URING_PREFERRED_DEPTH);
		assert_true(g.payload_size >= g.max_write);
		if (g.max_write < URING_PREFERRED_MAX_WRITE && g.depth >= 2) {
			uring_geometry_init(&bigger, n, 2, g.max_write * 2, g.max_write * 2 / 4096, 4096,
					    URING_DEFAULT_CQES_OFF);
			assert_true(uring_pinned_bytes(&bigger) > URING_DEFAULT_PINNED_BUDGET);
		}
	}
}

static void test_given_values_are_kept(void **state)
{
	struct uring_geometry g;

	(void)state;
	/* both given: kept even over budget (the caller refuses) */
	choose(64, 8, 1024 * KiB, 0, &g);
	assert_int_equal(g.depth, 8);
	assert_int_equal(g.max_write, 1024 * KiB);
	assert_true(uring_pinned_bytes(&g) > URING_DEFAULT_PINNED_BUDGET);
	/* depth given: max_write shrinks to fit */
	choose(16, 8, 0, 0, &g);
	assert_int_equal(g.depth, 8);
	assert_int_equal(g.max_write, 128 * KiB);
	/* max_write given: depth shrinks to fit */
	choose(16, 0, 256 * KiB, 0, &g);
	assert_int_equal(g.max_write, 256 * KiB);
	assert_int_equal(g.depth, 7);
	/* a bigger budget keeps the preferred geometry longer */
	choose(16, 0, 0, 256 * MiB, &g);
	assert_int_equal(g.depth, 8);
	assert_int_equal(g.max_write, 1024 * KiB);
	/* a budget nothing fits: the smallest, over budget */
	choose(4, 0, 0, 1, &g);
	assert_int_equal(g.depth, 1);
	assert_int_equal(g.max_write, URING_MIN_MAX_WRITE);
	assert_true(uring_pinned_bytes(&g) > 1);
}

/* zcfs-serve's options with what zcfsd passes it (--queue-depth,
 * --max-write, default --buffer-pool=auto) give the bytes zcfsd charges. */
static void test_serve_and_zcfsd_agree(void **state)
{
	static const unsigned cpus[] = { 1, 2, 16, 64, 256 };
	struct policy_tenant t = { .name = "t", .io_uring = true };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		struct zcfsd d = { .ncpus = cpus[i] };
		struct zcfsd_volume v = { .id = "v", .transport = POLICY_TRANSPORT_AUTO };
		struct zcfs_options o = { .buffer_pool = ZCFS_BUFPOOL_AUTO };
		struct uring_geometry g;
		uint64_t charged;

		/* a default volume: zcfsd resolves, serve sizes what it is given */
		zcfsd_resolve_geometry(cpus[i], true, &v.queue_depth, &v.max_write);
		assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &charged), 0);
		o.queue_depth = v.queue_depth;
		o.max_write = v.max_write;
		uring_geometry_for_options(&g, &o, cpus[i], 4096, URING_DEFAULT_CQES_OFF);
		assert_int_equal(uring_pinned_bytes(&g), charged);
		/* zcfsctl's default figure is the same volume */
		assert_int_equal(uring_default_pinned_bytes(cpus[i]), charged);
		/* and serve without options chooses the same geometry */
		o.queue_depth = 0;
		o.max_write = 0;
		uring_geometry_for_options(&g, &o, cpus[i], 4096, URING_DEFAULT_CQES_OFF);
		assert_int_equal(g.depth, v.queue_depth);
		assert_int_equal(g.max_write, v.max_write);
		/* an explicit geometry too */
		v.queue_depth = o.queue_depth = 32;
		v.max_write = o.max_write = 256 * KiB;
		assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &charged), 0);
		uring_geometry_for_options(&g, &o, cpus[i], 4096, URING_DEFAULT_CQES_OFF);
		assert_int_equal(uring_pinned_bytes(&g), charged);
	}
}

/* Where the kernel has buffer pools: 1 MiB requests on every CPU count,
 * at most 8 MiB pinned per default volume (rings and headers; the pool
 * is not pinned), the pool laid out and not counted. */
static void test_pool_default_geometry(void **state)
{
	const struct uring_sizing s64 = { .ncpus = 64, .page_size = 4096, .cqes_off = URING_DEFAULT_CQES_OFF };
	struct uring_geometry g;
	unsigned n;

	(void)state;
	for (n = 1; n <= 1024; n *= 2) {
		const struct uring_sizing s = { .ncpus = n, .page_size = 4096, .cqes_off = URING_DEFAULT_CQES_OFF };
		uring_geometry_choose_pool(&g, &s, 0);
		assert_int_equal(g.max_write, 1024 * KiB);
		assert_true(g.payload_size >= 1024 * KiB);
		assert_true(g.depth >= 1 && g.payload_bufs == g.depth);
		assert_true(g.pool_unpinned);
		if (n <= 256)
			assert_true(uring_pinned_bytes(&g) <= URING_POOL_PINNED_BUDGET);
		assert_int_equal(uring_pinned_bytes(&g), uring_default_pool_pinned_bytes(n));
		/* what a queue locks: its headers, not the pool */
		assert_int_equal(uring_queue_lock_bytes(&g), (size_t)g.depth * g.header_size);
	}
	/* the bound: 64 CPUs, 1 MiB requests, <= 8 MiB pinned */
	uring_geometry_choose_pool(&g, &s64, 0);
	assert_int_equal(g.depth, 8);
	assert_int_equal(uring_pinned_bytes(&g), 64 * (8192 + 8 * 4096));	/* 2.5 MiB */
	assert_true(uring_default_pool_pinned_bytes(64) <= 8 * MiB);
	/* the stock default on 64 CPUs needs 128 KiB requests for 32 MiB */
	assert_true(uring_default_pinned_bytes(64) > uring_default_pool_pinned_bytes(64));
	/* a pinned (registered) pool counts again */
	g.pool_unpinned = false;
	assert_int_equal(uring_pinned_bytes(&g), 64 * (8192 + 8 * 4096 + 8 * 1024 * KiB));
}

static void test_devfuse_volume(void **state)
{
	struct policy_tenant t = { .name = "t", .io_uring = false };
	struct zcfsd d = { .ncpus = 64 };
	struct zcfsd_volume v = { .id = "v", .transport = POLICY_TRANSPORT_AUTO };
	uint64_t charged = 1;

	(void)state;
	zcfsd_resolve_geometry(64, zcfsd_uses_uring(v.transport, &t), &v.queue_depth, &v.max_write);
	/* /dev/fuse pins nothing and keeps the preferred max_write */
	assert_int_equal(v.queue_depth, URING_PREFERRED_DEPTH);
	assert_int_equal(v.max_write, URING_PREFERRED_MAX_WRITE);
	assert_int_equal(zcfsd_pinned_bytes(&d, &v, &t, &charged), 0);
	assert_int_equal(charged, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_per_cpu_count),
		cmocka_unit_test(test_default_is_within_budget_everywhere),
		cmocka_unit_test(test_given_values_are_kept),
		cmocka_unit_test(test_serve_and_zcfsd_agree),
		cmocka_unit_test(test_pool_default_geometry),
		cmocka_unit_test(test_devfuse_volume),
	};
	return cmocka_run_group_tests_name("geometry", tests, NULL, NULL);
}
