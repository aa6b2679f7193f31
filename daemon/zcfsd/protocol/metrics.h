/* zcfsd's Prometheus endpoint (policy `metrics.listen`): libmicrohttpd on
 * a unix socket, driven from zcfsd's own epoll loop so every scrape reads
 * the daemon's state on the daemon's thread (no locks). */
#ifndef ZCFSD_METRICS_H
#define ZCFSD_METRICS_H

#include <stdio.h>
#include "common/zcfs_err.h"
#include "daemon/zcfsd/model/model.h"

/* Starts serving when the policy names a socket (0 and nothing otherwise);
 * the path is read once, a changed path takes a zcfsd restart. MHD's
 * epoll fd is a watch of zcfsd's loop, its timeouts a deadline
 * (d->metrics). */
int zcfsd_metrics_start(struct zcfsd *d) _must_check_;
void zcfsd_metrics_stop(struct zcfsd *d);

/* The exposition text itself (unit tests): every tenant's series with
 * PEER NULL, else only those of the tenants PEER manages. */
struct zcfsd_peer;
int zcfsd_metrics_write(struct zcfsd *d, const struct zcfsd_peer *peer, FILE *f) _must_check_;
/* Control-plane requests by method and result code (opmetrics.c): one
 * answered request of METHOD after US microseconds; the families. */
void zcfsd_op_record(const char *method, enum zcfs_code code, int64_t us);
void zcfsd_metrics_write_ops(FILE *f);

#endif
