/* zcfs-csi serve's Prometheus endpoint (--metrics): every gRPC call
 * counted and timed by method and gRPC status code (common/opmetrics.c),
 * /healthz, and /readyz while the CSI socket serves. */
#include <grpc/status.h>
#include <stdatomic.h>
#include "csi_grpc.h"
#include "csi_method_list.h"
#include "common/metrics_http.h"
#include "common/opmetrics.h"

#define NAME(service, method, prefix, handler, inline_ok) #method,
static const char *const methods[] = { CSI_METHODS(NAME) "GetInfo", "NotifyRegistrationStatus", NULL };
#undef NAME
/* grpc_status_code's names, by number (a status out of range: UNAUTHENTICATED's slot is last) */
static const char *const codes[] = { "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
				     "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
				     "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
				     "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED" };
static struct opmetrics ops = OPMETRICS_INIT("zcfs_csi", "gRPC calls zcfs-csi answered", methods, codes,
					     ARRAY_SIZE(codes));
static atomic_bool serving;
static struct metrics_http *http;

void csi_metrics_record(const struct csi_grpc_method *m, int status, int64_t start_us)
{
	/* an unknown method counts as "other": its path is the client's */
	opmetrics_record(&ops, m ? m->name : NULL, status >= 0 ? (unsigned)status : GRPC_STATUS_UNKNOWN,
			 opmetrics_now_us() - start_us);
}

static int write_metrics(void *cls, FILE *f)
{
	(void)cls;
	opmetrics_write(&ops, f);
	return ferror(f) ? -EIO : 0;
}

static bool ready(void *cls)
{
	(void)cls;
	return atomic_load(&serving);
}

int csi_metrics_start(const char *spec)
{
	const struct metrics_http_ops o = { .write = write_metrics, .ready = ready };

	return spec ? metrics_http_start(spec, &o, &http) : 0;
}

void csi_metrics_serving(bool on)
{
	atomic_store(&serving, on);
}

void csi_metrics_stop(void)
{
	metrics_http_stop(http);
	http = NULL;
}
