/* The error record shared by zcfsd and the plugins. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "zcfs_err.h"

const char *const zcfs_code_names[ZCFS_N_CODES] = {
	[ZCFS_OK] = "OK",
	[ZCFS_INVALID_ARGUMENT] = "INVALID_ARGUMENT",
	[ZCFS_NOT_FOUND] = "NOT_FOUND",
	[ZCFS_ALREADY_EXISTS] = "ALREADY_EXISTS",
	[ZCFS_RESOURCE_EXHAUSTED] = "RESOURCE_EXHAUSTED",
	[ZCFS_FAILED_PRECONDITION] = "FAILED_PRECONDITION",
	[ZCFS_PERMISSION_DENIED] = "PERMISSION_DENIED",
	[ZCFS_INTERNAL] = "INTERNAL",
	[ZCFS_UNAVAILABLE] = "UNAVAILABLE",
	[ZCFS_UNIMPLEMENTED] = "UNIMPLEMENTED",
	[ZCFS_ABORTED] = "ABORTED",
	[ZCFS_OUT_OF_RANGE] = "OUT_OF_RANGE",
};

const char *zcfs_code_name(enum zcfs_code c)
{
	return (unsigned)c < ZCFS_N_CODES ? zcfs_code_names[c] : "INTERNAL";
}

enum zcfs_code zcfs_code_from_name(const char *name)
{
	for (enum zcfs_code c = ZCFS_OK; c <= ZCFS_OUT_OF_RANGE; c++)
		if (name && !strcmp(zcfs_code_name(c), name))
			return c;
	return ZCFS_INTERNAL;
}

int zcfs_fail(struct zcfs_err *e, enum zcfs_code code, int r, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (r >= 0)
		r = -EINVAL;	/* an error recorded is never a success */
	if (e->code != ZCFS_OK)
		return r;	/* keep the first, most specific error */
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	errno = saved;	/* vsnprintf may set it: callers see theirs */
	return r;
}
