/* zcfsd's wait for a new server's readiness byte (zcfsd_ready.h) against
 * real child processes that behave well and badly: 'R' is ready, an exit
 * is reported with its status, garbage, a close without 'R' and silence
 * are not ready, and no wait outlasts its timeout by more than slack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemon/zcfsd/server/server.h"

/* Slack for a loaded 2-CPU machine; the property is "bounded". */
#define SLACK_MS 2000

enum behaviour { SAY_READY, SAY_READY_LATE, SAY_GARBAGE, SAY_TOO_MUCH, EXIT_3, KILLED,
		 CLOSE_AND_LIVE, HOLD_SILENT, READY_THEN_EXIT };

struct child {
	pid_t pid;
	int pidfd;
	int ready_fd;
};

static void start(struct child *c, enum behaviour b)
{
	int y[2];

	assert_int_equal(zcfsd_ready_pipe(y), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(y[0]);
		switch (b) {
		case SAY_READY: (void)!write(y[1], "R", 1); pause(); break;
		case SAY_READY_LATE: usleep(150 * 1000); (void)!write(y[1], "R", 1); pause(); break;
		case SAY_GARBAGE: (void)!write(y[1], "X", 1); pause(); break;
		case SAY_TOO_MUCH: (void)!write(y[1], "READY\n", 6); pause(); break;
		case EXIT_3: _exit(3);
		case KILLED: signal(SIGSYS, SIG_DFL); raise(SIGSYS); break;
		case CLOSE_AND_LIVE: close(y[1]); pause(); break;
		case HOLD_SILENT: pause(); break;
		case READY_THEN_EXIT: (void)!write(y[1], "R", 1); _exit(0);
		}
		_exit(99);
	}
	close(y[1]);
	c->ready_fd = y[0];
	c->pidfd = pidfd_open(c->pid, 0);
	assert_true(c->pidfd >= 0);
}

static void finish(struct child *c)
{
	kill(c->pid, SIGKILL);
	(void)waitpid(c->pid, NULL, 0);
	close(c->pidfd);
	close(c->ready_fd);
}

/* Runs behaviour B, checks the answer and how long it took. */
static siginfo_t expect(enum behaviour b, int timeout_ms, int want, int64_t min_ms)
{
	struct child c;
	siginfo_t si;
	int64_t t0, took;
	int r;

	start(&c, b);
	t0 = zcfsd_now_ms();
	r = zcfsd_ready_wait(c.ready_fd, c.pidfd, timeout_ms, &si);
	took = zcfsd_now_ms() - t0;
	assert_int_equal(r, want);
	assert_true(took >= min_ms);
	assert_true(took <= timeout_ms + SLACK_MS);
	finish(&c);
	return si;
}

static void ready_byte_is_ready(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++)
		expect(SAY_READY, 5000, 0, 0);
	expect(SAY_READY_LATE, 5000, 0, 100);
}

static void exit_reports_status(void **state)
{
	siginfo_t si;
	char how[96];

	(void)state;
	si = expect(EXIT_3, 5000, -ECHILD, 0);
	assert_int_equal(si.si_code, CLD_EXITED);
	assert_int_equal(si.si_status, 3);
	zcfsd_exit_describe(&si, how, sizeof(how));
	assert_string_equal(how, "exit status 3");
	si = expect(KILLED, 5000, -ECHILD, 0);
	assert_true(si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED);
	assert_int_equal(si.si_status, SIGSYS);
	zcfsd_exit_describe(&si, how, sizeof(how));
	assert_non_null(strstr(how, "killed by signal 31"));
}

/* The child is still unreaped after the wait: the caller's reaping
 * (server_forget) still gets its status. */
static void exit_is_left_unreaped(void **state)
{
	struct child c;
	siginfo_t si;
	int status;

	(void)state;
	start(&c, EXIT_3);
	assert_int_equal(zcfsd_ready_wait(c.ready_fd, c.pidfd, 5000, &si), -ECHILD);
	assert_int_equal(waitpid(c.pid, &status, 0), c.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	close(c.pidfd);
	close(c.ready_fd);
}

static void garbage_is_not_ready(void **state)
{
	(void)state;
	expect(SAY_GARBAGE, 5000, -EPROTO, 0);
	expect(SAY_TOO_MUCH, 5000, -EPROTO, 0);
}

static void close_without_ready_is_not_ready(void **state)
{
	(void)state;
	/* alive after EOF: only the timeout tells, and then it is a lie */
	expect(CLOSE_AND_LIVE, 300, -EPROTO, 300);
}

static void silence_times_out(void **state)
{
	(void)state;
	expect(HOLD_SILENT, 300, -ETIMEDOUT, 300);
	expect(HOLD_SILENT, 0, -ETIMEDOUT, 0);
}

/* Ready then gone at once: whichever the wait sees first, never a hang. */
static void ready_then_exit_is_either(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++) {
		struct child c;
		siginfo_t si;
		int r;

		start(&c, READY_THEN_EXIT);
		r = zcfsd_ready_wait(c.ready_fd, c.pidfd, 5000, &si);
		assert_true(r == 0 || r == -ECHILD);
		finish(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ready_byte_is_ready),
		cmocka_unit_test(exit_reports_status),
		cmocka_unit_test(exit_is_left_unreaped),
		cmocka_unit_test(garbage_is_not_ready),
		cmocka_unit_test(close_without_ready_is_not_ready),
		cmocka_unit_test(silence_times_out),
		cmocka_unit_test(ready_then_exit_is_either),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
