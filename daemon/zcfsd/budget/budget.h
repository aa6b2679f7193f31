/* Pinned memory: what a volume's servers pin, a new volume's default
 * geometry, the tenant's charge and the check before a first publish. */
#ifndef ZCFSD_BUDGET_H
#define ZCFSD_BUDGET_H

#include "daemon/zcfsd/model/model.h"

/* Whether V's server runs on io_uring: its transport and tenant allow
 * it and transport auto did not fall back to /dev/fuse at the publish. */
bool zcfsd_volume_uses_uring(const struct zcfsd_volume *v, const struct policy_tenant *t);
/* Why V's data path is what it is (volume.get data_path_reason). */
void zcfsd_data_path_reason(const struct zcfsd_volume *v, const struct policy_tenant *t,
			    char *buf, size_t len);
/* A new volume's queue depth and max_write (0: not given): on io_uring
 * the default geometry of ncpus queues (common/uring_sizing.h,
 * at most URING_DEFAULT_PINNED_BUDGET), else the preferred ones. */
void zcfsd_resolve_geometry(unsigned ncpus, bool uring, uint32_t *depth, uint32_t *max_write);
/* Deepest queue (1..1024) whose pinned bytes fit in FREE; 0 if none. */
uint32_t zcfsd_depth_that_fits(unsigned ncpus, uint32_t max_write, uint64_t free_bytes);
/* The bytes V's servers pin (0 on /dev/fuse), exactly what zcfs-serve
 * allocates for the options zcfsd passes. */
int zcfsd_pinned_bytes(struct zcfsd *d, const struct zcfsd_volume *v,
		       const struct policy_tenant *t, uint64_t *ret);
/* What V pins in each layout its servers may take (both 0 on /dev/fuse):
 * stock entries (a payload buffer each: 6.18, and what zcfsd charges)
 * and a buffer pool the kernel copies into by its user address
 * (unregistered: only rings and entry headers are pinned). A registered
 * pool pins as much as the stock layout. */
void zcfsd_pinned_layouts(struct zcfsd *d, const struct zcfsd_volume *v, const struct policy_tenant *t,
			  uint64_t *stock, uint64_t *pool);
uint64_t zcfsd_tenant_used(struct zcfsd *d, const char *tenant);
/* Whether V's first publish fits the tenant's budget and what zcfsd may
 * grant as RLIMIT_MEMLOCK; *pinned: the bytes to charge. RESOURCE_EXHAUSTED
 * with the queue depth that would fit, if any; transport auto instead
 * falls back to /dev/fuse (v->fallback says why) when io_uring does not
 * fit or the kernel does not run it. */
int zcfsd_budget_check(struct zcfsd *d, struct zcfsd_volume *v, const struct policy_tenant *t,
		       uint64_t *pinned, struct zcfs_err *e);
unsigned zcfsd_possible_cpus(void);
/* zcfs-serve --help mentions OPTION (features appear as options). */
bool zcfsd_serve_has_option(const char *serve_bin, const char *option);

#endif
