/* Prometheus text exposition (format 0.0.4) of zcfsd's volumes and
 * tenants over HTTP on the unix socket named by the policy's
 * `metrics.listen`. libmicrohttpd runs without a thread of its own
 * (MHD_USE_EPOLL, external polling): its epoll fd is a watch of zcfsd's
 * loop, its timeout a deadline, and requests are answered there, on the thread
 * that owns every volume, so a scrape never sees a half-updated volume. */
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include "common/log.h"
#include "common/metrics_http.h"
#include "common/opmetrics.h"
#include "common/version.h"
#include "daemon/zcfsd/budget/budget.h"
#include "daemon/zcfsd/state/state.h"
#include "protocol.h"
#include "metrics.h"

/* The listener (d->metrics): libmicrohttpd's epoll fd watched in zcfsd's
 * loop, and its next timeout as a deadline. */
struct zcfsd_metrics {
	struct MHD_Daemon *mhd;
	char *sock_path;		/* a unix socket's path (removed at stop); NULL: TCP */
	struct zcfsd_watch watch;
	struct zcfsd_deadline due;
};

/* Label values: the exposition format escapes \, " and newline. Ids and
 * tenant names are already restricted, this keeps it true for any. */
static void label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void vol_sample(FILE *f, const char *name, const struct zcfsd_volume *v, const char *extra,
		       unsigned long long value)
{
	fprintf(f, "%s{volume=\"", name);
	label(f, v->id);
	fputs("\",tenant=\"", f);
	label(f, v->tenant);
	fprintf(f, "\"%s} %llu\n", extra ? extra : "", value);
}

static void tenant_sample(FILE *f, const char *name, const char *tenant, unsigned long long value)
{
	fprintf(f, "%s{tenant=\"", name);
	label(f, tenant);
	fprintf(f, "\"} %llu\n", value);
}

/* Which series a scrape holds: NULL peer = every tenant's (root, a
 * full_view uid/gid, a TCP listener); else the tenants the peer manages,
 * as on the control socket (docs/security.md, "Metrics endpoint"). */
struct scope {
	struct zcfsd *d;
	const struct zcfsd_peer *peer;
};

static bool vol_shown(const struct scope *s, const struct zcfsd_volume *v)
{
	return !s->peer || zcfsd_peer_manages_volume(s->d, s->peer, v);
}

static bool tenant_shown(const struct scope *s, const struct policy_tenant *t)
{
	return !s->peer || zcfsd_peer_manages(s->peer, t);
}

#define for_shown_volumes(v, s) \
	for ((v) = (s)->d->volumes; (v); (v) = (v)->next) if (vol_shown((s), (v)))

/* A server counts as up while its pidfd says the process exists. */
static bool server_up(const struct zcfsd_volume *v)
{
	if (!v->srv.pid || v->srv.pidfd < 0)
		return false;
	return pidfd_send_signal(v->srv.pidfd, 0, NULL, 0) == 0;
}

/* What the servers count in the memory they share with us (zcfs_stats.h):
 * requests, errors, bytes and the request latency histogram. */
static void write_request_stats(const struct scope *sc, FILE *f)
{
	static const struct { const char *name, *help; size_t off; } counters[] = {
		{ "zcfs_volume_requests_total", "FUSE requests the volume's servers answered.",
		  offsetof(struct zcfs_stats, requests) },
		{ "zcfs_volume_errors_total", "FUSE requests answered with an error.",
		  offsetof(struct zcfs_stats, errors) },
		{ "zcfs_volume_read_bytes_total", "Bytes returned by READ.",
		  offsetof(struct zcfs_stats, bytes_read) },
		{ "zcfs_volume_written_bytes_total", "Bytes accepted by WRITE.",
		  offsetof(struct zcfs_stats, bytes_written) },
	};
	const struct zcfsd_volume *v;
	char extra[64];

	for (size_t c = 0; c < ARRAY_SIZE(counters); c++) {
		family(f, counters[c].name, "counter", counters[c].help);
		for_shown_volumes(v, sc)
			if (v->stats)
				vol_sample(f, counters[c].name, v, NULL,
					   zcfs_stats_read((const uint64_t *)((const char *)v->stats +
									      counters[c].off)));
	}
	family(f, "zcfs_volume_request_duration_seconds", "histogram",
	       "Time from a request's arrival in the server to its reply.");
	for_shown_volumes(v, sc) {
		uint64_t cum = 0;
		if (!v->stats)
			continue;
		for (unsigned b = 0; b < ZCFS_STATS_LAT_BUCKETS; b++) {
			cum += zcfs_stats_read(&v->stats->latency[b]);
			if (b + 1 < ZCFS_STATS_LAT_BUCKETS)
				snprintf(extra, sizeof(extra), ",le=\"%g\"", (double)(1ULL << b) / 1e6);
			else
				snprintf(extra, sizeof(extra), ",le=\"+Inf\"");
			vol_sample(f, "zcfs_volume_request_duration_seconds_bucket", v, extra, cum);
		}
		fprintf(f, "zcfs_volume_request_duration_seconds_sum{volume=\"");
		label(f, v->id);
		fputs("\",tenant=\"", f);
		label(f, v->tenant);
		fprintf(f, "\"} %.9f\n", (double)zcfs_stats_read(&v->stats->latency_ns_sum) / 1e9);
		vol_sample(f, "zcfs_volume_request_duration_seconds_count", v, NULL, cum);
	}
}

