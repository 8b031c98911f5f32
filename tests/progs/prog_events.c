/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_events.c - munmap, mremap and madvise over partly evicted ranges: the
 * UNMAP, REMAP and REMOVE events (src/engine/events.c) seen from the program.
 *
 * Each case fills an 8 MiB mapping, evicts it all and reads back every third
 * page, so the range mixes resident and evicted pages, then:
 *   munmap      unmap the middle; the rest intact; a new mapping there reads
 *               zeros (MAP_FIXED_NOREPLACE into the hole, and MAP_FIXED
 *               straight over an evicted mapping, and a plain mmap);
 *   reuse       unmap + map again at the same address, many times in a row,
 *               writing and evicting the new mapping each time;
 *   grow        mremap grows in place; old pages intact, new part zeros;
 *   move        mremap moves (MREMAP_FIXED); data comes along; the old
 *               address, mapped again, reads zeros;
 *   movegrow    mremap(MREMAP_MAYMOVE) to a bigger size at a new address;
 *   dontunmap   MREMAP_DONTUNMAP: data at the new address, the old range
 *               stays mapped and reads zeros;
 *   shrink      mremap shrinks; the head intact, the tail mapped again reads
 *               zeros;
 *   dontneed    MADV_DONTNEED over part: those pages read zeros, never stale;
 *   free        MADV_FREE over part: each page reads zeros or its own data,
 *               a page written after MADV_FREE keeps the new data;
 *   remove      MADV_REMOVE on private anonymous memory: the same answer as
 *               without the library (EINVAL), the data untouched;
 *   mprotect    an evicted mapping made read-only and read; PROT_NONE over
 *               evicted pages, then read-write: read and written; the middle
 *               made read-only (three VMAs, evicted pages on both sides of
 *               each boundary) before and after eviction: evicted again
 *               (the writable parts must go), read back, written, read back;
 *   mprotectguard a registered, otherwise never-populated mapping split by
 *               MADV_NOHUGEPAGE (writable on both sides) and a PROT_NONE
 *               guard page: first touches just below each boundary (the
 *               fault-around run would cross it), then filled, evicted and
 *               read back across the boundaries;
 *   churn       one thread faults through an evicted mapping over and over
 *               while another maps, unmaps, moves and discards other memory
 *               (each event makes in-flight UFFDIO_COPY fail with EAGAIN,
 *               which the library must retry, never drop);
 *   thp         a 2 MiB-aligned mapping with MADV_HUGEPAGE (transparent huge
 *               pages are in madvise mode here): evicted and read back;
 *   many        256 mappings of 1 MiB, each evicted and read back (the
 *               library must not split them into a VMA per page).
 * After each case the store must hold exactly the evicted pages still mapped
 * (0 once everything is read back or gone).
 *
 * stdout: the results of calls whose answer a program can see (the same with
 * and without the library).
 * usage: prog_events [--inactive-ok] CASE...   (no CASE: all of them)
 */
#include "prog_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#define NPAGES 2048UL		/* 8 MiB */
#define LEN (NPAGES * PC_PAGE)

/* Fill, evict all, read back every third page: returns how many evicted pages
 * are left in [p, p + NPAGES). */
static size_t setup(char *p, enum pc_kind kind, uint64_t seed)
{
	size_t left = 0;

	pc_fill_range(p, NPAGES, kind, seed);
	pc_evict("setup", p, NPAGES, false);
	for (size_t i = 0; i < NPAGES; i++) {
		if (i % 3 == 0) {
			volatile char c = p[i * PC_PAGE + 17];
			(void)c;
		} else {
			left++;
		}
	}
	if (pc_managed()) {
		size_t present = pc_count_present(p, NPAGES);
		PC_CHECK(present == NPAGES - left, "setup: %zu pages present, expected %zu", present, NPAGES - left);
		pc_expect_stored("setup", left);
	}
	return pc_managed() ? left : 0;
}

/* Evicted pages in [from, to) of a range set up by setup(). */
static size_t evicted_in(size_t from, size_t to)
{
	size_t n = 0;

	if (!pc_managed())
		return 0;
	for (size_t i = from; i < to; i++)
		n += i % 3 != 0;
	return n;
}


static void *map_at(void *addr, size_t len, int extra)
{
	return mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
}

