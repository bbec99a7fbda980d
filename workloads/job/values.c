// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "job/values.h"

int values_parse_uint64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	return 0;
}

/* Multiplier for a size suffix. fio's default (kb_base=1024) gives the SI-looking
 * letters powers of 1024 and the IEC names powers of 1000, for old job files. */
static int size_mult(const char *suf, uint64_t *mult)
{
	static const char letters[] = "kmgtp";
	const char *p;
	size_t n = strlen(suf);
	uint64_t base = 1024;
	int pow;

	*mult = 1;
	if (n == 0 || !strcasecmp(suf, "b"))
		return 0;
	p = strchr(letters, tolower((unsigned char)suf[0]));
	if (!p)
		return -1;
	pow = (int)(p - letters) + 1;
	if (n == 1 || (n == 2 && tolower((unsigned char)suf[1]) == 'b'))
		base = 1024;
	else if (n == 3 && !strcasecmp(suf + 1, "ib"))
		base = 1000;
	else
		return -1;
	while (pow--)
		*mult *= base;
	return 0;
}

int values_parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v, mult;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10);
	if (errno || end == s)
		return -1;
	if (size_mult(end, &mult))
		return -1;
	if (mult > 1 && v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

int values_parse_time_us(const char *s, uint64_t *out)
{
	static const struct { const char *suf; double us; } units[] = {
		{ "", 1e6 }, { "s", 1e6 }, { "sec", 1e6 }, { "us", 1 }, { "usec", 1 },
		{ "ms", 1e3 }, { "msec", 1e3 }, { "m", 60e6 }, { "min", 60e6 },
		{ "h", 3600e6 }, { "d", 86400e6 },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcasecmp(end, units[i].suf)) {
			double us = v * units[i].us;

			if (us > 1e18)
				return -1;
			*out = (uint64_t)llround(us);
			return 0;
		}
	}
	return -1;
}

int values_parse_bool(const char *s, bool *out)
{
	uint64_t v;

	if (!s) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
		*out = true;
		return 0;
	}
	if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off")) {
		*out = false;
		return 0;
	}
	if (values_parse_uint64(s, &v))
		return -1;
	*out = v != 0;
	return 0;
}

const char *values_format_bytes(uint64_t v, char *buf, unsigned len)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double d = (double)v;
	unsigned u = 0;

	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", v);
	else
		snprintf(buf, len, "%.1f %s", d, units[u]);
	return buf;
}
