/* The one listening unix socket of zcfsd (control, metrics) and the
 * volume plugin. */
#ifndef ZCFS_LISTEN_UNIX_H
#define ZCFS_LISTEN_UNIX_H

#include <sys/types.h>
#include "util.h"

enum {
	LISTEN_UNIX_NONBLOCK = 1 << 0,	  /* the listening fd is O_NONBLOCK (an event loop's) */
	LISTEN_UNIX_REPLACE_ANY = 1 << 1, /* whatever is at PATH is removed first (zcfsd's own socket) */
	LISTEN_UNIX_KEEP_LIVE = 1 << 2,	  /* a socket someone accepts on is -EADDRINUSE, not replaced */
};

/* Binds a SOCK_STREAM unix socket at PATH (its missing parents made 0755),
 * sets MODE on it and listens with BACKLOG; returns the fd or -errno.
 * Without LISTEN_UNIX_REPLACE_ANY, a non-socket at PATH is -EEXIST (never
 * removed); a stale socket a crashed owner left is replaced. On failure
 * after the bind, PATH is removed again. */
int listen_unix(const char *path, int backlog, mode_t mode, unsigned flags) _must_check_;

#endif
