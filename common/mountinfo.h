/* The topmost mount at a path, read from /proc/self/mountinfo: never by
 * stat() of a FUSE mount, which would ask a server that may be dead or
 * not started yet. Shared by zcfs-serve, zcfsd and the plugins. */
#ifndef ZCFS_MOUNTINFO_H
#define ZCFS_MOUNTINFO_H

#include <stdbool.h>
#include <sys/types.h>
#include "util.h"

struct mountinfo_top {
	unsigned major, minor;	/* st_dev of the mount; minor names a FUSE connection */
	char fstype[64];
	char source[256];	/* mountinfo's mount source, escaped */
	bool read_only;		/* per-mount "ro" */
};

/* Fills ret for the last (topmost) mount whose mount point is path
 * (absolute, canonical). -ENOENT if nothing is mounted there. */
int mountinfo_top_at(const char *path, struct mountinfo_top *ret) _must_check_;

/* Undoes mountinfo's \ooo escapes of space, tab, newline and backslash, in place. */
void mountinfo_unescape(char *s);

#endif
