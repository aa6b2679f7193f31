/* Checked number parsing: whole string, no sign surprises, range bound. */
#ifndef ZCFS_PARSE_H
#define ZCFS_PARSE_H

#include <stdint.h>
#include "util.h"

/* Parses decimal S into *ret within [min, max]; -EINVAL on junk, -ERANGE
 * outside the range. *ret is untouched on failure. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret) _must_check_;
/* Like parse_u64 but accepts a K/M/G (1024-based) suffix. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret) _must_check_;

#endif
