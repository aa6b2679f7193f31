/* Passthrough broker, the server's side: asks zcfsd to register (and
 * close) backing ids on the volume's connection, because the server has
 * no CAP_SYS_ADMIN for FUSE_DEV_IOC_BACKING_OPEN. Wire format:
 * common/zcfs_broker.h. Thread-safe: one request at a time. */
#ifndef ZCFS_BROKER_CLIENT_H
#define ZCFS_BROKER_CLIENT_H

#include "common/util.h"

struct broker_client;

/* Takes no ownership of fd (inherited from zcfsd, open for the
 * process's lifetime). */
int broker_client_new(int fd, struct broker_client **ret) _must_check_;
void broker_client_free(struct broker_client *c);

/* The backing id zcfsd registered for the open file fd (> 0), or
 * -errno: zcfsd refused it, or it did not answer in time (-ETIMEDOUT,
 * then -EAGAIN without asking for ZCFS_BROKER_QUIET_MS), or it is gone
 * (-ENOTCONN from then on). Never blocks longer than about
 * ZCFS_BROKER_TIMEOUT_MS. */
int broker_client_open(struct broker_client *c, int fd) _must_check_;
int broker_client_close(struct broker_client *c, int id);
/* Tells zcfsd what INIT negotiated (enum zcfs_broker_pt). */
int broker_client_hello(struct broker_client *c, int state);

#endif
