/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_stats_hist.c - what the statistics cost on the fault path: two
 * hist_now() (clock_gettime, vDSO) and one hist_record() per refault.
 * A program, never a test: it prints figures and judges none.
 *
 * usage: tools/bench/bench_stats_hist [iterations]
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>

#include "base/hist.h"
#include "core/parse.h"

int main(int argc, char **argv)
{
	uint64_t iterations = 5000000;
	static struct hist h;
	volatile uint64_t sink = 0;

	if (argc > 1 && parse_u64(argv[1], 1, LONG_MAX, &iterations) != PARSE_OK) {
		fprintf(stderr, "usage: bench_stats_hist [iterations]\n");
		return 2;
	}
	long n = (long)iterations;
	for (int round = 0; round < 3; round++) {
		uint64_t t0 = hist_now();
		for (long i = 0; i < n; i++) {
			uint64_t a = hist_now();
			sink += hist_now() - a;
		}
		uint64_t t1 = hist_now();
		for (long i = 0; i < n; i++)
			hist_record(&h, (uint64_t)i * 37 % 100000);
		uint64_t t2 = hist_now();
		printf("round %d: two hist_now() %.1f ns, hist_record() %.1f ns\n", round,
		       (double)(t1 - t0) / (double)n, (double)(t2 - t1) / (double)n);
	}
	return 0;
}
