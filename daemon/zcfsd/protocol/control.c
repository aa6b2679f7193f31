/* The control socket: accept, check the peer (root or the policy's admin
 * group, from SO_PEERCRED/SO_PEERGROUPS), frame newline-delimited
 * requests with a size cap, answer each with one line.
 *
 * Nothing a client does may stall the event loop, which also supervises
 * the servers, answers the broker and serves metrics: every read and
 * write is non-blocking; an answer the client does not take is kept
 * (one per client: the next request is not read before it is gone) and
 * sent as the socket drains; a request must be complete within
 * CONTROL_REQUEST_MS of its first byte, an answer taken within
 * CONTROL_WRITE_MS, and a silent connection is closed after
 * CONTROL_IDLE_MS. At most CONTROL_MAX_CLIENTS connections, at most
 * CONTROL_MAX_PER_UID per peer uid: a new connection over either limit
 * closes the one (of that uid, or of anyone) that has waited longest, so
 * a client that connects and sends its request at once is always
 * served, whatever others hold. */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "common/log.h"
#include "common/parse.h"
#include "common/json_strict.h"
#include "common/listen_unix.h"
#include "common/opmetrics.h"
#include "protocol.h"
#include "metrics.h"

struct zcfsd_control;

struct client {
	int fd;
	struct zcfsd_control *ctl;
	struct zcfsd_watch watch;
	struct zcfsd_deadline due;	/* the next of its deadlines, or "requests wait" */
	struct zcfsd_peer peer;
	pid_t pid;
	uid_t uid;
	int64_t wait_since_ms;	/* connect, or the last answer taken: idle since */
	int64_t req_since_ms;	/* first byte of the unfinished request; 0: none */
	int64_t handled_us;	/* request taken, CLOCK_MONOTONIC: a clock step is no duration */
	int64_t out_since_ms;	/* the answer waiting in out; 0: none */
	size_t len;		/* request bytes in buf */
	char *out;
	size_t out_len, out_off;
	bool close_after_out;	/* framing lost or dropped: hang up once out is sent */
	bool asked;		/* a whole request came: one that has none yet is sending it */
	uint64_t deferred;	/* the answer comes later (zcfsd_control_complete); 0: none */
	const char *deferred_method;
	char buf[ZCFS_REQUEST_MAX + 1];
};

/* The control socket's state (d->control): its listening socket in the
 * loop, the connections, what was counted. */
struct zcfsd_control {
	struct zcfsd_watch listen_watch;
	struct client *clients[CONTROL_MAX_CLIENTS];
	struct zcfsd_control_counts counts;
	uint64_t defer_seq;
	zcfsd_dispatch_fn *dispatch;	/* the methods (zcfsd_control_listen) */
};

const struct zcfsd_control_counts *zcfsd_control_counts(struct zcfsd *d)
{
	static const struct zcfsd_control_counts none;

	return d->control ? &d->control->counts : &none;
}

int zcfsd_listen_unix(struct zcfsd *d, const char *path, int backlog, bool replace_any, int *ret)
{
	_cleanup_close_ int fd = -1;

	fd = listen_unix(path, backlog, 0660, LISTEN_UNIX_NONBLOCK | (replace_any ? LISTEN_UNIX_REPLACE_ANY : 0));
	if (fd < 0)
		return fd;
	/* The kernel checks write permission on connect: root and the admin
	 * group only; the peer checks are the real gate. */
	if (chown(path, 0, d->policy->has_admin_gid ? d->policy->admin_gid : 0) < 0)
		return -errno;
	*ret = TAKE_FD(fd);
	return 0;
}

/* The listening socket an upgrading zcfsd passed across its exec
 * (lifecycle/upgrade.c), if it is one and bound to our socket path. */
