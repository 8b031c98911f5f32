/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_parse.c - the one grammar of numbers and sizes (src/core/parse.c)
 * that the options, the control requests, the cgroup files, zswapctl and
 * the benchmarks read: every unit and its spellings, percentages, the
 * bounds, 64-bit overflow, and what may not come before or after.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/parse.h"
#include "test_check.h"

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

struct pcase {
	const char *text;
	enum parse_err err;
	uint64_t want;		/* when err is PARSE_OK */
};

typedef enum parse_err (*parse_fn)(const char *s, uint64_t *out);

static enum parse_err size_any(const char *s, uint64_t *out)
{
	return parse_size(s, 0, UINT64_MAX, out);
}

static enum parse_err number_any(const char *s, uint64_t *out)
{
	return parse_u64(s, 0, UINT64_MAX, out);
}

/* Each case through fn: its result, its value, and nothing stored on a
 * refusal. */
static void check_cases(const char *what, parse_fn fn, const struct pcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 12345;
		enum parse_err e = fn(cases[i].text, &v);

		CHECK(e == cases[i].err, "%s '%s': %s, expected %s", what, cases[i].text,
		      parse_cause(e), parse_cause(cases[i].err));
		if (cases[i].err == PARSE_OK)
			CHECK(v == cases[i].want, "%s '%s' = %" PRIu64 ", expected %" PRIu64,
			      what, cases[i].text, v, cases[i].want);
		else
			CHECK(v == 12345, "%s '%s' refused but stored %" PRIu64, what, cases[i].text, v);
	}
}

static void check_sizes(void)
{
	static const struct pcase cases[] = {
		{ "0", PARSE_OK, 0 },
		{ "4096", PARSE_OK, 4096 },
		{ "100B", PARSE_OK, 100 },
		{ "100b", PARSE_OK, 100 },
		{ "64K", PARSE_OK, 64 * KiB },
		{ "64k", PARSE_OK, 64 * KiB },
		{ "64KB", PARSE_OK, 64 * KiB },
		{ "64KiB", PARSE_OK, 64 * KiB },
		{ "64kib", PARSE_OK, 64 * KiB },
		{ "3M", PARSE_OK, 3 * MiB },
		{ "3mb", PARSE_OK, 3 * MiB },
		{ "3MiB", PARSE_OK, 3 * MiB },
		{ "2G", PARSE_OK, 2 * GiB },
		{ "2GiB", PARSE_OK, 2 * GiB },
		{ "1T", PARSE_OK, TiB },
		{ "1TiB", PARSE_OK, TiB },
		{ "16777215T", PARSE_OK, 16777215 * TiB },
		{ "18446744073709551615", PARSE_OK, UINT64_MAX },
		{ "", PARSE_EMPTY, 0 },
		{ "K", PARSE_NOT_NUMBER, 0 },
		{ "-1", PARSE_NOT_NUMBER, 0 },
		{ "+1", PARSE_NOT_NUMBER, 0 },
		{ " 1", PARSE_NOT_NUMBER, 0 },
		{ "1 ", PARSE_BAD_UNIT, 0 },
		{ "1\n", PARSE_BAD_UNIT, 0 },
		{ "1X", PARSE_BAD_UNIT, 0 },
		{ "1P", PARSE_BAD_UNIT, 0 },
		{ "1iB", PARSE_BAD_UNIT, 0 },	/* iB only after a unit */
		{ "1KIB", PARSE_BAD_UNIT, 0 },	/* the i is lower case */
		{ "1Ki", PARSE_BAD_UNIT, 0 },
		{ "1KBB", PARSE_BAD_UNIT, 0 },
		{ "1MK", PARSE_BAD_UNIT, 0 },
		{ "0x10", PARSE_BAD_UNIT, 0 },
		{ "20%", PARSE_BAD_UNIT, 0 },	/* a percentage is not a size */
		{ "1.5G", PARSE_BAD_UNIT, 0 },
		{ "99999999999999999999X", PARSE_BAD_UNIT, 0 },	/* the text before the number */
		{ "18446744073709551616", PARSE_TOO_LARGE, 0 },
		{ "99999999999999999999K", PARSE_TOO_LARGE, 0 },
		{ "16777216T", PARSE_TOO_LARGE, 0 },
		{ "17179869184G", PARSE_TOO_LARGE, 0 },
	};

	check_cases("size", size_any, cases, sizeof(cases) / sizeof(cases[0]));
}

static void check_size_bounds(void)
{
	uint64_t v = 0;

	/* The bounds apply to the bytes, whatever the unit. */
	CHECK(parse_size("4K", 4096, TiB, &v) == PARSE_OK && v == 4096, "4K in [4K, 1T]");
	CHECK(parse_size("4095", 4096, TiB, &v) == PARSE_TOO_SMALL, "4095 below 4K");
	CHECK(parse_size("1K", 4096, TiB, &v) == PARSE_TOO_SMALL, "1K below 4K");
	CHECK(parse_size("1T", 4096, TiB, &v) == PARSE_OK && v == TiB, "1T in [4K, 1T]");
	CHECK(parse_size("1025G", 4096, TiB, &v) == PARSE_TOO_LARGE, "1025G above 1T");
	CHECK(parse_size("0", 1, UINT64_MAX, &v) == PARSE_TOO_SMALL, "0 below 1");
	CHECK(parse_size("0K", 1, UINT64_MAX, &v) == PARSE_TOO_SMALL, "0K below 1");
}

