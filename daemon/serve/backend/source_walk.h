/* Walking the tree below a directory of SOURCE, the one way: on SOURCE's
 * file system only, never through a symlink, parents before children. */
#ifndef ZCFS_SOURCE_WALK_H
#define ZCFS_SOURCE_WALK_H

#include <sys/stat.h>

struct source_entry {
	int dirfd;		/* the directory that holds it */
	const char *name;
	const char *path;	/* relative to the start; NULL past PATH_MAX */
	const struct stat *st;	/* of the entry itself (not followed) */
	unsigned depth;		/* 0: directly in the start directory */
};

/* What a visitor returns: go on (into a directory too), go on but not
 * into this directory, or end the walk. A negative errno ends it too. */
enum { SOURCE_WALK_NEXT = 0, SOURCE_WALK_PRUNE = 1, SOURCE_WALK_STOP = 2 };

typedef int (*source_walk_fn)(const struct source_entry *e, void *ctx);

/* Calls fn for every entry below dirfd that lives on dirfd's file system
 * (a mount inside SOURCE is neither reported nor entered). Entries that
 * vanish during the walk are skipped. Returns 0 when every entry was
 * visited, SOURCE_WALK_STOP when fn stopped it, else a negative errno
 * (fn's, or of reading a directory). Holds one fd per level. */
int source_walk(int dirfd, source_walk_fn fn, void *ctx);

#endif
