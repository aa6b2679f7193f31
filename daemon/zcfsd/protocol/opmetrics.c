/* Control-plane metrics: volume.create, delete, publish and unpublish
 * counted and timed by result code, from the request's arrival to its
 * answer (a deferred publish's wait for its server included). Kept in
 * zcfsd's loop, exported with the rest (metrics.c). */
#include <string.h>
#include "metrics.h"

static const char *const methods[] = { "volume.create", "volume.delete", "volume.publish",
				       "volume.unpublish" };
#define N_METHODS ARRAY_SIZE(methods)
#define N_CODES (ZCFS_OUT_OF_RANGE + 1)
static const double bounds[] = { 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30 };
#define N_BOUNDS ARRAY_SIZE(bounds)

static struct {
	uint64_t count, buckets[N_BOUNDS];
	double sum;
} ops[N_METHODS][N_CODES];

void zcfsd_op_record(const char *method, enum zcfs_code code, int64_t us)
{
	double s = (double)(us > 0 ? us : 0) / 1e6;

	if ((unsigned)code >= N_CODES)
		code = ZCFS_INTERNAL;
	for (size_t m = 0; m < N_METHODS; m++) {
		if (strcmp(method, methods[m]))
			continue;
		ops[m][code].count++;
		ops[m][code].sum += s;
		for (size_t b = 0; b < N_BOUNDS; b++)
			if (s <= bounds[b])
				ops[m][code].buckets[b]++;
		return;
	}
}

void zcfsd_metrics_write_ops(FILE *f)
{
	fprintf(f, "# HELP zcfs_control_requests_total Control requests zcfsd answered, by method and result code.\n"
		   "# TYPE zcfs_control_requests_total counter\n");
	for (size_t m = 0; m < N_METHODS; m++)
		for (int c = 0; c < N_CODES; c++)
			if (ops[m][c].count)
				fprintf(f, "zcfs_control_requests_total{method=\"%s\",code=\"%s\"} %llu\n", methods[m],
					zcfs_code_name((enum zcfs_code)c), (unsigned long long)ops[m][c].count);
	fprintf(f, "# HELP zcfs_control_request_duration_seconds Time from a control request's arrival to its answer.\n"
		   "# TYPE zcfs_control_request_duration_seconds histogram\n");
	for (size_t m = 0; m < N_METHODS; m++)
		for (int c = 0; c < N_CODES; c++) {
			const char *code = zcfs_code_name((enum zcfs_code)c);
			if (!ops[m][c].count)
				continue;
			for (size_t b = 0; b < N_BOUNDS; b++)
				fprintf(f, "zcfs_control_request_duration_seconds_bucket{method=\"%s\",code=\"%s\",le=\"%g\"} %llu\n",
					methods[m], code, bounds[b], (unsigned long long)ops[m][c].buckets[b]);
			fprintf(f, "zcfs_control_request_duration_seconds_bucket{method=\"%s\",code=\"%s\",le=\"+Inf\"} %llu\n"
				   "zcfs_control_request_duration_seconds_sum{method=\"%s\",code=\"%s\"} %.6f\n"
				   "zcfs_control_request_duration_seconds_count{method=\"%s\",code=\"%s\"} %llu\n",
				methods[m], code, (unsigned long long)ops[m][c].count, methods[m], code, ops[m][c].sum,
				methods[m], code, (unsigned long long)ops[m][c].count);
		}
}
