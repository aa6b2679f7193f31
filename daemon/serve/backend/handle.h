/* Open file and directory handles, named to the kernel by a server epoch,
 * a slot index and a generation, so a stale or forged fh is refused (-EBADF) instead
 * of touching some other descriptor of the server. */
#ifndef ZCFS_HANDLE_H
#define ZCFS_HANDLE_H

#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "common/util.h"

struct zcfs_inode;

struct zcfs_handle {
	int fd;
	uint64_t nodeid;	/* inode the handle was opened on */
	uid_t opener;		/* fsuid of the client that opened it */
	bool writable;		/* the client opened it for writing */
	/* directories */
	DIR *dir;
	off_t dir_off;		/* offset the stream is positioned at */
	struct dirent *pending;	/* entry read but not yet sent */
	pthread_mutex_t dir_lock;
	/* kernel passthrough */
	struct zcfs_inode *inode;
	int backing_id;
};

struct handle_table;

int handle_table_new(struct handle_table **ret) _must_check_;
/* The epoch of this server's fhs (low 24 bits used): one no other server
 * of the connection had (zcfs_stats' server_starts counter). */
void handle_table_set_epoch(struct handle_table *t, uint32_t epoch);
void handle_table_free(struct handle_table *t);
/* Registers h, returning the fh for the kernel. */
int handle_register(struct handle_table *t, struct zcfs_handle *h, uint64_t *fh) _must_check_;
/* Looks up fh; NULL if it is not a live handle. */
struct zcfs_handle *handle_get(struct handle_table *t, uint64_t fh);
/* Files this server re-opened for an fh of its predecessor (--resume).
 * Returns 0 and *ret = h when h was stored, 1 and *ret = the existing
 * handle when fh is already known (the caller then frees h). */
int handle_adopt(struct handle_table *t, uint64_t fh, struct zcfs_handle *h,
		 struct zcfs_handle **ret) _must_check_;
/* A new, unregistered handle owning fd (a directory stream on it when
 * dir); fd stays the caller's on failure. */
int handle_new(int fd, bool dir, struct zcfs_handle **ret) _must_check_;
/* Closes a handle of either kind (file or directory stream) and frees it. */
void handle_free(struct zcfs_handle *h);
/* Whether uid holds an open of node nodeid for writing. */
bool handle_writer_exists(struct handle_table *t, uint64_t nodeid, uid_t uid);
/* Removes fh and returns the handle (the caller closes it). */
struct zcfs_handle *handle_unregister(struct handle_table *t, uint64_t fh);

#endif
