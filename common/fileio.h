/* File helpers every program shares: whole writes, crash-safe
 * replacement of a small file, mkdir -p (and undoing what it made), the
 * entries of a directory counted. All
 * return -errno and never report through errno. */
#ifndef ZCFS_FILEIO_H
#define ZCFS_FILEIO_H

#include <sys/types.h>
#include "util.h"

/* Writes all LEN bytes of P to FD (again after EINTR and short writes).
 * A socket gets MSG_NOSIGNAL: a peer gone is -EPIPE, never SIGPIPE. */
int write_all(int fd, const void *p, size_t len) _must_check_;

/* Replaces DIRFD/NAME with LEN bytes of DATA (and a '\n' after them when
 * NEWLINE), mode MODE: written to a temporary name beside it, fsynced,
 * renamed over NAME, the directory fsynced. A crash leaves the old or the
 * new file, never half of one; on failure the temporary is removed and
 * NAME untouched. */
int write_file_atomic(int dirfd, const char *name, const void *data, size_t len, bool newline,
		      mode_t mode) _must_check_;

/* mkdir -p PATH: the last component gets MODE, missing parents 0755. */
int mkdir_p(const char *path, mode_t mode) _must_check_;
/* The same, and *created = the shallowest directory it made (NULL when
 * none; caller frees), also on failure: what rmdir_created undoes. */
int mkdir_p_undoable(const char *path, mode_t mode, char **created) _must_check_;
/* Removes the directories from PATH up to CREATED (from
 * mkdir_p_undoable), deepest first, stopping at one that is not empty. */
void rmdir_created(const char *path, const char *created);

/* How many entries PATH has, those whose name starts with '.' left out
 * (/proc/self/task's threads, /proc/self/fd's fds); -errno. */
long dir_count_entries(const char *path);

#endif
