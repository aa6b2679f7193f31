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

/* One line of /proc/self/mountinfo (proc_pid_mountinfo(5)). */
struct mountinfo_line {
	int id;			/* mount id */
	unsigned major, minor;	/* st_dev of the mount */
	char mnt[4096];		/* mount point, unescaped */
	char opts[256];		/* per-mount options */
	char fstype[64];
	char source[256];	/* escaped */
	char super_opts[512];	/* the superblock's options ("" if none) */
};

/* Calls fn for every well-formed line of /proc/self/mountinfo, in its
 * order (later mounts on top of earlier ones), until fn returns nonzero,
 * which is returned; 0 at the end, -errno if the file cannot be read.
 * The one parser of that file: every reader of it goes through here. */
int mountinfo_each(int (*fn)(const struct mountinfo_line *l, void *arg), void *arg);

/* Fills ret for the last (topmost) mount whose mount point is path
 * (absolute, canonical). -ENOENT if nothing is mounted there. */
int mountinfo_top_at(const char *path, struct mountinfo_top *ret) _must_check_;

/* Undoes mountinfo's \ooo escapes of space, tab, newline and backslash, in place. */
void mountinfo_unescape(char *s);

#endif
