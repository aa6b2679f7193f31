/* Buffer-pool / zero-copy bookkeeping without the patched kernel: the
 * decision and its reasons, the 7.46 command-area bytes at the offsets of
 * ../shared/docs/fuse-uring-abi.md section 2.4, pool ids and accounting,
 * payload classification, the open-reply mark, and the pinned-bytes
 * figure with pools. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/serve/transport/uring_bufpool.h"
#include "daemon/serve/transport/uring_geometry.h"

static uint64_t rd(const uint8_t *a, size_t off, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, a + off, n);	/* little-endian x86-64 */
	return v;
}

static const struct uring_ext_facts patched = {
	.ring_on = true, .minor = 46, .offered = FUSE_HAS_IO_URING_BUFPOOL | FUSE_OVER_IO_URING,
	.cap_sys_admin = true, .memlock_ok = true,
};

static void test_decide_stock_kernel(void **state)
{
	struct uring_ext_facts f = patched;
	struct uring_ext_plan p;

	(void)state;
	f.minor = 45;
	f.offered = FUSE_OVER_IO_URING;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_false(p.pool);
	assert_false(p.zero_copy);
	assert_string_equal(p.pool_reason, "kernel_protocol_7.45");
	assert_string_equal(p.zc_reason, "no_buffer_pool");
	/* Demanded: a fatal error, with the same reason. */
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_ON, ZCFS_ZEROCOPY_AUTO, &f, &p), -EOPNOTSUPP);
	assert_string_equal(p.pool_reason, "kernel_protocol_7.45");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_ON, &f, &p), -EOPNOTSUPP);
	/* 7.46 but the flag missing (a fork numbering bits differently). */
	f.minor = 46;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_string_equal(p.pool_reason, "kernel_no_FUSE_HAS_IO_URING_BUFPOOL");
	f = patched;
	f.ring_on = false;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_REGISTERED, ZCFS_ZEROCOPY_OFF, &f, &p), -EOPNOTSUPP);
	assert_string_equal(p.pool_reason, "transport_devfuse");
}

static void test_decide_patched_kernel(void **state)
{
	struct uring_ext_facts f = patched;
	struct uring_ext_plan p;

	(void)state;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_true(p.pool && p.registered && p.zero_copy);
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_ON, ZCFS_ZEROCOPY_OFF, &f, &p), 0);
	assert_true(p.pool);
	assert_false(p.registered);
	assert_false(p.zero_copy);
	assert_string_equal(p.zc_reason, "disabled_by_option");
	/* memlock too low: auto pools stay unregistered, registered fails. */
	f.memlock_ok = false;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_OFF, &f, &p), 0);
	assert_true(p.pool);
	assert_false(p.registered);
	assert_string_equal(p.pool_reason, "auto_unregistered_memlock_too_low");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_REGISTERED, ZCFS_ZEROCOPY_OFF, &f, &p), -EOPNOTSUPP);
	/* Zero-copy needs CAP_SYS_ADMIN, and a server able to drop it. */
	f = patched;
	f.cap_sys_admin = false;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_true(p.pool);
	assert_false(p.zero_copy);
	assert_string_equal(p.zc_reason, "no_CAP_SYS_ADMIN");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_ON, &f, &p), -EOPNOTSUPP);
	f = patched;
	f.sandbox = true;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_string_equal(p.zc_reason, "sandbox_cannot_drop_CAP_SYS_ADMIN");
	f = patched;
	f.passthrough = true;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_string_equal(p.zc_reason, "passthrough_keeps_CAP_SYS_ADMIN");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_OFF, ZCFS_ZEROCOPY_AUTO, &patched, &p), 0);
	assert_false(p.pool || p.zero_copy);
	assert_string_equal(p.pool_reason, "disabled_by_option");
}

/* On a ring holder's rings (which refuse buffer registration) a pool is
 * unregistered whatever memlock allows, and zero-copy is off; the stock
 * kernel's reasons come first. */
