/* Client side of the control protocol. */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
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

int zcfs_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return TAKE_FD(fd);
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

int zcfs_call(const char *socket, const char *method, json_object *params, json_object **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *resp = NULL;
	json_object *req;
	const char *s;
	int r;

	fd = zcfs_connect(socket);
	if (fd < 0)
		return fd;
	req = json_object_new_object();
	if (!req)
		return -ENOMEM;
	json_object_object_add(req, "method", json_object_new_string(method));
	json_object_object_add(req, "params", params ? json_object_get(params) : json_object_new_object());
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	r = zcfs_roundtrip(fd, s, strlen(s), &resp);
	json_object_put(req);
	if (r < 0)
		return r;
	*ret = json_tokener_parse(resp);
	return *ret ? 0 : -EPROTO;
}