static void case_munmap(void)
{
	char *p = pc_map(LEN);

	setup(p, PC_TEXT, 1);
	/* Unmap the middle quarter (pages 768..1279). */
	size_t lo = 768, n = 512;
	if (munmap(p + lo * PC_PAGE, n * PC_PAGE) != 0)
		pc_fail("munmap middle: %s", strerror(errno));
	pc_expect_stored_max("munmap middle", evicted_in(0, lo) + evicted_in(lo + n, NPAGES));
	pc_expect_sub("munmap: below the hole", p, 0, lo, PC_TEXT, 1);
	pc_expect_sub("munmap: above the hole", p, lo + n, NPAGES - lo - n, PC_TEXT, 1);
	pc_expect_stored("munmap: after reading back", 0);

	/* A new mapping in the hole reads zeros. */
	char *q = map_at(p + lo * PC_PAGE, n * PC_PAGE, MAP_FIXED_NOREPLACE);
	if (q == MAP_FAILED)
		pc_fail("mmap MAP_FIXED_NOREPLACE into the hole at %p: %s (something else was mapped there)",
			(void *)(p + lo * PC_PAGE), strerror(errno));
	PC_CHECK(q == p + lo * PC_PAGE, "MAP_FIXED_NOREPLACE returned %p, asked %p", (void *)q, (void *)(p + lo * PC_PAGE));
	pc_expect_zero("munmap: new mapping in the hole", q, n);

	/* MAP_FIXED straight over a partly evicted mapping replaces it. */
	setup(p, PC_BINARY, 2);
	q = map_at(p, LEN, MAP_FIXED);
	if (q != p)
		pc_fail("mmap MAP_FIXED over the mapping: %s", q == MAP_FAILED ? strerror(errno) : "moved");
	pc_expect_stored("MAP_FIXED over an evicted mapping", 0);
	pc_expect_zero("MAP_FIXED over an evicted mapping", p, NPAGES);
	/* ...and the new mapping is managed like any other. */
	pc_fill_range(p, NPAGES, PC_TEXT, 3);
	pc_evict("new mapping", p, NPAGES, false);
	pc_expect_range("new mapping, read back", p, NPAGES, PC_TEXT, 3);

	/* Unmap all of it; whatever mmap returns next for the same size reads zeros. */
	setup(p, PC_SAME, 4);
	if (munmap(p, LEN) != 0)
		pc_fail("munmap all: %s", strerror(errno));
	pc_expect_stored("munmap all", 0);
	q = pc_map(LEN);
	pc_info("munmap: a new mmap of the same size returned %s address", q == p ? "the same" : "another");
	pc_expect_zero("munmap all: the next mapping", q, NPAGES);
	munmap(q, LEN);
	printf("munmap ok\n");
}

static void case_reuse(void)
{
	char *p = pc_map(LEN);

	for (int round = 0; round < 20; round++) {
		enum pc_kind kind = round % 2 ? PC_TEXT : PC_RANDOM;

		setup(p, kind, 10 + (uint64_t)round);
		if (munmap(p, LEN) != 0)
			pc_fail("round %d: munmap: %s", round, strerror(errno));
		char *q = map_at(p, LEN, MAP_FIXED_NOREPLACE);
		if (q == MAP_FAILED)
			pc_fail("round %d: mmap MAP_FIXED_NOREPLACE at %p: %s", round, (void *)p, strerror(errno));
		pc_expect_zero("reuse: new mapping at the old address", q, NPAGES);
		pc_expect_stored("reuse: after munmap and reading the new mapping", 0);
	}
	/* The last new mapping is managed: write, evict, verify. */
	pc_fill_range(p, NPAGES, PC_TEXT, 99);
	pc_evict("reuse: last mapping", p, NPAGES, false);
	pc_expect_range("reuse: last mapping", p, NPAGES, PC_TEXT, 99);
	munmap(p, LEN);
	printf("reuse ok\n");
}

static void case_grow(void)
{
	/* Reserve twice the size so the mapping can grow in place. */
	char *p = pc_map(2 * LEN);
	if (munmap(p + LEN, LEN) != 0)
		pc_fail("munmap: %s", strerror(errno));
	setup(p, PC_TEXT, 20);
	size_t left = evicted_in(0, NPAGES);
	char *q = mremap(p, LEN, LEN + LEN / 2, 0);
	if (q == MAP_FAILED)
		pc_fail("mremap grow in place: %s (was the space above the mapping taken?)", strerror(errno));
	PC_CHECK(q == p, "mremap without MAYMOVE moved the mapping");
	pc_expect_stored_max("grow", left);
	pc_expect_zero("grow: the new part", p + LEN, NPAGES / 2);
	pc_expect_sub("grow: the old part", p, 0, NPAGES, PC_TEXT, 20);
	pc_expect_stored("grow: after reading back", 0);
	/* All of the grown mapping is managed. */
	pc_fill_range(p, NPAGES + NPAGES / 2, PC_BINARY, 21);
	pc_evict("grow: the grown mapping", p, NPAGES + NPAGES / 2, false);
	pc_expect_range("grow: the grown mapping", p, NPAGES + NPAGES / 2, PC_BINARY, 21);
	munmap(p, LEN + LEN / 2);
	printf("grow ok\n");
}