static uint64_t tenant_pinned(struct zcfsd *d, const struct policy_tenant *t)
{
	return zcfsd_tenant_used(d, t->name);
}

static uint64_t tenant_budget(struct zcfsd *d, const struct policy_tenant *t)
{
	(void)d;
	return t->memlock_budget;
}

static uint64_t tenant_volumes(struct zcfsd *d, const struct policy_tenant *t)
{
	return zcfsd_tenant_volume_count(d, t->name);
}

static uint64_t tenant_max_volumes(struct zcfsd *d, const struct policy_tenant *t)
{
	(void)d;
	return t->max_volumes;
}

/* The per-tenant gauges: a family each, one sample per policy tenant. */
static void write_tenant_metrics(const struct scope *sc, FILE *f)
{
	static const struct {
		const char *name, *help;
		uint64_t (*value)(struct zcfsd *d, const struct policy_tenant *t);
	} gauges[] = {
		{ "zcfs_tenant_pinned_bytes",
		  "Pinned bytes granted to the tenant's published volumes together.", tenant_pinned },
		{ "zcfs_tenant_memlock_budget_bytes", "The tenant's memlock_budget from the policy.",
		  tenant_budget },
		{ "zcfs_tenant_volumes", "The tenant's volumes, published or not.", tenant_volumes },
		{ "zcfs_tenant_max_volumes", "The tenant's max_volumes from the policy.",
		  tenant_max_volumes },
	};

	for (size_t g = 0; g < ARRAY_SIZE(gauges); g++) {
		family(f, gauges[g].name, "gauge", gauges[g].help);
		for (size_t i = 0; i < sc->d->policy->n_tenants; i++)
			if (tenant_shown(sc, &sc->d->policy->tenants[i]))
				tenant_sample(f, gauges[g].name, sc->d->policy->tenants[i].name,
					      gauges[g].value(sc->d, &sc->d->policy->tenants[i]));
	}
}

/* What a volume pins with and without a buffer pool, and what its
 * server says it locked (state.c's pinned_layouts). */
static void write_pinned_layouts(const struct scope *sc, FILE *f)
{
	const struct zcfsd_volume *v;
	uint64_t stock, pool;

	family(f, "zcfs_volume_pinned_layout_bytes", "gauge",
	       "Pinned bytes of the volume's io_uring layouts: stock (a payload buffer per entry, "
	       "what is charged) and pool_unregistered (a 7.46 buffer pool the kernel copies into "
	       "by address: rings and entry headers only); 0 on /dev/fuse.");
	for_shown_volumes(v, sc) {
		zcfsd_pinned_layouts(sc->d, v, policy_find_tenant(sc->d->policy, v->tenant), &stock, &pool);
		vol_sample(f, "zcfs_volume_pinned_layout_bytes", v, ",layout=\"stock\"", stock);
		vol_sample(f, "zcfs_volume_pinned_layout_bytes", v, ",layout=\"pool_unregistered\"", pool);
	}
	family(f, "zcfs_volume_server_pinned_bytes", "gauge",
	       "What the volume's running server says it locked (its serving line's pinned=), "
	       "labelled with its buffer pool (off, unregistered, registered).");
	for_shown_volumes(v, sc)
		if (v->srv.pid && v->log.served_bufpool[0]) {
			char extra[40];
			snprintf(extra, sizeof(extra), ",bufpool=\"%.16s\"", v->log.served_bufpool);
			vol_sample(f, "zcfs_volume_server_pinned_bytes", v, extra, v->log.served_pinned);
		}
}

/* zcfs_volume_data_path: 1 per volume, labelled with the path its
 * server is on and why (transport auto's fallback to /dev/fuse names
 * what did not fit). */
