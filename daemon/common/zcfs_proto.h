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
/* Builds the request for METHOD/PARAMS (params may be NULL), sends it and
 * parses the response object into *ret. */
int zcfs_call(const char *socket, const char *method, json_object *params,
	      json_object **ret) _must_check_;

#endif