static void case_move(void)
{
	char *p = pc_map(LEN);
	char *dst = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (dst == MAP_FAILED)
		pc_fail("mmap: %s", strerror(errno));
	size_t left = setup(p, PC_TEXT, 30);
	char *q = mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (q != dst)
		pc_fail("mremap move: %s", q == MAP_FAILED ? strerror(errno) : "not where asked");
	pc_expect_stored_max("move", left);
	pc_expect_sub("move: at the new address", dst, 0, NPAGES, PC_TEXT, 30);
	pc_expect_stored("move: after reading back", 0);

	/* The old address, mapped again, reads zeros. */
	char *r = map_at(p, LEN, MAP_FIXED_NOREPLACE);
	if (r == MAP_FAILED)
		pc_fail("mmap at the old address %p: %s", (void *)p, strerror(errno));
	pc_expect_zero("move: new mapping at the old address", r, NPAGES);

	/* The moved mapping is still managed. */
	pc_evict("move: evict the moved mapping", dst, NPAGES, false);
	pc_expect_sub("move: the moved mapping after a new eviction", dst, 0, NPAGES, PC_TEXT, 30);
	/* Move it back over the new mapping at the old address (MREMAP_FIXED
	 * replaces what is there). */
	setup(dst, PC_RANDOM, 31);
	q = mremap(dst, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, p);
	if (q != p)
		pc_fail("mremap move back: %s", q == MAP_FAILED ? strerror(errno) : "not where asked");
	pc_expect_sub("move back", p, 0, NPAGES, PC_RANDOM, 31);
	pc_expect_stored("move back: after reading back", 0);
	munmap(p, LEN);
	printf("move ok\n");
}

static void case_movegrow(void)
{
	char *p = pc_map(LEN);
	char *blocker = map_at(p + LEN, PC_PAGE, MAP_FIXED_NOREPLACE);	/* forces a move */

	size_t left = setup(p, PC_BINARY, 40);
	char *q = mremap(p, LEN, 2 * LEN, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		pc_fail("mremap MAYMOVE grow: %s", strerror(errno));
	pc_info("movegrow: the mapping %s", q == p ? "grew in place" : "moved");
	pc_expect_stored_max("movegrow", left);
	pc_expect_sub("movegrow: old contents", q, 0, NPAGES, PC_BINARY, 40);
	pc_expect_zero("movegrow: new part", q + LEN, NPAGES);
	pc_expect_stored("movegrow: after reading back", 0);
	pc_fill_range(q, 2 * NPAGES, PC_TEXT, 41);
	pc_evict("movegrow: the moved mapping", q, 2 * NPAGES, false);
	pc_expect_range("movegrow: the moved mapping", q, 2 * NPAGES, PC_TEXT, 41);
	munmap(q, 2 * LEN);
	if (blocker != MAP_FAILED)
		munmap(blocker, PC_PAGE);
	printf("movegrow ok\n");
}

static void case_dontunmap(void)
{
	char *p = pc_map(LEN);
	size_t left = setup(p, PC_TEXT, 50);
	/* glibc reads a new_address argument for MREMAP_DONTUNMAP: pass NULL. */
	char *q = mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);

	if (q == MAP_FAILED) {
		if (errno == EINVAL)
			pc_skip("MREMAP_DONTUNMAP refused (EINVAL) by this kernel");
		pc_fail("mremap MREMAP_DONTUNMAP: %s", strerror(errno));
	}
	PC_CHECK(q != p, "MREMAP_DONTUNMAP returned the same address");
	pc_expect_stored_max("dontunmap", left);
	pc_expect_sub("dontunmap: at the new address", q, 0, NPAGES, PC_TEXT, 50);
	/* The old range stays mapped and empty: zeros, never the old data. */
	pc_expect_zero("dontunmap: the old range", p, NPAGES);
	pc_expect_stored("dontunmap: after reading both", 0);
	/* Both are usable and managed. */
	pc_fill_range(p, NPAGES, PC_BINARY, 51);
	pc_fill_range(q, NPAGES, PC_SAME, 52);
	pc_evict("dontunmap: old range", p, NPAGES, false);
	pc_evict("dontunmap: new range", q, NPAGES, false);
	pc_expect_range("dontunmap: old range refilled", p, NPAGES, PC_BINARY, 51);
	pc_expect_range("dontunmap: new range refilled", q, NPAGES, PC_SAME, 52);
	munmap(p, LEN);
	munmap(q, LEN);
	printf("dontunmap ok\n");
}

static void case_shrink(void)
{
	char *p = pc_map(LEN);

	setup(p, PC_TEXT, 60);
	char *q = mremap(p, LEN, LEN / 2, 0);
	if (q != p)
		pc_fail("mremap shrink: %s", q == MAP_FAILED ? strerror(errno) : "moved");
	pc_expect_stored_max("shrink", evicted_in(0, NPAGES / 2));
	pc_expect_sub("shrink: the head", p, 0, NPAGES / 2, PC_TEXT, 60);
	pc_expect_stored("shrink: after reading back", 0);
	char *r = map_at(p + LEN / 2, LEN / 2, MAP_FIXED_NOREPLACE);
	if (r == MAP_FAILED)
		pc_fail("mmap at the cut tail %p: %s", (void *)(p + LEN / 2), strerror(errno));
	pc_expect_zero("shrink: the tail mapped again", r, NPAGES / 2);
	munmap(p, LEN);
	printf("shrink ok\n");
}

