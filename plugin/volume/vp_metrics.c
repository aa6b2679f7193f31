/* zcfs-volume-plugin's Prometheus endpoint (--metrics): every request
 * counted and timed by endpoint and result code (common/opmetrics.c),
 * /healthz, and /readyz once the plugin socket serves. */
#include <stdatomic.h>
#include "common/metrics_http.h"
#include "common/opmetrics.h"
#include "vp.h"

/* The endpoints' names without their '/' ("VolumeDriver.Mount"), filled
 * from vp_driver.c's table at the first use, so the two cannot differ. */
static const char *methods[OPMETRICS_MAX_METHODS + 1];
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;
static struct opmetrics ops = OPMETRICS_INIT("zcfs_volume_plugin", "Requests the volume plugin answered",
					     methods, zcfs_code_names, ZCFS_N_CODES);
static atomic_bool serving;
static struct metrics_http *http;

static void fill_methods(void)
{
	for (size_t i = 0; i < OPMETRICS_MAX_METHODS && vp_endpoint_path(i); i++)
		methods[i] = vp_endpoint_path(i) + 1;
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

static int write_metrics(void *cls, FILE *f)
{
	(void)cls;
	pthread_once(&methods_once, fill_methods);
	opmetrics_write(&ops, f);
	return ferror(f) ? -EIO : 0;
}

static bool ready(void *cls)
{
	(void)cls;
	return atomic_load(&serving);
}

int vp_metrics_start(const char *spec)
{
	const struct metrics_http_ops o = { .write = write_metrics, .ready = ready };

	return spec ? metrics_http_start(spec, &o, &http) : 0;
}

void vp_metrics_serving(bool on)
{
	atomic_store(&serving, on);
}

void vp_metrics_stop(void)
{
	metrics_http_stop(http);
	http = NULL;
}
