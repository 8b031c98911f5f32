/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_pageout.c - page-out and verify over every kind of page contents.
 *
 * For each kind (zero, same-filled, text, binary, random) a mapping of
 * several MiB is filled, evicted with MADV_PAGEOUT (or zswap_pageout with
 * --api) and read back. Under the library it asserts that the pages left the
 * page table (pagemap), that the counters say where they went (stored_pages,
 * zswpout, evicted_pages, same_filled_pages, stored_incompressible_pages),
 * that RSS fell for compressible contents, that reading back gives identical
 * bytes, and that the store is empty afterwards (exclusive load).
 * Then: evicting a sub-range leaves its neighbours alone, a write to an
 * evicted page keeps the rest of the page, and evicting twice is harmless;
 * MADV_WILLNEED over evicted pages brings them all back, no fault taken.
 *
 * With --refuse-poor (run under ZSWAP_WRITEBACK=0), only this: random pages
 * are refused by the store and stay where they are, each counted in
 * reject_compress_poor, while every other kind goes out and none is counted.
 *
 * stdout: one checksum line per kind, the same with and without the library.
 * usage: prog_pageout [--api] [--refuse-poor] [--inactive-ok] [MiB per kind, default 4]
 */
#include "prog_common.h"

struct kind_want {
	long rss_drop_pct;	/* minimum RSS fall, percent of the mapping */
};

static const struct kind_want want[PC__KINDS] = {
	[PC_ZERO] = { 90 },
	[PC_SAME] = { 90 },
	[PC_TEXT] = { 20 },
	[PC_BINARY] = { 20 },
	[PC_RANDOM] = { -1 },	/* stored whole: RSS does not fall */
};

