/* What the plugins ask zcfsd most, over zcfs_call() (common/
 * zcfs_proto.h: bounded in time, PARAMS borrowed), and how they read
 * the volume objects it answers with. */
#ifndef ZCFS_ZCLIENT_H
#define ZCFS_ZCLIENT_H

#include <stdbool.h>
#include <json-c/json.h>
#include "common/zcfs_proto.h"

/* zcfs_call() with params {"id": ID}. */
int zclient_call_id(const char *socket, const char *method, const char *id, json_object **ret,
		    struct zcfs_err *e);

/* volume.get ID: 0 and *vol (the volume object, caller puts), -ENOENT with
 * E untouched when zcfsd has no such volume, other errors as zcfs_call(). */
int zclient_volume_get(const char *socket, const char *id, json_object **vol, struct zcfs_err *e) _must_check_;

/* Whether the volume object VOL lists TARGET among its targets. */
bool zclient_volume_has_target(json_object *vol, const char *target);
/* Number of targets of VOL. */
size_t zclient_volume_n_targets(json_object *vol);
/* String field KEY of VOL, or "" when absent. */
const char *zclient_volume_str(json_object *vol, const char *key);

#endif
