/* The signal of a planned restart's hand-over, zcfsd to zcfs-serve
 * (docs/supervision.md, "Planned restart"). SIGUSR2 is zcfsd's own
 * upgrade in place, so the hand-over has a signal of its own: one
 * meaning per signal across the programs. zcfs-serve takes SIGUSR2 (and
 * SIGHUP) and changes nothing. */
#ifndef ZCFS_HANDOVER_H
#define ZCFS_HANDOVER_H

#include <signal.h>

#define ZCFS_HANDOVER_SIGNAL SIGUSR1

#endif
