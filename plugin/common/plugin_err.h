/* The error both plugins carry to their callers: a CSI status code name
 * (the same names zcfsd answers with) and a message a person can act on. */
#ifndef ZCFS_PLUGIN_ERR_H
#define ZCFS_PLUGIN_ERR_H

#include "daemon/common/zcfs_proto.h"

struct perr {
	enum zcfs_code code;
	char msg[512];
};

/* Records CODE and the message in E (first error wins) and returns R,
 * a negative errno, so callers can `return perr_set(...)`. */
int perr_set(struct perr *e, int r, enum zcfs_code code, const char *fmt, ...) _printf_(4, 5);
/* The code for NAME ("NOT_FOUND", ...); unknown names map to INTERNAL. */
enum zcfs_code zcfs_code_from_name(const char *name);

#endif
