/* The HTTP side of a Prometheus endpoint, shared by zcfsd (its listener
 * runs in zcfsd's epoll loop, scoped by the scraper: protocol/metrics.c)
 * and the plugins (zcfs-csi serve, zcfs-volume-plugin: --metrics, a
 * thread of libmicrohttpd's own): the TCP listener, the answer, the
 * /healthz and /readyz probes. */
#ifndef ZCFS_METRICS_HTTP_H
#define ZCFS_METRICS_HTTP_H

#include <stdbool.h>
#include <stdio.h>
#include <microhttpd.h>
#include "util.h"

/* SPEC is an absolute unix socket path (under 108 bytes) or IP:PORT /
 * [IPv6]:PORT: 0, else -EINVAL. */
int metrics_listen_check(const char *spec) _must_check_;
/* A listening TCP socket (non-blocking) on "IP:PORT" / "[IPv6]:PORT". */
int metrics_listen_tcp(const char *spec, int *ret) _must_check_;
/* Queues BODY (taken, freed by libmicrohttpd) with STATUS and TYPE. */
enum MHD_Result metrics_http_answer(struct MHD_Connection *c, unsigned status, char *body, size_t len,
				    const char *type);
/* /healthz (200: the process answers) and /readyz (200 when READY, else
 * 503): true with *RET set when URL is one of them. */
bool metrics_http_probe(struct MHD_Connection *c, const char *url, bool ready, enum MHD_Result *ret);

/* What every scrape handler does first: drops a body, answers a method
 * other than GET/HEAD (405), the probes (READY for /readyz) and any URL
 * but /metrics (404): true with *RET set when it answered. */
bool metrics_http_route(struct MHD_Connection *c, const char *url, const char *method, size_t *upload_size,
			bool ready, enum MHD_Result *ret);
/* GET /metrics: what WRITE(CLS, f) writes (< 0: no answer), and with
 * PROCESS the process_* families. */
enum MHD_Result metrics_http_exposition(struct MHD_Connection *c, int (*write)(void *cls, FILE *f), void *cls,
					bool process);

/* libmicrohttpd on the listening FD (taken) with FLAGS (MHD_USE_EPOLL for
 * zcfsd's loop, a thread of its own for the plugins); NULL on failure. */
struct MHD_Daemon *metrics_http_daemon(unsigned flags, int fd, MHD_AccessHandlerCallback on_request, void *cls);

/* A plugin's endpoint (zcfs-csi serve, zcfs-volume-plugin: --metrics):
 * GET /metrics writes OPS's two families, then the process_* ones;
 * /readyz is 200 between metrics_http_ready(h, true) and (false).
 * Listens on SPEC: an absolute unix socket path (mode 0660, a stale
 * socket replaced, never another file) or a TCP address, and serves from
 * a thread of its own until metrics_http_stop. SPEC NULL: nothing starts,
 * *ret is NULL, and the other two calls take that NULL. */
struct opmetrics;
struct metrics_http;
int metrics_http_start(const char *spec, struct opmetrics *ops, struct metrics_http **ret) _must_check_;
void metrics_http_ready(struct metrics_http *h, bool on);
void metrics_http_stop(struct metrics_http *h);

#endif
