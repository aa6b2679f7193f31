/* What zcfs-serve asks the kernel before sizing its rings, and the
 * geometry of a session: the options resolved by the one sizing in
 * common/uring_sizing.c. */
#ifndef ZCFS_URING_GEOMETRY_H
#define ZCFS_URING_GEOMETRY_H

#include <stddef.h>
#include "common/uring_sizing.h"
#include "common/util.h"

struct zcfs_options;
struct zcfs_session;

/* Creates a throwaway SQE128 ring of `entries` entries: 0 when io_uring
 * works here, with the kernel's CQE array offset in *cqes_off. */
int uring_probe_layout(unsigned entries, size_t *cqes_off) _must_check_;
/* The options' io_uring geometry on ncpus queues: --queue-depth and
 * --max-write when given, else what fits --pinned-budget (default 32 MiB);
 * pools as --buffer-pool says. The queues, --print-pinned and the INIT
 * reply's max_write all come from it. */
void uring_geometry_for_options(struct uring_geometry *g, const struct zcfs_options *o, unsigned ncpus,
				size_t page_size, size_t cqes_off);
/* The geometry the session's transport will allocate (probes the kernel). */
int uring_geometry_for_session(struct uring_geometry *g, const struct zcfs_session *se) _must_check_;

#endif
