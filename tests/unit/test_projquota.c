/* The pure parts of project quotas (daemon/zcfsd/mounts/projid.c): which
 * id a new volume gets, how two zcfsd claiming on one file system at once
 * never end with the same id, and the limits its size gives. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/zcfsd/mounts/projquota.h"

static void test_pick_first(void **state)
{
	(void)state;
	assert_int_equal(zcfsd_projid_pick(NULL, 0, 0), ZCFSD_PROJID_MIN);
	/* below the range: from its start; ids of others below it do not matter */
	uint32_t low[] = { 1, 2, 100 };
	assert_int_equal(zcfsd_projid_pick(low, 3, 5), ZCFSD_PROJID_MIN);
}

static void test_pick_skips_used(void **state)
{
	uint32_t used[] = { ZCFSD_PROJID_MIN + 1, ZCFSD_PROJID_MIN, ZCFSD_PROJID_MIN + 3 };

	(void)state;
	/* any order; the lowest free one */
	assert_int_equal(zcfsd_projid_pick(used, 3, 0), ZCFSD_PROJID_MIN + 2);
	/* from: past an id the file system said is busy */
	assert_int_equal(zcfsd_projid_pick(used, 3, ZCFSD_PROJID_MIN + 3), ZCFSD_PROJID_MIN + 4);
	/* a freed id (volume deleted) is handed out again */
	uint32_t gap[] = { ZCFSD_PROJID_MIN, ZCFSD_PROJID_MIN + 2 };
	assert_int_equal(zcfsd_projid_pick(gap, 2, 0), ZCFSD_PROJID_MIN + 1);
}

static void test_pick_exhausted(void **state)
{
	uint32_t used[] = { ZCFSD_PROJID_MAX - 1, ZCFSD_PROJID_MAX };

	(void)state;
	assert_int_equal(zcfsd_projid_pick(used, 2, ZCFSD_PROJID_MAX - 1), 0);
	assert_int_equal(zcfsd_projid_pick(used, 2, ZCFSD_PROJID_MAX - 2), ZCFSD_PROJID_MAX - 2);
	assert_int_equal(zcfsd_projid_pick(NULL, 0, ZCFSD_PROJID_MAX), ZCFSD_PROJID_MAX);
	assert_int_equal(zcfsd_projid_pick(NULL, 0, 0xffffffffu), 0);
}

static void test_limits(void **state)
{
	struct zcfsd_proj_limits l;

	(void)state;
	zcfsd_proj_limits_of(1ULL << 30, &l);
	assert_int_equal(l.bytes, 1ULL << 30);
	assert_int_equal(l.basic_blocks, 2097152);
	assert_int_equal(l.kib, 1048576);
	assert_int_equal(l.inodes, 262144);
	/* rounded up, never below the size */
	zcfsd_proj_limits_of(1000, &l);
	assert_int_equal(l.basic_blocks, 2);
	assert_int_equal(l.kib, 1);
	assert_int_equal(l.inodes, ZCFSD_PROJ_INODES_MIN);
	zcfsd_proj_limits_of(16ULL << 20, &l);
	assert_int_equal(l.basic_blocks, 32768);
	assert_int_equal(l.inodes, 4096);
	/* the largest size the policy allows (1 PiB) */
	zcfsd_proj_limits_of(1ULL << 50, &l);
	assert_int_equal(l.basic_blocks, 1ULL << 41);
	assert_int_equal(l.inodes, 1ULL << 38);
}

/* A file system two claimants share: the project id of each one's
 * volume directory, and ids someone else uses. A hook runs the other
 * claimant in the middle of this one's claim, as a second zcfsd would. */
struct fakefs {
	uint32_t dir[2];
	uint32_t foreign;	/* an id used by nobody of ours (0: none) */
	int records;
};
struct claimant {
	struct fakefs *fs;
	int me;
	const char *hook_at;	/* "record" / "charged": run HOOK there, once */
	void (*hook)(struct claimant *c);
	struct claimant *other;
	uint32_t got;
	int rc;
};

static uint64_t fs_count(const struct fakefs *fs, uint32_t id)
{
	return (uint64_t)(fs->dir[0] == id) + (fs->dir[1] == id) + (fs->foreign == id);
}

static void maybe_hook(struct claimant *c, const char *at)
{
	if (c->hook && !strcmp(c->hook_at, at)) {
		void (*h)(struct claimant *) = c->hook;

		c->hook = NULL;
		h(c);
	}
}

static bool f_busy(void *p, uint32_t id)
{
	struct claimant *c = p;

	return fs_count(c->fs, id) > 0;
}

static int f_record(void *p, uint32_t id)
{
	struct claimant *c = p;

	(void)id;
	c->fs->records++;
	maybe_hook(c, "record");
	return 0;
}

static int f_assign(void *p, uint32_t id)
{
	struct claimant *c = p;

	c->fs->dir[c->me] = id;
	return 0;
}

