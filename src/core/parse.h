/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * parse.h - the one grammar of numbers and sizes: the option table's values,
 * the control requests, the numbers of cgroup files, zswapctl's arguments
 * and the benchmarks' read their numbers here, so that "64KiB" or an
 * overflowing number means the same thing wherever it is given.
 *
 * A number is decimal digits and nothing else: no sign, no space, no base
 * prefix. A size is a number optionally followed by K, M, G or T (powers of
 * 1024, in either case) and then optionally B or iB, or by B alone. Both
 * are checked to the end of the text, for 64-bit overflow and against the
 * caller's bounds. Pure functions of their text: no libc, no state, safe in
 * the constructor and on any thread.
 */
#ifndef ZSWAP_PARSE_H
#define ZSWAP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why a text is not a valid number or size (parse_cause gives the words). */
enum parse_err {
	PARSE_OK,
	PARSE_EMPTY,		/* nothing at all */
	PARSE_NOT_NUMBER,	/* no digit first, or a number followed by more */
	PARSE_BAD_UNIT,		/* a size's digits followed by what is no unit */
	PARSE_TOO_LARGE,	/* above the bound, or beyond 64 bits */
	PARSE_TOO_SMALL,	/* below the bound */
};

/* The cause as words for a message: "empty", "not a number", "too large"... */
const char *parse_cause(enum parse_err e);

/* The decimal digits at the start of s: how many (0 when s does not start
 * with one), their value in *out, and *overflow when it does not fit in 64
 * bits (the digits are counted all the same). What may follow is the
 * caller's grammar (a unit, the end of a line). */
size_t parse_digits(const char *s, uint64_t *out, bool *overflow);

/* A number in [min, max]: digits, nothing before or after them. */
enum parse_err parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A size in bytes in [min, max] (the bounds apply to the bytes it names). */
enum parse_err parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A percentage "N%" with N from 1 to 100, into *out (N). PARSE_NOT_NUMBER
 * when s is not digits followed by one '%' (it may be a size then). */
enum parse_err parse_percent(const char *s, uint64_t *out);

/* The value of the line "name N kB" in the text of a /proc file (buf, n
 * bytes; name with its colon, e.g. "VmPTE:"), in bytes; 0 when no line
 * starts with name. */
uint64_t parse_proc_kb(const char *buf, size_t n, const char *name);

/* The first nf numbers of a line of numbers separated by single spaces
 * (/proc/self/statm: "size resident shared ..." in pages) added into f[],
 * which the caller zeroes: those missing stay 0. */
void parse_statm(const char *buf, size_t n, uint64_t *f, size_t nf);

#endif
