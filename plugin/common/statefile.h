/* The plugins' small persistent files: JSON documents written by
 * write-to-temp + fsync + rename (never half-written after a crash),
 * read back with a size cap, and a lock file serialising writers. */
#ifndef ZCFS_STATEFILE_H
#define ZCFS_STATEFILE_H

#include <sys/types.h>
#include <json-c/json.h>
#include "common/fileio.h"

/* Atomically replaces DIR/NAME with O (pretty JSON), mode 0600
 * (write_file_atomic). Directories: mkdir_p (common/fileio.h). */
int sf_write_json(const char *dir, const char *name, json_object *o) _must_check_;
/* Reads DIR/NAME (at most MAX bytes) as a JSON object: -ENOENT when
 * missing, -EBADMSG when not a JSON object, -EFBIG when larger. */
int sf_read_json(const char *dir, const char *name, size_t max, json_object **ret) _must_check_;
/* Removes DIR/NAME (missing is fine) and syncs DIR. */
int sf_remove(const char *dir, const char *name);
/* Opens DIR/NAME and takes an exclusive flock on it; returns the fd
 * (closing it releases the lock). */
int sf_lock(const char *dir, const char *name) _must_check_;
/* The same without waiting: -EWOULDBLOCK when another holds it. A holder
 * may unlink NAME before it closes; the lock is then taken on the new file. */
int sf_trylock(const char *dir, const char *name) _must_check_;

#endif
