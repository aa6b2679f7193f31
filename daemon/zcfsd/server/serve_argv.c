/* zcfs-serve's command line as zcfsd runs it (docs/supervision.md, Spawn):
 * what a volume asks for (zcfsd_serve_opts_of), then the argv itself, a
 * pure function of those options (tests/unit/test_serve_argv.c). */
#include <stdio.h>
#include "common/ring_holder.h"
#include "daemon/zcfsd/budget/budget.h"
#include "server_int.h"

void zcfsd_serve_opts_of(const struct zcfsd *d, const struct zcfsd_volume *v,
			 const struct policy_tenant *t, const char *src, bool ready_fd,
			 struct zcfsd_serve_opts *o)
{
	*o = (struct zcfsd_serve_opts){
		.serve_bin = d->serve_bin,
		.source = src,
		.transport = zcfsd_volume_uses_uring(v, t) ? policy_transport_name(v->transport)
							       : "devfuse",
		.queue_depth = v->queue_depth,
		.max_write = v->max_write,
		/* A project quota: the kernel enforces the size, statfs shows it. */
		.quota_bytes = v->size_enf == ZCFSD_SIZE_PROJECT ? 0 : v->size,
		.kernel_size = v->size_enf == ZCFSD_SIZE_PROJECT,
		.read_only = v->read_only,
		.ring_memfd = v->ring_fd >= 0,
		/* Exclusive volumes cache writes back unless the policy says no. */
		.writeback = d->policy->dirty_limit != 0,
		.broker = v->broker != NULL,
		.zero_copy = zcfsd_server_gets_sys_admin(v, t),
		.ready_fd = ready_fd,
		/* A restart serves a connection whose INIT was answered before. */
		.resume = v->srv.restarts && d->serve_can_resume,
		.holder_rings = v->ring_holder && v->ring_fd >= 0 && zcfsd_volume_uses_uring(v, t),
	};
	if (o->holder_rings)
		o->transport = "uring";
}

/* What a server and a ring holder are both told: the connection's fd
 * and the rings' geometry. */
static void geometry_args(const struct zcfsd_serve_opts *o, struct zcfsd_serve_argv *a)
{
	snprintf(a->fd, sizeof(a->fd), "--fd=%d", ZCFSD_SERVER_FUSE_FD);
	snprintf(a->depth, sizeof(a->depth), "--queue-depth=%u", o->queue_depth);
	snprintf(a->max_write, sizeof(a->max_write), "--max-write=%u", o->max_write);
}

size_t zcfsd_serve_argv(const struct zcfsd_serve_opts *o, struct zcfsd_serve_argv *a)
{
	size_t k = 0;

	geometry_args(o, a);
	snprintf(a->stats, sizeof(a->stats), "--stats-fd=%d", ZCFSD_SERVER_STATS_FD);
	snprintf(a->transport, sizeof(a->transport), "--transport=%s", o->transport);
	a->argv[k++] = (char *)o->serve_bin;
	a->argv[k++] = a->fd;
	a->argv[k++] = a->stats;
	a->argv[k++] = "--ownership=xattr";
	a->argv[k++] = "--foreground";
	/* Always: seccomp + Landlock + no_new_privs inside the server
	 * (docs/security.md). No policy switch turns it off. */
	a->argv[k++] = "--sandbox";
	a->argv[k++] = a->transport;
	a->argv[k++] = a->depth;
	a->argv[k++] = a->max_write;
	/* The volume's storage belongs to this server alone: the kernel may
	 * cache entries, attributes and pages for long (docs/architecture.md). */
	a->argv[k++] = "--cache=exclusive";
	/* One reader: requests a dead server read through a cloned fd are
	 * failed by the kernel, those on the shared fd can be resent
	 * (docs/supervision.md). */
	a->argv[k++] = "--threads=1";
	if (o->read_only)
		a->argv[k++] = "--read-only";
	if (o->ring_memfd) {
		snprintf(a->ring, sizeof(a->ring), "--ring-memfd=%d", ZCFSD_SERVER_RING_FD);
		a->argv[k++] = a->ring;
	}
	/* A ring holder's rings take no registered buffers: a pool there is
	 * unregistered (where the kernel has pools), never zero-copy; the
	 * holder is told the same (one layout of the ring memfd). */
	if (o->holder_rings) {
		snprintf(a->holder, sizeof(a->holder), "--holder-rings=%d", ZCFS_HOLDER_RING_FD);
		a->argv[k++] = a->holder;
		a->argv[k++] = "--buffer-pool=auto";
	}
	if (!o->writeback)
		a->argv[k++] = "--no-writeback";
	/* Passthrough through zcfsd (zcfsd/broker/broker.c): the server has no
	 * CAP_SYS_ADMIN for FUSE_DEV_IOC_BACKING_OPEN. */
	if (o->broker) {
		a->argv[k++] = "--passthrough";
		snprintf(a->broker, sizeof(a->broker), "--broker-fd=%d", ZCFSD_SERVER_BROKER_FD);
		a->argv[k++] = a->broker;
	}
	a->argv[k++] = o->zero_copy ? "--zero-copy=auto" : "--zero-copy=off";
	if (o->quota_bytes) {
		snprintf(a->quota, sizeof(a->quota), "--quota-bytes=%llu",
			 (unsigned long long)o->quota_bytes);
		a->argv[k++] = a->quota;
	} else if (!o->kernel_size) {
		a->argv[k++] = "--count-inodes";	/* statfs's inodes in use are the volume's */
	}
	if (o->ready_fd) {
		snprintf(a->ready, sizeof(a->ready), "--ready-fd=%d", ZCFSD_SERVER_READY_FD);
		a->argv[k++] = a->ready;
	}
	if (o->resume)
		a->argv[k++] = "--resume";
	if (o->standby) {
		snprintf(a->standby, sizeof(a->standby), "--standby-fd=%d", ZCFSD_SERVER_STANDBY_FD);
		a->argv[k++] = a->standby;
	}
	/* No MOUNTPOINT: zcfs-serve would stat() it, a request to itself. */
	a->argv[k++] = (char *)o->source;
	a->argv[k] = NULL;
	return k;
}

size_t zcfsd_holder_argv(const struct zcfsd_serve_opts *o, struct zcfsd_serve_argv *a)
{
	size_t k = 0;

	geometry_args(o, a);
	snprintf(a->ring, sizeof(a->ring), "--ring-memfd=%d", ZCFSD_SERVER_RING_FD);
	a->argv[k++] = (char *)o->serve_bin;
	a->argv[k++] = "--ring-holder";
	a->argv[k++] = a->fd;
	a->argv[k++] = a->ring;
	a->argv[k++] = "--transport=uring";
	a->argv[k++] = a->depth;
	a->argv[k++] = a->max_write;
	a->argv[k++] = "--buffer-pool=auto";	/* the server's layout: room for its pool */
	a->argv[k++] = "--zero-copy=off";
	a->argv[k++] = "--foreground";
	a->argv[k++] = (char *)o->source;
	a->argv[k] = NULL;
	return k;
}