static void one_kind(enum pc_kind kind, size_t npages, bool use_api)
{
	const char *kn = pc_kind_name(kind);
	uint64_t seed = 100 + (uint64_t)kind;
	char *p = pc_map(npages * PC_PAGE);
	struct zswap_stats a, b, c;
	char what[64];

	pc_fill_range(p, npages, kind, seed);
	snprintf(what, sizeof(what), "%s: evict", kn);

	long rss0 = pc_rss_anon_kb();
	pc_stats(&a);
	if (pc_managed())
		PC_CHECK(pc_count_present(p, npages) == npages, "%s: pages not all present after filling", kn);
	size_t ev = pc_evict(what, p, npages, use_api);
	pc_stats(&b);
	long rss1 = pc_rss_anon_kb();

	if (pc_managed()) {
		PC_CHECK(ev == npages, "%s: evicted %zu of %zu pages", kn, ev, npages);
		uint64_t same = b.same_filled_pages - a.same_filled_pages;
		uint64_t incomp = b.stored_incompressible_pages - a.stored_incompressible_pages;
		if (kind == PC_ZERO || kind == PC_SAME)
			PC_CHECK(same == npages, "%s: same_filled_pages grew by %" PRIu64 ", expected %zu", kn, same, npages);
		else
			PC_CHECK(same == 0, "%s: same_filled_pages grew by %" PRIu64 ", expected 0", kn, same);
		if (kind == PC_RANDOM)
			PC_CHECK(incomp == npages, "%s: stored_incompressible_pages grew by %" PRIu64 ", expected %zu",
				 kn, incomp, npages);
		else
			PC_CHECK(incomp == 0, "%s: stored_incompressible_pages grew by %" PRIu64 ", expected 0", kn, incomp);
		PC_CHECK(b.orig_data_size - a.orig_data_size == npages * PC_PAGE,
			 "%s: orig_data_size grew by %" PRIu64 ", expected %zu", kn,
			 b.orig_data_size - a.orig_data_size, npages * PC_PAGE);

		long drop = rss0 - rss1, size_kb = (long)(npages * PC_PAGE / 1024);
		pc_info("%s: %zu pages evicted, RssAnon %ld -> %ld kB (-%ld%%), pool_total_size %" PRIu64
			" -> %" PRIu64 ", compr_data_size +%" PRIu64,
			kn, npages, rss0, rss1, drop * 100 / size_kb, a.pool_total_size, b.pool_total_size,
			b.compr_data_size - a.compr_data_size);
		if (want[kind].rss_drop_pct >= 0)
			PC_CHECK(drop * 100 >= want[kind].rss_drop_pct * size_kb,
				 "%s: RssAnon fell by %ld kB after evicting %ld kB, expected at least %ld%%",
				 kn, drop, size_kb, want[kind].rss_drop_pct);
	}

	/* Read back: identical bytes, the store gives the pages up. */
	pc_expect_range(kn, p, npages, kind, seed);
	pc_stats(&c);
	if (pc_managed()) {
		PC_CHECK(c.stored_pages == a.stored_pages, "%s: stored_pages %" PRIu64 " after reading back, was %" PRIu64
			 " before eviction (load must be exclusive)", kn, c.stored_pages, a.stored_pages);
		PC_CHECK(c.zswpin - b.zswpin == npages, "%s: zswpin grew by %" PRIu64 " while reading back %zu pages",
			 kn, c.zswpin - b.zswpin, npages);
		PC_CHECK(c.same_pages == a.same_pages, "%s: same_pages %" PRIu64 " after reading back, expected %" PRIu64,
			 kn, c.same_pages, a.same_pages);
		PC_CHECK(pc_count_present(p, npages) == npages, "%s: not every page present after reading back", kn);
	}
	printf("%s pages=%zu sum=%016" PRIx64 "\n", kn, npages, pc_sum(p, npages * PC_PAGE));

	/* Evict a sub-range: only those pages leave. */
	size_t lo = npages / 4 + 3, n = npages / 3;
	snprintf(what, sizeof(what), "%s: evict sub-range", kn);
	pc_evict(what, p + lo * PC_PAGE, n, use_api);
	if (pc_managed()) {
		PC_CHECK(pc_count_present(p, lo) == lo, "%s: pages below an evicted sub-range were evicted", kn);
		PC_CHECK(pc_count_present(p + (lo + n) * PC_PAGE, npages - lo - n) == npages - lo - n,
			 "%s: pages above an evicted sub-range were evicted", kn);
	}
	/* Evicting again what is already evicted stores nothing more. */
	pc_stats(&a);
	snprintf(what, sizeof(what), "%s: evict again", kn);
	pc_evict(what, p + lo * PC_PAGE, n, use_api);
	pc_stats(&b);
	PC_CHECK(b.stored_pages == a.stored_pages, "%s: evicting evicted pages changed stored_pages %" PRIu64 " -> %" PRIu64,
		 kn, a.stored_pages, b.stored_pages);

	/* A write to an evicted page: the page comes back first, then the write
	 * lands; the rest of the page is intact. */
	char *w = p + (lo + 1) * PC_PAGE;
	w[100] = (char)(w[100] ^ 0x5a);		/* read-modify-write */
	w[100] = (char)(w[100] ^ 0x5a);
	w = p + (lo + 2) * PC_PAGE;
	memset(w + 2048, 0x77, 16);		/* write only */
	{
		static unsigned char expect[PC_PAGE];
		pc_fill(expect, kind, pc_page_seed(seed, lo + 2));
		memset(expect + 2048, 0x77, 16);
		PC_CHECK(memcmp(w, expect, PC_PAGE) == 0, "%s: a write into an evicted page lost the rest of the page", kn);
		pc_fill(w, kind, pc_page_seed(seed, lo + 2));
	}
	pc_expect_range(kn, p, npages, kind, seed);
	if (pc_managed()) {
		pc_stats(&c);
		PC_CHECK(c.stored_pages == 0, "%s: stored_pages %" PRIu64 " after reading everything back", kn, c.stored_pages);
	}
	if (munmap(p, npages * PC_PAGE) != 0)
		pc_fail("munmap: %s", strerror(errno));
}

/* ZSWAP_WRITEBACK=0: a page that does not compress is refused and stays. */
static void refuse_poor(enum pc_kind kind, size_t npages)
{
	const char *kn = pc_kind_name(kind);
	uint64_t seed = 300 + (uint64_t)kind;
	char *p = pc_map(npages * PC_PAGE);
	struct zswap_stats a, b;

	pc_fill_range(p, npages, kind, seed);
	pc_stats(&a);
	if (pc_pageout(p, npages * PC_PAGE) != 0 && pc_managed())
		pc_fail("%s: madvise(MADV_PAGEOUT): %s", kn, strerror(errno));
	pc_stats(&b);
	if (pc_managed()) {
		uint64_t poor = b.reject_compress_poor - a.reject_compress_poor;
		size_t left = pc_count_present(p, npages);

		if (kind == PC_RANDOM) {
			PC_CHECK(poor == npages && left == npages,
				 "%s: reject_compress_poor grew by %" PRIu64 ", %zu of %zu pages stayed", kn, poor,
				 left, npages);
			PC_CHECK(b.evict_skipped_pages - a.evict_skipped_pages == npages,
				 "%s: evict_skipped_pages grew by %" PRIu64, kn,
				 b.evict_skipped_pages - a.evict_skipped_pages);
		} else {
			PC_CHECK(poor == 0 && left == 0, "%s: reject_compress_poor grew by %" PRIu64
				 ", %zu of %zu pages stayed", kn, poor, left, npages);
		}
		PC_CHECK(b.stored_incompressible_pages == a.stored_incompressible_pages,
			 "%s: stored_incompressible_pages %" PRIu64 " -> %" PRIu64, kn,
			 a.stored_incompressible_pages, b.stored_incompressible_pages);
	}
	pc_expect_range(kn, p, npages, kind, seed);
	printf("%s pages=%zu sum=%016" PRIx64 "\n", kn, npages, pc_sum(p, npages * PC_PAGE));
	munmap(p, npages * PC_PAGE);
}

