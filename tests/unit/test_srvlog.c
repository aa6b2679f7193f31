/* A server's log pipe as zcfsd drains it (daemon/zcfsd/server/srvlog.c):
 * lines with time and volume in front, cut at SRVLOG_LINE_MAX, control
 * characters replaced, the rate limit with its dropped count and note,
 * rotation at SRVLOG_FILE_MAX, zcfsd's read budget per second, EOF. A real
 * pipe and a real log directory; no server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/zcfsd/server/server_int.h"

struct fx {
	char dir[64];
	char logs[96];
	struct zcfsd d;
	struct zcfsd_volume *v;
	int w;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->dir, "/tmp/zcfs-srvlog.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->logs, sizeof(f->logs), "%s/logs", f->dir);
	assert_int_equal(mkdir(f->logs, 0700), 0);
	f->d.state_dir = f->dir;
	assert_int_equal(zcfsd_loop_open(&f->d.loop), 0);
	f->v = zcfsd_volume_alloc();
	assert_non_null(f->v);
	f->v->id = strdup("v1");
	f->d.volumes = f->v;
	assert_int_equal(zcfsd_sup_attach(f->v), 0);
	assert_int_equal(zcfsd_srvlog_pipe(&f->d, f->v, &f->w), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	zcfsd_srvlog_close(&f->d, f->v);
	safe_close(f->w);
	zcfsd_volume_free(f->v);
	zcfsd_loop_close(&f->d.loop);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* The pipe's watch fires, as zcfsd's loop would call it. */
static void readable(struct fx *f)
{
	assert_true(f->v->sup->log.watch.on);
	f->v->sup->log.watch.fn(&f->d, f->v->sup->log.watch.obj, EPOLLIN);
}

static void put(struct fx *f, const char *s, size_t len)
{
	assert_int_equal(write(f->w, s, len), (ssize_t)len);
	readable(f);
}