static int inherited_listen_fd(struct zcfsd *d)
{
	const char *s = getenv("ZCFSD_LISTEN_FD");
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	uint64_t n;
	int fd, on = 0;

	if (!s)
		return -1;
	if (parse_u64(s, 3, INT32_MAX, &n) < 0) {
		(void)unsetenv("ZCFSD_LISTEN_FD");
		return -1;
	}
	fd = (int)n;
	(void)unsetenv("ZCFSD_LISTEN_FD");
	len = sizeof(on);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) < 0 || !on)
		return -1;
	len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX ||
	    strncmp(sa.sun_path, d->socket_path, sizeof(sa.sun_path)) != 0) {
		close(fd);
		return -1;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

static void on_listen(struct zcfsd *d, void *obj, uint32_t events);

int zcfsd_control_listen(struct zcfsd *d, zcfsd_dispatch_fn *dispatch_fn)
{
	_cleanup_close_ int fd = inherited_listen_fd(d);
	struct zcfsd_control *ctl;
	int r;

	if (fd >= 0)
		log_info("event=listen-inherited socket=%s", d->socket_path);
	else if ((r = zcfsd_listen_unix(d, d->socket_path, 128, true, &fd)) < 0)
		return r;
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	r = zcfsd_watch(d, &ctl->listen_watch, fd, EPOLLIN, on_listen, ctl);
	if (r < 0) {
		free(ctl);
		return r;
	}
	ctl->dispatch = dispatch_fn;
	d->control = ctl;
	d->listen_fd = TAKE_FD(fd);
	return 0;
}

int zcfsd_peer_read(int fd, struct zcfsd_peer *p)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	p->pid = uc.pid;
	p->uid = uc.uid;
	p->gid = uc.gid;
	p->n_groups = 0;
	if (uc.uid == 0)
		return 0;
	len = sizeof(p->groups);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, p->groups, &len) < 0)
		return -errno;
	p->n_groups = len / sizeof(gid_t);
	return 0;
}

/* Root, or a member of the admin group; fills P (groups: as many as fit,
 * a peer with more is refused rather than judged on part of them). */
static bool peer_allowed(struct zcfsd *d, int fd, struct ucred *uc, struct zcfsd_peer *p)
{
	if (zcfsd_peer_read(fd, p) < 0)
		return false;
	uc->pid = p->pid;
	uc->uid = p->uid;
	uc->gid = p->gid;
	if (p->uid == 0)
		return true;
	if (!d->policy->has_admin_gid)
		return false;
	if (p->gid == d->policy->admin_gid)
		return true;
	for (size_t i = 0; i < p->n_groups; i++)
		if (p->groups[i] == d->policy->admin_gid)
			return true;
	return false;
}

static char *error_line(enum zcfs_code code, const char *msg)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	char *s;

	json_object_object_add(e, "code", json_object_new_string(zcfs_code_name(code)));
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(o, "error", e);
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* A last word to a connection about to be closed: one non-blocking send,
 * lost if the client's socket buffer is full. */
static void send_parting(int fd, enum zcfs_code code, const char *msg)
{
	_cleanup_free_ char *s = error_line(code, msg);
	size_t len;

	if (!s)
		return;
	len = strlen(s);
	s[len] = '\n';	/* the NUL becomes the newline; the length stays known */
	(void)send(fd, s, len + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	s[len] = '\0';
}

static void client_close(struct zcfsd *d, struct client *c)
{
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (c->ctl->clients[i] == c)
			c->ctl->clients[i] = NULL;
	zcfsd_unwatch(d, &c->watch);
	zcfsd_deadline_cancel(d, &c->due);
	safe_close(c->fd);
	free(c->out);
	free(c);
	zcfsd_changed(d);	/* one client fewer waiting (the upgrade's drain) */
}

/* 1, 10, 100, ...: the next count worth a log line at or after N. */
static unsigned log_next(unsigned n)
{
	unsigned p = 1;

	while (p < n && p <= UINT32_MAX / 10)
		p *= 10;
	return p;
}

static void client_drop(struct zcfsd *d, struct client *c, unsigned *counter, const char *reason,
			enum zcfs_code code, const char *msg)
{
	/* Logged at the 1st, 10th, 100th... of each reason: a flood of them
	 * must not flood the journal. */
	++*counter;
	if (*counter == log_next(*counter))
		log_warn("event=client-dropped uid=%u pid=%d reason=%s count=%u", (unsigned)c->uid,
			 (int)c->pid, reason, *counter);
	if (msg && !c->out)
		send_parting(c->fd, code, msg);
	client_close(d, c);
}

/* The client that has waited longest (for its own request, or to take
 * its answer) among those of UID, or of everyone when ANY_UID. */
static struct client *longest_waiting(struct zcfsd_control *ctl, uid_t uid, bool any_uid)
{
	struct client *best = NULL;

	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = ctl->clients[i];
		if (!c || (!any_uid && c->uid != uid))
			continue;
		if (!best || c->wait_since_ms < best->wait_since_ms)
			best = c;
	}
	return best;
}