static void case_dontneed(void)
{
	char *p = pc_map(LEN);
	size_t lo = 300, n = 1000;

	setup(p, PC_TEXT, 70);
	if (madvise(p + lo * PC_PAGE, n * PC_PAGE, MADV_DONTNEED) != 0)
		pc_fail("madvise DONTNEED: %s", strerror(errno));
	pc_expect_stored_max("dontneed", evicted_in(0, lo) + evicted_in(lo + n, NPAGES));
	pc_expect_zero("dontneed: the discarded pages", p + lo * PC_PAGE, n);
	pc_expect_sub("dontneed: below", p, 0, lo, PC_TEXT, 70);
	pc_expect_sub("dontneed: above", p, lo + n, NPAGES - lo - n, PC_TEXT, 70);
	pc_expect_stored("dontneed: after reading back", 0);
	/* Discarded pages are still managed memory. */
	pc_fill_range(p, NPAGES, PC_RANDOM, 71);
	pc_evict("dontneed: refilled", p, NPAGES, false);
	pc_expect_range("dontneed: refilled", p, NPAGES, PC_RANDOM, 71);
	/* DONTNEED over a fully evicted range. */
	pc_evict("dontneed: evict all", p, NPAGES, false);
	if (madvise(p, LEN, MADV_DONTNEED) != 0)
		pc_fail("madvise DONTNEED: %s", strerror(errno));
	pc_expect_stored("dontneed all", 0);
	pc_expect_zero("dontneed all", p, NPAGES);
	munmap(p, LEN);
	printf("dontneed ok\n");
}

static void case_free(void)
{
	char *p = pc_map(LEN);
	size_t lo = 500, n = 900, zeros = 0;
	static unsigned char expect[PC_PAGE];

	setup(p, PC_BINARY, 80);
	if (madvise(p + lo * PC_PAGE, n * PC_PAGE, MADV_FREE) != 0)
		pc_fail("madvise FREE: %s", strerror(errno));
	/* Freed pages read zeros or their own data, nothing else. */
	for (size_t i = lo; i < lo + n; i++) {
		const char *pg = p + i * PC_PAGE;
		pc_fill(expect, PC_BINARY, pc_page_seed(80, i));
		if (pc_page_is_zero(pg))
			zeros++;
		else if (memcmp(pg, expect, PC_PAGE) != 0)
			pc_fail("free: page %zu reads neither zeros nor its own data: %s", i,
				pc_describe(pg, PC_BINARY, pc_page_seed(80, i)));
	}
	pc_info("free: %zu of %zu freed pages read zeros", zeros, n);
	pc_expect_sub("free: below", p, 0, lo, PC_BINARY, 80);
	pc_expect_sub("free: above", p, lo + n, NPAGES - lo - n, PC_BINARY, 80);
	pc_expect_stored("free: after reading everything", 0);
	/* A page written after MADV_FREE keeps what was written. */
	if (madvise(p, LEN, MADV_FREE) != 0)
		pc_fail("madvise FREE: %s", strerror(errno));
	pc_fill_range(p, NPAGES, PC_TEXT, 81);
	pc_evict("free: rewritten", p, NPAGES, false);
	pc_expect_range("free: rewritten after MADV_FREE", p, NPAGES, PC_TEXT, 81);
	munmap(p, LEN);
	printf("free ok\n");
}

static void case_remove(void)
{
	char *p = pc_map(LEN);

	setup(p, PC_TEXT, 90);
	errno = 0;
	int rc = madvise(p + PC_PAGE * 10, PC_PAGE * 100, MADV_REMOVE);
	int err = errno;
	printf("madvise(MADV_REMOVE) on private anonymous memory: %d %s\n", rc, rc ? strerrorname_np(err) : "");
	if (rc == 0) {
		pc_expect_zero("remove: removed pages", p + PC_PAGE * 10, 100);
		pc_expect_sub("remove: below", p, 0, 10, PC_TEXT, 90);
		pc_expect_sub("remove: above", p, 110, NPAGES - 110, PC_TEXT, 90);
	} else {
		pc_expect_sub("remove: refused, data untouched", p, 0, NPAGES, PC_TEXT, 90);
	}
	pc_expect_stored("remove: after reading back", 0);
	munmap(p, LEN);

	/* Where MADV_REMOVE applies (shared memory), nothing is managed and it
	 * punches the hole as usual. */
	char *s = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		pc_fail("mmap shared: %s", strerror(errno));
	pc_fill_range(s, NPAGES, PC_TEXT, 91);
	(void)pc_pageout(s, LEN);
	rc = madvise(s + PC_PAGE * 10, PC_PAGE * 100, MADV_REMOVE);
	printf("madvise(MADV_REMOVE) on shared memory: %d\n", rc);
	if (rc == 0)
		pc_expect_zero("remove: shared, removed pages", s + PC_PAGE * 10, 100);
	pc_expect_sub("remove: shared, below", s, 0, 10, PC_TEXT, 91);
	pc_expect_sub("remove: shared, above", s, 110, NPAGES - 110, PC_TEXT, 91);
	munmap(s, LEN);
	printf("remove ok\n");
}