static char *file(struct fx *f, const char *suffix, size_t *len)
{
	char path[160], *buf;
	FILE *fp;
	long n;

	snprintf(path, sizeof(path), "%s/v1.log%s", f->logs, suffix);
	fp = fopen(path, "re");
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

/* No rate limit for tests that need volume: a bucket that never refills
 * down to the burst (its refill time is in the future). */
static void unlimited(struct fx *f)
{
	f->v->sup->log.tokens = UINT64_MAX / 2;
	f->v->sup->log.refill_ms = INT64_MAX / 2;
}

static void lines_stamped_and_cleaned(void **state)
{
	struct fx *f = *state;
	char long_line[3000];
	size_t len;
	char *s;

	put(f, "zcfs-serve: serving /x transport=devfuse threads=1\nsecond\x1b[31m line\n", 68);
	s = file(f, "", &len);
	assert_non_null(s);
	assert_non_null(strstr(s, "Z v1: zcfs-serve: serving /x transport=devfuse"));
	assert_non_null(strstr(s, "Z v1: second?[31m line\n"));
	assert_string_equal(f->v->log.served_transport, "devfuse");
	free(s);
	/* a partial line waits for its newline */
	put(f, "no newline yet", 14);
	s = file(f, "", &len);
	assert_null(strstr(s, "no newline yet"));
	free(s);
	put(f, "\n", 1);
	s = file(f, "", &len);
	assert_non_null(strstr(s, "v1: no newline yet\n"));
	free(s);
	/* a long line: cut, marked, the rest dropped up to its newline */
	memset(long_line, 'L', sizeof(long_line));
	long_line[sizeof(long_line) - 1] = '\n';
	put(f, long_line, sizeof(long_line));
	put(f, "after\n", 6);
	s = file(f, "", &len);
	{
		char *cut = strstr(s, "[cut by zcfsd]");
		char *start = cut;
		assert_non_null(cut);
		while (start > s && start[-1] != '\n')
			start--;
		assert_true(cut - start < SRVLOG_LINE_MAX + 64);
		assert_non_null(strstr(cut, "\n"));
		assert_non_null(strstr(s, "v1: after\n"));
		assert_null(strstr(cut, "LLLL\n"));
	}
	assert_true(f->v->log.dropped_bytes >= sizeof(long_line) - SRVLOG_LINE_MAX);
	free(s);
}

static void rate_limited_and_counted(void **state)
{
	struct fx *f = *state;
	char line[200];
	size_t len, total = 0;
	char *s;

	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	/* 4 x the burst at once: the burst goes to the file, the rest is dropped */
	for (int i = 0; i < 4 * SRVLOG_BURST / (int)sizeof(line); i++) {
		put(f, line, sizeof(line));
		total += sizeof(line);
	}
	s = file(f, "", &len);
	assert_true(len < SRVLOG_BURST + SRVLOG_BURST / 4);
	assert_true(f->v->log.dropped_bytes >= total - SRVLOG_BURST - 4096);
	free(s);
	/* after the bucket refills, the next line says what was dropped */
	f->v->sup->log.refill_ms -= 2000;
	put(f, "later\n", 6);
	s = file(f, "", &len);
	assert_non_null(strstr(s, "bytes of this server's log dropped (over 16384 bytes/s)"));
	assert_non_null(strstr(s, "v1: later\n"));
	free(s);
}

static void rotated_at_the_cap(void **state)
{
	struct fx *f = *state;
	char chunk[4000];
	size_t len1 = 0, len0 = 0;
	char *s0, *s1;

	memset(chunk, 'r', sizeof(chunk));
	for (size_t i = 99; i < sizeof(chunk); i += 100)
		chunk[i] = '\n';
	unlimited(f);
	/* 3 MiB through the pipe, drained as it goes; zcfsd's per-second
	 * read budget is reset in between (it would stop reading at 4 MiB) */
	for (int i = 0; i < 3 * 1024 * 1024 / (int)sizeof(chunk); i++) {
		put(f, chunk, sizeof(chunk));
		f->v->sup->log.second_ms = 0;
	}
	s0 = file(f, "", &len0);
	s1 = file(f, ".1", &len1);
	assert_non_null(s0);
	assert_non_null(s1);
	assert_true(len0 <= SRVLOG_FILE_MAX);
	assert_true(len1 <= SRVLOG_FILE_MAX);
	assert_true(len1 > SRVLOG_FILE_MAX - 200);
	free(s0);
	free(s1);
}

static void read_budget_mutes_then_resumes(void **state)
{
	struct fx *f = *state;
	char chunk[65536];
	int rounds = 0;

	memset(chunk, 'z', sizeof(chunk));	/* no newline: one cut line */
	unlimited(f);
	while (!f->v->sup->log.muted && rounds++ < 200) {
		ssize_t n = write(f->w, chunk, sizeof(chunk));
		assert_true(n > 0);
		readable(f);
	}
	assert_true(f->v->sup->log.muted);
	assert_true(rounds <= SRVLOG_DISCARD_MAX / (int)sizeof(chunk) + 2);
	/* Watched again by a deadline at the end of its second. */
	assert_true(zcfsd_deadline_armed(&f->v->sup->log.unmute));
	assert_int_equal(f->v->sup->log.unmute.due_ms, f->v->sup->log.second_ms + 1000);
	assert_true(zcfsd_loop_timeout_ms(&f->d) >= 0);
	zcfsd_loop_run_due(&f->d, f->v->sup->log.second_ms + 999);
	assert_true(f->v->sup->log.muted);	/* not before its second is over */
	zcfsd_loop_run_due(&f->d, f->v->sup->log.second_ms + 1000);
	assert_false(f->v->sup->log.muted);
	assert_false(zcfsd_deadline_armed(&f->v->sup->log.unmute));
}

static void eof_closes(void **state)
{
	struct fx *f = *state;
	size_t len;
	char *s;

	assert_int_equal(write(f->w, "last words\n", 11), 11);
	f->w = safe_close(f->w);
	readable(f);
	assert_int_equal(f->v->sup->log.rfd, -1);
	s = file(f, "", &len);
	assert_non_null(strstr(s, "v1: last words\n"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lines_stamped_and_cleaned, setup, teardown),
		cmocka_unit_test_setup_teardown(rate_limited_and_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(rotated_at_the_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(read_budget_mutes_then_resumes, setup, teardown),
		cmocka_unit_test_setup_teardown(eof_closes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