static unsigned clients_of(struct zcfsd_control *ctl, uid_t uid, int *free_slot)
{
	unsigned n = 0;

	*free_slot = -1;
	for (int i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		if (!ctl->clients[i]) {
			if (*free_slot < 0)
				*free_slot = i;
		} else if (ctl->clients[i]->uid == uid) {
			n++;
		}
	}
	return n;
}

static void client_event(struct zcfsd *d, void *obj, uint32_t events);
static void client_rearm(struct zcfsd *d, struct client *c);

static void accept_one(struct zcfsd *d, struct zcfsd_control *ctl, int fd)
{
	struct zcfsd_peer peer = { 0 };
	struct ucred uc = { 0 };
	struct client *c;
	char msg[160];
	int slot;

	if (!peer_allowed(d, fd, &uc, &peer)) {
		log_warn("event=peer-denied pid=%d uid=%u gid=%u", (int)uc.pid, (unsigned)uc.uid,
			 (unsigned)uc.gid);
		send_parting(fd, ZCFS_PERMISSION_DENIED, "only root and the policy's admin_group may use zcfsd");
		safe_close(fd);
		return;
	}
	/* Over a limit: the longest-waiting connection makes room. A client
	 * that sends its request as it connects is never that one. */
	if (clients_of(ctl, uc.uid, &slot) >= CONTROL_MAX_PER_UID) {
		snprintf(msg, sizeof(msg), "closed: uid %u has %d connections open (the limit) and this one "
			 "waited longest; retry", (unsigned)uc.uid, CONTROL_MAX_PER_UID);
		client_drop(d, longest_waiting(ctl, uc.uid, false), &ctl->counts.evicted_uid, "uid-connection-limit",
			    ZCFS_UNAVAILABLE, msg);
	} else if (slot < 0) {
		snprintf(msg, sizeof(msg), "closed: zcfsd has %d connections open (the limit) and this one "
			 "waited longest; retry", CONTROL_MAX_CLIENTS);
		client_drop(d, longest_waiting(ctl, 0, true), &ctl->counts.evicted_total, "connection-limit",
			    ZCFS_UNAVAILABLE, msg);
	}
	(void)clients_of(ctl, uc.uid, &slot);
	c = slot >= 0 ? calloc(1, sizeof(*c)) : NULL;
	if (!c) {
		send_parting(fd, ZCFS_UNAVAILABLE, "zcfsd is out of memory for connections; retry");
		safe_close(fd);
		return;
	}
	c->fd = fd;
	c->ctl = ctl;
	c->peer = peer;
	c->peer.client = c;
	c->pid = uc.pid;
	c->uid = uc.uid;
	c->wait_since_ms = zcfsd_now_ms();
	if (zcfsd_watch(d, &c->watch, fd, EPOLLIN, client_event, c) < 0) {
		safe_close(fd);
		free(c);
		return;
	}
	ctl->clients[slot] = c;
	ctl->counts.accepted++;
	client_rearm(d, c);
}

static void on_listen(struct zcfsd *d, void *obj, uint32_t events)
{
	(void)events;
	/* A few per wakeup: a flood of connects cannot keep the loop here. */
	for (int i = 0; i < 8; i++) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		accept_one(d, obj, fd);
	}
}

/* Sends what the socket takes now. 0: all sent (the upgrade's drain may
 * have been waiting for it); -EAGAIN: the rest waits for EPOLLOUT; other
 * -errno: the client is gone. */
static int flush_out(struct zcfsd *d, struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -EAGAIN : -errno;
		}
		c->out_off += (size_t)n;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->out_since_ms = 0;
	c->wait_since_ms = zcfsd_now_ms();
	zcfsd_changed(d);
	return 0;
}

