/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_readahead.c - refault patterns for readahead on refault
 * (tests/engine/test_eng_readahead.sh).
 *
 * A range of text pages is paged out, then brought back by one of these
 * access patterns, each page's first word read and one byte of it written
 * (a stamp), and finally every byte of the range is checked:
 *   seq      pages 0, 1, 2, ... in order;
 *   seq2     two threads, each reading its own half in order;
 *   stride   every 3rd page (0, 3, 6, ...), then 1, 4, 7, ..., then 2, 5, ...;
 *   back     pages in reverse order;
 *   random   a random permutation (fixed seed);
 *   skip     in order, but only 3 pages of every 4 (the 4th is touched last);
 *   objects  objects of two and three pages (in turn) in a random order,
 *            each read through: what a key-value store's GETs of values
 *            larger than a page make.
 * Each pattern runs ROUNDS times (page-out, pass, verify). stdout gets one
 * line per pattern with a checksum of the range: the same with and without
 * the library and whatever ZSWAP_READAHEAD is. When the library is active,
 * stderr gets "stats PATTERN faults=F refaults=R hits=H misses=M pages=P",
 * the counter deltas of the passes (page-outs excluded), for the script.
 *
 * Usage: prog_readahead [PAGES] [PATTERN...]   (default 2048 pages, all)
 */
#include "prog_common.h"

#include <pthread.h>

#define ROUNDS 2
#define STAMP_OFF 100	/* the byte each pass writes */

static char *map;
static size_t npages;
static uint64_t seed = 77;

static unsigned char stamp_of(size_t i, int round)
{
	return (unsigned char)(0x41 + (i * 7 + (size_t)round) % 26);
}

/* Touch page i: check its first word against what it must hold, then write
 * its stamp. A wrong word fails at once, naming the page. */
static void touch(size_t i, int round)
{
	unsigned char expect[PC_PAGE];
	char *p = map + i * PC_PAGE;
	uint64_t w, want;

	pc_fill(expect, PC_TEXT, pc_page_seed(seed, i));
	if (round > 0)
		expect[STAMP_OFF] = stamp_of(i, round - 1);
	memcpy(&w, p, 8);
	memcpy(&want, expect, 8);
	if (w != want)
		pc_fail("page %zu: first word %016" PRIx64 ", expected %016" PRIx64 " (%s)", i, w, want,
			pc_describe(p, PC_TEXT, pc_page_seed(seed, i)));
	p[STAMP_OFF] = (char)stamp_of(i, round);
}

struct half {
	size_t from, to;
	int round;
};

static void *seq_thread(void *arg)
{
	const struct half *h = arg;

	for (size_t i = h->from; i < h->to; i++)
		touch(i, h->round);
	return NULL;
}

