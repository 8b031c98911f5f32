/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_text.h - text-like page contents for the benchmarks.
 *
 * Every side of a comparison gets the same data: real text
 * (English prose from /usr/share, C from /usr/include), chosen with a fixed
 * seed. The corpus is read in a fixed order (directories walked with sorted
 * names) and each page is a 4 KiB slice starting at a seeded offset, so a
 * given (dirs, seed) always yields the same bytes on one machine; the corpus
 * hash printed with every result shows it.
 */
#ifndef ZSWAP_BENCH_TEXT_H
#define ZSWAP_BENCH_TEXT_H

#include <stddef.h>
#include <stdint.h>

struct bench_text {
	char *buf;		/* the corpus, malloc'd before any measurement */
	size_t len;
	size_t files;		/* files it was read from */
	uint64_t hash;		/* bench_hash of the corpus */
};

/* Read text files (no NUL byte, at least 256 bytes)
 * under the colon-separated directories dirs, in sorted order, until cap
 * bytes. Exits with a message when less than 64 KiB of text is found. */
void bench_text_load(struct bench_text *t, const char *dirs, size_t cap);

/* Fill npages pages at dst with slices of the corpus, seeded by seed. */
void bench_text_fill(const struct bench_text *t, void *dst, size_t npages, uint64_t seed);

/* The default corpus: licences and documentation prose, then C headers. */
#define BENCH_TEXT_DIRS "/usr/share/common-licenses:/usr/share/doc:/usr/include"
#define BENCH_TEXT_CAP (32UL << 20)

#endif