/* Queues LINE (taken) plus a newline as the client's answer. */
static int queue_line(struct client *c, char *line)
{
	size_t len;

	if (!line)
		return -ENOMEM;
	len = strlen(line);
	c->out = realloc(line, len + 1);
	if (!c->out) {
		free(line);
		return -ENOMEM;
	}
	c->out[len] = '\n';
	c->out_len = len + 1;
	c->out_off = 0;
	c->out_since_ms = zcfsd_now_ms();
	c->wait_since_ms = c->out_since_ms;
	return 0;
}

/* The answer line (malloc'ed) to a request of C: RESULT (taken) or E. */
static char *answer_line(const struct client *c, const char *method, json_object *result,
			 const struct zcfs_err *e)
{
	json_object *resp = json_object_new_object();
	char *s;

	zcfsd_op_record(method, e->code, opmetrics_now_us() - c->handled_us);
	if (e->code == ZCFS_OK) {
		json_object_object_add(resp, "result", result ? result : json_object_new_object());
	} else {
		json_object *err = json_object_new_object();
		json_object_put(result);
		json_object_object_add(err, "code", json_object_new_string(zcfs_code_name(e->code)));
		json_object_object_add(err, "message", json_object_new_string(e->msg));
		json_object_object_add(resp, "error", err);
		log_info("event=request-failed uid=%u pid=%d method=%.64s code=%s message=\"%s\"",
			 (unsigned)c->uid, (int)c->pid, method, zcfs_code_name(e->code), e->msg);
	}
	s = strdup(json_object_to_json_string_ext(resp, JSON_C_TO_STRING_PLAIN));
	json_object_put(resp);
	return s;
}

uint64_t zcfsd_control_defer(const struct zcfsd_peer *p, const char *method)
{
	struct client *c = p->client;

	if (!c)
		return 0;
	c->deferred = ++c->ctl->defer_seq;
	c->deferred_method = method;
	return c->deferred;
}

/* The answer line to one request (malloc'ed); NULL with c->deferred set
 * when the method answers later. */
static char *handle_request(struct zcfsd *d, struct client *c, const char *line, size_t len)
{
	struct zcfs_err e = { .code = ZCFS_OK };
	json_object *req = NULL, *m = NULL, *params = NULL, *result = NULL;
	const char *method = "?";
	char why[96], *s;

	c->asked = true;
	c->handled_us = opmetrics_now_us();

	/* Duplicate keys, "\u0000" in a string, trailing data: refused, so a
	 * request cannot mean something else to zcfsd than to its sender. */
	if (len == 0) {
		/* answered like any bad line: a client must not wait for the
		 * idle close to learn it sent nothing */
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			  "empty line: a request is one JSON object per line, {\"method\": STRING, \"params\": OBJECT}");
	} else if (zcfs_json_parse_strict(line, len, &req, why, sizeof(why)) < 0) {
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s", why);
	} else if (!json_object_is_type(req, json_type_object) ||
		   !json_object_object_get_ex(req, "method", &m) ||
		   !json_object_is_type(m, json_type_string)) {
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			  "a request is an object {\"method\": STRING, \"params\": OBJECT}");
	} else if (json_object_object_length(req) > (json_object_object_get_ex(req, "params", &params) ? 2 : 1)) {
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL,
			  "unknown top-level field (only \"method\" and \"params\")");
	} else if (params && !json_object_is_type(params, json_type_object)) {
		zcfs_fail(&e, ZCFS_INVALID_ARGUMENT, -EINVAL, "\"params\" must be an object");
	} else {
		json_object *empty = params ? NULL : json_object_new_object();
		method = json_object_get_string(m);
		result = c->ctl->dispatch(d, &c->peer, method, params ? params : empty, &e);
		json_object_put(empty);
	}
	if (c->deferred) {
		json_object_put(result);
		json_object_put(req);
		return NULL;
	}
	s = answer_line(c, method, result, &e);
	json_object_put(req);
	return s;
}

/* Answers up to MAX complete requests in buf, each only once the previous
 * answer is gone; returns false when C was closed. */
