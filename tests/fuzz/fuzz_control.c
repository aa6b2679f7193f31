/* libFuzzer target: arbitrary bytes as what a client writes on zcfsd's
 * control socket, through the real socket code (accept with the
 * SO_PEERCRED check, newline framing with its 64 KiB cap, the envelope
 * checks, zcfsd_dispatch and every method's parameter and path checks)
 * against a daemon whose policy, state and storage live in a private
 * tmpfs.
 *
 * No real mounts: the fuzzer runs in its own mount namespace, and mount(2)
 * and umount2(2) are replaced below by stubs that fail, so a publish gets
 * as far as the mount (target checks, budget, target and storage dirs)
 * and must then undo everything. Whatever the bytes, each answer must be
 * one line of JSON carrying either a result or a known error code, and a
 * failed request must leave the directories as they were. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include "common/log.h"
#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "daemon/zcfsd/model/loop.h"
#include "daemon/zcfsd/protocol/protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Fixed paths so that seeds can name valid targets; private to this
 * process (tmpfs in our own mount namespace). */
#define BASE "/srv/zcfs-fuzz"

/* The executable's definitions win over libc's for every caller in it
 * (zcfsd's sources are linked in): no request can mount or unmount. */
int mount(const char *source, const char *target, const char *fstype, unsigned long flags,
	  const void *data)
{
	(void)source; (void)target; (void)fstype; (void)flags; (void)data;
	errno = EPERM;
	return -1;
}

int umount2(const char *target, int flags)
{
	(void)target; (void)flags;
	errno = EINVAL;
	return -1;
}

static struct zcfsd d;

/* The client side. An input that ends in a newline leaves zcfsd's
 * framing buffer empty, so the next input may use the same connection:
 * a new one per input (socket, accept, zcfsd's 64 KiB client buffer,
 * close) cost about a third of a run. Any other input ends the stream
 * (zcfsd must then answer what is complete and close), as does zcfsd
 * hanging up; the next input connects again. */
static struct {
	int fd;			/* our end; -1: not connected */
	int daemon_fd;		/* zcfsd's end, once seen; -1 before */
	bool hup;		/* zcfsd closed its end */
	size_t lines;		/* answer lines read for this input */
	size_t len;		/* bytes of an incomplete answer in buf */
} cl = { .fd = -1, .daemon_fd = -1 };

/* Directories a failed publish must leave as they were (below). */
static const char *const watched[] = { BASE "/storage/t1", BASE "/storage/t2", BASE "/targets",
	BASE "/targets/t2", BASE "/targets/file-parent" };
static struct {
	int fd;
	nlink_t nlink;
	off_t size;
} watched_dir[ARRAY_SIZE(watched)];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