static void write_data_path(const struct scope *sc, FILE *f)
{
	const struct zcfsd_volume *v;
	char why[256];

	family(f, "zcfs_volume_data_path", "gauge",
	       "Always 1: path is the data path the volume's server runs on (uring or devfuse), "
	       "reason why (transport auto falls back to devfuse when io_uring does not fit).");
	for_shown_volumes(v, sc) {
		const struct policy_tenant *t = policy_find_tenant(sc->d->policy, v->tenant);
		zcfsd_data_path_reason(v, t, why, sizeof(why));
		fputs("zcfs_volume_data_path{volume=\"", f);
		label(f, v->id);
		fputs("\",tenant=\"", f);
		label(f, v->tenant);
		fprintf(f, "\",path=\"%s\",reason=\"", t && zcfsd_volume_uses_uring(v, t) ? "uring" : "devfuse");
		label(f, why);
		fputs("\"} 1\n", f);
	}
}

int zcfsd_metrics_write(struct zcfsd *d, const struct zcfsd_peer *peer, FILE *f)
{
	const struct scope sc = { .d = d, .peer = peer };
	static const char *const states[] = { "created", "publishing", "published", "restarting", "stalled" };
	const struct zcfsd_volume *v;
	char extra[64];
	size_t i;

	family(f, "zcfs_volume_state", "gauge",
	       "1 for the volume's current state (created, publishing, published, restarting, stalled), else 0.");
	for_shown_volumes(v, &sc)
		for (i = 0; i < ARRAY_SIZE(states); i++) {
			snprintf(extra, sizeof(extra), ",state=\"%s\"", states[i]);
			vol_sample(f, "zcfs_volume_state", v, extra, !strcmp(zcfsd_volume_state(v), states[i]));
		}
	family(f, "zcfs_volume_server_up", "gauge", "1 while the volume's zcfs-serve process runs.");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_server_up", v, NULL, server_up(v));
	family(f, "zcfs_volume_restarts_total", "counter",
	       "Server restarts of the volume since it was published (kept across zcfsd restarts).");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_restarts_total", v, NULL, v->srv.restarts);
	family(f, "zcfs_volume_stalls_total", "counter",
	       "Times zcfsd found the volume's server holding requests without answering for "
	       "stall_timeout_ms and killed it (since zcfsd started).");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_stalls_total", v, NULL, v->stalls);
	family(f, "zcfs_volume_seccomp_kills_total", "counter",
	       "Times the volume's server was killed by SIGSYS (its seccomp filter; since zcfsd started).");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_seccomp_kills_total", v, NULL, v->seccomp_kills);
	family(f, "zcfs_volume_log_dropped_bytes_total", "counter",
	       "Bytes of the volume's server output zcfsd read but did not write to its log file "
	       "(over the rate limit, or past the line length; since zcfsd started).");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_log_dropped_bytes_total", v, NULL, v->log.dropped_bytes);
	family(f, "zcfs_volume_pinned_bytes", "gauge",
	       "Pinned (memlock) bytes charged to the tenant for this volume.");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_pinned_bytes", v, NULL, v->pinned);
	write_pinned_layouts(&sc, f);
	family(f, "zcfs_volume_targets", "gauge", "Mounted publish targets of the volume.");
	for_shown_volumes(v, &sc)
		vol_sample(f, "zcfs_volume_targets", v, NULL, v->n_targets);

	write_data_path(&sc, f);
	write_request_stats(&sc, f);

	write_tenant_metrics(&sc, f);

	family(f, "zcfs_daemon_start_time_seconds", "gauge", "Unix time zcfsd started.");
	fprintf(f, "zcfs_daemon_start_time_seconds %lld\n", (long long)d->started_at);
	family(f, "zcfs_build_info", "gauge", "Always 1; the labels say which zcfsd answers.");
	fprintf(f, "zcfs_build_info{version=\"%s\",fuse_protocol=\"%d.%d\"} 1\n", ZCFS_VERSION,
		ZCFS_FUSE_MAJOR, ZCFS_FUSE_MINOR);
	zcfsd_metrics_write_ops(f);
	metrics_write_process(f);
	return ferror(f) ? -EIO : 0;
}

static bool id_in(uint32_t id, const uint32_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Root and the policy's metrics.full_view_uids / full_view_gids (a
 * Prometheus) read every series. */
static bool full_view(const struct policy *p, const struct zcfsd_peer *peer)
{
	if (peer->uid == 0 || id_in(peer->uid, p->metrics_uids, p->n_metrics_uids) ||
	    id_in(peer->gid, p->metrics_gids, p->n_metrics_gids))
		return true;
	for (size_t i = 0; i < peer->n_groups; i++)
		if (id_in(peer->groups[i], p->metrics_gids, p->n_metrics_gids))
			return true;
	return false;
}

/* The scrape's peer on the unix socket, NULL (*RET) for the whole view:
 * a TCP listener has no peer credentials, whoever reaches it sees all. */