static bool serve_lines(struct zcfsd *d, struct client *c, int max)
{
	char *nl;

	while (!c->out && !c->deferred && max > 0 && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1, len = (size_t)(nl - c->buf);
		*nl = '\0';
		if (nl > c->buf && nl[-1] == '\r')
			nl[-1] = '\0', len--;
		{
			char *answer = handle_request(d, c, c->buf, len);
			max--;
			if ((answer || !c->deferred) && queue_line(c, answer) < 0) {
				client_drop(d, c, &c->ctl->counts.dropped_error, "out-of-memory", 0, NULL);
				return false;
			}
		}
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		c->req_since_ms = c->len ? zcfsd_now_ms() : 0;
		if (c->out) {
			int r = flush_out(d, c);
			if (r < 0 && r != -EAGAIN) {
				client_close(d, c);
				return false;
			}
		}
	}
	if (!c->out && c->len > ZCFS_REQUEST_MAX && !memchr(c->buf, '\n', c->len)) {
		/* Framing is lost after an oversized line: answer and hang up. */
		char msg[96];
		snprintf(msg, sizeof(msg), "request larger than %d bytes", ZCFS_REQUEST_MAX);
		log_warn("event=request-too-large uid=%u pid=%d", (unsigned)c->uid, (int)c->pid);
		c->len = 0;
		c->close_after_out = true;
		if (queue_line(c, error_line(ZCFS_INVALID_ARGUMENT, msg)) < 0 || flush_out(d, c) != -EAGAIN) {
			client_close(d, c);
			return false;
		}
	}
	if (c->close_after_out && !c->out) {
		client_close(d, c);
		return false;
	}
	/* Reading waits while an answer is not taken: no request piles up
	 * behind it, and no answer either. */
	(void)zcfsd_watch_events(d, &c->watch, c->out ? EPOLLOUT : c->deferred ? 0 : EPOLLIN);
	client_rearm(d, c);
	return true;
}

void zcfsd_control_complete(struct zcfsd *d, uint64_t token, json_object *result,
			    const struct zcfs_err *e)
{
	struct client *c = NULL;

	for (int i = 0; d->control && i < CONTROL_MAX_CLIENTS && token && !c; i++)
		if (d->control->clients[i] && d->control->clients[i]->deferred == token)
			c = d->control->clients[i];
	if (!c) {	/* gone meanwhile */
		json_object_put(result);
		return;
	}
	c->deferred = 0;
	if (queue_line(c, answer_line(c, c->deferred_method, result, e)) < 0) {
		client_drop(d, c, &c->ctl->counts.dropped_error, "out-of-memory", 0, NULL);
		return;
	}
	int r = flush_out(d, c);
	if (r < 0 && r != -EAGAIN) {
		client_close(d, c);
		return;
	}
	(void)serve_lines(d, c, CONTROL_REQUESTS_PER_WAKEUP);
}

/* Requests already read that wait for their turn (fairness: a few per
 * client per wakeup). */
static bool has_ready(const struct client *c)
{
	return !c->out && !c->deferred && c->len && memchr(c->buf, '\n', c->len);
}

static void client_event(struct zcfsd *d, void *obj, uint32_t events)
{
	struct client *c = obj;
	ssize_t n;

	if (c->deferred) {
		/* Nothing is read before its answer; a hang-up ends it (the
		 * operation goes on, its answer is dropped). */
		if (events & (EPOLLHUP | EPOLLERR))
			client_close(d, c);
		return;
	}
	if (c->out) {
		int r = flush_out(d, c);
		if (r == -EAGAIN && !(events & (EPOLLERR | EPOLLHUP)))
			return;
		if (r < 0) {
			client_close(d, c);
			return;
		}
	} else if (!has_ready(c) && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		n = read(c->fd, c->buf + c->len, ZCFS_REQUEST_MAX + 1 - c->len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			client_close(d, c);
			return;
		}
		if (!c->len)
			c->req_since_ms = zcfsd_now_ms();
		c->len += (size_t)n;
	}
	(void)serve_lines(d, c, CONTROL_REQUESTS_PER_WAKEUP);
}

