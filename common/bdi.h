/* The backing-device (bdi) knobs of a mount. A FUSE mount's bdi starts
 * with a strict dirty limit of 1% of the node's dirty budget: with
 * writeback caching that throttles writers after a few MiB. zcfs raises
 * it to a byte cap chosen by the operator (policy dirty_limit). */
#ifndef ZCFS_BDI_H
#define ZCFS_BDI_H

#include <stdint.h>
#include "util.h"

/* Writes /sys/class/bdi/MAJOR:MINOR/max_bytes. -errno (e.g. -EACCES when
 * not root, -ENOENT on kernels before 6.2 that lack the knob). */
int bdi_set_max_bytes(unsigned major, unsigned minor, uint64_t bytes) _must_check_;

#endif