static void pass(const char *pattern, int round)
{
	if (!strcmp(pattern, "seq")) {
		for (size_t i = 0; i < npages; i++)
			touch(i, round);
	} else if (!strcmp(pattern, "seq2")) {
		struct half h[2] = { { 0, npages / 2, round }, { npages / 2, npages, round } };
		pthread_t t;

		if (pthread_create(&t, NULL, seq_thread, &h[1]) != 0)
			pc_fail("pthread_create failed");
		seq_thread(&h[0]);
		pthread_join(t, NULL);
	} else if (!strcmp(pattern, "stride")) {
		for (size_t r = 0; r < 3; r++)
			for (size_t i = r; i < npages; i += 3)
				touch(i, round);
	} else if (!strcmp(pattern, "back")) {
		for (size_t i = npages; i-- > 0;)
			touch(i, round);
	} else if (!strcmp(pattern, "random")) {
		size_t *order = malloc(npages * sizeof(*order));
		uint64_t rs = 12345 + (uint64_t)round;

		if (!order)
			pc_fail("out of memory");
		for (size_t i = 0; i < npages; i++)
			order[i] = i;
		for (size_t i = npages - 1; i > 0; i--) {
			size_t j = pc_rand(&rs) % (i + 1), x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
		for (size_t i = 0; i < npages; i++)
			touch(order[i], round);
		free(order);
	} else if (!strcmp(pattern, "objects")) {
		/* Object k starts at page obj[k] / 4 and has obj[k] % 4 pages. */
		size_t nobj = 0, *obj = malloc(npages * sizeof(*obj));
		uint64_t rs = 4321 + (uint64_t)round;

		if (!obj)
			pc_fail("out of memory");
		for (size_t i = 0, len = 2; i < npages; i += len, len = 5 - len)
			obj[nobj++] = i * 4 + (i + len <= npages ? len : npages - i);
		for (size_t i = nobj - 1; i > 0; i--) {
			size_t j = pc_rand(&rs) % (i + 1), x = obj[i];
			obj[i] = obj[j];
			obj[j] = x;
		}
		for (size_t k = 0; k < nobj; k++)
			for (size_t i = obj[k] / 4; i < obj[k] / 4 + obj[k] % 4; i++)
				touch(i, round);
		free(obj);
	} else if (!strcmp(pattern, "skip")) {
		for (size_t i = 0; i < npages; i++)
			if (i % 4 != 3)
				touch(i, round);
		for (size_t i = 3; i < npages; i += 4)
			touch(i, round);
	} else {
		pc_fail("unknown pattern %s", pattern);
	}
}

/* Every byte of the range: the text plus the last round's stamps. */
static uint64_t verify(const char *pattern, int round)
{
	unsigned char expect[PC_PAGE];
	uint64_t sum = 0;

	for (size_t i = 0; i < npages; i++) {
		const char *p = map + i * PC_PAGE;

		pc_fill(expect, PC_TEXT, pc_page_seed(seed, i));
		expect[STAMP_OFF] = stamp_of(i, round);
		if (memcmp(p, expect, PC_PAGE) != 0)
			pc_fail("%s round %d: page %zu of %zu is wrong after the pass", pattern, round, i, npages);
		sum = pc_mix(sum ^ pc_sum(p, PC_PAGE));
	}
	return sum;
}

static void run(const char *pattern)
{
	struct zswap_stats a, b;
	uint64_t faults = 0, refaults = 0, hits = 0, misses = 0, sum = 0;

	map = pc_map(npages * PC_PAGE);
	pc_fill_range(map, npages, PC_TEXT, seed);
	for (int round = 0; round < ROUNDS; round++) {
		pc_evict(pattern, map, npages, false);
		pc_stats(&a);
		pass(pattern, round);
		pc_stats(&b);
		faults += b.faults - a.faults;
		refaults += b.refaults - a.refaults;
		if (b.size >= offsetof(struct zswap_stats, readahead_misses) + sizeof(b.readahead_misses)) {
			hits += b.readahead_hits - a.readahead_hits;
			misses += b.readahead_misses - a.readahead_misses;
		}
		sum = verify(pattern, round);
	}
	printf("%s pages=%zu rounds=%d sum=%016" PRIx64 "\n", pattern, npages, ROUNDS, sum);
	fflush(stdout);
	if (pc_managed())
		fprintf(stderr, "stats %s faults=%" PRIu64 " refaults=%" PRIu64 " hits=%" PRIu64
			" misses=%" PRIu64 " pages=%zu\n", pattern, faults, refaults, hits, misses,
			npages * ROUNDS);
	munmap(map, npages * PC_PAGE);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "seq", "seq2", "stride", "back", "random", "skip", "objects" };
	int first = 1;

	pc_init("prog_readahead", &argc, argv);
	npages = 2048;
	if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9') {
		npages = strtoul(argv[1], NULL, 10);
		first = 2;
	}
	if (npages < 16)
		pc_fail("at least 16 pages");
	if (first >= argc) {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			run(all[i]);
	} else {
		for (int i = first; i < argc; i++)
			run(argv[i]);
	}
	return 0;
}