void zcfsd_control_flush(struct zcfsd *d)
{
	for (size_t i = 0; d->control && i < CONTROL_MAX_CLIENTS; i++) {
		struct client *c = d->control->clients[i];
		for (int tries = 0; c && c->out_off < c->out_len && tries < 10; tries++) {
			struct pollfd p = { .fd = c->fd, .events = POLLOUT };
			if (poll(&p, 1, 10) > 0 && flush_out(d, c) < 0)
				break;
		}
	}
}

void zcfsd_control_free(struct zcfsd *d)
{
	struct zcfsd_control *ctl = d->control;

	if (!ctl)
		return;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (ctl->clients[i])
			client_close(d, ctl->clients[i]);
	zcfsd_unwatch(d, &ctl->listen_watch);
	free(ctl);
	d->control = NULL;
}

void zcfsd_control_stop_accepting(struct zcfsd *d)
{
	if (d->control)
		(void)zcfsd_watch_events(d, &d->control->listen_watch, 0);
}

void zcfsd_control_resume_accepting(struct zcfsd *d)
{
	if (d->control)
		(void)zcfsd_watch_events(d, &d->control->listen_watch, EPOLLIN);
}

bool zcfsd_control_pending(struct zcfsd *d)
{
	for (size_t i = 0; d->control && i < CONTROL_MAX_CLIENTS; i++) {
		const struct client *c = d->control->clients[i];
		struct pollfd p;

		if (!c)
			continue;
		/* A connection accepted before the drain whose first request
		 * has not arrived yet (zcfsctl connects, then writes) would
		 * be closed by the exec unanswered. */
		if (!c->asked || c->deferred || c->out || c->len)
			return true;
		p = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		if (poll(&p, 1, 0) > 0)
			return true;
	}
	return false;
}

/* A client's deadline, or its turn (requests already read, served a few
 * per client per round for fairness). */
static void client_due(struct zcfsd *d, void *obj)
{
	struct client *c = obj;
	struct zcfsd_control_counts *k = &c->ctl->counts;
	int64_t now = zcfsd_now_ms();
	char msg[128];

	if (c->deferred)
		return;
	if (c->out && now - c->out_since_ms >= CONTROL_WRITE_MS) {
		client_drop(d, c, &k->dropped_write, "answer-not-taken", 0, NULL);
		return;
	}
	if (!c->out && c->len && now - c->req_since_ms >= CONTROL_REQUEST_MS &&
	    !memchr(c->buf, '\n', c->len)) {
		snprintf(msg, sizeof(msg), "closed: request not complete %d ms after its first byte",
			 CONTROL_REQUEST_MS);
		client_drop(d, c, &k->dropped_request, "request-timeout", ZCFS_UNAVAILABLE, msg);
		return;
	}
	if (!c->out && !c->len && now - c->wait_since_ms >= CONTROL_IDLE_MS) {
		snprintf(msg, sizeof(msg), "closed: no request for %d ms", CONTROL_IDLE_MS);
		client_drop(d, c, &k->dropped_idle, "idle", ZCFS_UNAVAILABLE, msg);
		return;
	}
	if (has_ready(c)) {
		(void)serve_lines(d, c, CONTROL_REQUESTS_PER_WAKEUP);	/* re-arms it */
		return;
	}
	client_rearm(d, c);
}

/* The one deadline of C for its state: none while its answer is
 * deferred; now while requests wait their turn; else when its answer,
 * its request or its silence has lasted too long. */
static void client_rearm(struct zcfsd *d, struct client *c)
{
	int64_t due;

	if (c->deferred) {
		zcfsd_deadline_cancel(d, &c->due);
		return;
	}
	if (has_ready(c))
		due = zcfsd_now_ms();
	else if (c->out)
		due = c->out_since_ms + CONTROL_WRITE_MS;
	else if (c->len)
		due = c->req_since_ms + CONTROL_REQUEST_MS;
	else
		due = c->wait_since_ms + CONTROL_IDLE_MS;
	zcfsd_deadline_at(d, &c->due, due, client_due, c);
}

unsigned zcfsd_control_clients(struct zcfsd *d)
{
	unsigned n = 0;

	for (int i = 0; d->control && i < CONTROL_MAX_CLIENTS; i++)
		n += d->control->clients[i] != NULL;
	return n;
}
