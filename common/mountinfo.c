#include <stdio.h>
#include <string.h>
#include "mountinfo.h"

void mountinfo_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int mountinfo_top_at(const char *path, struct mountinfo_top *ret)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;

	if (!f)
		return -errno;
	/* Later lines are mounted on top of earlier ones: the last match wins. */
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], opts[256], fstype[64], source[256];
		unsigned maj, min;
		const char *sep;

		if (sscanf(line, "%*u %*u %u:%u %*s %4095s %255s", &maj, &min, mnt, opts) != 4)
			continue;
		mountinfo_unescape(mnt);
		if (strcmp(mnt, path))
			continue;
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep, " - %63s %255s", fstype, source) != 2)
			continue;
		ret->major = maj;
		ret->minor = min;
		snprintf(ret->fstype, sizeof(ret->fstype), "%s", fstype);
		snprintf(ret->source, sizeof(ret->source), "%s", source);
		ret->read_only = !strncmp(opts, "ro", 2) && (opts[2] == ',' || opts[2] == '\0');
		found = 0;
	}
	return found;
}
