/* The control socket: accept, check the peer (root or the policy's admin
 * group, from SO_PEERCRED/SO_PEERGROUPS), frame newline-delimited
 * requests with a size cap, answer each with one line. */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "daemon/common/log.h"
#include "daemon/common/json_strict.h"
#include "protocol.h"

#define MAX_CLIENTS 64

struct client {
	int fd;
	pid_t pid;
	uid_t uid;
	size_t len;
	char buf[ZCFS_REQUEST_MAX + 1];
};

static struct client *clients[MAX_CLIENTS];

int zcfsd_listen_unix(struct zcfsd *d, const char *path, int backlog, bool replace_any, int *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	char *slash;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	/* /run/zcfs may not exist yet (after a reboot). */
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* What a previous (crashed) zcfsd left. */
	if (!replace_any && lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return -EEXIST;
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/* The kernel checks write permission on connect: root and the admin
	 * group only; the peer checks are the real gate. */
	if (chmod(path, 0660) < 0 ||
	    chown(path, 0, d->policy->has_admin_gid ? d->policy->admin_gid : 0) < 0 ||
	    listen(fd, backlog) < 0)
		return -errno;
	*ret = TAKE_FD(fd);
	return 0;
}

int zcfsd_control_listen(struct zcfsd *d)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = ZCFSD_EV_LISTEN };
	_cleanup_close_ int fd = -1;
	int r;

	r = zcfsd_listen_unix(d, d->socket_path, 64, true, &fd);
	if (r < 0)
		return r;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	d->listen_fd = TAKE_FD(fd);
	return 0;
}

static bool peer_allowed(struct zcfsd *d, int fd, struct ucred *uc)
{
	socklen_t len = sizeof(*uc);
	gid_t groups[256];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, uc, &len) < 0)
		return false;
	if (uc->uid == 0)
		return true;
	if (!d->policy->has_admin_gid)
		return false;
	if (uc->gid == d->policy->admin_gid)
		return true;
	len = sizeof(groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == d->policy->admin_gid)
			return true;
	return false;
}

/* Writes one line; a client that does not read for 2 s is dropped. */
static int send_line(int fd, const char *s)
{
	size_t len = strlen(s), off = 0;
	char *buf = malloc(len + 1);
	int r = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, s, len);
	buf[len++] = '\n';
	while (off < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			r = -errno;
			break;
		}
		if (poll(&p, 1, 2000) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
	}
	free(buf);
	return r;
}

static int send_error(int fd, enum zcfs_code code, const char *msg)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	int r;

	json_object_object_add(e, "code", json_object_new_string(zcfs_code_name(code)));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	r = send_line(fd, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return r;
}

static void client_close(struct zcfsd *d, struct client *c)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i] == c)
			clients[i] = NULL;
	(void)epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	safe_close(c->fd);
	free(c);
}

void zcfsd_control_accept(struct zcfsd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct ucred uc = { 0 };
	struct client *c;
	int fd, i;

	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (!peer_allowed(d, fd, &uc)) {
		log_warn("event=peer-denied pid=%d uid=%u gid=%u", (int)uc.pid, (unsigned)uc.uid,
			 (unsigned)uc.gid);
		(void)send_error(fd, ZCFS_PERMISSION_DENIED,
				 "only root and the policy's admin_group may use zcfsd");
		safe_close(fd);
		return;
	}
	for (i = 0; i < MAX_CLIENTS && clients[i]; i++)
		;
	c = i < MAX_CLIENTS ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		(void)send_error(fd, ZCFS_UNAVAILABLE, "too many clients; retry");
		safe_close(fd);
		return;
	}
	c->fd = fd;
	c->pid = uc.pid;
	c->uid = uc.uid;
	ev.data.u64 = ZCFSD_EV_CLIENT | (uint32_t)fd;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		safe_close(fd);
		free(c);
		return;
	}
	clients[i] = c;
}

/* Returns send_line's result: a client that cannot take its answer is
 * dropped by the caller. */
static int handle_request(struct zcfsd *d, struct client *c, const char *line, size_t len)
{
	struct zcfsd_err e = { .code = ZCFS_OK };
	json_object *req = NULL, *m = NULL, *params = NULL, *result = NULL, *resp;
	const char *method = "?";
	char why[96];
	int r;

	/* Duplicate keys, "\u0000" in a string, trailing data: refused, so a
	 * request cannot mean something else to zcfsd than to its sender. */
	if (zcfs_json_parse_strict(line, len, &req, why, sizeof(why)) < 0) {
		zcfsd_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s", why);
	} else if (!json_object_is_type(req, json_type_object) ||
		   !json_object_object_get_ex(req, "method", &m) ||
		   !json_object_is_type(m, json_type_string)) {
		zcfsd_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			   "a request is an object {\"method\": STRING, \"params\": OBJECT}");
	} else if (json_object_object_length(req) > (json_object_object_get_ex(req, "params", &params) ? 2 : 1)) {
		zcfsd_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			   "unknown top-level field (only \"method\" and \"params\")");
	} else if (params && !json_object_is_type(params, json_type_object)) {
		zcfsd_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "\"params\" must be an object");
	} else {
		json_object *empty = params ? NULL : json_object_new_object();
		method = json_object_get_string(m);
		result = zcfsd_dispatch(d, method, params ? params : empty, &e);
		json_object_put(empty);
	}
	resp = json_object_new_object();
	if (e.code == ZCFS_OK) {
		json_object_object_add(resp, "result", result ? result : json_object_new_object());
	} else {
		json_object *err = json_object_new_object();
		json_object_put(result);
		json_object_object_add(err, "code", json_object_new_string(zcfs_code_name(e.code)));
		json_object_object_add(err, "message", json_object_new_string(e.msg));
		json_object_object_add(resp, "error", err);
		log_info("event=request-failed uid=%u pid=%d method=%.64s code=%s message=\"%s\"",
			 (unsigned)c->uid, (int)c->pid, method, zcfs_code_name(e.code), e.msg);
	}
	r = send_line(c->fd, json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
	json_object_put(resp);
	json_object_put(req);
	return r;
}

void zcfsd_control_client_event(struct zcfsd *d, int fd, uint32_t events)
{
	struct client *c = NULL;
	char *nl;
	ssize_t n;

	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i] && clients[i]->fd == fd)
			c = clients[i];
	if (!c)
		return;
	(void)events;
	n = read(fd, c->buf + c->len, ZCFS_REQUEST_MAX + 1 - c->len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(d, c);
		return;
	}
	c->len += (size_t)n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;
		size_t len = (size_t)(nl - c->buf);
		*nl = '\0';
		if (nl > c->buf && nl[-1] == '\r') {
			nl[-1] = '\0';
			len--;
		}
		/* A client that does not read its answers (2 s each) would stall
		 * the daemon's single loop once per pipelined request: drop it
		 * at the first one it does not take. */
		if (len && handle_request(d, c, c->buf, len) < 0) {
			log_warn("event=client-dropped uid=%u pid=%d reason=not-reading-answers",
				 (unsigned)c->uid, (int)c->pid);
			client_close(d, c);
			return;
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (c->len > ZCFS_REQUEST_MAX) {
		/* Framing is lost after an oversized line: answer and hang up. */
		char msg[96];
		snprintf(msg, sizeof(msg), "request larger than %d bytes", ZCFS_REQUEST_MAX);
		log_warn("event=request-too-large uid=%u pid=%d", (unsigned)c->uid, (int)c->pid);
		(void)send_error(fd, ZCFS_INVALID_ARGUMENT, msg);
		client_close(d, c);
	}
}
