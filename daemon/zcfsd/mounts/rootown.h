/* Who owns the root of a volume, as its clients see it: the ownership
 * record (user.containers.override_stat, common/ownership.h) on the
 * volume's storage directory, written by zcfsd before the volume's server
 * runs (the server reads a record once and is its only writer after). */
#ifndef ZCFSD_ROOTOWN_H
#define ZCFSD_ROOTOWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <json-c/json.h>
#include "daemon/zcfsd/model/model.h"

struct zcfsd_root_owner {
	bool has_uid, has_gid, has_mode;
	uid_t uid;
	gid_t gid;
	mode_t mode;		/* permission bits, 07777 at most */
};

/* volume.create params uid, gid (integers) and mode (an integer or an
 * octal string such as "0770"). None given: O is all false. */
int zcfsd_root_owner_params(json_object *params, struct zcfsd_root_owner *o, struct zcfs_err *e);
/* volume.publish param mount_group (integer): *gid, or -1 when absent. */
int zcfsd_mount_group_param(json_object *params, int64_t *gid, struct zcfs_err *e);

/* Applies O and then MOUNT_GROUP (>= 0: that group, set-gid, group rwx,
 * as kubelet applies a pod's fsGroup) to the record of the storage
 * directory DFD; what is not given keeps its current value (the record's,
 * or the directory's own). Only while no server runs on it. */
int zcfsd_root_owner_apply(int dfd, const struct zcfsd_root_owner *o, int64_t mount_group,
			   struct zcfs_err *e);
/* Whether the record of DFD already says what O and MOUNT_GROUP ask for. */
bool zcfsd_root_owner_matches(int dfd, const struct zcfsd_root_owner *o, int64_t mount_group);

#endif
