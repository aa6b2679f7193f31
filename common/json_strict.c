/* See json_strict.h. The raw text has been accepted by json-c's strict
 * parser before it is scanned here, so the scan only has to track strings
 * and count object members: in valid JSON every ':' outside a string
 * separates one key from its value. */
#include <stdio.h>
#include <string.h>
#include "json_strict.h"

static size_t members(json_object *o)
{
	size_t n = 0, i;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, v) {
			(void)k;
			n += 1 + members(v);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++)
			n += members(json_object_array_get_idx(o, i));
	}
	return n;
}

int zcfs_json_check_raw(const char *buf, size_t len, json_object *doc, char *why, size_t why_len)
{
	size_t i, colons = 0;
	bool in_str = false;

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (!in_str) {
			if (c == '\'') {	/* json-c takes 'x' strings even when strict */
				snprintf(why, why_len, "malformed JSON: single-quoted string");
				return -EINVAL;
			}
			in_str = c == '"';
			colons += c == ':';
			continue;
		}
		if (c == '"') {
			in_str = false;
		} else if (c == '\\' && i + 1 < len) {
			if (buf[i + 1] == 'u' && i + 5 < len && !strncmp(buf + i + 2, "0000", 4)) {
				snprintf(why, why_len, "a string contains \\u0000");
				return -EINVAL;
			}
			i++;	/* the escaped character: never a quote that ends the string */
		}
	}
	if (colons != members(doc)) {
		snprintf(why, why_len, "an object has the same key twice");
		return -EINVAL;
	}
	return 0;
}

int zcfs_json_parse_strict(const char *buf, size_t len, json_object **ret, char *why, size_t why_len)
{
	json_tokener *tok;
	json_object *o;
	size_t end;
	int r;

	*ret = NULL;
	if (len > INT32_MAX) {
		snprintf(why, why_len, "document too large");
		return -EINVAL;
	}
	tok = json_tokener_new_ex(ZCFS_JSON_MAX_DEPTH);
	if (!tok) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, buf, (int)len);
	if (!o) {
		enum json_tokener_error je = json_tokener_get_error(tok);
		snprintf(why, why_len, "malformed JSON: %s",
			 je == json_tokener_continue ? "unexpected end of input" : json_tokener_error_desc(je));
		json_tokener_free(tok);
		return -EINVAL;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; end < len && buf[end] && strchr(" \t\r\n", buf[end]); end++)
		;
	if (end != len) {
		snprintf(why, why_len, "malformed JSON: trailing data after the value");
		json_object_put(o);
		return -EINVAL;
	}
	r = zcfs_json_check_raw(buf, len, o, why, why_len);
	if (r < 0) {
		json_object_put(o);
		return r;
	}
	*ret = o;
	return 0;
}
