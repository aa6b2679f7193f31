/* zcfs-volume-plugin's request metrics: every request counted and timed
 * by endpoint and result code (common/opmetrics.c), served with /healthz
 * and /readyz by common/metrics_http.c (--metrics). */
#include "common/opmetrics.h"
#include "vp.h"

/* The endpoints' names without their '/' ("VolumeDriver.Mount"), filled
 * from vp_driver.c's table at the first use, so the two cannot differ. */
static const char *methods[OPMETRICS_MAX_METHODS + 1];
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;
static struct opmetrics ops = OPMETRICS_INIT("zcfs_volume_plugin", "Requests the volume plugin answered",
					     methods, zcfs_code_names, ZCFS_N_CODES);

static void fill_methods(void)
{
	for (size_t i = 0; i < OPMETRICS_MAX_METHODS && vp_endpoint_path(i); i++)
		methods[i] = vp_endpoint_path(i) + 1;
}

struct opmetrics *vp_metrics(void)
{
	pthread_once(&methods_once, fill_methods);
	return &ops;
}

void vp_metrics_record(const char *endpoint, enum zcfs_code code, int64_t start_us)
{
	const char *name = NULL;

	pthread_once(&methods_once, fill_methods);
	/* an unknown endpoint counts as "other": its name is the client's */
	for (size_t i = 0; methods[i]; i++)
		if (endpoint[0] == '/' && !strcmp(methods[i], endpoint + 1))
			name = methods[i];
	opmetrics_record(&ops, name, (unsigned)code < ZCFS_N_CODES ? (unsigned)code : ZCFS_INTERNAL,
			 opmetrics_now_us() - start_us);
}
