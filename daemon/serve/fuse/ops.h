/* FUSE operation handlers. Each returns -errno to have the dispatcher
 * reply with that error, or 0 once it has replied itself. */
#ifndef ZCFS_OPS_H
#define ZCFS_OPS_H

#include "fuse_msg.h"

typedef int (*zcfs_op_fn)(struct zcfs_req *req);

int op_init(struct zcfs_req *req);
int op_destroy(struct zcfs_req *req);
int op_interrupt(struct zcfs_req *req);
int op_statfs(struct zcfs_req *req);
int op_access(struct zcfs_req *req);

int op_lookup(struct zcfs_req *req);
int op_forget(struct zcfs_req *req);
int op_batch_forget(struct zcfs_req *req);
int op_getattr(struct zcfs_req *req);
int op_setattr(struct zcfs_req *req);
int op_readlink(struct zcfs_req *req);
int op_symlink(struct zcfs_req *req);
int op_mknod(struct zcfs_req *req);
int op_mkdir(struct zcfs_req *req);
int op_unlink(struct zcfs_req *req);
int op_rmdir(struct zcfs_req *req);
int op_rename(struct zcfs_req *req);
int op_rename2(struct zcfs_req *req);
int op_link(struct zcfs_req *req);

int op_open(struct zcfs_req *req);
int op_create(struct zcfs_req *req);
int op_read(struct zcfs_req *req);
int op_write(struct zcfs_req *req);
int op_release(struct zcfs_req *req);
int op_flush(struct zcfs_req *req);
int op_fsync(struct zcfs_req *req);
int op_fallocate(struct zcfs_req *req);
int op_lseek(struct zcfs_req *req);
int op_copy_file_range(struct zcfs_req *req);

int op_opendir(struct zcfs_req *req);
int op_readdir(struct zcfs_req *req);
int op_readdirplus(struct zcfs_req *req);
int op_releasedir(struct zcfs_req *req);
int op_fsyncdir(struct zcfs_req *req);

int op_getxattr(struct zcfs_req *req);
int op_setxattr(struct zcfs_req *req);
int op_listxattr(struct zcfs_req *req);
int op_removexattr(struct zcfs_req *req);

/* Whether an open of the backing file or directory fd (for reading) may
 * keep the kernel's cached pages (FOPEN_KEEP_CACHE): with the exclusive
 * cache, unless its first read has to move atime, which only a read that
 * reaches the backing file does (source_read_moves_atime). */
bool open_keeps_cache(struct zcfs_session *se, int fd);

/* --resume: take the connection as already initialized (INIT was the
 * previous server's) and start the transport's post-INIT work. */
int session_resume(struct zcfs_session *se) _must_check_;

#endif
