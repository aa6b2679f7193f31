#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "ownership.h"
#include "common/parse.h"

static int take_field(const char **p, const char *end, char *out, size_t outlen)
{
	const char *colon = memchr(*p, ':', (size_t)(end - *p));
	size_t n = (size_t)((colon ? colon : end) - *p);

	if (n == 0 || n >= outlen)
		return -EINVAL;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p = colon ? colon + 1 : end;
	return colon ? 1 : 0;
}

static int parse_octal(const char *s, mode_t *ret)
{
	mode_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '7' || v > 07777)
			return -EINVAL;
		v = v * 8 + (mode_t)(*s - '0');
	}
	if (v > 07777)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_type(const char *s, mode_t *type, dev_t *rdev)
{
	unsigned maj, min;
	char tail;

	*rdev = 0;
	if (!strcmp(s, "file")) *type = S_IFREG;
	else if (!strcmp(s, "dir")) *type = S_IFDIR;
	else if (!strcmp(s, "symlink")) *type = S_IFLNK;
	else if (!strcmp(s, "pipe")) *type = S_IFIFO;
	else if (!strcmp(s, "socket")) *type = S_IFSOCK;
	else if (sscanf(s, "block-%u-%u%c", &maj, &min, &tail) == 2) {
		*type = S_IFBLK;
		*rdev = makedev(maj, min);
	} else if (sscanf(s, "char-%u-%u%c", &maj, &min, &tail) == 2) {
		*type = S_IFCHR;
		*rdev = makedev(maj, min);
	} else
		return -EINVAL;
	return 0;
}

int ovr_parse(const char *s, size_t len, struct ovr_stat *ret)
{
	const char *p = s, *end = s + len;
	char f[32];
	uint64_t v;
	struct ovr_stat o = { 0 };
	mode_t perm, type = 0;
	int more;

	if (len == 0 || len > OVR_MAXLEN)
		return -EINVAL;
	if (take_field(&p, end, f, sizeof(f)) != 1 || parse_u64(f, 0, UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	o.uid = (uid_t)v;
	if (take_field(&p, end, f, sizeof(f)) != 1 || parse_u64(f, 0, UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	o.gid = (gid_t)v;
	more = take_field(&p, end, f, sizeof(f));
	if (more < 0 || parse_octal(f, &perm) < 0)
		return -EINVAL;
	if (more) {
		if (take_field(&p, end, f, sizeof(f)) != 0 || parse_type(f, &type, &o.rdev) < 0)
			return -EINVAL;
		o.has_type = true;
	}
	o.mode = type | perm;
	*ret = o;
	return 0;
}

int ovr_format(const struct ovr_stat *o, char *buf, size_t len)
{
	const char *type;
	char dev[40] = "";
	int n;

	switch (o->mode & S_IFMT) {
	case S_IFDIR: type = "dir"; break;
	case S_IFLNK: type = "symlink"; break;
	case S_IFIFO: type = "pipe"; break;
	case S_IFSOCK: type = "socket"; break;
	case S_IFBLK:
		snprintf(dev, sizeof(dev), "block-%u-%u", major(o->rdev), minor(o->rdev));
		type = dev;
		break;
	case S_IFCHR:
		snprintf(dev, sizeof(dev), "char-%u-%u", major(o->rdev), minor(o->rdev));
		type = dev;
		break;
	default: type = "file"; break;
	}
	n = snprintf(buf, len, "%u:%u:0%o:%s", (unsigned)o->uid, (unsigned)o->gid,
		     (unsigned)(o->mode & 07777), type);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return n;
}
