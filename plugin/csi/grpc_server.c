/* The gRPC server of zcfs-csi serve, on gRPC's C core: one completion
 * queue, one thread that drives it, and a thread per call that runs the
 * CSI method (zcfsd calls block for up to ZCFS_CALL_TIMEOUT_S). A call goes
 * REQUESTED (grpc_server_request_call) -> RECEIVED (its one message) ->
 * SENT (initial metadata, answer, status, close), then it is freed.
 * SIGTERM/SIGINT: no new calls, in-flight ones finish (cancelled after
 * the grace period), then exit 0. */
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include "csi_grpc.h"
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/opmetrics.h"

enum call_state { CALL_REQUESTED, CALL_RECEIVED, CALL_SENT };

struct server;

struct call {
	enum call_state state;
	struct server *s;
	bool registration;		/* accepted on the registration socket */
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	grpc_byte_buffer *req;
	grpc_byte_buffer *resp;
	grpc_slice status_msg;
	int cancelled;
	const struct csi_grpc_method *m;
	struct timespec start;
	int64_t start_us;		/* opmetrics_now_us() at arrival */
};

struct server {
	struct csi_ctx *ctx;
	const struct csi_serve_opts *o;
	grpc_completion_queue *cq;
	grpc_server *csi, *reg;
	struct metrics_http *metrics;	/* --metrics, or NULL */
	atomic_int inflight;		/* calls between RECEIVED and freed */
	int shutdowns_pending;
	bool stopping;
	char shutdown_tag;		/* its address is the shutdown tag */
};

static void call_free(struct call *c)
{
	if (c->req)
		grpc_byte_buffer_destroy(c->req);
	if (c->resp)
		grpc_byte_buffer_destroy(c->resp);
	if (c->state == CALL_SENT)
		grpc_slice_unref(c->status_msg);
	if (c->call)
		grpc_call_unref(c->call);
	grpc_call_details_destroy(&c->details);
	grpc_metadata_array_destroy(&c->md);
	free(c);
}

static int request_call(struct server *s, bool registration)
{
	struct call *c = calloc(1, sizeof(*c));
	grpc_call_error ge;

	if (!c)
		return -ENOMEM;
	c->s = s;
	c->registration = registration;
	c->state = CALL_REQUESTED;
	grpc_call_details_init(&c->details);
	grpc_metadata_array_init(&c->md);
	ge = grpc_server_request_call(registration ? s->reg : s->csi, &c->call, &c->details, &c->md,
				      s->cq, s->cq, c);
	if (ge != GRPC_CALL_OK) {
		log_err("event=grpc-error what=request_call error=%d", ge);
		call_free(c);
		return -EIO;
	}
	return 0;
}