static int f_charged(void *p, uint32_t id, uint64_t *inodes)
{
	struct claimant *c = p;

	maybe_hook(c, "charged");
	*inodes = fs_count(c->fs, id);
	return 0;
}

static void run_claim(struct claimant *c, uint32_t stride)
{
	const struct zcfsd_projid_ops ops = { .ctx = c, .busy = f_busy, .record = f_record,
					      .assign = f_assign, .charged = f_charged };

	c->rc = zcfsd_projid_claim(NULL, 0, stride, &ops, &c->got);
}

/* the other zcfsd claims from start to end right here */
static void other_whole(struct claimant *c)
{
	run_claim(c->other, 3);
}

/* the other zcfsd passed its busy check before this one assigned: both
 * directories carry the id when the other looks */
static void other_assigned_too(struct claimant *c)
{
	c->fs->dir[c->other->me] = c->fs->dir[c->me];
}

static void test_claim_alone(void **state)
{
	struct fakefs fs = { .foreign = ZCFSD_PROJID_MIN };
	struct claimant a = { .fs = &fs, .me = 0 };

	(void)state;
	run_claim(&a, 1);
	/* a busy id (someone else's) is skipped before anything is recorded */
	assert_int_equal(a.rc, 0);
	assert_int_equal(a.got, ZCFSD_PROJID_MIN + 1);
	assert_int_equal(fs.dir[0], a.got);
	assert_int_equal(fs.records, 1);
}

/* B picks, records, sets and keeps the id A picked while A records it:
 * A sees two directories on it and moves on (without the check after
 * setting it, both had kept ZCFSD_PROJID_MIN) */
static void test_claim_race_before_assign(void **state)
{
	struct fakefs fs = { 0 };
	struct claimant a = { .fs = &fs, .me = 0 }, b = { .fs = &fs, .me = 1 };

	(void)state;
	a.other = &b;
	a.hook_at = "record";
	a.hook = other_whole;
	run_claim(&a, 1);
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	assert_int_equal(b.got, ZCFSD_PROJID_MIN);
	assert_int_not_equal(a.got, b.got);
	assert_int_equal(fs.dir[0], a.got);
	assert_int_equal(fs.dir[1], b.got);
	assert_int_equal(fs_count(&fs, a.got), 1);
}

/* both set the id before either looks: the one that looks first (B) sees
 * two and gives it up; A, looking after, sees only its own */
static void test_claim_race_both_assigned(void **state)
{
	struct fakefs fs = { 0 };
	struct claimant a = { .fs = &fs, .me = 0 }, b = { .fs = &fs, .me = 1 };

	(void)state;
	a.other = &b;
	b.other = &a;
	a.hook_at = "record";
	a.hook = other_whole;
	b.hook_at = "charged";
	b.hook = other_assigned_too;
	run_claim(&a, 1);
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	assert_int_equal(a.got, ZCFSD_PROJID_MIN);
	assert_int_equal(b.got, ZCFSD_PROJID_MIN + 3);	/* its stride past the lost one */
	assert_int_equal(fs_count(&fs, a.got), 1);
	assert_int_equal(fs_count(&fs, b.got), 1);
}

static int fail_record(void *p, uint32_t id)
{
	(void)p;
	(void)id;
	return -EIO;
}

static int always_two(void *p, uint32_t id, uint64_t *inodes)
{
	(void)p;
	(void)id;
	*inodes = 2;
	return 0;
}

static void test_claim_errors(void **state)
{
	struct fakefs fs = { 0 };
	struct claimant a = { .fs = &fs, .me = 0 };
	struct zcfsd_projid_ops ops = { .ctx = &a, .busy = f_busy, .record = fail_record,
					.assign = f_assign, .charged = f_charged };
	uint32_t id = 7;

	(void)state;
	/* nothing set on disk when the id could not be recorded */
	assert_int_equal(zcfsd_projid_claim(NULL, 0, 1, &ops, &id), -EIO);
	assert_int_equal(id, 0);
	assert_int_equal(fs.dir[0], 0);
	/* lost every time (a claimant that never gives up the ids it sets):
	 * -ENOSPC after a bounded number of tries, our directory without one */
	ops.record = f_record;
	ops.charged = always_two;
	assert_int_equal(zcfsd_projid_claim(NULL, 0, 1, &ops, &id), -ENOSPC);
	assert_int_equal(id, 0);
	assert_int_equal(fs.dir[0], 0);
	assert_int_equal(fs.records, 256);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick_first),
		cmocka_unit_test(test_pick_skips_used),
		cmocka_unit_test(test_pick_exhausted),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_claim_alone),
		cmocka_unit_test(test_claim_race_before_assign),
		cmocka_unit_test(test_claim_race_both_assigned),
		cmocka_unit_test(test_claim_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
