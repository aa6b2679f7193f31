/* Prometheus endpoints over libmicrohttpd (metrics_http.h). */
#include <arpa/inet.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include "listen_unix.h"
#include "log.h"
#include "metrics_http.h"
#include "names.h"
#include "opmetrics.h"
#include "policy.h"

#define PLAIN "text/plain"
#define EXPOSITION "text/plain; version=0.0.4; charset=utf-8"

int metrics_listen_check(const char *spec)
{
	char host[64];
	unsigned port;

	if (spec[0] == '/')
		return path_is_normalized_absolute(spec) && strlen(spec) < 108 ? 0 : -EINVAL;
	return policy_parse_tcp_listen(spec, host, sizeof(host), &port) < 0 ? -EINVAL : 0;
}

int metrics_listen_tcp(const char *spec, int *ret)
{
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} sa;
	char host[64];
	unsigned port;
	int fam = policy_parse_tcp_listen(spec, host, sizeof(host), &port), one = 1, fd;
	socklen_t len;

	if (fam < 0)
		return -EINVAL;
	memset(&sa, 0, sizeof(sa));
	if (fam == AF_INET) {
		sa.v4.sin_family = AF_INET;
		sa.v4.sin_port = htons((uint16_t)port);
		(void)inet_pton(AF_INET, host, &sa.v4.sin_addr);
		len = sizeof(sa.v4);
	} else {
		sa.v6.sin6_family = AF_INET6;
		sa.v6.sin6_port = htons((uint16_t)port);
		(void)inet_pton(AF_INET6, host, &sa.v6.sin6_addr);
		len = sizeof(sa.v6);
	}
	fd = socket(fam, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		int r = -errno;
		safe_close(fd);
		return r;
	}
	*ret = fd;
	return 0;
}

enum MHD_Result metrics_http_answer(struct MHD_Connection *c, unsigned status, char *body, size_t len,
				    const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!body)
		return MHD_NO;
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

bool metrics_http_probe(struct MHD_Connection *c, const char *url, bool ready, enum MHD_Result *ret)
{
	if (!strcmp(url, "/healthz")) {
		*ret = metrics_http_answer(c, MHD_HTTP_OK, strdup("ok\n"), 3, PLAIN);
		return true;
	}
	if (!strcmp(url, "/readyz")) {
		*ret = metrics_http_answer(c, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
					   strdup(ready ? "ready\n" : "starting\n"), ready ? 6 : 9, PLAIN);
		return true;
	}
	return false;
}

bool metrics_http_route(struct MHD_Connection *c, const char *url, const char *method, size_t *upload_size,
			bool ready, enum MHD_Result *ret)
{
	if (*upload_size) {
		*upload_size = 0;	/* a scrape has no body; drop it */
		*ret = MHD_YES;
		return true;
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		*ret = metrics_http_answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("GET /metrics\n"), 13, PLAIN);
		return true;
	}
	if (metrics_http_probe(c, url, ready, ret))
		return true;
	if (strcmp(url, "/metrics")) {
		*ret = metrics_http_answer(c, MHD_HTTP_NOT_FOUND, strdup("GET /metrics\n"), 13, PLAIN);
		return true;
	}
	return false;
}

enum MHD_Result metrics_http_exposition(struct MHD_Connection *c, int (*write)(void *cls, FILE *f), void *cls,
					bool process)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	r = write(cls, f);
	if (process)
		metrics_write_process(f);
	if (fclose(f) != 0 || r < 0) {
		free(body);
		return MHD_NO;
	}
	return metrics_http_answer(c, MHD_HTTP_OK, body, len, EXPOSITION);
}

struct MHD_Daemon *metrics_http_daemon(unsigned flags, int fd, MHD_AccessHandlerCallback on_request, void *cls)
{
	/* The logger first: libmicrohttpd warns about any option before it.
	 * Scrapes are small and rare: few connections, little memory each. */
	return MHD_start_daemon(flags | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, cls,
				MHD_OPTION_EXTERNAL_LOGGER, log_external_warning, (void *)"metrics-http",
				MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_END);
}

struct metrics_http {
	struct MHD_Daemon *mhd;
	struct opmetrics *ops;
	atomic_bool ready;
	char *sock_path;
};

static int write_ops(void *cls, FILE *f)
{
	opmetrics_write(cls, f);
	return ferror(f) ? -EIO : 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct metrics_http *h = cls;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)con_cls;
	if (metrics_http_route(c, url, method, upload_size, atomic_load(&h->ready), &ret))
		return ret;
	return metrics_http_exposition(c, write_ops, h->ops, true);
}

int metrics_http_start(const char *spec, struct opmetrics *ops, struct metrics_http **ret)
{
	struct metrics_http *h;
	int fd = -1, r;

	*ret = NULL;
	if (!spec)
		return 0;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->ops = ops;
	if (spec[0] == '/') {
		/* the series name no tenant or volume: root and the group */
		fd = listen_unix(spec, 16, 0660, LISTEN_UNIX_NONBLOCK);
		r = fd < 0 ? fd : 0;
		if (r == 0 && !(h->sock_path = strdup(spec)))
			r = -ENOMEM;
	} else {
		r = metrics_listen_tcp(spec, &fd);
	}
	if (r == 0) {
		h->mhd = metrics_http_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, fd, on_request, h);
		r = h->mhd ? 0 : -EIO;
	}
	if (r < 0) {
		safe_close(fd);
		metrics_http_stop(h);
		return r;
	}
	log_info("event=metrics-listening socket=%s", spec);
	*ret = h;
	return 0;
}

void metrics_http_ready(struct metrics_http *h, bool on)
{
	if (h)
		atomic_store(&h->ready, on);
}

void metrics_http_stop(struct metrics_http *h)
{
	if (!h)
		return;
	if (h->mhd)
		MHD_stop_daemon(h->mhd);	/* closes the listen socket too */
	if (h->sock_path)
		(void)unlink(h->sock_path);
	free(h->sock_path);
	free(h);
}