/* Answers C: the message (status OK) or the status alone. */
static void call_send(struct call *c, int status, const char *msg, const uint8_t *resp, size_t len)
{
	grpc_op ops[4];
	size_t n = 0;
	grpc_call_error ge;

	memset(ops, 0, sizeof(ops));
	csi_metrics_record(c->m, status, c->start_us);
	c->state = CALL_SENT;
	c->status_msg = grpc_slice_from_copied_string(msg ? msg : "");
	ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
	n++;
	if (status == GRPC_STATUS_OK) {
		grpc_slice sl = grpc_slice_from_copied_buffer((const char *)resp, len);
		c->resp = grpc_raw_byte_buffer_create(&sl, 1);
		grpc_slice_unref(sl);
		ops[n].op = GRPC_OP_SEND_MESSAGE;
		ops[n].data.send_message.send_message = c->resp;
		n++;
	}
	ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n].data.send_status_from_server.status = (grpc_status_code)status;
	ops[n].data.send_status_from_server.status_details = &c->status_msg;
	n++;
	ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n].data.recv_close_on_server.cancelled = &c->cancelled;
	n++;
	ge = grpc_call_start_batch(c->call, ops, n, c, NULL);
	if (ge != GRPC_CALL_OK) {
		/* no completion will come for it */
		log_err("event=grpc-error what=send error=%d", ge);
		atomic_fetch_sub(&c->s->inflight, 1);
		call_free(c);
	}
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Runs the call's method and answers it (queue thread or a call thread). */
static void call_run(struct call *c)
{
	struct csi_grpc_result res;
	grpc_byte_buffer_reader rd;
	grpc_slice sl;

	if (!grpc_byte_buffer_reader_init(&rd, c->req)) {
		call_send(c, GRPC_STATUS_INTERNAL, "cannot read the request (compression?)", NULL, 0);
		return;
	}
	sl = grpc_byte_buffer_reader_readall(&rd);
	grpc_byte_buffer_reader_destroy(&rd);
	csi_grpc_call(c->s->ctx, c->s->o, c->m, GRPC_SLICE_START_PTR(sl), GRPC_SLICE_LENGTH(sl), &res);
	grpc_slice_unref(sl);
	if (res.status != GRPC_STATUS_OK)
		log_err("event=csi-error front=grpc method=%s code=%d ms=%ld message=\"%s\"", c->m->name,
			res.status, elapsed_ms(&c->start), res.msg);
	else if (!c->m->inline_ok)
		log_info("event=csi-call front=grpc method=%s ms=%ld", c->m->name, elapsed_ms(&c->start));
	call_send(c, res.status, res.msg, res.resp, res.resp_len);
	free(res.resp);
}

static void *call_thread(void *arg)
{
	call_run(arg);
	return NULL;
}

static void call_received(struct call *c)
{
	pthread_attr_t at;
	pthread_t t;
	int r;

	if (!c->req) {
		/* the client half-closed without a message */
		call_send(c, GRPC_STATUS_INVALID_ARGUMENT, "no request message", NULL, 0);
		return;
	}
	if (c->m->inline_ok) {
		call_run(c);
		return;
	}
	if (atomic_load(&c->s->inflight) > CSI_GRPC_INFLIGHT_MAX) {
		call_send(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "too many calls in progress", NULL, 0);
		return;
	}
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	r = pthread_create(&t, &at, call_thread, c);
	pthread_attr_destroy(&at);
	if (r != 0)
		call_send(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot start a thread for the call", NULL, 0);
}

/* A new call arrived: ask for the next one, then for its message. */
static void call_accepted(struct call *c)
{
	const char *path = (const char *)GRPC_SLICE_START_PTR(c->details.method);
	size_t plen = GRPC_SLICE_LENGTH(c->details.method);
	grpc_op op;
	grpc_call_error ge;

	if (!c->s->stopping)
		(void)request_call(c->s, c->registration);
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	c->start_us = opmetrics_now_us();
	atomic_fetch_add(&c->s->inflight, 1);
	c->m = csi_grpc_method_find(path, plen);
	if (!c->m || c->m->registration != c->registration) {
		char msg[160];
		snprintf(msg, sizeof(msg), "unknown method %.*s", (int)MIN(plen, (size_t)100), path);
		call_send(c, GRPC_STATUS_UNIMPLEMENTED, msg, NULL, 0);
		return;
	}
	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &c->req;
	c->state = CALL_RECEIVED;
	ge = grpc_call_start_batch(c->call, &op, 1, c, NULL);
	if (ge != GRPC_CALL_OK) {
		log_err("event=grpc-error what=recv error=%d", ge);
		atomic_fetch_sub(&c->s->inflight, 1);
		call_free(c);
	}
}

static void on_event(struct server *s, struct call *c, bool ok)
{
	switch (c->state) {
	case CALL_REQUESTED:
		if (!ok) {	/* the server is shutting down */
			call_free(c);
			return;
		}
		call_accepted(c);
		return;
	case CALL_RECEIVED:
		if (!ok) {	/* cancelled, deadline passed, or the client went away */
			atomic_fetch_sub(&s->inflight, 1);
			call_free(c);
			return;
		}
		call_received(c);
		return;
	case CALL_SENT:
		atomic_fetch_sub(&s->inflight, 1);
		call_free(c);
		return;
	}
}

/* "unix:///abs/path" or "unix:/abs/path" -> "/abs/path". */
static const char *unix_path(const char *ep)
{
	if (!strncmp(ep, "unix://", 7))
		ep += 7;
	else if (!strncmp(ep, "unix:", 5))
		ep += 5;
	else
		return NULL;
	return ep[0] == '/' ? ep : NULL;
}

/* Replaces a stale socket at PATH and listens there (mode 0700: whoever
 * can connect acts with this process's identity towards zcfsd). */
static grpc_server *listen_on(struct server *s, const char *path, const grpc_channel_args *args)
{
	grpc_server_credentials *cr;
	grpc_server *srv;
	_cleanup_free_ char *addr = NULL;
	struct stat st;
	mode_t old;
	int port;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_err("event=serve-error path=%s error=\"exists and is not a socket\"", path);
			return NULL;
		}
		(void)unlink(path);
	}
	if (asprintf(&addr, "unix:%s", path) < 0)
		return NULL;
	srv = grpc_server_create(args, NULL);
	grpc_server_register_completion_queue(srv, s->cq, NULL);
	cr = grpc_insecure_server_credentials_create();
	old = umask(0077);
	port = grpc_server_add_http2_port(srv, addr, cr);
	umask(old);
	grpc_server_credentials_release(cr);
	if (port == 0) {
		log_err("event=serve-error path=%s error=\"cannot listen\"", path);
		grpc_server_destroy(srv);
		return NULL;
	}
	return srv;
}

