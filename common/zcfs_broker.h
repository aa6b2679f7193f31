/* Wire format of the passthrough broker between zcfsd and one sandboxed
 * zcfs-serve (docs/security.md, "Passthrough broker").
 *
 * FUSE_DEV_IOC_BACKING_OPEN/CLOSE need CAP_SYS_ADMIN, which a server run
 * as its tenant does not have. zcfsd gives each such server one end of a
 * SOCK_SEQPACKET socketpair; the server sends an open backing file with
 * SCM_RIGHTS, zcfsd checks it, registers it on its own dup of the
 * volume's fuse fd and answers the backing id. One fixed-size message
 * each way, one request in flight per server (seq matches a reply to its
 * request after a timeout). */
#ifndef ZCFS_BROKER_H
#define ZCFS_BROKER_H

#include <stdint.h>

#define ZCFS_BROKER_MAGIC 0x7a627231u	/* "zbr1" */

enum zcfs_broker_op {
	ZCFS_BROKER_HELLO = 1,	/* arg: enum zcfs_broker_pt, no fd */
	ZCFS_BROKER_OPEN = 2,	/* exactly one fd: the open backing file */
	ZCFS_BROKER_CLOSE = 3,	/* arg: a backing id from an OPEN reply, no fd */
};

/* What the server negotiated at INIT (HELLO). */
enum zcfs_broker_pt {
	ZCFS_BROKER_PT_ON = 1,
	ZCFS_BROKER_PT_NOT_OFFERED = 2,	/* the kernel did not offer FUSE_PASSTHROUGH */
	ZCFS_BROKER_PT_QUOTA = 3,	/* off: passthrough writes would bypass --quota-bytes */
};

struct zcfs_broker_msg {
	uint32_t magic;
	uint32_t op;
	uint32_t seq;		/* the reply echoes it */
	int32_t arg;		/* request: see op; reply: backing id > 0, 0, or -errno */
};

/* The server gives up waiting this long for a reply (zcfsd sets it as
 * SO_RCVTIMEO/SO_SNDTIMEO on the server's end)... */
#define ZCFS_BROKER_TIMEOUT_MS 1000
/* ...and then opens files without passthrough for this long. */
#define ZCFS_BROKER_QUIET_MS 3000

#endif
