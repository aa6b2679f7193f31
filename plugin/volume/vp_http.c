/* HTTP/1.1 front of the volume plugin, by libmicrohttpd on the caller's
 * listening unix socket. Bodies are collected up to VP_BODY_MAX (a larger
 * Content-Length is refused before the upload; a larger chunked body is
 * drained and refused), any Content-Type/Accept is accepted, only POST is
 * served. One internal thread: requests run one at a time. Connection
 * limits and deadlines: vp_conn.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <string.h>
#include <strings.h>
#include "common/log.h"
#include "common/opmetrics.h"
#include "common/parse.h"
#include "vp.h"
#include "vp_conn.h"

struct conn {
	char *buf;
	size_t len;
	bool too_big;
	int64_t start_us;	/* the request's arrival (its metrics) */
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(s), (void *)s, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, VP_CONTENT_TYPE);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		vp_conn_answer(c, true);
	return ret;
}

/* {"Err": MSG} with STATUS: 500 for the plugin protocol's errors (what
 * Docker and Podman read), 400 for a request HTTP itself rejects. */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	json_object *o = json_object_new_object();
	enum MHD_Result r;

	json_object_object_add(o, "Err", json_object_new_string(msg));
	r = reply(c, status, o);
	json_object_put(o);
	return r;
}

static enum MHD_Result reply_err(struct MHD_Connection *c, const char *msg)
{
	return reply_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	unsigned *n = cls;

	(void)kind;
	(void)value;
	*n += !strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct vp *v = cls;
	struct conn *k = *con_cls;
	json_object *resp = NULL;
	enum zcfs_code code;
	enum MHD_Result ret;
	int status;

	(void)version;
	if (!k) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		uint64_t clen;
		k = calloc(1, sizeof(*k));
		if (!k)
			return MHD_NO;
		*con_cls = k;
		k->start_us = opmetrics_now_us();
		unsigned n_cl = 0;
		if (strcmp(method, MHD_HTTP_METHOD_POST))
			return reply_err(c, "INVALID_ARGUMENT: only POST is served");
		/* Two lengths: a proxy in front may frame the body by the other
		 * one (request smuggling). */
		MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &n_cl);
		if (n_cl > 1)
			return reply_error(c, MHD_HTTP_BAD_REQUEST, "INVALID_ARGUMENT: more than one Content-Length");
		if (cl && (parse_u64(cl, 0, UINT64_MAX, &clen) < 0 || clen > VP_BODY_MAX)) {
			char msg[128];
			snprintf(msg, sizeof(msg), "INVALID_ARGUMENT: request body larger than %d bytes", VP_BODY_MAX);
			return reply_err(c, msg);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (k->too_big || k->len + n > VP_BODY_MAX) {
			k->too_big = true;	/* drain, answer at the end */
			return MHD_YES;
		}
		char *nb = realloc(k->buf, k->len + n + 1);
		if (!nb)
			return MHD_NO;
		memcpy(nb + k->len, upload, n);
		k->buf = nb;
		k->len += n;
		k->buf[k->len] = '\0';
		return MHD_YES;
	}
	if (k->too_big) {
		char msg[128];
		snprintf(msg, sizeof(msg), "INVALID_ARGUMENT: request body larger than %d bytes", VP_BODY_MAX);
		return reply_err(c, msg);
	}
	vp_conn_handler(c, true);
	status = vp_handle_code(v, url, k->buf ? k->buf : "", k->len, &resp, &code);
	vp_conn_handler(c, false);
	vp_metrics_record(url, code, k->start_us);
	if (status != 200)
		log_warn("event=request-failed endpoint=%.64s %s", url,
			 json_object_get_string(json_object_object_get(resp, "Err")));
	else
		log_debug("event=request endpoint=%.64s", url);
	ret = reply(c, (unsigned)status, resp);
	json_object_put(resp);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn *k = *con_cls;

	(void)cls;
	(void)toe;
	vp_conn_answer(c, false);
	if (k) {
		free(k->buf);
		free(k);
	}
	*con_cls = NULL;
}

int vp_http_start(struct vp *v, int listen_fd, struct MHD_Daemon **ret, struct zcfs_err *e)
{
	struct MHD_Daemon *d;

	if (vp_conn_start() < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -EAGAIN, "cannot start the connection watchdog thread");
	/* The connection limit leaves room for connections vp_conn.c closed
	 * and libmicrohttpd has not reaped yet; vp_conn.c keeps the real one.
	 * PER_IP_CONNECTION_LIMIT means nothing on a unix socket (no address):
	 * vp_conn.c limits per peer uid instead. */
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG,
			     0, NULL, NULL, on_request, v,
			     MHD_OPTION_EXTERNAL_LOGGER, log_external_warning, (void *)"http",
			     MHD_OPTION_LISTEN_SOCKET, listen_fd,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
			     MHD_OPTION_NOTIFY_CONNECTION, vp_conn_notify, NULL,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(VP_CONN_WAIT_MS / 1000),
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)VP_CONN_SLOTS,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
			     MHD_OPTION_END);
	if (!d) {
		vp_conn_stop();
		return zcfs_fail(e, ZCFS_INTERNAL, -EIO, "libmicrohttpd did not start on the listen socket");
	}
	*ret = d;
	return 0;
}

void vp_http_stop(struct MHD_Daemon *d)
{
	struct vp_conn_counts k;

	if (d)
		MHD_stop_daemon(d);
	vp_conn_stop();
	k = vp_conn_counts();
	log_info("event=connections accepted=%llu closed_uid_limit=%u closed_limit=%u "
		 "closed_request_timeout=%u closed_answer_not_taken=%u", k.accepted, k.evicted_uid,
		 k.evicted_total, k.dropped_request, k.dropped_answer);
}
