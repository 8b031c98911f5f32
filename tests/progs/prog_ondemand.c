/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_ondemand.c - pages at rest for what an operator asks of a running
 * process (zswapctl writeback, recompress): the test acts between phases.
 *
 * TEXT text pages, HUGE pages that compress a little (random bytes but the
 * last HUGE_ZEROS: they shrink, yet not below the huge class, so the pool
 * holds them whole) and RANDOM pages that do not compress at all, in one
 * mapping in that order, all paged out. Then DIR/ready is created and the
 * program waits for DIR/go (bounded: a hang detector, not a timing); then
 * every page is checked. The first page of each kind is written anew and
 * paged out again, DIR/ready2 created and DIR/go2 waited for; every page
 * is checked once more.
 *
 * stdout: "ready PID" once paged out, then the checksum of the data (the
 * same with and without the library).
 * usage: prog_ondemand DIR TEXT HUGE RANDOM
 */
#include "prog_common.h"

#define OD_SEED		4242
#define OD_HUGE_ZEROS	196	/* compresses to about 3.9 KiB: above the huge class, below a page */
#define OD_WAIT_MS	120000

static size_t od_text, od_huge;

/* Page i's contents, the version'th time it is written. */
static void od_fill(char *page, size_t i, uint64_t version)
{
	uint64_t seed = pc_page_seed(OD_SEED + version, i);

	if (i < od_text) {
		pc_fill(page, PC_TEXT, seed);
	} else {
		pc_fill(page, PC_RANDOM, seed);
		if (i < od_text + od_huge)
			memset(page + PC_PAGE - OD_HUGE_ZEROS, 0, OD_HUGE_ZEROS);
	}
}

static void od_check(const char *what, const char *p, size_t npages, const uint64_t *version)
{
	static char want[PC_PAGE];

	for (size_t i = 0; i < npages; i++) {
		od_fill(want, i, version[i]);
		if (memcmp(p + i * PC_PAGE, want, PC_PAGE))
			pc_fail("%s: page %zu differs from what was written", what, i);
	}
}

int main(int argc, char **argv)
{
	pc_init("prog_ondemand", &argc, argv);
	if (argc != 5)
		pc_fail("usage: prog_ondemand DIR TEXT HUGE RANDOM");
	const char *dir = argv[1];
	od_text = strtoul(argv[2], NULL, 0);
	od_huge = strtoul(argv[3], NULL, 0);
	size_t npages = od_text + od_huge + strtoul(argv[4], NULL, 0);
	if (npages < 3)
		pc_fail("at least three pages");

	char *p = pc_map(npages * PC_PAGE);
	uint64_t *version = calloc(npages, sizeof(*version));
	if (!version)
		pc_fail("out of memory");
	for (size_t i = 0; i < npages; i++)
		od_fill(p + i * PC_PAGE, i, 0);
	pc_evict("pageout", p, npages, false);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	pc_make_file(dir, "ready");
	pc_wait_file(dir, "go", OD_WAIT_MS);
	od_check("after the first request", p, npages, version);

	/* Written anew: the first page of each kind, then all out again. */
	size_t first[3] = { 0, od_text, od_text + od_huge };
	for (int k = 0; k < 3; k++) {
		if (first[k] >= npages)
			continue;
		version[first[k]]++;
		od_fill(p + first[k] * PC_PAGE, first[k], version[first[k]]);
	}
	pc_evict("pageout again", p, npages, false);
	pc_make_file(dir, "ready2");
	pc_wait_file(dir, "go2", OD_WAIT_MS);
	od_check("after the second request", p, npages, version);
	printf("sum %016" PRIx64 "\n", pc_sum(p, npages * PC_PAGE));
	munmap(p, npages * PC_PAGE);
	free(version);
	return 0;
}
