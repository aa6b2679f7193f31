/* Strict JSON documents on top of json-c: json-c takes the last of
 * duplicate keys, cuts strings at an escaped NUL when they are used as C
 * strings, and (json_tokener_parse) ignores what follows the value. Every
 * one of those lets a request mean something else than it says, so the
 * control socket and the plugins refuse them. */
#ifndef ZCFS_JSON_STRICT_H
#define ZCFS_JSON_STRICT_H

#include <stddef.h>
#include <json-c/json.h>
#include "util.h"

#define ZCFS_JSON_MAX_DEPTH 32

/* Parses BUF[0..LEN) as one JSON value (RFC 8259, json-c's strict mode),
 * with only whitespace after it, no "\u0000" in any string or key and no
 * key twice in one object. Returns 0 and *ret, or -EINVAL with a reason
 * a person can act on in WHY. */
int zcfs_json_parse_strict(const char *buf, size_t len, json_object **ret, char *why,
			   size_t why_len) _must_check_;

/* The checks after parsing alone, for callers with their own tokener:
 * 0, or -EINVAL and WHY. DOC is the value parsed from BUF[0..LEN). */
int zcfs_json_check_raw(const char *buf, size_t len, json_object *doc, char *why, size_t why_len)
	_must_check_;

#endif
