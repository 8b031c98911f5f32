/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_compact.c - the pool compacted at rest, with no memory limit.
 *
 * SIZE MiB of text pages (several objects to a zspage) go out with
 * madvise(MADV_PAGEOUT), then a random 1/K of them (a half by default) is
 * read back: each exclusive load leaves a hole in its zspage, and the pool
 * keeps every zspage that still holds one object. Nothing asks for memory
 * without a limit, so only the reclaimer's check at rest can give the holes
 * back. Under the library it waits (bounded: a hang detector, not a timing)
 * until the pool has fallen by at least 1/(2K) of what it held after the
 * loads (half of what the holes should give back: a quarter for a half),
 * then checks that pages_compacted grew and that every page, read back from
 * the compacted pool, holds its bytes.
 *
 * stdout: the checksum of the data, the same with and without the library.
 * usage: prog_compact [MiB, default 64 [K, default 2]]
 */
#include "prog_common.h"

#define COMPACT_SEED	2024
#define COMPACT_WAIT_MS	30000

int main(int argc, char **argv)
{
	size_t mib = 64, k = 2;

	pc_init("prog_compact", &argc, argv);
	if (argc > 1)
		mib = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		k = strtoul(argv[2], NULL, 0);
	if (mib < 4 || k < 1)
		pc_fail("at least 4 MiB, and K at least 1");

	size_t npages = mib * PC_MIB / PC_PAGE;
	char *p = pc_map(npages * PC_PAGE);
	struct zswap_stats out, loaded, st;
	uint64_t rnd = COMPACT_SEED;
	size_t touched = 0;

	pc_fill_range(p, npages, PC_TEXT, COMPACT_SEED);
	pc_evict("pageout", p, npages, false);
	pc_stats(&out);

	/* A random 1/K back in, each page checked as it comes. */
	for (size_t i = 0; i < npages; i++) {
		if (pc_rand(&rnd) % k)
			continue;
		pc_expect_sub("touch", p, i, 1, PC_TEXT, COMPACT_SEED);
		touched++;
	}
	pc_stats(&loaded);

	if (pc_managed()) {
		PC_CHECK(loaded.zswpin - out.zswpin >= touched, "zswpin grew by %" PRIu64 ", %zu pages touched",
			 loaded.zswpin - out.zswpin, touched);
		pc_info("%zu pages out, %zu back in: pool_total_size %" PRIu64 " after pageout, %" PRIu64
			" after the loads", npages, touched, out.pool_total_size, loaded.pool_total_size);
		int waited = 0;
		for (;;) {
			pc_stats(&st);
			/* Against the pool after the pageout: the idle check
			 * may run while the loads are still under way. */
			if (st.pool_total_size <= out.pool_total_size - out.pool_total_size / (2 * k))
				break;
			if (waited >= COMPACT_WAIT_MS)
				pc_fail("pool_total_size %" PRIu64 " after %d ms, %" PRIu64 " after the pageout: not"
					" compacted (pages_compacted %" PRIu64 " -> %" PRIu64 ")",
					st.pool_total_size, waited, out.pool_total_size, out.pages_compacted,
					st.pages_compacted);
			pc_sleep_ms(10);
			waited += 10;
		}
		PC_CHECK(st.pages_compacted > out.pages_compacted, "pages_compacted stayed %" PRIu64,
			 st.pages_compacted);
		PC_CHECK(st.stored_pages == loaded.stored_pages, "stored_pages %" PRIu64 " -> %" PRIu64
			 " while nothing was touched", loaded.stored_pages, st.stored_pages);
		/* The compaction in progress when the pool crossed the bar ends
		 * within its call; the figure after it is the one to report. */
		pc_sleep_ms(1500);
		pc_stats(&st);
		pc_info("compacted at rest: pool_total_size %" PRIu64 " -> %" PRIu64 " (-%" PRIu64
			"%%), pages_compacted +%" PRIu64, out.pool_total_size, st.pool_total_size,
			(out.pool_total_size - st.pool_total_size) * 100 / out.pool_total_size,
			st.pages_compacted - out.pages_compacted);
	}

	/* Everything, the half still stored now read from moved objects. */
	pc_expect_range("after compaction", p, npages, PC_TEXT, COMPACT_SEED);
	printf("sum %016" PRIx64 "\n", pc_sum(p, npages * PC_PAGE));
	munmap(p, npages * PC_PAGE);
	return 0;
}
