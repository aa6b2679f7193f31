/* Strict JSON request reading for the plugins: size and depth caps, one
 * object per document, known fields only, typed getters that say which
 * field is wrong. Every failure is INVALID_ARGUMENT. */
#ifndef ZCFS_PLUGIN_JSON_H
#define ZCFS_PLUGIN_JSON_H

#include <stdbool.h>
#include <json-c/json.h>
#include "common/zcfs_proto.h"

#define PJ_MAX_DEPTH 16

/* Parses BUF[0..LEN) as exactly one JSON object (whitespace around it
 * allowed; empty input is {} when EMPTY_OK). *ret is owned by the caller. */
int pj_parse_object(const char *buf, size_t len, bool empty_ok, json_object **ret,
		    struct zcfs_err *e) _must_check_;
/* Every key of O (named WHAT in messages) is in the NULL-terminated ALLOWED. */
int pj_only_keys(json_object *o, const char *what, const char *const *allowed, struct zcfs_err *e);
/* Field KEY of O as a string without NUL bytes: absent (or "" when
 * EMPTY_IS_ABSENT) gives NULL, or INVALID_ARGUMENT when REQUIRED. */
int pj_string(json_object *o, const char *key, bool required, const char **ret, struct zcfs_err *e);
/* Field KEY as a boolean; absent gives DEF. */
int pj_bool(json_object *o, const char *key, bool def, bool *ret, struct zcfs_err *e);
/* Field KEY as an object (absent: *ret = NULL, or an error when REQUIRED). */
int pj_object(json_object *o, const char *key, bool required, json_object **ret, struct zcfs_err *e);
/* Field KEY as a map<string,string> (absent: *ret = NULL). */
int pj_string_map(json_object *o, const char *key, json_object **ret, struct zcfs_err *e);
/* A JSON string without embedded NUL bytes. */
bool pj_is_clean_string(json_object *v);
/* Reads all of FD up to MAX bytes into *ret (NUL-terminated, *len set);
 * more than MAX bytes: -EFBIG. */
int pj_read_fd(int fd, size_t max, char **ret, size_t *len) _must_check_;

#endif
