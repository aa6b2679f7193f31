/* What zcfsd makes of a new server's ready pipe (server/ready.c), against
 * real child processes that behave well and badly: 'R' is ready, garbage
 * and more than the byte are lies, a close without 'R' is told apart
 * from silence, a read never blocks, and an exit is described with its
 * status. The wait itself is an event of zcfsd's loop
 * (lifecycle/publish_wait.c, tests/integration/zcfsd/t_zcfsd_ready.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include "daemon/zcfsd/server/server_int.h"

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

/* Runs behaviour B, waits up to WAIT_MS for the pipe to become readable,
 * then reads it as zcfsd does. */
static int outcome(enum behaviour b, int wait_ms)
{
	struct pollfd p = { .events = POLLIN };
	struct child c;
	int r;

	start(&c, b);
	p.fd = c.ready_fd;
	(void)poll(&p, 1, wait_ms);
	r = zcfsd_ready_read(c.ready_fd);
	finish(&c);
	return r;
}

static void ready_byte_is_ready(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++)
		assert_int_equal(outcome(SAY_READY, 5000), 0);
	assert_int_equal(outcome(SAY_READY_LATE, 5000), 0);
	assert_int_equal(outcome(READY_THEN_EXIT, 5000), 0);
}

static void garbage_is_a_lie(void **state)
{
	(void)state;
	assert_int_equal(outcome(SAY_GARBAGE, 5000), -EPROTO);
	assert_int_equal(outcome(SAY_TOO_MUCH, 5000), -EPROTO);
}

/* Closed unwritten (EOF) is not silence: the caller awaits the exit. */
static void close_is_told_apart(void **state)
{
	(void)state;
	assert_int_equal(outcome(CLOSE_AND_LIVE, 5000), -EPIPE);
	assert_int_equal(outcome(EXIT_3, 5000), -EPIPE);
}

/* Nothing written: the read returns at once. */
static void silence_never_blocks(void **state)
{
	int64_t t0 = zcfsd_now_ms();

	(void)state;
	assert_int_equal(outcome(HOLD_SILENT, 0), -EAGAIN);
	assert_true(zcfsd_now_ms() - t0 < 2000);
}

static siginfo_t exit_of(enum behaviour b)
{
	struct pollfd p = { .events = POLLIN };
	struct child c;
	siginfo_t si = { 0 };

	start(&c, b);
	p.fd = c.pidfd;
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(waitid(P_PIDFD, (id_t)c.pidfd, &si, WEXITED | WNOWAIT), 0);
	finish(&c);
	return si;
}

static void exit_is_described(void **state)
{
	siginfo_t si;
	char how[96];

	(void)state;
	si = exit_of(EXIT_3);
	zcfsd_exit_describe(&si, how, sizeof(how));
	assert_string_equal(how, "exit status 3");
	si = exit_of(KILLED);
	zcfsd_exit_describe(&si, how, sizeof(how));
	assert_non_null(strstr(how, "killed by signal 31"));
	memset(&si, 0, sizeof(si));	/* not our child: unknown */
	zcfsd_exit_describe(&si, how, sizeof(how));
	assert_string_equal(how, "exit status unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ready_byte_is_ready),
		cmocka_unit_test(garbage_is_a_lie),
		cmocka_unit_test(close_is_told_apart),
		cmocka_unit_test(silence_never_blocks),
		cmocka_unit_test(exit_is_described),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