int main(int argc, char **argv)
{
	bool use_api = false, poor = false;
	size_t mib = 4;

	pc_init("prog_pageout", &argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--api") == 0)
			use_api = true;
		else if (strcmp(argv[i], "--refuse-poor") == 0)
			poor = true;
		else
			mib = strtoul(argv[i], NULL, 0);
	}
	if (mib < 2)
		pc_fail("at least 2 MiB per kind (more than ZSWAP_MIN_REGION, 256K by default)");
	pc_info("mode %s, %zu MiB per kind, eviction by %s", pc_mode_name(), mib,
		use_api ? "zswap_pageout" : "madvise(MADV_PAGEOUT)");

	struct zswap_stats st;
	pc_stats(&st);
	PC_CHECK(st.stored_pages == 0, "stored_pages is %" PRIu64 " at start", st.stored_pages);
	if (poor) {
		for (int k = 0; k < PC__KINDS; k++)
			refuse_poor((enum pc_kind)k, mib * PC_MIB / PC_PAGE);
		return 0;
	}

	/* The first eviction of a process pays once for things that stay: the
	 * staging bookkeeping, the first zspages, in an ASan build the
	 * sanitizer runtime's own tables. Paid here, so that the RSS figures
	 * below measure the pages of each kind alone. */
	if (pc_managed()) {
		char *w = pc_map(2 * PC_MIB);
		pc_fill_range(w, 2 * PC_MIB / PC_PAGE, PC_TEXT, 99);
		pc_evict("warm-up", w, 2 * PC_MIB / PC_PAGE, use_api);
		pc_expect_range("warm-up", w, 2 * PC_MIB / PC_PAGE, PC_TEXT, 99);
		munmap(w, 2 * PC_MIB);
		pc_expect_stored("warm-up", 0);
	}
	for (int k = 0; k < PC__KINDS; k++)
		one_kind((enum pc_kind)k, mib * PC_MIB / PC_PAGE, use_api);

	/* MADV_WILLNEED over evicted pages brings them back at once, as the
	 * kernel reads swapped pages ahead: every page present again, counted
	 * as loads, and reading them takes no fault. */
	{
		size_t n = 2 * PC_MIB / PC_PAGE;
		char *w = pc_map(n * PC_PAGE);
		pc_fill_range(w, n, PC_TEXT, 7);
		pc_evict("willneed", w, n, use_api);
		struct zswap_stats a, b;
		pc_stats(&a);
		if (madvise(w, n * PC_PAGE, MADV_WILLNEED) != 0)
			pc_fail("madvise(MADV_WILLNEED): %s", strerror(errno));
		pc_stats(&b);
		if (pc_managed()) {
			size_t present = pc_count_resident(w, n);
			PC_CHECK(present == n, "willneed: %zu of %zu pages present after MADV_WILLNEED", present, n);
			PC_CHECK(b.zswpin - a.zswpin == n, "willneed: zswpin grew by %" PRIu64 ", expected %zu",
				 b.zswpin - a.zswpin, n);
		}
		pc_expect_range("willneed", w, n, PC_TEXT, 7);
		struct zswap_stats c;
		pc_stats(&c);
		if (pc_managed())
			PC_CHECK(c.faults == b.faults, "willneed: reading took %" PRIu64 " faults",
				 c.faults - b.faults);
		pc_expect_stored("willneed", 0);
		munmap(w, n * PC_PAGE);
	}

	pc_stats(&st);
	if (pc_managed())
		pc_info("totals: zswpout %" PRIu64 " zswpin %" PRIu64 " evicted_pages %" PRIu64 " refaults %" PRIu64
			" faults %" PRIu64 " regions %" PRIu64, st.zswpout, st.zswpin, st.evicted_pages, st.refaults,
			st.faults, st.regions);
	return 0;
}
