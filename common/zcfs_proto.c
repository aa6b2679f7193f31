/* Client side of the control protocol. */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include "fileio.h"
#include "zcfs_proto.h"

const char *zcfs_json_unknown_key(json_object *o, const char *const *allowed)
{
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (!strv_contains(allowed, key))
			return key;
	}
	return NULL;
}

const char *zcfs_socket_path(const char *explicit_path)
{
	const char *e;

	if (explicit_path)
		return explicit_path;
	e = getenv("ZCFS_SOCKET");
	return e && *e ? e : ZCFS_DEFAULT_SOCKET;
}

/* connect(2) to PATH; with TV, bounded by the socket timeouts (set
 * before connect: a daemon that stopped accepting fills its backlog, and
 * connect on a full unix backlog waits up to SO_SNDTIMEO). */
static int connect_to(const char *path, const struct timeval *tv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (tv && (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv, sizeof(*tv)) < 0 ||
		   setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, tv, sizeof(*tv)) < 0))
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int zcfs_connect(const char *path)
{
	return connect_to(path, NULL);
}

int zcfs_roundtrip(int fd, const char *line, size_t len, char **ret)
{
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = 0;
	int r;

	r = write_all(fd, line, len);
	/* The daemon may answer and close before reading everything (an
	 * oversized request): still read its answer. */
	if (r == 0 && (len == 0 || line[len - 1] != '\n'))
		r = write_all(fd, "\n", 1);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		return r;
	for (;;) {
		ssize_t n;
		char *nl;
		if (have + 4096 + 1 > cap) {
			char *nb;
			cap = cap ? cap * 2 : 16384;
			if (cap > (64u << 20))
				return -EFBIG;
			nb = realloc(buf, cap);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		n = recv(fd, buf + have, cap - have - 1, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return have ? -EPROTO : -errno;
		}
		if (n == 0)
			return have ? -EPROTO : -ECONNRESET;
		have += (size_t)n;
		buf[have] = '\0';
		nl = memchr(buf, '\n', have);
		if (nl) {
			*nl = '\0';
			*ret = TAKE_PTR(buf);
			return 0;
		}
	}
}

/* The request line {"method": METHOD, "params": PARAMS or {}} in *req
 * (PARAMS borrowed); its text lives as long as *req. */
static const char *request_line(const char *method, json_object *params, json_object **req)
{
	*req = json_object_new_object();
	if (!*req)
		return NULL;
	json_object_object_add(*req, "method", json_object_new_string(method));
	json_object_object_add(*req, "params", params ? json_object_get(params) : json_object_new_object());
	return json_object_to_json_string_ext(*req, JSON_C_TO_STRING_PLAIN);
}

int zcfs_call_raw(const char *socket, const char *method, json_object *params, json_object **resp)
{
	_cleanup_json_ json_object *req = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	const char *s;
	int r;

	fd = zcfs_connect(socket);
	if (fd < 0)
		return fd;
	s = request_line(method, params, &req);
	if (!s)
		return -ENOMEM;
	r = zcfs_roundtrip(fd, s, strlen(s), &line);
	if (r < 0)
		return r;
	*resp = json_tokener_parse(line);
	return *resp ? 0 : -EPROTO;
}

/* CLOCK_MONOTONIC ms by which this thread's calls must be done; 0 = none. */
static _Thread_local int64_t budget_end_ms;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void zcfs_call_set_budget_ms(unsigned ms)
{
	budget_end_ms = ms ? now_ms() + ms : 0;
}

/* What the next call may take: the per-call bound or what is left of
 * the budget (at least 1 ms: a zero timeval would mean "no timeout"). */
static int64_t call_timeout_ms(void)
{
	int64_t t = ZCFS_CALL_TIMEOUT_S * 1000;

	if (budget_end_ms)
		t = MIN(t, MAX(budget_end_ms - now_ms(), (int64_t)1));
	return t;
}

/* The answer line of METHOD: its result (borrowed from *resp) or E. */
static int call_answer(const char *socket, const char *method, const char *line, json_object **resp,
		       json_object **result, struct zcfs_err *e)
{
	json_object *res, *err, *c, *m;

	*resp = json_tokener_parse(line);
	if (!*resp || !json_object_is_type(*resp, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s sent a malformed answer to %s",
				 socket, method);
	if (json_object_object_get_ex(*resp, "error", &err)) {
		enum zcfs_code code = ZCFS_INTERNAL;
		if (json_object_object_get_ex(err, "code", &c))
			code = zcfs_code_from_name(json_object_get_string(c));
		if (code == ZCFS_OK)
			code = ZCFS_INTERNAL;
		m = NULL;
		json_object_object_get_ex(err, "message", &m);
		return zcfs_fail(e, code, -EREMOTEIO, "%s", m ? json_object_get_string(m) : "zcfsd error");
	}
	if (!json_object_object_get_ex(*resp, "result", &res) || !json_object_is_type(res, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s sent no result for %s",
				 socket, method);
	*result = res;
	return 0;
}

int zcfs_call(const char *socket, const char *method, json_object *params, json_object **result,
	      struct zcfs_err *e)
{
	_cleanup_json_ json_object *req = NULL, *resp = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	int64_t tmo = call_timeout_ms();
	struct timeval tv = { .tv_sec = tmo / 1000, .tv_usec = (tmo % 1000) * 1000 };
	json_object *res = NULL;
	const char *s;
	int r;

	if (result)
		*result = NULL;
	s = request_line(method, params, &req);
	if (!s)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	fd = connect_to(socket, &tv);
	if (fd == -EAGAIN || fd == -EWOULDBLOCK)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN,
				 "zcfsd at %s did not accept a connection within %lld ms", socket,
				 (long long)tmo);
	if (fd < 0)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd is not reachable at %s: %s",
				 socket, strerror(-fd));
	r = zcfs_roundtrip(fd, s, strlen(s), &line);
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s did not answer %s within %lld ms",
				 socket, method, (long long)tmo);
	if (r < 0)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s: %s: %s", socket, method,
				 strerror(-r));
	r = call_answer(socket, method, line, &resp, &res, e);
	if (r == 0 && result)
		*result = json_object_get(res);
	return r;
}