static int scrape_peer(struct zcfsd *d, struct MHD_Connection *c, struct zcfsd_peer *peer,
		       const struct zcfsd_peer **ret)
{
	const union MHD_ConnectionInfo *ci;

	*ret = NULL;
	if (!d->metrics->sock_path)
		return 0;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return -EIO;
	if (zcfsd_peer_read(ci->connect_fd, peer) < 0)
		return -EPERM;
	if (!full_view(d->policy, peer))
		*ret = peer;
	return 0;
}

struct scrape {
	struct zcfsd *d;
	const struct zcfsd_peer *scope;
};

static int write_scrape(void *cls, FILE *f)
{
	const struct scrape *s = cls;

	return zcfsd_metrics_write(s->d, s->scope, f);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct scrape s = { .d = cls };
	struct zcfsd_peer peer;
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	(void)con_cls;
	/* Probes: the loop answering is the liveness; ready once the control
	 * socket listens with a policy loaded (what zcfsctl and the plugins
	 * need). Neither says anything about a tenant. */
	if (metrics_http_route(c, url, method, upload_size, s.d->listen_fd >= 0 && s.d->policy, &ret))
		return ret;
	if (scrape_peer(s.d, c, &peer, &s.scope) < 0)
		return metrics_http_answer(c, MHD_HTTP_FORBIDDEN, strdup("who are you?\n"), 13, "text/plain");
	/* process_* is written by zcfsd_metrics_write itself (unit tests see it) */
	return metrics_http_exposition(c, write_scrape, &s, false);
}

static void run(struct zcfsd *d, struct zcfsd_metrics *m);

static void readable(struct zcfsd *d, void *obj, uint32_t events)
{
	(void)events;
	run(d, obj);
}

static void due(struct zcfsd *d, void *obj)
{
	run(d, obj);
}

/* MHD answers what is there; its next timeout (a connection's) re-armed. */
static void run(struct zcfsd *d, struct zcfsd_metrics *m)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (MHD_run(m->mhd) != MHD_YES)
		log_debug("event=metrics-run-failed");
	if (MHD_get_timeout(m->mhd, &t) == MHD_YES)
		zcfsd_deadline_at(d, &m->due, zcfsd_now_ms() + (int64_t)MIN(t, 60000), due, m);
	else
		zcfsd_deadline_cancel(d, &m->due);
}

/* Its listener on the policy's address (-errno), not yet in the loop. */
static int start_mhd(struct zcfsd *d, struct zcfsd_metrics *m)
{
	int fd = -1, r;

	/* Volume ids and tenant names are not for everyone: root and the
	 * admin group, like the control socket; never replace a non-socket. */
	if (d->policy->metrics_listen[0] == '/')
		r = zcfsd_listen_unix(d, d->policy->metrics_listen, 16, false, &fd);
	else	/* a TCP address: whoever reaches it reads the metrics (docs/orchestrators.md) */
		r = metrics_listen_tcp(d->policy->metrics_listen, &fd);
	if (r < 0)
		return r;
	m->mhd = metrics_http_daemon(MHD_USE_EPOLL, fd, on_request, d);
	if (!m->mhd) {
		safe_close(fd);
		if (d->policy->metrics_listen[0] == '/')
			(void)unlink(d->policy->metrics_listen);
		return -EIO;
	}
	if (d->policy->metrics_listen[0] == '/')
		m->sock_path = strdup(d->policy->metrics_listen);
	return 0;
}

int zcfsd_metrics_start(struct zcfsd *d)
{
	const union MHD_DaemonInfo *info;
	struct zcfsd_metrics *m;
	int r;

	if (!d->policy->metrics_listen)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	d->metrics = m;
	r = start_mhd(d, m);
	if (r < 0) {
		zcfsd_metrics_stop(d);
		return r;
	}
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	r = info ? zcfsd_watch(d, &m->watch, info->epoll_fd, EPOLLIN, readable, m) : -EIO;
	if (r < 0) {
		zcfsd_metrics_stop(d);
		return r;
	}
	log_info("event=metrics-listening socket=%s", d->policy->metrics_listen);
	return 0;
}

void zcfsd_metrics_stop(struct zcfsd *d)
{
	struct zcfsd_metrics *m = d->metrics;

	if (!m)
		return;
	zcfsd_unwatch(d, &m->watch);
	zcfsd_deadline_cancel(d, &m->due);
	if (m->mhd)
		MHD_stop_daemon(m->mhd);	/* closes the listen socket too */
	if (m->sock_path)
		(void)unlink(m->sock_path);
	free(m->sock_path);
	free(m);
	d->metrics = NULL;
}
