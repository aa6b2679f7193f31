/* Error records shared by zcfs-csi and zcfs-volume-plugin. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "plugin_err.h"

int perr_set(struct perr *e, int r, enum zcfs_code code, const char *fmt, ...)
{
	va_list ap;

	if (e->code != ZCFS_OK)
		return r;	/* keep the first, most specific error */
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return r;
}

enum zcfs_code zcfs_code_from_name(const char *name)
{
	for (enum zcfs_code c = ZCFS_OK; c <= ZCFS_ABORTED; c++)
		if (name && !strcmp(zcfs_code_name(c), name))
			return c;
	return ZCFS_INTERNAL;
}