static void test_decide_holder_rings(void **state)
{
	struct uring_ext_facts f = patched;
	struct uring_ext_plan p;

	(void)state;
	f.holder_rings = true;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_OFF, &f, &p), 0);
	assert_true(p.pool);
	assert_false(p.registered || p.zero_copy);
	assert_string_equal(p.pool_reason, "holder_rings_unregistered");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_ON, ZCFS_ZEROCOPY_AUTO, &f, &p), 0);
	assert_true(p.pool);
	assert_false(p.registered || p.zero_copy);
	assert_string_equal(p.zc_reason, "holder_rings");
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_REGISTERED, ZCFS_ZEROCOPY_OFF, &f, &p), -EOPNOTSUPP);
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_ON, &f, &p), -EOPNOTSUPP);
	f.minor = 45;
	assert_int_equal(uring_ext_decide(ZCFS_BUFPOOL_AUTO, ZCFS_ZEROCOPY_OFF, &f, &p), 0);
	assert_false(p.pool);
	assert_string_equal(p.pool_reason, "kernel_protocol_7.45");
}

/* Offsets from the doc: flags @0, commit_id @8, qid @16, padding @18..23,
 * bufpool.uaddr @24, bufpool.len @32, bufpool.reserved @36, or
 * ent_zero_copy_buf_index @24; nothing else in the 80 bytes. */
static void test_cmd_area_bytes(void **state)
{
	uint8_t a[ZCFS_URING_CMD_AREA_SZ];
	size_t i;

	(void)state;
	memset(a, 0xaa, sizeof(a));
	uring_cmd_add_queue(a, 3, true);
	assert_int_equal(rd(a, 0, 8), 1);	/* FUSE_URING_ZERO_COPY = 1<<0 */
	assert_int_equal(rd(a, 16, 2), 3);
	for (i = 18; i < sizeof(a); i++)
		assert_int_equal(a[i], 0);
	uring_cmd_add_queue(a, 0, false);
	assert_int_equal(rd(a, 0, 8), 0);

	memset(a, 0xaa, sizeof(a));
	assert_int_equal(uring_cmd_add_bufpool(a, 1, 0x7f0000001000ULL, 8u << 20), 0);
	assert_int_equal(rd(a, 0, 8), 0);	/* flags must be 0 */
	assert_int_equal(rd(a, 8, 8), 0);
	assert_int_equal(rd(a, 16, 2), 1);
	assert_int_equal(rd(a, 24, 8), 0x7f0000001000ULL);
	assert_int_equal(rd(a, 32, 4), 8u << 20);
	assert_int_equal(rd(a, 36, 4), 0);	/* reserved */
	for (i = 40; i < sizeof(a); i++)
		assert_int_equal(a[i], 0);
	assert_int_equal(uring_cmd_add_bufpool(a, 1, 0x1000, 0), -EINVAL);
	assert_int_equal(uring_cmd_add_bufpool(a, 1, 0x1000, 1ULL << 32), -EOVERFLOW);

	memset(a, 0xaa, sizeof(a));
	uring_cmd_register(a, 2, 5);
	assert_int_equal(rd(a, 0, 8), 0);
	assert_int_equal(rd(a, 16, 2), 2);
	assert_int_equal(rd(a, 24, 2), 5);
	assert_int_equal(rd(a, 26, 8), 0);

	memset(a, 0xaa, sizeof(a));
	uring_cmd_commit(a, 1, 0x1122334455667788ULL);
	assert_int_equal(rd(a, 8, 8), 0x1122334455667788ULL);
	assert_int_equal(rd(a, 16, 2), 1);
	assert_int_equal(rd(a, 24, 8), 0);
	assert_int_equal(ZCFS_URING_CMD_ADD_QUEUE, 3);
	assert_int_equal(ZCFS_URING_CMD_ADD_BUFPOOL, 4);
	/* ent_in_out.offset sits at header byte 276. */
	assert_int_equal(offsetof(struct zcfs_uring_req_header, ring_ent_in_out.offset), 276);
}

static void test_fixed_table(void **state)
{
	(void)state;
	assert_int_equal(URING_FIXED_POOL_INDEX, 0);
	assert_int_equal(uring_fixed_entry_slot(0), 1);
	assert_int_equal(uring_fixed_entry_slot(7), 8);
	assert_int_equal(uring_fixed_table_size(8), 9);
}