/* ---- mprotect ---- */

static void protect(char *addr, size_t npages, int prot)
{
	if (mprotect(addr, npages * PC_PAGE, prot) != 0)
		pc_fail("mprotect(%p, %zu pages, %d): %s", (void *)addr, npages, prot, strerror(errno));
}

/* Managed: no page of [first, first + n) holds memory of its own. */
static void expect_gone(const char *what, const char *p, size_t first, size_t n)
{
	if (!pc_managed())
		return;
	size_t left = pc_count_resident(p + first * PC_PAGE, n);
	PC_CHECK(left == 0, "%s: %zu of pages [%zu, %zu) still resident after eviction", what, left, first, first + n);
}

/* Pages [0, lo) and [lo + n, NPAGES) as filled with (kind, seed), the middle
 * with (mkind, mseed). */
static void expect_split(const char *what, const char *p, size_t lo, size_t n, enum pc_kind kind, uint64_t seed,
			 enum pc_kind mkind, uint64_t mseed)
{
	static unsigned char expect[PC_PAGE];

	for (size_t i = 0; i < NPAGES; i++) {
		bool mid = i >= lo && i < lo + n;
		pc_fill(expect, mid ? mkind : kind, pc_page_seed(mid ? mseed : seed, i));
		if (memcmp(p + i * PC_PAGE, expect, PC_PAGE) != 0)
			pc_fail("%s: page %zu (%p, %s) is wrong: %s", what, i, (const void *)(p + i * PC_PAGE),
				mid ? "the middle" : "outside the middle",
				pc_describe(p + i * PC_PAGE, mid ? mkind : kind, pc_page_seed(mid ? mseed : seed, i)));
	}
}

static void fill_pages(char *p, size_t first, size_t n, enum pc_kind kind, uint64_t seed)
{
	for (size_t i = first; i < first + n; i++)
		pc_fill(p + i * PC_PAGE, kind, pc_page_seed(seed, i));
}

static void case_mprotect(void)
{
	char *p = pc_map(LEN);
	const size_t lo = 700, n = 600;	/* the middle: pages [700, 1300) */
	const int rw = PROT_READ | PROT_WRITE;

	/* Evicted whole, then made read-only: every page reads back. */
	pc_fill_range(p, NPAGES, PC_TEXT, 100);
	pc_evict("mprotect: evict all", p, NPAGES, false);
	protect(p, NPAGES, PROT_READ);
	pc_expect_sub("mprotect: read-only after eviction", p, 0, NPAGES, PC_TEXT, 100);
	pc_expect_stored("mprotect: read-only, read back", 0);

	/* Partly evicted, PROT_NONE, then read-write: intact, and writable. */
	protect(p, NPAGES, rw);
	size_t left = setup(p, PC_BINARY, 101);
	protect(p, NPAGES, PROT_NONE);
	pc_expect_stored("mprotect: PROT_NONE over evicted pages", left);
	protect(p, NPAGES, rw);
	pc_expect_sub("mprotect: PROT_NONE then read-write", p, 0, NPAGES, PC_BINARY, 101);
	pc_fill_range(p, NPAGES, PC_RANDOM, 102);
	pc_evict("mprotect: rewritten after PROT_NONE", p, NPAGES, false);
	pc_expect_range("mprotect: rewritten after PROT_NONE", p, NPAGES, PC_RANDOM, 102);

	/* The middle of a partly evicted mapping made read-only: three VMAs,
	 * evicted pages on both sides of each boundary. Evicted again, the
	 * writable parts must go (the read-only middle may stay: not managed);
	 * read back in order, readahead runs into each boundary. */
	setup(p, PC_TEXT, 103);
	protect(p + lo * PC_PAGE, n, PROT_READ);
	(void)pc_pageout(p, LEN);
	expect_gone("mprotect: split, below the middle", p, 0, lo);
	expect_gone("mprotect: split, above the middle", p, lo + n, NPAGES - lo - n);
	pc_expect_sub("mprotect: split, read back", p, 0, NPAGES, PC_TEXT, 103);
	pc_expect_stored("mprotect: split, read back", 0);
	/* The writable parts written while split, evicted, all read back. */
	fill_pages(p, 0, lo, PC_SAME, 104);
	fill_pages(p, lo + n, NPAGES - lo - n, PC_SAME, 104);
	(void)pc_pageout(p, LEN);
	expect_gone("mprotect: split and rewritten, below the middle", p, 0, lo);
	expect_gone("mprotect: split and rewritten, above the middle", p, lo + n, NPAGES - lo - n);
	expect_split("mprotect: split and rewritten", p, lo, n, PC_SAME, 104, PC_TEXT, 103);
	pc_expect_stored("mprotect: split and rewritten, read back", 0);
	/* The middle writable again: all of it written, evicted, read back. */
	protect(p + lo * PC_PAGE, n, rw);
	pc_fill_range(p, NPAGES, PC_BINARY, 105);
	pc_evict("mprotect: the middle writable again", p, NPAGES, false);
	pc_expect_range("mprotect: the middle writable again", p, NPAGES, PC_BINARY, 105);

	/* Split while every page is evicted, evicted again (nothing left to
	 * take), read back through the split, written, evicted, read back. */
	pc_fill_range(p, NPAGES, PC_TEXT, 106);
	size_t ev = pc_evict("mprotect: evict all before the split", p, NPAGES, false);
	protect(p + lo * PC_PAGE, n, PROT_READ);
	(void)pc_pageout(p, LEN);
	pc_expect_stored("mprotect: split while evicted, evicted again", ev);
	pc_expect_sub("mprotect: split while evicted", p, 0, NPAGES, PC_TEXT, 106);
	pc_expect_stored("mprotect: split while evicted, read back", 0);
	protect(p + lo * PC_PAGE, n, rw);
	pc_fill_range(p, NPAGES, PC_RANDOM, 107);
	pc_evict("mprotect: split while evicted, rewritten", p, NPAGES, false);
	pc_expect_range("mprotect: split while evicted, rewritten", p, NPAGES, PC_RANDOM, 107);
	munmap(p, LEN);
	printf("mprotect ok\n");
}

