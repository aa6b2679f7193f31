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

/* Fills l from one line; false if it is not a mountinfo line. */
static bool parse_line(const char *line, struct mountinfo_line *l)
{
	const char *sep;
	int n;

	if (sscanf(line, "%d %*d %u:%u %*s %4095s %255s", &l->id, &l->major, &l->minor, l->mnt,
		   l->opts) != 5)
		return false;
	sep = strstr(line, " - ");
	if (!sep)
		return false;
	n = sscanf(sep, " - %63s %255s %511s", l->fstype, l->source, l->super_opts);
	if (n < 2)
		return false;
	if (n == 2)
		l->super_opts[0] = '\0';
	mountinfo_unescape(l->mnt);
	return true;
}

int mountinfo_each(int (*fn)(const struct mountinfo_line *l, void *arg), void *arg)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	struct mountinfo_line l;
	size_t cap = 0;
	int r = 0;

	if (!f)
		return -errno;
	while (r == 0 && getline(&line, &cap, f) > 0)
		if (parse_line(line, &l))
			r = fn(&l, arg);
	return r;
}

struct top_at {
	const char *path;
	struct mountinfo_top *ret;
	int found;
};

static int top_at_line(const struct mountinfo_line *l, void *arg)
{
	struct top_at *t = arg;

	if (strcmp(l->mnt, t->path))
		return 0;
	t->ret->major = l->major;
	t->ret->minor = l->minor;
	snprintf(t->ret->fstype, sizeof(t->ret->fstype), "%s", l->fstype);
	snprintf(t->ret->source, sizeof(t->ret->source), "%s", l->source);
	t->ret->read_only = !strncmp(l->opts, "ro", 2) && (l->opts[2] == ',' || l->opts[2] == '\0');
	t->found = 0;
	return 0;	/* the last match wins */
}

int mountinfo_top_at(const char *path, struct mountinfo_top *ret)
{
	struct top_at t = { .path = path, .ret = ret, .found = -ENOENT };
	int r = mountinfo_each(top_at_line, &t);

	return r < 0 ? r : t.found;
}