static void test_pool_ids(void **state)
{
	struct bufpool p;
	unsigned id, i;

	(void)state;
	assert_int_equal(bufpool_init(&p, 0, 4096), -EINVAL);
	assert_int_equal(bufpool_init(&p, 1024, 16u << 20), -EOVERFLOW);	/* 16 GiB > u32 offsets */
	assert_int_equal(bufpool_init(&p, 70, 8192), 0);	/* more than one bitmap word */
	/* Lowest free first, like the kernel. */
	for (i = 0; i < 70; i++) {
		assert_int_equal(bufpool_alloc(&p, &id), 0);
		assert_int_equal(id, i);
	}
	assert_int_equal(bufpool_alloc(&p, &id), -ENOBUFS);
	assert_int_equal(p.in_use, 70);
	assert_int_equal(bufpool_release(&p, 65), 0);
	assert_int_equal(bufpool_release(&p, 3), 0);
	assert_int_equal(bufpool_release(&p, 3), -EINVAL);	/* not held */
	assert_int_equal(bufpool_release(&p, 70), -EINVAL);	/* out of range */
	assert_int_equal(bufpool_alloc(&p, &id), 0);
	assert_int_equal(id, 3);
	assert_int_equal(p.peak, 70);
	assert_int_equal(p.in_use, 69);
	assert_int_equal(bufpool_offset(&p, 65), 65 * 8192);
	bufpool_done(&p);
}

static void test_pool_claims(void **state)
{
	struct bufpool p;
	unsigned id;

	(void)state;
	assert_int_equal(bufpool_init(&p, 4, 1u << 20), 0);
	assert_int_equal(bufpool_claim(&p, 2u << 20, &id), 0);
	assert_int_equal(id, 2);
	/* Two entries can never hold one buffer. */
	assert_int_equal(bufpool_claim(&p, 2u << 20, &id), -EBUSY);
	/* Not a buffer's start, or beyond the pool. */
	assert_int_equal(bufpool_claim(&p, (1u << 20) + 4096, &id), -EPROTO);
	assert_int_equal(bufpool_claim(&p, 4u << 20, &id), -EPROTO);
	assert_int_equal(p.refused, 3);
	assert_int_equal(bufpool_claim(&p, 0, &id), 0);
	assert_int_equal(p.in_use, 2);
	assert_int_equal(p.claims, 2);
	assert_int_equal(bufpool_release(&p, 2), 0);
	assert_int_equal(bufpool_claim(&p, 2u << 20, &id), 0);
	assert_int_equal(bufpool_bytes(4, 1u << 20), 4u << 20);
	bufpool_done(&p);
}

