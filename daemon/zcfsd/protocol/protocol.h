/* The control protocol: the unix socket (framing, peer credentials,
 * limits), the methods, volume.create's parameters. */
#ifndef ZCFSD_PROTOCOL_H
#define ZCFSD_PROTOCOL_H

#include "daemon/zcfsd/lifecycle/lifecycle.h"
#include "daemon/zcfsd/model/model.h"

/* A listening unix socket at PATH for root and the admin group, its
 * directory made when missing. What a previous zcfsd left at PATH is
 * removed: anything when REPLACE_ANY, else only a socket (-EEXIST for
 * anything else). */
int zcfsd_listen_unix(struct zcfsd *d, const char *path, int backlog, bool replace_any,
		      int *ret) _must_check_;
int zcfsd_control_listen(struct zcfsd *d);
void zcfsd_control_accept(struct zcfsd *d);
void zcfsd_control_client_event(struct zcfsd *d, int fd, uint32_t events);
json_object *zcfsd_dispatch(struct zcfsd *d, const char *method, json_object *params,
			    struct zcfsd_err *e);
int zcfsd_policy_reload(struct zcfsd *d, struct zcfsd_err *e);

/* methods.c: request parameter helpers. A string parameter, or NULL;
 * INVALID_ARGUMENT for any key not in allowed (NULL-terminated). */
const char *zcfsd_param_string(json_object *params, const char *key);
int zcfsd_only_params(json_object *params, const char *const *allowed, struct zcfsd_err *e);

/* volume_params.c: volume.create's params checked into *S. */
int zcfsd_volume_spec_parse(struct zcfsd *d, json_object *params, struct zcfsd_volume_spec *s,
			    struct zcfsd_err *e);

#endif
