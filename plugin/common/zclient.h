/* The plugins' side of the zcfsd control protocol: one request, one
 * result or one coded error, bounded in time so an orchestrator's
 * deadline is not spent waiting on a stuck daemon. */
#ifndef ZCFS_ZCLIENT_H
#define ZCFS_ZCLIENT_H

#include <stdbool.h>
#include <json-c/json.h>
#include "daemon/common/zcfs_proto.h"

/* Seconds a call may take before it fails with UNAVAILABLE. */
#define ZCLIENT_TIMEOUT_S 20

/* From now on, the calls of this thread may take MS milliseconds in all
 * (connect, send and answer of each, summed), then fail with UNAVAILABLE;
 * 0 restores the per-call ZCLIENT_TIMEOUT_S. For a caller whose own
 * client gives up sooner (Podman: 5 s per plugin request). */
void zc_set_budget_ms(unsigned ms);

/* Sends METHOD with PARAMS (a reference is consumed; NULL = {}) to the
 * daemon at SOCKET. On {"result": R}: 0 and *ret = R (caller puts it; may
 * be NULL when RET is NULL). On {"error"}: -EREMOTEIO with E set to the
 * daemon's code and message. Unreachable, silent or garbled daemon:
 * -ENOTCONN with UNAVAILABLE (never -ENOENT: callers read that as "no
 * such volume"). */
int zc_call(const char *socket, const char *method, json_object *params, json_object **ret,
	    struct zcfs_err *e);

/* Convenience: params {"id": ID}. */
int zc_call_id(const char *socket, const char *method, const char *id, json_object **ret,
	       struct zcfs_err *e);

/* volume.get ID: 0 and *vol (the volume object, caller puts), -ENOENT with
 * E untouched when zcfsd has no such volume, other errors as zc_call. */
int zc_volume_get(const char *socket, const char *id, json_object **vol, struct zcfs_err *e) _must_check_;

/* Whether the volume object VOL lists TARGET among its targets. */
bool zc_volume_has_target(json_object *vol, const char *target);
/* Number of targets of VOL. */
size_t zc_volume_n_targets(json_object *vol);
/* String field KEY of VOL, or "" when absent. */
const char *zc_volume_str(json_object *vol, const char *key);

#endif
