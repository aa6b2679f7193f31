#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include "parse.h"

/* The decimal digits at S (NULL: -EINVAL) into *ret, *end after them. */
static int parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*end = s;
	*ret = v;
	return 0;
}

/* A K/M/G (1024-based) suffix at *end, optionally followed by "i", "B"
 * or "iB": its multiplier in *mult (1 without one), *end moved past it. */
static int size_suffix(const char **end, uint64_t *mult)
{
	switch (**end) {
	case '\0': return 0;
	case 'k': case 'K': *mult = 1ULL << 10; break;
	case 'm': case 'M': *mult = 1ULL << 20; break;
	case 'g': case 'G': *mult = 1ULL << 30; break;
	default: return -EINVAL;
	}
	(*end)++;
	if (**end == 'i' || **end == 'B')
		*end += (**end == 'i' && (*end)[1] == 'B') ? 2 : 1;
	return 0;
}

/* The whole of S, digits then (with SUFFIX) a size suffix, in [min, max]. */
static int parse_number(const char *s, bool suffix, uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v, mult = 1;
	int r;

	r = parse_digits(s, &end, &v);
	if (r == 0 && suffix)
		r = size_suffix(&end, &mult);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	return parse_number(s, false, min, max, ret);
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	return parse_number(s, true, min, max, ret);
}
