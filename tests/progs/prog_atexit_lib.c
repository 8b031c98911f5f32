/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_atexit_lib.c - a library whose destructor reads evicted memory.
 *
 * Preloaded after libzswap (LD_PRELOAD="libzswap.so prog_atexit_lib.so"), it
 * is initialised before libzswap and finalised after it: its destructor runs
 * once libzswap's own destructor has run, and must still find the program's
 * evicted pages (see prog_atexit.c).
 */
#include "config.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void prog_atexit_lib_set(void *p, size_t len, uint64_t sum) __attribute__((visibility("default")));

static const unsigned char *area;
static size_t area_len;
static uint64_t area_sum;

static uint64_t lib_sum(const unsigned char *b, size_t len)
{
	/* the same checksum as pc_sum() in prog_common.h */
	uint64_t h = 0xcbf29ce484222325ULL, x;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	x = h ^ len;
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void prog_atexit_lib_set(void *p, size_t len, uint64_t sum)
{
	area = p;
	area_len = len;
	area_sum = sum;
}

__attribute__((destructor)) static void lib_dtor(void)
{
	char line[160];

	if (!area)
		return;
	uint64_t s = lib_sum(area, area_len);
	snprintf(line, sizeof(line), "library destructor: %s sum=%016" PRIx64 "\n", s == area_sum ? "ok" : "WRONG", s);
	if (write(1, line, strlen(line)) < 0)
		_exit(2);
	if (s != area_sum) {
		static const char msg[] = "prog_atexit_lib: FAIL: evicted memory read wrong in a late destructor\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			_exit(2);
		_exit(1);
	}
}
