#include <ctype.h>
#include <string.h>
#include "parse.h"

static int parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
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

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	const char *end;
	uint64_t v, mult = 1;
	int r;

	if (!s)
		return -EINVAL;
	r = parse_digits(s, &end, &v);
	if (r < 0)
		return r;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
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
