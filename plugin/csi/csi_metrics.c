/* zcfs-csi serve's request metrics: every gRPC call counted and timed by
 * method and gRPC status code (common/opmetrics.c), served with /healthz
 * and /readyz by common/metrics_http.c (--metrics). */
#include <grpc/status.h>
#include "csi_grpc.h"
#include "csi_method_list.h"
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

struct opmetrics *csi_metrics(void)
{
	return &ops;
}

void csi_metrics_record(const struct csi_grpc_method *m, int status, int64_t start_us)
{
	/* an unknown method counts as "other": its path is the client's */
	opmetrics_record(&ops, m ? m->name : NULL, status >= 0 ? (unsigned)status : GRPC_STATUS_UNKNOWN,
			 opmetrics_now_us() - start_us);
}
