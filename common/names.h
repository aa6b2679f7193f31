/* The validators of names and paths from requests, state files and the
 * policy: one definition for zcfsd, zcfsctl and the plugins. */
#ifndef ZCFS_NAMES_H
#define ZCFS_NAMES_H

#include <stdbool.h>

/* Absolute, no empty/"."/".." components, no trailing slash (except "/"),
 * shorter than PATH_MAX. */
bool path_is_normalized_absolute(const char *p);
/* PATH lies strictly below PREFIX (both normalized). */
bool path_is_under(const char *path, const char *prefix);
/* A volume id or tenant name: [A-Za-z0-9][A-Za-z0-9._-]{0,127} */
bool name_is_valid_id(const char *s);

#endif
