/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_tier.c - refaults from the second tier, in address order and at
 * random: what a page costs to come back from the file.
 *
 *   LD_PRELOAD=build/.libs/libzswap.so ZSWAP_MEMORY_LIMIT=32M \
 *       build/tools/bench/bench_tier [--size 256M] [--order seq|random] [--settle S]
 *
 * Fills SIZE of incompressible pages (the first to go to the tier: in the
 * pool they would save nothing), waits until the tier stops growing (at most
 * --settle seconds), then touches every page once in the order asked and
 * prints one RESULT line: nanoseconds a page, and the library's counters
 * over the pass (pages read from the tier, refaults, readahead hits, pages
 * written back meanwhile to make room). Every page is then checked whole;
 * a wrong byte exits 1. Without the library it measures plain memory.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_util.h"
#include "zswap.h"

typedef int (*stats_fn)(struct zswap_stats *, size_t);

static void fill(unsigned char *p, size_t i)
{
	uint64_t st = 0x7469657262656e63ULL ^ (i * 0x9e3779b97f4a7c15ULL);

	for (size_t w = 0; w < BENCH_PAGE / 8; w++) {
		uint64_t v = bench_rand(&st);
		memcpy(p + w * 8, &v, 8);
	}
}

static void snap(stats_fn f, struct zswap_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	if (f)
		f(st, sizeof(*st));
}

int main(int argc, char **argv)
{
	uint64_t size = 256ULL << 20;
	long settle = 30;
	int random_order = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = bench_parse_size("--size", argv[++i]);
		else if (!strcmp(argv[i], "--order") && i + 1 < argc) {
			const char *o = argv[++i];
			if (strcmp(o, "seq") && strcmp(o, "random"))
				bench_die("--order: seq or random, not %s", o);
			random_order = !strcmp(o, "random");
		} else if (!strcmp(argv[i], "--settle") && i + 1 < argc)
			settle = bench_parse_long("--settle", argv[++i], 0, 3600);
		else
			bench_die("usage: %s [--size SIZE] [--order seq|random] [--settle S]", argv[0]);
	}
	size_t n = size / BENCH_PAGE;
	stats_fn stats = (stats_fn)dlsym(RTLD_DEFAULT, "zswap_stats");
	unsigned char *a = mmap(NULL, n * BENCH_PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t *order = malloc(n * sizeof(*order));
	unsigned char expect[BENCH_PAGE];
	struct zswap_stats s0, s1;

	if (a == MAP_FAILED || !order)
		bench_die("out of memory");
	for (size_t i = 0; i < n; i++)
		fill(a + i * BENCH_PAGE, i);

	/* Settled: the tier has not grown for a second. */
	uint64_t last = 0;
	for (long t = 0; stats && t < settle * 10; t++) {
		snap(stats, &s0);
		if (t % 10 == 9) {
			if (s0.bd_count == last && last)
				break;
			last = s0.bd_count;
		}
		usleep(100000);
	}

	uint64_t rs = 42;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	if (random_order)
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = bench_rand(&rs) % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}

	snap(stats, &s0);
	volatile unsigned char sink = 0;
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < n; i++)
		sink += a[order[i] * BENCH_PAGE + 64];
	uint64_t t1 = bench_now_ns();
	snap(stats, &s1);
	(void)sink;

	printf("RESULT bench=tier order=%s pages=%zu in_tier_before=%llu ns_per_page=%.0f "
	       "bd_reads=%llu refaults=%llu readahead_hits=%llu written_back=%llu bd_read_fail=%llu\n",
	       random_order ? "random" : "seq", n, (unsigned long long)s0.bd_count,
	       (double)(t1 - t0) / (double)n,
	       (unsigned long long)(s1.bd_reads - s0.bd_reads),
	       (unsigned long long)(s1.refaults - s0.refaults),
	       (unsigned long long)(s1.readahead_hits - s0.readahead_hits),
	       (unsigned long long)(s1.written_back_pages - s0.written_back_pages),
	       (unsigned long long)(s1.bd_read_fail - s0.bd_read_fail));
	fflush(stdout);

	for (size_t i = 0; i < n; i++) {
		fill(expect, i);
		if (memcmp(a + i * BENCH_PAGE, expect, BENCH_PAGE) != 0) {
			fprintf(stderr, "bench_tier: page %zu came back wrong\n", i);
			return 1;
		}
	}
	return 0;
}