/* A managed mapping split into writable VMAs that differ only in a flag
 * (MADV_NOHUGEPAGE on the middle) and around a PROT_NONE guard page: every
 * boundary crossed by eviction runs, readahead and first-touch fault-around
 * (never-populated pages just below a boundary). */
static void case_mprotectguard(void)
{
	char *p = pc_map(LEN);
	const size_t lo = 700, n = 600, guard[2] = { 1600, 1800 };
	const int rw = PROT_READ | PROT_WRITE;
	static unsigned char expect[PC_PAGE];

	/* Registered (one page evicted), otherwise never populated. */
	pc_fill(p, PC_TEXT, pc_page_seed(110, 0));
	pc_evict("mprotectguard: register", p, 1, false);
	if (madvise(p + lo * PC_PAGE, n * PC_PAGE, MADV_NOHUGEPAGE) != 0)
		pc_fail("madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
	for (int g = 0; g < 2; g++)
		protect(p + guard[g] * PC_PAGE, 1, PROT_NONE);
	/* First touches of the 3 pages just below each boundary: reads below
	 * two of them, writes below the other two. */
	pc_expect_zero("mprotectguard: first read below the MADV_NOHUGEPAGE part", p + (lo - 3) * PC_PAGE, 3);
	pc_expect_zero("mprotectguard: first read below a guard page", p + (guard[0] - 3) * PC_PAGE, 3);
	const size_t wr[2] = { lo + n - 3, guard[1] - 3 };
	for (int k = 0; k < 2; k++)
		for (size_t i = wr[k]; i < wr[k] + 3; i++)
			pc_fill(p + i * PC_PAGE, PC_BINARY, pc_page_seed(112, i));
	for (int k = 0; k < 2; k++)
		for (size_t i = wr[k]; i < wr[k] + 3; i++) {
			pc_fill(expect, PC_BINARY, pc_page_seed(112, i));
			PC_CHECK(memcmp(p + i * PC_PAGE, expect, PC_PAGE) == 0, "mprotectguard: page %zu written on"
				 " first touch below a boundary reads back wrong", i);
		}
	pc_expect_range("mprotectguard: the registering page", p, 1, PC_TEXT, 110);
	/* Everything writable filled, evicted (runs cross the boundaries),
	 * read back in order (readahead runs into them). */
	fill_pages(p, 0, guard[0], PC_TEXT, 111);
	fill_pages(p, guard[0] + 1, guard[1] - guard[0] - 1, PC_TEXT, 111);
	fill_pages(p, guard[1] + 1, NPAGES - guard[1] - 1, PC_TEXT, 111);
	pc_evict("mprotectguard: below the guards", p, guard[0], false);
	pc_evict("mprotectguard: between the guards", p + (guard[0] + 1) * PC_PAGE, guard[1] - guard[0] - 1, false);
	pc_evict("mprotectguard: above the guards", p + (guard[1] + 1) * PC_PAGE, NPAGES - guard[1] - 1, false);
	pc_expect_sub("mprotectguard: below the guards", p, 0, guard[0], PC_TEXT, 111);
	pc_expect_sub("mprotectguard: between the guards", p, guard[0] + 1, guard[1] - guard[0] - 1, PC_TEXT, 111);
	pc_expect_sub("mprotectguard: above the guards", p, guard[1] + 1, NPAGES - guard[1] - 1, PC_TEXT, 111);
	pc_expect_stored("mprotectguard", 0);
	for (int g = 0; g < 2; g++) {
		protect(p + guard[g] * PC_PAGE, 1, rw);
		pc_expect_zero("mprotectguard: a guard page made writable", p + guard[g] * PC_PAGE, 1);
	}
	munmap(p, LEN);
	printf("mprotectguard ok\n");
}

/* ---- churn ---- */

static char *churn_area;
static atomic_int churn_stop, churn_bad;
static atomic_ulong churn_reads;

static void *churn_reader(void *arg)
{
	static unsigned char expect[PC_PAGE];

	(void)arg;
	while (!atomic_load(&churn_stop)) {
		for (size_t i = 0; i < NPAGES && !atomic_load(&churn_stop); i++) {
			pc_fill(expect, PC_TEXT, pc_page_seed(200, i));
			if (memcmp(churn_area + i * PC_PAGE, expect, PC_PAGE) != 0) {
				atomic_store(&churn_bad, 1);
				pc_fail("churn: the reader found page %zu wrong: %s", i,
					pc_describe(churn_area + i * PC_PAGE, PC_TEXT, pc_page_seed(200, i)));
			}
			atomic_fetch_add(&churn_reads, 1);
		}
	}
	return NULL;
}

static void case_churn(void)
{
	pthread_t t;

	churn_area = pc_map(LEN);
	pc_fill_range(churn_area, NPAGES, PC_TEXT, 200);
	pc_evict("churn: the reader's mapping", churn_area, NPAGES, false);
	if (pthread_create(&t, NULL, churn_reader, NULL) != 0)
		pc_fail("pthread_create");
	for (int round = 0; round < 60; round++) {
		/* Keep the reader faulting. */
		pc_pageout(churn_area, LEN);
		/* Events: a new mapping, evicted, partly discarded, moved, unmapped. */
		size_t n = 512;
		char *q = pc_map(n * PC_PAGE);
		pc_fill_range(q, n, PC_BINARY, 300 + (uint64_t)round);
		pc_pageout(q, n * PC_PAGE);
		if (madvise(q + 100 * PC_PAGE, 50 * PC_PAGE, MADV_DONTNEED) != 0)
			pc_fail("madvise: %s", strerror(errno));
		char *r = mremap(q, n * PC_PAGE, 2 * n * PC_PAGE, MREMAP_MAYMOVE);
		if (r == MAP_FAILED)
			pc_fail("mremap: %s", strerror(errno));
		pc_expect_sub("churn: moved mapping, below the hole", r, 0, 100, PC_BINARY, 300 + (uint64_t)round);
		pc_expect_zero("churn: moved mapping, the discarded pages", r + 100 * PC_PAGE, 50);
		pc_expect_sub("churn: moved mapping, above the hole", r, 150, n - 150, PC_BINARY, 300 + (uint64_t)round);
		pc_expect_zero("churn: moved mapping, the grown part", r + n * PC_PAGE, n);
		if (munmap(r, 2 * n * PC_PAGE) != 0)
			pc_fail("munmap: %s", strerror(errno));
		/* Make sure the reader got going before the next round. */
		unsigned long target = atomic_load(&churn_reads) + 64;
		while (atomic_load(&churn_reads) < target && !atomic_load(&churn_bad))
			sched_yield();
	}
	atomic_store(&churn_stop, 1);
	pthread_join(t, NULL);
	pc_info("churn: the reader checked %lu pages", atomic_load(&churn_reads));
	pc_expect_range("churn: the reader's mapping at the end", churn_area, NPAGES, PC_TEXT, 200);
	munmap(churn_area, LEN);
	printf("churn ok\n");
}

/* ---- transparent huge pages ---- */

/* THP is "always" or "madvise" (the brackets mark the mode in force). */
static bool thp_enabled(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
		fclose(f);
	}
	return strstr(line, "[always]") || strstr(line, "[madvise]");
}

