/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_check.h - CHECK(cond, fmt, ...) for the unit tests that carry on
 * after a failed check: it names the file, the line and the condition,
 * prints the message and counts the failure in `failures`; main() reports
 * the count and exits 1 when it is not 0.
 */
#ifndef ZSWAP_TEST_CHECK_H
#define ZSWAP_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			failures++;						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
		}								\
	} while (0)

#endif
