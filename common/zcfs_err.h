/* The one error record of zcfs: a CSI status code name (what zcfsd
 * answers with and what the plugins hand to orchestrators) and a message
 * a person can act on. zcfsd and both plugins use it. */
#ifndef ZCFS_ERR_H
#define ZCFS_ERR_H

#include "util.h"

enum zcfs_code {
	ZCFS_OK,
	ZCFS_INVALID_ARGUMENT,
	ZCFS_NOT_FOUND,
	ZCFS_ALREADY_EXISTS,
	ZCFS_RESOURCE_EXHAUSTED,
	ZCFS_FAILED_PRECONDITION,
	ZCFS_PERMISSION_DENIED,
	ZCFS_INTERNAL,
	ZCFS_UNAVAILABLE,
	ZCFS_UNIMPLEMENTED,
	ZCFS_ABORTED,		/* an operation on the same volume is in progress */
	ZCFS_OUT_OF_RANGE,	/* a size outside what may be had (volume.resize, CSI expand) */
};

#define ZCFS_N_CODES (ZCFS_OUT_OF_RANGE + 1)
/* Every code's name, by code (the metrics' code labels). */
extern const char *const zcfs_code_names[ZCFS_N_CODES];
/* The name of C ("NOT_FOUND"); out of range: "INTERNAL". */
const char *zcfs_code_name(enum zcfs_code c);
/* The code for NAME; unknown names (and NULL) map to INTERNAL. */
enum zcfs_code zcfs_code_from_name(const char *name);

/* Zero-initialized = no error. */
struct zcfs_err {
	enum zcfs_code code;
	char msg[512];
};

/* Records CODE and the message in E unless E already holds an error (the
 * first error wins: it is the most specific one; set e->code = ZCFS_OK to
 * clear it), and returns R, a -errno (-EINVAL if R is not negative), so
 * call sites read `return zcfs_fail(e, ZCFS_NOT_FOUND, -ENOENT, "...")`.
 * errno is left as it was: a %m in FMT is the caller's errno. */
int zcfs_fail(struct zcfs_err *e, enum zcfs_code code, int r, const char *fmt, ...) _printf_(4, 5);

#endif