static long anon_huge_kb(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void case_thp(void)
{
	size_t huge = 2 * PC_MIB;
	char *raw = pc_map(LEN + huge);
	char *p = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));

	if (madvise(p, LEN, MADV_HUGEPAGE) != 0)
		pc_info("thp: MADV_HUGEPAGE: %s (testing with small pages)", strerror(errno));
	long before = anon_huge_kb();
	pc_fill_range(p, NPAGES, PC_TEXT, 400);
	pc_info("thp: AnonHugePages %ld -> %ld kB after filling", before, anon_huge_kb());
	pc_evict("thp: evict huge-page-backed memory", p, NPAGES, false);
	pc_expect_range("thp: read back", p, NPAGES, PC_TEXT, 400);
	/* Evict half of a huge page's range: the rest stays. */
	pc_evict("thp: evict part of a huge page", p + 100 * PC_PAGE, 200, false);
	pc_expect_range("thp: read back after a partial eviction", p, NPAGES, PC_TEXT, 400);
	pc_expect_stored("thp", 0);
	munmap(raw, LEN + huge);

	/* Memory the library did not see created (the raw system call: not
	 * registered, so first touches are the kernel's) is backed by huge
	 * pages where THP allows it, then adopted by MADV_PAGEOUT: eviction
	 * must split them, a part at a time, and lose nothing. When THP is
	 * on (always or madvise), the huge pages must really be there, or the
	 * case tests nothing. */
	raw = (char *)syscall(SYS_mmap, NULL, LEN + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		pc_fail("thp: mmap: %s", strerror(errno));
	p = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	bool thp_on = madvise(p, LEN, MADV_HUGEPAGE) == 0 && thp_enabled();
	before = anon_huge_kb();
	pc_fill_range(p, NPAGES, PC_TEXT, 401);
	long after = anon_huge_kb();
	pc_info("thp (unseen mapping): AnonHugePages %ld -> %ld kB after filling", before, after);
	if (thp_on)
		PC_CHECK(after - before >= 2048, "thp: THP is on but filling %lu MiB made no huge page (%ld -> %ld kB)",
			 LEN >> 20, before, after);
	pc_evict("thp (unseen mapping): evict part of each huge page", p + 100 * PC_PAGE, 300, false);
	pc_evict("thp (unseen mapping): evict part of another", p + 700 * PC_PAGE, 100, false);
	pc_expect_range("thp (unseen mapping): read back after partial evictions", p, NPAGES, PC_TEXT, 401);
	pc_evict("thp (unseen mapping): evict all", p, NPAGES, false);
	pc_expect_range("thp (unseen mapping): read back", p, NPAGES, PC_TEXT, 401);
	pc_expect_stored("thp (unseen mapping)", 0);
	syscall(SYS_munmap, raw, LEN + huge);
	printf("thp ok\n");
}