static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	/* before any thread exists, so all of them inherit the mask */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -errno;
	sigdelset(&set, SIGPIPE);
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

static void start_shutdown(struct server *s)
{
	s->stopping = true;
	grpc_server_shutdown_and_notify(s->csi, s->cq, &s->shutdown_tag);
	s->shutdowns_pending = 1;
	if (s->reg) {
		grpc_server_shutdown_and_notify(s->reg, s->cq, &s->shutdown_tag);
		s->shutdowns_pending = 2;
	}
}

/* Until the queue is shut down: what is left fails (calls not started,
 * answers not sent). */
static void drain_cq(struct server *s)
{
	for (;;) {
		grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE && ev.tag != &s->shutdown_tag)
			on_event(s, ev.tag, false);
	}
}

/* Listens on PATH (and the registration socket RPATH), starts the
 * servers and requests the first calls. */
static int start_servers(struct server *s, const char *path, const char *rpath, grpc_channel_args *cargs)
{
	s->csi = listen_on(s, path, cargs);
	if (s->csi && rpath)
		s->reg = listen_on(s, rpath, cargs);
	if (!s->csi || (rpath && !s->reg))
		return -1;
	grpc_server_start(s->csi);
	if (s->reg)
		grpc_server_start(s->reg);
	/* a few calls requested ahead, so parallel clients do not wait on each other */
	for (int i = 0; i < 4; i++)
		if (request_call(s, false) < 0 || (s->reg && i == 0 && request_call(s, true) < 0))
			return -1;
	return 0;
}

/* The completion queue until it is shut down: calls, then on SIGTERM the
 * drain (cancelling what still runs after the grace period). */
static void serve_loop(struct server *s, int sfd)
{
	struct timespec stop_at = { 0 };
	bool cancelled = false, cq_down = false;

	while (!cq_down) {
		grpc_event ev = grpc_completion_queue_next(
			s->cq, gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(200, GPR_TIMESPAN)),
			NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE) {
			if (ev.tag == &s->shutdown_tag)
				s->shutdowns_pending--;
			else
				on_event(s, ev.tag, ev.success);
		}
		if (!s->stopping) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				log_info("event=stopping signal=%u inflight=%d", si.ssi_signo, atomic_load(&s->inflight));
				metrics_http_ready(s->metrics, false);
				start_shutdown(s);
				clock_gettime(CLOCK_MONOTONIC, &stop_at);
			}
		} else if (!cancelled && elapsed_ms(&stop_at) > (long)s->o->grace_s * 1000) {
			log_err("event=stop-cancel inflight=%d grace_s=%u", atomic_load(&s->inflight), s->o->grace_s);
			grpc_server_cancel_all_calls(s->csi);
			if (s->reg)
				grpc_server_cancel_all_calls(s->reg);
			cancelled = true;
		}
		if (s->stopping && s->shutdowns_pending == 0 && atomic_load(&s->inflight) == 0 && !cq_down) {
			grpc_completion_queue_shutdown(s->cq);
			drain_cq(s);	/* what is left, until GRPC_QUEUE_SHUTDOWN */
			cq_down = true;
		}
	}
}