static void test_classify(void **state)
{
	enum uring_payload_kind k;

	(void)state;
	/* No args beyond op_in, no reply payload: no buffer. */
	assert_int_equal(uring_classify_payload(FUSE_RELEASE, 0, 0, false, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_NONE);
	assert_int_equal(uring_classify_payload(FUSE_FSYNC, 0, 0, true, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_NONE);
	/* A reply with payload needs the buffer even with no input payload. */
	assert_int_equal(uring_classify_payload(FUSE_GETATTR, 0, 0, false, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_COPY);
	/* A name in the payload. */
	assert_int_equal(uring_classify_payload(FUSE_UNLINK, 0, 6, false, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_COPY);
	/* Copied READ/WRITE (not zero-copy for this file). */
	assert_int_equal(uring_classify_payload(FUSE_READ, 0, 0, true, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_COPY);
	assert_int_equal(uring_classify_payload(FUSE_WRITE, 0, 4096, true, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_COPY);
	/* Zero-copy deliveries. */
	assert_int_equal(uring_classify_payload(FUSE_READ, FUSE_URING_ENT_ZERO_COPY, 0, true, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_ZC_READ);
	assert_false(uring_payload_has_buffer(k));
	assert_int_equal(uring_classify_payload(FUSE_WRITE, FUSE_URING_ENT_ZERO_COPY, 1 << 20, true, &k), 0);
	assert_int_equal(k, URING_PAYLOAD_ZC_WRITE);
	assert_true(uring_payload_has_buffer(k));	/* fuse_write_out goes back through it */
	/* The flag where it cannot be. */
	assert_int_equal(uring_classify_payload(FUSE_READ, FUSE_URING_ENT_ZERO_COPY, 0, false, &k), -EPROTO);
	assert_int_equal(uring_classify_payload(FUSE_READDIR, FUSE_URING_ENT_ZERO_COPY, 0, true, &k), -EPROTO);
	assert_false(uring_op_reply_has_payload(FUSE_FLUSH));
	assert_true(uring_op_reply_has_payload(FUSE_LOOKUP));
	assert_true(uring_op_reply_has_payload(9999));
}

static void test_open_mark(void **state)
{
	uint8_t buf[sizeof(struct fuse_entry_out) + sizeof(struct zcfs_open_out)];
	struct zcfs_open_out o = { .open_flags = FOPEN_KEEP_CACHE };

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &o, sizeof(o));
	assert_int_equal(uring_mark_zero_copy_open(FUSE_OPEN, buf, sizeof(o)), 1);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.open_flags, FOPEN_KEEP_CACHE | FOPEN_IO_URING_ZERO_COPY);
	assert_int_equal(FOPEN_IO_URING_ZERO_COPY, 1 << 8);
	/* CREATE: open_out after the entry_out. */
	o.open_flags = 0;
	memcpy(buf + sizeof(struct fuse_entry_out), &o, sizeof(o));
	assert_int_equal(uring_mark_zero_copy_open(FUSE_CREATE, buf, sizeof(buf)), 1);
	memcpy(&o, buf + sizeof(struct fuse_entry_out), sizeof(o));
	assert_int_equal(o.open_flags, FOPEN_IO_URING_ZERO_COPY);
	/* Passthrough opens stay as they are. */
	o.open_flags = FOPEN_PASSTHROUGH;
	memcpy(buf, &o, sizeof(o));
	assert_int_equal(uring_mark_zero_copy_open(FUSE_OPEN, buf, sizeof(o)), 0);
	memcpy(&o, buf, sizeof(o));
	assert_int_equal(o.open_flags, FOPEN_PASSTHROUGH);
	assert_int_equal(uring_mark_zero_copy_open(FUSE_CREATE, buf, sizeof(o)), -EINVAL);
	assert_int_equal(uring_mark_zero_copy_open(FUSE_GETATTR, buf, sizeof(buf)), 0);
}

static void test_pinned_with_pools(void **state)
{
	struct uring_geometry g;
	uint64_t stock;

	(void)state;
	/* 2 queues, depth 8, 1 MiB payloads: ring 8192 bytes per queue. */
	uring_geometry_init(&g, 2, 8, 1u << 20, 256, 4096, 64);
	stock = uring_pinned_bytes(&g);
	assert_int_equal(stock, 2 * (8192 + 8 * (4096 + (1u << 20))));
	/* A pool of 3: headers for 8 entries, 3 payload buffers. */
	uring_geometry_set_pool(&g, 3);
	assert_int_equal(uring_queue_buf_bytes(&g), 8 * 4096 + 3 * (1u << 20));
	assert_int_equal(uring_pinned_bytes(&g), 2 * (8192 + 8 * 4096 + 3 * (1u << 20)));
	/* auto with a bigger pool than depth: the budget covers the pool. */
	uring_geometry_init(&g, 2, 8, 1u << 20, 256, 4096, 64);
	uring_geometry_allow_pool(&g, 12);
	assert_int_equal(uring_queue_buf_bytes(&g), 8 * (4096 + (1u << 20)));	/* laid out stock */
	assert_int_equal(uring_pinned_bytes(&g), 2 * (8192 + 8 * 4096 + 12 * (1u << 20)));
	/* ... and a smaller one leaves the stock figure. */
	uring_geometry_init(&g, 2, 8, 1u << 20, 256, 4096, 64);
	uring_geometry_allow_pool(&g, 4);
	assert_int_equal(uring_pinned_bytes(&g), stock);
	uring_geometry_set_stock(&g);
	assert_int_equal(uring_pinned_bytes(&g), stock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_stock_kernel),
		cmocka_unit_test(test_decide_patched_kernel),
		cmocka_unit_test(test_decide_holder_rings),
		cmocka_unit_test(test_cmd_area_bytes),
		cmocka_unit_test(test_fixed_table),
		cmocka_unit_test(test_pool_ids),
		cmocka_unit_test(test_pool_claims),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_open_mark),
		cmocka_unit_test(test_pinned_with_pools),
	};

	return cmocka_run_group_tests_name("bufpool", tests, NULL, NULL);
}
