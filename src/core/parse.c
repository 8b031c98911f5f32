/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * parse.c - numbers and sizes (see parse.h). No locale and no strtoull:
 * strtoull takes a sign and leading space, wraps "-1" to a huge number and
 * says nothing of what follows the digits.
 */
#include "config.h"
#include "core/parse.h"

#include "base/layout.h"

const char *parse_cause(enum parse_err e)
{
	switch (e) {
	case PARSE_OK: return "valid";
	case PARSE_EMPTY: return "empty";
	case PARSE_NOT_NUMBER: return "not a number";
	case PARSE_BAD_UNIT: return "unknown unit (K, M, G or T)";
	case PARSE_TOO_LARGE: return "too large";
	case PARSE_TOO_SMALL: return "too small";
	}
	return "invalid";
}

size_t parse_digits(const char *s, uint64_t *out, bool *overflow)
{
	uint64_t v = 0;
	size_t i = 0;

	*overflow = false;
	for (; s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			*overflow = true;
		else
			v = v * 10 + d;
	}
	*out = v;
	return i;
}

/* v within [min, max], overflow meaning beyond them. */
static enum parse_err parse_bound(uint64_t v, bool overflow, uint64_t min, uint64_t max)
{
	if (overflow || v > max)
		return PARSE_TOO_LARGE;
	if (v < min)
		return PARSE_TOO_SMALL;
	return PARSE_OK;
}

/* Digits followed by exactly tail ("" or "%"), their value in [min, max]. */
ZSWAP_STARTUP static enum parse_err parse_number(const char *s, const char *tail, uint64_t min, uint64_t max,
				   uint64_t *out)
{
	bool overflow;
	uint64_t v;
	size_t n, i;
	enum parse_err e;

	if (!s || !*s)
		return PARSE_EMPTY;
	n = parse_digits(s, &v, &overflow);
	for (i = 0; tail[i] && s[n + i] == tail[i]; i++)
		;
	if (n == 0 || tail[i] != '\0' || s[n + i] != '\0')
		return PARSE_NOT_NUMBER;
	e = parse_bound(v, overflow, min, max);
	if (e == PARSE_OK)
		*out = v;
	return e;
}

ZSWAP_STARTUP enum parse_err parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	return parse_number(s, "", min, max, out);
}

/* The unit at *p (K, M, G, T in either case, or none): its multiplier, *p
 * moved past it and past a "B" or "iB" after it (or a "B" alone). */
static uint64_t parse_unit(const char **p)
{
	static const char units[] = "kmgt";
	const char *s = *p;
	uint64_t mult = 1;
	char c = (char)(*s | 0x20);	/* ASCII lower case */

	for (unsigned i = 0; i < sizeof(units) - 1; i++)
		if (c == units[i]) {
			mult = 1ULL << (10 * (i + 1));
			s++;
			break;
		}
	if (mult != 1 && s[0] == 'i' && (s[1] == 'B' || s[1] == 'b'))
		s += 2;
	else if (*s == 'B' || *s == 'b')
		s++;
	*p = s;
	return mult;
}

ZSWAP_STARTUP enum parse_err parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	bool overflow;
	uint64_t v, mult;
	const char *p;
	enum parse_err e;

	if (!s || !*s)
		return PARSE_EMPTY;
	p = s + parse_digits(s, &v, &overflow);
	if (p == s)
		return PARSE_NOT_NUMBER;
	mult = parse_unit(&p);
	if (*p != '\0')
		return PARSE_BAD_UNIT;
	if (!overflow && v > UINT64_MAX / mult)
		overflow = true;
	e = parse_bound(v * mult, overflow, min, max);
	if (e == PARSE_OK)
		*out = v * mult;
	return e;
}

ZSWAP_STARTUP enum parse_err parse_percent(const char *s, uint64_t *out)
{
	return parse_number(s, "%", 1, 100, out);
}

uint64_t parse_proc_kb(const char *buf, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		if (i && buf[i - 1] != '\n')
			continue;
		while (name[k] && i + k < n && buf[i + k] == name[k])
			k++;
		if (name[k])
			continue;
		size_t j = i + k;
		while (j < n && (buf[j] == ' ' || buf[j] == '\t'))
			j++;
		uint64_t kb = 0;
		while (j < n && buf[j] >= '0' && buf[j] <= '9')
			kb = kb * 10 + (uint64_t)(buf[j++] - '0');
		return kb << 10;
	}
	return 0;
}

void parse_statm(const char *buf, size_t n, uint64_t *f, size_t nf)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < nf; i++) {
		if (buf[i] >= '0' && buf[i] <= '9')
			f[k] = f[k] * 10 + (uint64_t)(buf[i] - '0');
		else if (buf[i] == ' ')
			k++;
	}
}
