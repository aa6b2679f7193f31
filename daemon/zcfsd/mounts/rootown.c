/* The volume root's client-visible owner and mode (rootown.h). */
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include "common/ownership.h"
#include "rootown.h"

static int id_param(json_object *params, const char *key, bool *has, uint32_t *ret, struct zcfs_err *e)
{
	json_object *x;
	int64_t i;

	*has = false;
	if (!json_object_object_get_ex(params, key, &x))
		return 0;
	i = json_object_get_int64(x);
	if (!json_object_is_type(x, json_type_int) || i < 0 || i > (int64_t)UINT32_MAX - 1)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "params.%s must be an integer from 0 to 4294967294", key);
	*has = true;
	*ret = (uint32_t)i;
	return 0;
}

int zcfsd_root_owner_params(json_object *params, struct zcfsd_root_owner *o, struct zcfs_err *e)
{
	uint32_t v;
	uint64_t m;
	json_object *x;

	memset(o, 0, sizeof(*o));
	if (id_param(params, "uid", &o->has_uid, &v, e) < 0)
		return -EINVAL;
	o->uid = v;
	if (id_param(params, "gid", &o->has_gid, &v, e) < 0)
		return -EINVAL;
	o->gid = v;
	if (!json_object_object_get_ex(params, "mode", &x))
		return 0;
	if (json_object_is_type(x, json_type_int) && json_object_get_int64(x) >= 0 &&
	    json_object_get_int64(x) <= 07777) {
		m = (uint64_t)json_object_get_int64(x);
	} else {
		const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : "";
		char *end = NULL;
		/* octal digits only: strtoul would take signs and spaces */
		if (!*s || strspn(s, "01234567") != strlen(s) || strlen(s) > 5)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "params.mode must be permission bits (an octal string such as \"0770\")");
		m = 0;
		for (end = (char *)s; *end; end++)
			m = m * 8 + (uint64_t)(*end - '0');
		if (m > 07777)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "params.mode %s is above 07777", s);
	}
	o->has_mode = true;
	o->mode = (mode_t)m;
	return 0;
}

int zcfsd_mount_group_param(json_object *params, int64_t *gid, struct zcfs_err *e)
{
	uint32_t v;
	bool has;

	*gid = -1;
	if (id_param(params, "mount_group", &has, &v, e) < 0)
		return -EINVAL;
	if (has)
		*gid = v;
	return 0;
}

/* The root as its clients see it now: the record, else the directory. */
static int current(int dfd, struct ovr_stat *cur)
{
	char buf[OVR_MAXLEN + 1];
	struct stat st;
	ssize_t n;

	if (fstat(dfd, &st) < 0)
		return -errno;
	n = fgetxattr(dfd, OVR_XATTR, buf, sizeof(buf) - 1);
	if (n >= 0 && ovr_parse(buf, (size_t)n, cur) == 0) {
		cur->mode = S_IFDIR | (cur->mode & 07777);
		return 0;
	}
	*cur = (struct ovr_stat){ .uid = st.st_uid, .gid = st.st_gid, .mode = S_IFDIR | (st.st_mode & 07777) };
	return 0;
}

static void wanted(struct ovr_stat *s, const struct zcfsd_root_owner *o, int64_t mount_group)
{
	if (o && o->has_uid)
		s->uid = o->uid;
	if (o && o->has_gid)
		s->gid = o->gid;
	if (o && o->has_mode)
		s->mode = S_IFDIR | o->mode;
	if (mount_group >= 0) {
		s->gid = (gid_t)mount_group;
		s->mode |= S_ISGID | S_IRWXG;
	}
	s->has_type = true;
}

bool zcfsd_root_owner_matches(int dfd, const struct zcfsd_root_owner *o, int64_t mount_group)
{
	struct ovr_stat cur, want;

	if (current(dfd, &cur) < 0)
		return false;
	want = cur;
	wanted(&want, o, mount_group);
	return want.uid == cur.uid && want.gid == cur.gid && want.mode == cur.mode;
}

int zcfsd_root_owner_apply(int dfd, const struct zcfsd_root_owner *o, int64_t mount_group,
			   struct zcfs_err *e)
{
	struct ovr_stat s;
	char buf[OVR_MAXLEN + 1];
	int n, r;

	r = current(dfd, &s);
	if (r < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, r, "volume root: %s", strerror(-r));
	wanted(&s, o, mount_group);
	n = ovr_format(&s, buf, sizeof(buf));
	if (n < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, n, "volume root: record too long");
	if (fsetxattr(dfd, OVR_XATTR, buf, (size_t)n, 0) < 0)
		return zcfs_fail(e, ZCFS_INTERNAL, -errno, "volume root: setting %s: %m", OVR_XATTR);
	return 0;
}
