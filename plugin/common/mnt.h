/* What the plugins look at or adjust on a published target without
 * deciding anything: whether the mount on top of a path is read-only
 * (from mountinfo, so a dead FUSE server cannot block the check) and the
 * per-mount read-only flag the orchestrator asked for. */
#ifndef ZCFS_MNT_H
#define ZCFS_MNT_H

#include <stdbool.h>
#include "util.h"

/* The topmost mount whose mount point is PATH: 0 with *ro set, -ENOENT
 * when PATH is no mount point. */
int mnt_top_readonly(const char *path, bool *ro) _must_check_;
/* Sets (RO) or clears the per-mount MOUNT_ATTR_RDONLY of the mount on
 * PATH, reached without following symlinks. */
int mnt_set_readonly(const char *path, bool ro) _must_check_;

#endif