static void check_numbers(void)
{
	static const struct pcase cases[] = {
		{ "0", PARSE_OK, 0 },
		{ "007", PARSE_OK, 7 },
		{ "100", PARSE_OK, 100 },
		{ "18446744073709551615", PARSE_OK, UINT64_MAX },
		{ "", PARSE_EMPTY, 0 },
		{ "-1", PARSE_NOT_NUMBER, 0 },
		{ "+1", PARSE_NOT_NUMBER, 0 },
		{ " 1", PARSE_NOT_NUMBER, 0 },
		{ "1 ", PARSE_NOT_NUMBER, 0 },
		{ "1\n", PARSE_NOT_NUMBER, 0 },
		{ "12x", PARSE_NOT_NUMBER, 0 },
		{ "1K", PARSE_NOT_NUMBER, 0 },	/* a number takes no unit */
		{ "0x10", PARSE_NOT_NUMBER, 0 },
		{ "99999999999999999999x", PARSE_NOT_NUMBER, 0 },
		{ "18446744073709551616", PARSE_TOO_LARGE, 0 },
		{ "99999999999999999999", PARSE_TOO_LARGE, 0 },
	};

	check_cases("number", number_any, cases, sizeof(cases) / sizeof(cases[0]));
	uint64_t v = 0;
	CHECK(parse_u64("2", 2, 4, &v) == PARSE_OK && v == 2, "2 in [2, 4]");
	CHECK(parse_u64("4", 2, 4, &v) == PARSE_OK && v == 4, "4 in [2, 4]");
	CHECK(parse_u64("1", 2, 4, &v) == PARSE_TOO_SMALL, "1 below 2");
	CHECK(parse_u64("5", 2, 4, &v) == PARSE_TOO_LARGE, "5 above 4");
	CHECK(parse_u64(NULL, 0, 1, &v) == PARSE_EMPTY, "NULL is empty");
}

static void check_percent(void)
{
	static const struct pcase cases[] = {
		{ "1%", PARSE_OK, 1 },
		{ "20%", PARSE_OK, 20 },
		{ "100%", PARSE_OK, 100 },
		{ "0%", PARSE_TOO_SMALL, 0 },
		{ "101%", PARSE_TOO_LARGE, 0 },
		{ "99999999999999999999%", PARSE_TOO_LARGE, 0 },
		{ "", PARSE_EMPTY, 0 },
		{ "%", PARSE_NOT_NUMBER, 0 },
		{ "20", PARSE_NOT_NUMBER, 0 },	/* a size, not a percentage */
		{ "20M", PARSE_NOT_NUMBER, 0 },
		{ "-20%", PARSE_NOT_NUMBER, 0 },
		{ "20%%", PARSE_NOT_NUMBER, 0 },
		{ "20% ", PARSE_NOT_NUMBER, 0 },
	};

	check_cases("percent", parse_percent, cases, sizeof(cases) / sizeof(cases[0]));
}

static void check_digits(void)
{
	uint64_t v;
	bool overflow;

	CHECK(parse_digits("123\n", &v, &overflow) == 3 && v == 123 && !overflow, "123 then a newline");
	CHECK(parse_digits("max\n", &v, &overflow) == 0, "max has no digits");
	CHECK(parse_digits("184467440737095516160 rest", &v, &overflow) == 21 && overflow,
	      "an overflow counts its digits");
}

static void check_statm(void)
{
	const char line[] = "2712 1036 754 222 0 270 0\n";
	uint64_t f[3] = { 0, 0, 0 }, g[4] = { 0, 0, 0, 0 };

	parse_statm(line, sizeof(line) - 1, f, 3);
	CHECK(f[0] == 2712 && f[1] == 1036 && f[2] == 754, "statm's size, resident and shared");
	parse_statm(line, 9, g, 4);	/* "2712 1036": the rest missing */
	CHECK(g[0] == 2712 && g[1] == 1036 && g[2] == 0 && g[3] == 0, "statm cut short: the rest 0");
}

static void check_causes(void)
{
	CHECK(!strcmp(parse_cause(PARSE_EMPTY), "empty"), "empty");
	CHECK(!strcmp(parse_cause(PARSE_NOT_NUMBER), "not a number"), "not a number");
	CHECK(!strcmp(parse_cause(PARSE_TOO_LARGE), "too large"), "too large");
	CHECK(!strcmp(parse_cause(PARSE_TOO_SMALL), "too small"), "too small");
	CHECK(strstr(parse_cause(PARSE_BAD_UNIT), "unit") != NULL, "unit");
}

int main(void)
{
	check_sizes();
	check_size_bounds();
	check_numbers();
	check_percent();
	check_digits();
	check_statm();
	check_causes();
	printf("test_parse: %d failures\n", failures);
	return failures ? 1 : 0;
}
