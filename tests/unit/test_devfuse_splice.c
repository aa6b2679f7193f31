/* Spliced READ replies: the message written is header + exactly the data
 * the file holds there; anything that cannot be sent whole is left to the
 * regular reply with the pipe empty again. A regular file stands in for
 * /dev/fuse (splice writes the message to it the same way). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/serve/transport/devfuse_splice.h"
#include "kernel/zcfs_fuse_abi.h"

struct fixture {
	struct splice_pipe pipe;
	int file;	/* the backing file */
	int out;	/* stands in for /dev/fuse */
	size_t page;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char name[] = "/tmp/zcfs-splice-XXXXXX";

	assert_non_null(f);
	f->page = (size_t)getpagesize();
	assert_int_equal(splice_pipe_open(&f->pipe), 0);
	f->file = mkstemp(name);
	assert_true(f->file >= 0);
	unlink(name);
	strcpy(name, "/tmp/zcfs-splice-XXXXXX");
	f->out = mkstemp(name);
	assert_true(f->out >= 0);
	unlink(name);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	splice_pipe_close(&f->pipe);
	close(f->file);
	close(f->out);
	free(f);
	return 0;
}

/* Fills the backing file with size bytes of a pattern that depends on
 * the offset, so a shifted copy shows. */
static void fill(struct fixture *f, size_t size)
{
	char *buf = malloc(size);

	assert_non_null(buf);
	for (size_t i = 0; i < size; i++)
		buf[i] = (char)(i * 7 + i / 4096);
	assert_int_equal(pwrite(f->file, buf, size, 0), (ssize_t)size);
	free(buf);
}

static bool pipe_is_empty(struct fixture *f)
{
	char c;

	return read(f->pipe.rd, &c, 1) < 0 && errno == EAGAIN;
}

/* The message written to the stand-in device: header, then payload. */
static size_t read_message(struct fixture *f, struct fuse_out_header *oh, char *payload, size_t max)
{
	ssize_t n = pread(f->out, oh, sizeof(*oh), 0);

	assert_int_equal(n, sizeof(*oh));
	n = pread(f->out, payload, max, sizeof(*oh));
	assert_true(n >= 0);
	return (size_t)n;
}

static void check_payload(const char *payload, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++) {
		size_t at = (size_t)off + i;
		if (payload[i] != (char)(at * 7 + at / 4096))
			fail_msg("byte %zu of the payload (file offset %zu) differs", i, at);
	}
}

static void sends_header_and_data(void **state)
{
	struct fixture *f = *state;
	struct fuse_out_header oh;
	size_t sent = 0, len = 64 * f->page;
	char *payload = malloc(len + 1);

	fill(f, 128 * f->page);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 77, f->file, 8 * f->page, len, &sent), 1);
	assert_int_equal(sent, len);
	assert_int_equal(read_message(f, &oh, payload, len + 1), len);
	assert_int_equal(oh.len, sizeof(oh) + len);
	assert_int_equal(oh.error, 0);
	assert_int_equal(oh.unique, 77);
	check_payload(payload, len, 8 * f->page);
	assert_true(pipe_is_empty(f));
	free(payload);
}

static void clips_at_end_of_file(void **state)
{
	struct fixture *f = *state;
	struct fuse_out_header oh;
	size_t sent = 0, size = 100000;
	char payload[4096];

	fill(f, size);
	/* Unaligned offset, 1000 bytes before the end. */
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, size - 1000, 64 * 1024, &sent), 1);
	assert_int_equal(sent, 1000);
	assert_int_equal(read_message(f, &oh, payload, sizeof(payload)), 1000);
	assert_int_equal(oh.len, sizeof(oh) + 1000);
	check_payload(payload, 1000, size - 1000);
}

static void leaves_end_of_file_to_caller(void **state)
{
	struct fixture *f = *state;
	size_t sent = 0;

	fill(f, 8192);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 8192, 65536, &sent), 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 1 << 30, 65536, &sent), 0);
	assert_int_equal(lseek(f->out, 0, SEEK_END), 0);
	assert_true(pipe_is_empty(f));
}

static void leaves_what_does_not_fit(void **state)
{
	struct fixture *f = *state;
	size_t sent = 0, slots = f->pipe.slots;

	fill(f, (slots + 2) * f->page);
	/* All slots of data leave none for the header; one page less fits
	 * unless the offset is unaligned (one more page touched). */
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 0, slots * f->page, &sent), 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 1, (slots - 1) * f->page, &sent), 0);
	assert_int_equal(lseek(f->out, 0, SEEK_END), 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 0, (slots - 1) * f->page, &sent), 1);
	assert_int_equal(sent, (slots - 1) * f->page);
	assert_true(pipe_is_empty(f));
}

static void refused_reply_empties_pipe(void **state)
{
	struct fixture *f = *state;
	size_t sent = 0;
	int wo;

	fill(f, 65536);
	/* A device that refuses the message (here: not open for writing). */
	close(f->out);
	f->out = open("/dev/null", O_RDONLY);
	assert_true(f->out >= 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 0, 65536, &sent), 0);
	assert_true(pipe_is_empty(f));
	/* A backing fd that cannot be read (write-only) falls back too. */
	wo = open("/dev/null", O_WRONLY);
	assert_true(wo >= 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, wo, 0, 65536, &sent), 0);
	assert_true(pipe_is_empty(f));
	close(wo);
}

static void closed_pipe_sends_nothing(void **state)
{
	struct fixture *f = *state;
	size_t sent = 0;

	fill(f, 65536);
	splice_pipe_close(&f->pipe);
	assert_int_equal(f->pipe.slots, 0);
	assert_int_equal(splice_reply_read(&f->pipe, f->out, 5, f->file, 0, 65536, &sent), 0);
	assert_int_equal(lseek(f->out, 0, SEEK_END), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(sends_header_and_data, setup, teardown),
		cmocka_unit_test_setup_teardown(clips_at_end_of_file, setup, teardown),
		cmocka_unit_test_setup_teardown(leaves_end_of_file_to_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(leaves_what_does_not_fit, setup, teardown),
		cmocka_unit_test_setup_teardown(refused_reply_empties_pipe, setup, teardown),
		cmocka_unit_test_setup_teardown(closed_pipe_sends_nothing, setup, teardown),
	};
	return cmocka_run_group_tests_name("devfuse_splice", tests, NULL, NULL);
}