/* Start-up failed after a server was created: stop what was started. */
static void abort_start(struct server *s)
{
	if (s->csi)
		grpc_server_shutdown_and_notify(s->csi, s->cq, &s->shutdown_tag);
	if (s->reg)
		grpc_server_shutdown_and_notify(s->reg, s->cq, &s->shutdown_tag);
	if (s->csi)
		grpc_server_cancel_all_calls(s->csi);
	if (s->reg)
		grpc_server_cancel_all_calls(s->reg);
	grpc_completion_queue_shutdown(s->cq);
	drain_cq(s);
}

int csi_serve(struct csi_ctx *ctx, const struct csi_serve_opts *o)
{
	grpc_arg args[] = {
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
		  .value.integer = CSI_GRPC_MSG_MAX },
		{ .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS,
		  .value.integer = CSI_GRPC_INFLIGHT_MAX },
	};
	grpc_channel_args cargs = { ARRAY_SIZE(args), args };
	struct server s = { .ctx = ctx, .o = o };
	_cleanup_close_ int sfd = -1;
	const char *path, *rpath = o->registration;
	int rc = 0;

	path = unix_path(o->endpoint);
	if (!path) {
		log_err("event=serve-error endpoint=%s error=\"only unix:///absolute/path endpoints are served\"",
			o->endpoint);
		return 2;
	}
	sfd = signal_fd();
	if (sfd < 0) {
		log_err("event=serve-error error=\"signalfd: %s\"", strerror(-sfd));
		return 1;
	}
	/* the call threads fork (bounded statvfs): keep gRPC's fork handlers out */
	setenv("GRPC_ENABLE_FORK_SUPPORT", "0", 1);
	grpc_init();
	s.cq = grpc_completion_queue_create_for_next(NULL);
	/* first, so a probe sees 'starting' until the CSI socket serves */
	if (metrics_http_start(o->metrics, csi_metrics(), &s.metrics) < 0) {
		log_err("event=serve-error metrics=%s error=\"cannot listen there\"", o->metrics);
		rc = 1;
		goto out;
	}
	if (start_servers(&s, path, rpath, &cargs) < 0) {
		rc = 1;
		if (!s.stopping && (s.csi || s.reg))
			abort_start(&s);
		goto out;
	}
	/* the sidecars (provisioner, resizer, livenessprobe) run as another
	 * uid: the endpoint's group may connect too */
	if (o->socket_gid >= 0 && (chown(path, (uid_t)-1, (gid_t)o->socket_gid) < 0 || chmod(path, 0660) < 0))
		log_err("event=socket-group-failed path=%s gid=%d error=\"%s\"", path, o->socket_gid, strerror(errno));
	metrics_http_ready(s.metrics, true);
	log_info("event=serving endpoint=unix:%s registration=%s kubelet_endpoint=%s zcfsd=%s node_id=%s",
		 path, rpath ? rpath : "-", o->kubelet_endpoint, ctx->socket, ctx->node_id ? ctx->node_id : "-");
	serve_loop(&s, sfd);
	log_info("event=stopped");
out:
	metrics_http_stop(s.metrics);
	if (s.csi)
		grpc_server_destroy(s.csi);
	if (s.reg)
		grpc_server_destroy(s.reg);
	grpc_completion_queue_destroy(s.cq);
	grpc_shutdown();
	(void)unlink(path);
	if (rpath)
		(void)unlink(rpath);
	return rc;
}
