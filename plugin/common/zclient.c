/* Bounded-time client calls to zcfsd for the plugins. */
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include "plugin_json.h"
#include "zclient.h"

/* CLOCK_MONOTONIC ms by which this thread's calls must be done; 0 = none. */
static _Thread_local int64_t budget_end_ms;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void zc_set_budget_ms(unsigned ms)
{
	budget_end_ms = ms ? now_ms() + ms : 0;
}

/* What the next call may take: the per-call bound or what is left of
 * the budget (at least 1 ms: a zero timeval would mean "no timeout"). */
static int64_t call_timeout_ms(void)
{
	int64_t t = ZCLIENT_TIMEOUT_S * 1000;

	if (budget_end_ms)
		t = MIN(t, MAX(budget_end_ms - now_ms(), (int64_t)1));
	return t;
}

/* connect(2) to PATH bounded by the socket timeouts (set before connect:
 * a daemon that stopped accepting fills its backlog, and connect on a
 * full unix backlog waits up to SO_SNDTIMEO). */
static int connect_bounded(const char *path, const struct timeval *tv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, tv, sizeof(*tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, tv, sizeof(*tv)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int zc_call(const char *socket_path, const char *method, json_object *params, json_object **ret,
	    struct zcfs_err *e)
{
	_cleanup_json_ json_object *req = NULL, *resp = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *line = NULL;
	int64_t tmo = call_timeout_ms();
	struct timeval tv = { .tv_sec = tmo / 1000, .tv_usec = (tmo % 1000) * 1000 };
	json_object *res, *err, *c, *m;
	const char *s;
	int r;

	if (ret)
		*ret = NULL;
	req = json_object_new_object();
	if (!req) {
		json_object_put(params);
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params ? params : json_object_new_object());
	fd = connect_bounded(socket_path, &tv);
	if (fd == -EAGAIN || fd == -EWOULDBLOCK)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN,
				 "zcfsd at %s did not accept a connection within %lld ms", socket_path,
				 (long long)tmo);
	if (fd < 0)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd is not reachable at %s: %s",
				 socket_path, strerror(-fd));
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	r = zcfs_roundtrip(fd, s, strlen(s), &line);
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s did not answer %s within %lld ms",
				 socket_path, method, (long long)tmo);
	if (r < 0)
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s: %s: %s", socket_path,
				 method, strerror(-r));
	resp = json_tokener_parse(line);
	if (!resp || !json_object_is_type(resp, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s sent a malformed answer to %s",
				 socket_path, method);
	if (json_object_object_get_ex(resp, "error", &err)) {
		enum zcfs_code code = ZCFS_INTERNAL;
		if (json_object_object_get_ex(err, "code", &c))
			code = zcfs_code_from_name(json_object_get_string(c));
		if (code == ZCFS_OK)
			code = ZCFS_INTERNAL;
		m = NULL;
		json_object_object_get_ex(err, "message", &m);
		return zcfs_fail(e, code, -EREMOTEIO, "%s", m ? json_object_get_string(m) : "zcfsd error");
	}
	if (!json_object_object_get_ex(resp, "result", &res) || !json_object_is_type(res, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -ENOTCONN, "zcfsd at %s sent no result for %s",
				 socket_path, method);
	if (ret)
		*ret = json_object_get(res);
	return 0;
}

int zc_call_id(const char *socket_path, const char *method, const char *id, json_object **ret,
	       struct zcfs_err *e)
{
	json_object *p = json_object_new_object();

	if (!p)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_object_object_add(p, "id", json_object_new_string(id));
	return zc_call(socket_path, method, p, ret, e);
}

int zc_volume_get(const char *socket_path, const char *id, json_object **vol, struct zcfs_err *e)
{
	_cleanup_json_ json_object *res = NULL;
	struct zcfs_err e2 = { 0 };
	json_object *v;
	int r;

	*vol = NULL;
	r = zc_call_id(socket_path, "volume.get", id, &res, &e2);
	if (r == -EREMOTEIO && e2.code == ZCFS_NOT_FOUND)
		return -ENOENT;
	if (r < 0) {
		if (e->code == ZCFS_OK)
			*e = e2;
		return r;
	}
	if (!json_object_object_get_ex(res, "volume", &v) || !json_object_is_type(v, json_type_object))
		return zcfs_fail(e, ZCFS_UNAVAILABLE, -EPROTO, "zcfsd sent no volume for %s", id);
	*vol = json_object_get(v);
	return 0;
}

bool zc_volume_has_target(json_object *vol, const char *target)
{
	json_object *t;

	if (!json_object_object_get_ex(vol, "targets", &t) || !json_object_is_type(t, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(t); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(t, i)), target))
			return true;
	return false;
}

size_t zc_volume_n_targets(json_object *vol)
{
	json_object *t;

	if (!json_object_object_get_ex(vol, "targets", &t) || !json_object_is_type(t, json_type_array))
		return 0;
	return json_object_array_length(t);
}

const char *zc_volume_str(json_object *vol, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(vol, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}
