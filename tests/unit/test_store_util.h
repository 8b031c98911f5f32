/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_util.h - page contents and checks shared by the comp/store tests.
 */
#ifndef TEST_STORE_UTIL_H
#define TEST_STORE_UTIL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TP_PAGE 4096

#define TP_CHECK(cond) \
	do { if (!(cond)) { fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); exit(1); } } while (0)
#define TP_CHECK_EQ(a, b) \
	do { long long _a = (long long)(a), _b = (long long)(b); \
	     if (_a != _b) { fprintf(stderr, "%s:%d: FAIL: %s == %s (%lld != %lld)\n", \
				    __FILE__, __LINE__, #a, #b, _a, _b); exit(1); } } while (0)

/* Kinds of page content every round-trip test covers. */
enum tp_kind { TP_ZERO, TP_SAME, TP_TEXT, TP_BINARY, TP_RANDOM, TP__COUNT };

extern const char *const tp_kind_name[TP__COUNT];

/* An aligned buffer of n pages of one kind (malloc'd: call before counting
 * allocations). Text comes from real text files on this machine
 * (/usr/share/common-licenses, /usr/include), binary from an ELF in /usr/bin
 * (else this test's own executable); both fall back to synthetic content
 * with a note on stderr when the files are missing. */
uint8_t *tp_pages(enum tp_kind kind, size_t n, uint64_t seed);

/* xorshift64*: deterministic, thread-local state passed in. */
uint64_t tp_rand(uint64_t *state);

/* A page of a kind drawn from the seed: some zero, some same-filled, mostly
 * text (text_pages pages of it) at an odd offset with a few bytes changed,
 * some random, some half-random. The same seed makes the same page. */
void tp_mixed_page(uint8_t *pg, uint64_t seed, const uint8_t *text, size_t text_pages);

/* A checksum of one page, for stress tests that keep only the sum. */
uint64_t tp_sum(const void *page);

/* test_store_mcount.c (linked only where the malloc family is counted):
 * while tp_mcount_on is set, every malloc/calloc/realloc/aligned call made in
 * the process adds one to tp_mcount. */
extern _Atomic int tp_mcount_on;
extern _Atomic unsigned long tp_mcount;

#endif