/* ---- many regions ---- */

static size_t map_count(void)
{
	char line[512];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n;
}

static void case_many(void)
{
	enum { NMAPS = 256, PER = 256 };	/* 256 x 1 MiB */
	static char *m[NMAPS];
	size_t before = map_count();

	for (int i = 0; i < NMAPS; i++) {
		/* A guard page between them keeps the kernel from merging them. */
		char *g = mmap(NULL, (PER + 1) * PC_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (g == MAP_FAILED)
			pc_fail("mmap: %s", strerror(errno));
		m[i] = mmap(g, PER * PC_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m[i] != g)
			pc_fail("mmap MAP_FIXED: %s", strerror(errno));
		pc_fill_range(m[i], PER, i % 2 ? PC_TEXT : PC_SAME, 500 + (uint64_t)i);
	}
	for (int i = 0; i < NMAPS; i++)
		pc_evict("many: evict", m[i], PER, false);
	size_t during = map_count();
	for (int i = 0; i < NMAPS; i++)
		pc_expect_range("many: read back", m[i], PER, i % 2 ? PC_TEXT : PC_SAME, 500 + (uint64_t)i);
	pc_info("many: /proc/self/maps has %zu lines before, %zu with %d evicted mappings", before, during, NMAPS);
	PC_CHECK(during <= before + 3 * NMAPS, "many: %zu mappings for %d evicted mappings (from %zu): registration"
		 " splits them", during, NMAPS, before);
	pc_expect_stored("many", 0);
	for (int i = 0; i < NMAPS; i++)
		munmap(m[i], (PER + 1) * PC_PAGE);
	printf("many ok\n");
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "munmap", case_munmap },
	{ "reuse", case_reuse },
	{ "grow", case_grow },
	{ "move", case_move },
	{ "movegrow", case_movegrow },
	{ "dontunmap", case_dontunmap },
	{ "shrink", case_shrink },
	{ "dontneed", case_dontneed },
	{ "free", case_free },
	{ "remove", case_remove },
	{ "mprotect", case_mprotect },
	{ "mprotectguard", case_mprotectguard },
	{ "churn", case_churn },
	{ "thp", case_thp },
	{ "many", case_many },
};

int main(int argc, char **argv)
{
	const size_t ncases = sizeof(cases) / sizeof(cases[0]);

	pc_init("prog_events", &argc, argv);
	pc_info("mode %s", pc_mode_name());
	for (size_t c = 0; c < ncases; c++) {
		bool run = argc == 1;
		for (int i = 1; i < argc; i++)
			run |= strcmp(argv[i], cases[c].name) == 0;
		if (!run)
			continue;
		cases[c].fn();
		pc_expect_stored(cases[c].name, 0);
	}
	for (int i = 1; i < argc; i++) {
		bool known = false;
		for (size_t c = 0; c < ncases; c++)
			known |= strcmp(argv[i], cases[c].name) == 0;
		if (!known)
			pc_fail("unknown case %s", argv[i]);
	}
	return 0;
}