static void setup_once(void)
{
	static char policy[2048];
	struct policy_errors errs = { 0 };

	/* A private mount namespace and tmpfs: our own paths, and anything
	 * mounted by mistake would vanish with the process. */
	if (unshare(CLONE_NEWNS) < 0 ||
	    syscall(SYS_mount, "none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    syscall(SYS_mount, "zcfs-fuzz", "/srv", "tmpfs", 0UL, "size=64m,mode=755") < 0) {
		perror("fuzz_control: private tmpfs on /srv (needs root)");
		abort();
	}
	if (mkdir(BASE, 0755) < 0 || mkdir(BASE "/targets", 0755) < 0 ||
	    mkdir(BASE "/targets/t2", 0755) < 0 || mkdir(BASE "/storage", 0755) < 0 ||
	    mkdir(BASE "/state", 0700) < 0 || mkdir(BASE "/state/logs", 0700) < 0 ||
	    mkdir(BASE "/targets/file-parent", 0755) < 0 ||
	    symlink(BASE "/targets", BASE "/targets/link") < 0)
		abort();
	write_file(BASE "/targets/file", "not a directory\n");
	/* The storage roots as zcfsd leaves them after its first publish,
	 * so that their fds can be watched from the start. */
	if (mkdir(BASE "/storage/t1", 0711) < 0 || mkdir(BASE "/storage/t2", 0711) < 0)
		abort();
	for (size_t i = 0; i < ARRAY_SIZE(watched); i++) {
		struct stat st;
		watched_dir[i].fd = open(watched[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (watched_dir[i].fd < 0 || fstat(watched_dir[i].fd, &st) < 0)
			abort();
		watched_dir[i].nlink = st.st_nlink;
		watched_dir[i].size = st.st_size;
	}
	snprintf(policy, sizeof(policy),
		 "{\"admin_group\": \"0\","
		 " \"defaults\": {\"queue_depth\": 4, \"max_write\": \"128K\", \"transport\": \"auto\"},"
		 " \"tenants\": ["
		 "  {\"name\": \"t1\", \"uid\": 2001, \"gid\": 2001, \"memlock_budget\": \"4M\","
		 "   \"max_volumes\": 2, \"storage_root\": \"%s/storage/t1\","
		 "   \"allowed_target_prefixes\": [\"%s/targets\"],"
		 "   \"data_paths\": {\"io_uring\": true}},"
		 "  {\"name\": \"t2\", \"uid\": 2002, \"gid\": 2002, \"storage_root\": \"%s/storage/t2\","
		 "   \"allowed_target_prefixes\": [\"%s/targets/t2\"]}]}\n",
		 BASE, BASE, BASE, BASE);
	write_file(BASE "/policy.json", policy);

	log_set_level(LOG_CRIT);
	signal(SIGPIPE, SIG_IGN);
	d.listen_fd = d.signal_fd = -1;
	d.policy_path = BASE "/policy.json";
	d.state_dir = BASE "/state";
	d.socket_path = BASE "/zcfsd.sock";
	d.serve_bin = "/nonexistent/zcfs-serve";
	d.ncpus = 2;
	if (policy_load(d.policy_path, &d.policy, &errs) < 0)
		abort();
	if (zcfsd_loop_open(&d.loop) < 0 || zcfsd_control_listen(&d, zcfsd_dispatch) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	setup_once();
	return 0;
}

static void read_answers(void);

/* zcfsd's end of a client connection gets a send buffer no input can
 * fill (root may exceed wmem_max): answers then never block zcfsd, so
 * this thread can read them after each round instead of a reader
 * thread running beside it (thread handoffs cost more than a request).
 * zcfsd's answer timeout for a client that does not read is thus not
 * driven (t_zcfsd_slowloris does). */
static void tune_daemon_end(int fd)
{
	int sz = 32 << 20;

	if (fd == cl.daemon_fd)
		return;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0) {
		if (errno == ENOTSOCK)
			return;	/* a child's pidfd (volume.delete's removal) */
		abort();
	}
	cl.daemon_fd = fd;
}

/* Rounds of zcfsd's event loop (zcfsd_loop_once's steps) without
 * blocking, reading the answers after each, until nothing is ready: no
 * event, and no deadline due (a client's requests read and waiting for
 * their turn are a deadline due now). */
static void pump(void)
{
	struct epoll_event evs[8];
	int n;

	while ((n = epoll_wait(d.loop.epoll_fd, evs, 8, 0)) > 0 || zcfsd_loop_timeout_ms(&d) == 0) {
		d.loop.batch = evs;
		d.loop.batch_n = n > 0 ? n : 0;
		for (int i = 0; i < n; i++) {
			struct zcfsd_watch *w = evs[i].data.ptr;

			if (!w)
				continue;	/* turned off earlier in this batch */
			if (w->fd != d.listen_fd)
				tune_daemon_end(w->fd);
			w->fn(&d, w->obj, evs[i].events);
		}
		d.loop.batch_n = 0;
		d.loop.batch = NULL;
		zcfsd_loop_run_due(&d, zcfsd_now_ms());
		read_answers();
	}
}

static const char *const codes[] = { "INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "PERMISSION_DENIED", "INTERNAL",
	"UNAVAILABLE", "UNIMPLEMENTED", NULL };

/* Answers are checked with a strict JSON scanner (RFC 8259 syntax; like
 * json-c's default, no UTF-8 check) that builds nothing: parsing each
 * into a json-c tree cost more than zcfsd's own handling of the request.
 * Not coverage-instrumented: the shape of an answer is no feature of
 * zcfsd's code for the fuzzer to chase. */
#ifdef __clang__
#define NOCOV __attribute__((no_sanitize("coverage")))
#else
#define NOCOV __attribute__((no_sanitize_coverage))
#endif

enum jtype { J_BAD, J_OBJECT, J_ARRAY, J_STRING, J_SCALAR };

struct scan {
	const char *p, *end;
};

/* An object's member as the scanner saw it: raw key (between the quotes),
 * value type and span. */
struct member {
	const char *key, *val;
	size_t klen, vlen;
	enum jtype type;
};

NOCOV static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

NOCOV static bool take(struct scan *s, char c)
{
	skip_ws(s);
	if (s->p >= s->end || *s->p != c)
		return false;
	s->p++;
	return true;
}

NOCOV static bool scan_string(struct scan *s)
{
	if (!take(s, '"'))
		return false;
	for (; s->p < s->end; s->p++) {
		unsigned char c = (unsigned char)*s->p;
		if (c == '"') {
			s->p++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (++s->p >= s->end)
			return false;
		if (*s->p == 'u') {
			for (int i = 0; i < 4; i++)
				if (++s->p >= s->end || !isxdigit((unsigned char)*s->p))
					return false;
		} else if (!memchr("\"\\/bfnrt", *s->p, 8)) {
			return false;
		}
	}
	return false;
}

NOCOV static bool scan_digits(struct scan *s)
{
	const char *start = s->p;

	while (s->p < s->end && isdigit((unsigned char)*s->p))
		s->p++;
	return s->p > start;
}

NOCOV static bool scan_number(struct scan *s)
{
	if (s->p < s->end && *s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if (!scan_digits(s))
		return false;
	if (s->p < s->end && *s->p == '.' && (s->p++, !scan_digits(s)))
		return false;
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		if (!scan_digits(s))
			return false;
	}
	return true;
}

NOCOV static bool scan_word(struct scan *s, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
		return false;
	s->p += n;
	return true;
}

/* One value; VISIT sees each member if it is an object. */
NOCOV static enum jtype scan_value(struct scan *s, int depth,
				   void (*visit)(const struct member *m, void *ctx), void *ctx)
{
	bool array;

	skip_ws(s);
	if (s->p >= s->end || depth > 64)
		return J_BAD;
	if (*s->p == '"')
		return scan_string(s) ? J_STRING : J_BAD;
	if (*s->p == 't' || *s->p == 'f' || *s->p == 'n')
		return scan_word(s, "true") || scan_word(s, "false") || scan_word(s, "null") ? J_SCALAR : J_BAD;
	if (*s->p != '{' && *s->p != '[')
		return scan_number(s) ? J_SCALAR : J_BAD;
	array = *s->p++ == '[';
	if (take(s, array ? ']' : '}'))
		return array ? J_ARRAY : J_OBJECT;
	do {
		struct member m = { 0 };
		if (!array) {
			skip_ws(s);
			m.key = s->p + 1;
			if (!scan_string(s))
				return J_BAD;
			m.klen = (size_t)(s->p - 1 - m.key);
			if (!take(s, ':'))
				return J_BAD;
		}
		skip_ws(s);
		m.val = s->p;
		m.type = scan_value(s, depth + 1, NULL, NULL);
		if (m.type == J_BAD)
			return J_BAD;
		m.vlen = (size_t)(s->p - m.val);
		if (visit && !array)
			visit(&m, ctx);
	} while (take(s, ','));
	return take(s, array ? ']' : '}') ? (array ? J_ARRAY : J_OBJECT) : J_BAD;
}

NOCOV static bool key_is(const struct member *m, const char *k)
{
	return m->klen == strlen(k) && !memcmp(m->key, k, m->klen);
}

struct answer {
	size_t members;
	struct member top;		/* the last (only) top-level member */
	struct member code, message;	/* of an error */
};

NOCOV static void visit_top(const struct member *m, void *ctx)
{
	struct answer *a = ctx;

	a->members++;
	a->top = *m;
}

NOCOV static void visit_error(const struct member *m, void *ctx)
{
	struct answer *a = ctx;

	if (key_is(m, "code"))
		a->code = *m;
	else if (key_is(m, "message"))
		a->message = *m;
}

/* One answer line: {"result": {...}} or {"error": {"code": KNOWN,
 * "message": S}}, and nothing after it. Not inlined: inlined into an
 * instrumented caller, it would be instrumented. */
NOCOV __attribute__((noinline)) static void check_response(const char *line, size_t len)
{
	struct scan s = { line, line + len };
	struct answer a = { 0 };

	if (scan_value(&s, 0, visit_top, &a) != J_OBJECT || (skip_ws(&s), s.p != s.end) ||
	    a.members != 1)
		abort();
	if (key_is(&a.top, "result")) {
		if (a.top.type != J_OBJECT)
			abort();
	} else if (key_is(&a.top, "error") && a.top.type == J_OBJECT) {
		const char *const *k;
		s = (struct scan){ a.top.val, a.top.val + a.top.vlen };
		(void)scan_value(&s, 1, visit_error, &a);
		if (a.code.type != J_STRING || a.message.type != J_STRING)
			abort();
		for (k = codes; *k; k++)	/* the code between its quotes */
			if (strlen(*k) == a.code.vlen - 2 && !memcmp(*k, a.code.val + 1, a.code.vlen - 2))
				break;
		if (!*k)
			abort();
	} else {
		abort();
	}
}

/* Checks every complete answer line that has arrived; keeps a partial
 * one for the next call. */
static void read_answers(void)
{
	static char buf[4 << 20];
	size_t start;
	ssize_t n;
	char *nl;

	for (;;) {
		n = recv(cl.fd, buf + cl.len, sizeof(buf) - 1 - cl.len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			/* EOF, or ECONNRESET when zcfsd closed with part of
			 * the input unread (after an oversized line) */
			cl.hup = true;
			break;
		}
		cl.len += (size_t)n;
		/* Whole lines first, then move the tail once per recv. */
		for (start = 0; (nl = memchr(buf + start, '\n', cl.len - start));
		     start = (size_t)(nl + 1 - buf)) {
			*nl = '\0';
			check_response(buf + start, (size_t)(nl - buf) - start);
			cl.lines++;
		}
		memmove(buf, buf + start, cl.len - start);
		cl.len -= start;
		if (cl.len >= sizeof(buf) - 1)
			abort();	/* an answer line larger than any zcfsd writes */
	}
}

/* Nothing under the storage roots and no target dir may survive a
 * failed publish (all publishes fail here: mount is stubbed), and the
 * fixtures must stay. On tmpfs a directory's size counts its entries
 * and its link count its subdirectories: one fstat of an fd opened once
 * per directory, because reading them or looking paths up cost as much
 * as a request. */
static void check_no_leftovers(void)
{
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(watched); i++)
		if (fstat(watched_dir[i].fd, &st) < 0 || st.st_nlink != watched_dir[i].nlink ||
		    st.st_size != watched_dir[i].size)
			abort();	/* an entry was left behind or removed */
}

static void reset_daemon(void)
{
	while (d.volumes) {
		struct zcfsd_volume *v = d.volumes;
		d.volumes = v->next;
		zcfsd_lifecycle_release(&d, v);	/* as zcfsd's exit: a delete's child, its watch */
		zcfsd_volume_free(v);
	}
}

/* Request lines per input: each costs tens of microseconds under ASan,
 * and inputs of hundreds of lines ran at a hundred per second. What
 * follows the MAX_REQUESTS-th line is sent only if it is an unterminated
 * last line (never answered; it may be longer than the 64 KiB cap). */
#define MAX_REQUESTS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = BASE "/zcfsd.sock" };
	const uint8_t *p = data, *end = data + size, *cut = NULL;
	size_t off = 0, requests = 0;
	bool keep;

	if (size > 256 * 1024)
		return 0;
	/* memchr, not a byte loop: coverage-instrumented loops over 64 KiB
	 * inputs cost more than the requests. */
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p)))) {
		p++;
		if (requests == MAX_REQUESTS) {
			size = (size_t)(cut - data);
			break;
		}
		requests++;
		cut = p;
	}
	if (cl.fd < 0) {
		cl.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (cl.fd < 0 || connect(cl.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			abort();
		pump();	/* accept */
	}
	cl.lines = 0;
	while (off < size) {
		ssize_t n = send(cl.fd, data + off, size - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN) {
			cl.hup = true;	/* zcfsd hung up (an oversized line) */
			break;
		}
		if (n > 0)
			off += (size_t)n;
		pump();
	}
	keep = size && data[size - 1] == '\n' && !cl.hup;
	if (!keep) {
		/* End of the client's stream: zcfsd answers what is complete
		 * and closes; an unterminated last line is never answered. */
		(void)shutdown(cl.fd, SHUT_WR);
		pump();
	}
	read_answers();
	if (cl.len)
		abort();	/* a partial answer line */
	if (!keep && !cl.hup)
		abort();	/* zcfsd kept a connection its client had ended */
	/* One answer per request line, plus at most the "too large" one. */
	if (cl.lines > requests + 1)
		abort();
	if (!keep || cl.hup) {
		close(cl.fd);
		cl.fd = cl.daemon_fd = -1;
		cl.hup = false;
	}
	check_no_leftovers();
	reset_daemon();
	return 0;
}
