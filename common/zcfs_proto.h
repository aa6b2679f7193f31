/* The control protocol's shared pieces (the code names are zcfs_err.h's): request
 * size cap, and a blocking client for zcfsctl and tests. One request is
 * one line {"method": M, "params": {...}}; one response line carries
 * {"result": {...}} or {"error": {"code": C, "message": M}}. */
#ifndef ZCFS_PROTO_H
#define ZCFS_PROTO_H

#include <json-c/json.h>
#include "util.h"
#include "zcfs_err.h"

#define ZCFS_DEFAULT_SOCKET "/run/zcfs/zcfsd.sock"
#define ZCFS_REQUEST_MAX (64 * 1024)

static inline void json_putp(json_object **o) { if (*o) json_object_put(*o); }
#define _cleanup_json_ __attribute__((cleanup(json_putp)))

/* The first key of object O that is not in the NULL-terminated ALLOWED,
 * or NULL: both sides refuse requests with fields they do not know. */
const char *zcfs_json_unknown_key(json_object *o, const char *const *allowed);

/* Socket path: explicit > $ZCFS_SOCKET > default. */
const char *zcfs_socket_path(const char *explicit_path);

/* Connects to the daemon's socket. Returns the fd or -errno. */
int zcfs_connect(const char *path) _must_check_;
/* Sends LEN bytes of LINE verbatim (a '\n' is appended when missing) and
 * reads one response line into *ret (malloc'ed, without the newline). */
int zcfs_roundtrip(int fd, const char *line, size_t len, char **ret) _must_check_;
/* The zcfsd client. Both calls borrow PARAMS: the caller keeps its
 * reference and puts it (NULL = {}); every caller in the tree follows
 * this one rule. */

/* Seconds one zcfs_call() may take before it fails with UNAVAILABLE. */
#define ZCFS_CALL_TIMEOUT_S 20

/* Sends METHOD with PARAMS to the daemon at SOCKET, bounded in time so an
 * orchestrator's deadline is not spent on a stuck daemon. On
 * {"result": R}: 0 and *result = R (the caller puts it; RESULT may be
 * NULL). On {"error"}: -EREMOTEIO with E holding the daemon's code and
 * message. Unreachable, silent or garbled daemon: -ENOTCONN with
 * UNAVAILABLE (never -ENOENT: callers read that as "no such volume"). */
int zcfs_call(const char *socket, const char *method, json_object *params, json_object **result,
	      struct zcfs_err *e);
/* From now on, the zcfs_call()s of this thread may take MS milliseconds in
 * all (connect, send and answer of each, summed), then fail with
 * UNAVAILABLE; 0 restores the per-call ZCFS_CALL_TIMEOUT_S. For a caller
 * whose own client gives up sooner (Podman: 5 s per plugin request). */
void zcfs_call_set_budget_ms(unsigned ms);
/* zcfsctl's call: the whole answer object ({"result"} or {"error"}) in
 * *resp, waiting as long as the daemon takes. -errno of the connection
 * or the exchange, -EPROTO when the answer is not JSON. */
int zcfs_call_raw(const char *socket, const char *method, json_object *params,
		  json_object **resp) _must_check_;

#endif
