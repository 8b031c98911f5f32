/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_compswitch.c - pages refaulted and stored again while the test
 * changes the compressor (zswapctl set PID compressor=...).
 *
 * NPAGES text pages are written and paged out; DIR/ready0 is created. For
 * each step K (1..STEPS) the program waits for DIR/goK, then goes round:
 * every page of the first half is read back and checked, every other one
 * written anew (as version K), and the first half paged out again; it keeps going round
 * until DIR/setK exists (the test made the change meanwhile), does one
 * round more, so the first half is stored under the new compressor, and
 * creates DIR/readyK. The second half is not touched until DIR/drain: then
 * every page is checked and paged out again (DIR/drained). At DIR/end
 * every page is checked once more. The waits are bounded: hang detectors,
 * not timings.
 *
 * stdout: "ready PID", then the checksum of the data (the same with and
 * without the library).
 * usage: prog_compswitch DIR NPAGES STEPS
 */
#include "prog_common.h"

#define CS_SEED		777
#define CS_WAIT_MS	120000

static char *cs_dir;

/* Check pages [0, n) against their versions; with rewrite > 0, every
 * other one is written as version rewrite (the same in every round of a
 * step, so the data does not depend on how many rounds there were). */
static void cs_pass(const char *what, char *p, size_t n, uint64_t *version, uint64_t rewrite)
{
	static char want[PC_PAGE];

	for (size_t i = 0; i < n; i++) {
		pc_fill(want, PC_TEXT, pc_page_seed(CS_SEED + version[i], i));
		if (memcmp(p + i * PC_PAGE, want, PC_PAGE))
			pc_fail("%s: page %zu differs from what was written", what, i);
		if (rewrite && i % 2 == 0) {
			version[i] = rewrite;
			pc_fill(p + i * PC_PAGE, PC_TEXT, pc_page_seed(CS_SEED + version[i], i));
		}
	}
}

int main(int argc, char **argv)
{
	char name[32];

	pc_init("prog_compswitch", &argc, argv);
	if (argc != 4)
		pc_fail("usage: prog_compswitch DIR NPAGES STEPS");
	cs_dir = argv[1];
	size_t npages = strtoul(argv[2], NULL, 0), half = npages / 2;
	unsigned long steps = strtoul(argv[3], NULL, 0);
	if (half < 1)
		pc_fail("at least two pages");

	char *p = pc_map(npages * PC_PAGE);
	uint64_t *version = calloc(npages, sizeof(*version));
	if (!version)
		pc_fail("out of memory");
	for (size_t i = 0; i < npages; i++)
		pc_fill(p + i * PC_PAGE, PC_TEXT, pc_page_seed(CS_SEED, i));
	pc_evict("pageout", p, npages, false);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	pc_make_file(cs_dir, "ready0");
	for (unsigned long k = 1; k <= steps; k++) {
		snprintf(name, sizeof(name), "go%lu", k);
		pc_wait_file(cs_dir, name, CS_WAIT_MS);
		snprintf(name, sizeof(name), "set%lu", k);
		bool last = false;
		for (unsigned long round = 0; !last; round++) {
			if (round > 100000)
				pc_fail("step %lu: %s did not appear", k, name);
			last = pc_file_exists(cs_dir, name);
			cs_pass("a round", p, half, version, k);
			pc_evict("the first half out", p, half, false);
		}
		snprintf(name, sizeof(name), "ready%lu", k);
		pc_make_file(cs_dir, name);
	}
	pc_wait_file(cs_dir, "drain", CS_WAIT_MS);
	cs_pass("drain", p, npages, version, 0);
	pc_evict("all out", p, npages, false);
	pc_make_file(cs_dir, "drained");
	pc_wait_file(cs_dir, "end", CS_WAIT_MS);
	cs_pass("at the end", p, npages, version, 0);
	printf("sum %016" PRIx64 "\n", pc_sum(p, npages * PC_PAGE));
	munmap(p, npages * PC_PAGE);
	free(version);
	return 0;
}
