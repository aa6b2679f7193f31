/* Volume ids, tenant names and the paths requests carry: what zcfsd, its
 * state file, zcfsctl and the plugins accept. */
#include <string.h>
#include "names.h"

bool name_is_valid_id(const char *s)
{
	size_t i;

	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
		return false;
	for (i = 1; s[i]; i++) {
		char c = s[i];
		if (i > 127)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Absolute, no empty/"."/".." components, no trailing slash (except "/"). */
bool path_is_normalized_absolute(const char *p)
{
	const char *c;

	if (!p || p[0] != '/' || strlen(p) >= 4096)
		return false;
	if (!p[1])
		return true;
	for (c = p + 1;;) {
		const char *e = strchrnul(c, '/');
		size_t len = (size_t)(e - c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!*e)
			return true;
		c = e + 1;
	}
}

bool path_is_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (n == 1 && prefix[0] == '/')
		return path[0] == '/' && path[1] != '\0';
	return strncmp(path, prefix, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}
