/* Control-plane metrics: volume.create, delete, publish and unpublish
 * counted and timed by result code, from the request's arrival to its
 * answer (a deferred publish's wait for its server included). Kept in
 * zcfsd's loop (common/opmetrics.c), exported with the rest (metrics.c). */
#include <string.h>
#include "common/opmetrics.h"
#include "metrics.h"

static const char *const methods[] = { "volume.create", "volume.delete", "volume.publish",
				       "volume.unpublish", NULL };
static struct opmetrics ops = OPMETRICS_INIT("zcfs_control", "Control requests zcfsd answered", methods,
					     zcfs_code_names, ZCFS_N_CODES);

void zcfsd_op_record(const char *method, enum zcfs_code code, int64_t us)
{
	/* only the four calls that change volumes are counted */
	for (size_t m = 0; methods[m]; m++)
		if (!strcmp(method, methods[m])) {
			opmetrics_record(&ops, method,
					 (unsigned)code < ZCFS_N_CODES ? (unsigned)code : ZCFS_INTERNAL, us);
			return;
		}
}

void zcfsd_metrics_write_ops(FILE *f)
{
	opmetrics_write(&ops, f);
}
