/* The ownership record of rootless container storage: the xattr
 * user.containers.override_stat = "uid:gid:mode[:type]" (mode octal; type
 * file, dir, symlink, pipe, socket, block-M-m, char-M-m) holds what the
 * client sees when the server cannot chown backing files. */
#ifndef ZCFS_OWNERSHIP_H
#define ZCFS_OWNERSHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "common/util.h"

#define OVR_XATTR "user.containers.override_stat"
#define OVR_MAXLEN 96

struct ovr_stat {
	uid_t uid;
	gid_t gid;
	mode_t mode;		/* type bits and permission bits */
	dev_t rdev;
	bool has_type;		/* the record named a type */
};

/* Parses a record of len bytes (not NUL terminated). -EINVAL if malformed. */
int ovr_parse(const char *s, size_t len, struct ovr_stat *ret) _must_check_;
/* Writes the record for o into buf; returns its length or -ENOSPC. */
int ovr_format(const struct ovr_stat *o, char *buf, size_t len) _must_check_;

#endif
