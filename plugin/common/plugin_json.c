/* Strict request parsing shared by both plugins. */
#include <string.h>
#include "common/json_strict.h"
#include "plugin_json.h"

static void tokener_freep(json_tokener **t) { if (*t) json_tokener_free(*t); }

int pj_parse_object(const char *buf, size_t len, bool empty_ok, json_object **ret, struct zcfs_err *e)
{
	__attribute__((cleanup(tokener_freep))) json_tokener *tok = NULL;
	json_object *o;
	size_t i, used;

	for (i = 0; i < len && strchr(" \t\r\n", buf[i]) && buf[i]; i++)
		;
	if (i == len) {
		if (!empty_ok)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "empty request body");
		*ret = json_object_new_object();
		return *ret ? 0 : zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	}
	if (len > INT32_MAX)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EFBIG, "request too large");
	tok = json_tokener_new_ex(PJ_MAX_DEPTH);
	if (!tok)
		return zcfs_fail(e, ZCFS_INTERNAL, -ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o) {
		enum json_tokener_error je = json_tokener_get_error(tok);
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "malformed JSON: %s",
				 je == json_tokener_continue ? "unexpected end of input" :
				 json_tokener_error_desc(je));
	}
	used = json_tokener_get_parse_end(tok);
	for (i = used; i < len && buf[i] && strchr(" \t\r\n", buf[i]); i++)
		;
	if (i != len) {
		json_object_put(o);
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
				 "malformed JSON: trailing data after the object");
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "the request must be a JSON object");
	}
	/* duplicate keys (json-c keeps the last), "\u0000" in strings */
	{
		char why[96];
		if (zcfs_json_check_raw(buf, len, o, why, sizeof(why)) < 0) {
			json_object_put(o);
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "malformed JSON: %s", why);
		}
	}
	*ret = o;
	return 0;
}

int pj_only_keys(json_object *o, const char *what, const char *const *allowed, struct zcfs_err *e)
{
	const char *key = zcfs_json_unknown_key(o, allowed);

	if (key)
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "unknown field '%s%s%.64s'",
				 what ? what : "", what ? "." : "", key);
	return 0;
}

bool pj_is_clean_string(json_object *v)
{
	return json_object_is_type(v, json_type_string) &&
	       strlen(json_object_get_string(v)) == (size_t)json_object_get_string_len(v);
}

int pj_string(json_object *o, const char *key, bool required, const char **ret, struct zcfs_err *e)
{
	json_object *v;

	*ret = NULL;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null) ||
	    (json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0)) {
		/* proto3: an empty string is an absent field */
		if (required)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s is required", key);
		return 0;
	}
	if (!pj_is_clean_string(v))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s must be a string", key);
	*ret = json_object_get_string(v);
	return 0;
}

int pj_bool(json_object *o, const char *key, bool def, bool *ret, struct zcfs_err *e)
{
	json_object *v;

	*ret = def;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s must be a boolean", key);
	*ret = json_object_get_boolean(v);
	return 0;
}

int pj_object(json_object *o, const char *key, bool required, json_object **ret, struct zcfs_err *e)
{
	json_object *v;

	*ret = NULL;
	if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
		if (required)
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s is required", key);
		return 0;
	}
	if (!json_object_is_type(v, json_type_object))
		return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL, "%s must be an object", key);
	*ret = v;
	return 0;
}

int pj_string_map(json_object *o, const char *key, json_object **ret, struct zcfs_err *e)
{
	json_object *m;
	int r;

	r = pj_object(o, key, false, &m, e);
	if (r < 0 || !m) {
		*ret = NULL;
		return r;
	}
	json_object_object_foreach(m, k, v) {
		if (!pj_is_clean_string(v))
			return zcfs_fail(e, ZCFS_INVALID_ARGUMENT, -EINVAL,
					 "%s['%.64s'] must be a string", key, k);
	}
	*ret = m;
	return 0;
}

int pj_read_fd(int fd, size_t max, char **ret, size_t *len)
{
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = 0;

	for (;;) {
		ssize_t n;
		if (have == cap) {
			char *nb;
			if (cap > max)
				return -EFBIG;
			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap + 1);
			if (!nb)
				return -ENOMEM;
			buf = nb;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > max)
			return -EFBIG;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[have] = '\0';
	*len = have;
	*ret = TAKE_PTR(buf);
	return 0;
}
