/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_zsmalloc.c - the pool: allocation, mapping, memory given back (and
 * the reserve of committed emptied zspages), metadata accounting,
 * compaction, and concurrency in both lock modes.
 *
 * Every object is filled with a pattern derived from its handle and a
 * per-object seed and checked byte for byte later, so an object that moved
 * wrongly, overlapped another, or was handed out twice shows up as a
 * mismatch. Built a second time with -fsanitize=thread and -DZS_TEST_TSAN
 * (tests/unit/test_zs_tsan), which runs only the concurrent test, smaller.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/zsmalloc.h"

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		exit(1); \
	} \
} while (0)

static const char *const mode_name[] = { "class", "pool" };

/* xorshift64*: deterministic, per thread. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

struct obj {
	unsigned long handle;
	uint32_t size;
	uint32_t seed;
};

static uint8_t pattern_byte(const struct obj *o, size_t i)
{
	return (uint8_t)((o->seed + i * 131 + (i >> 8) * 7 + o->handle) & 0xff);
}

static void obj_fill(struct zs_pool *pool, const struct obj *o)
{
	uint8_t *p = zs_map_object(pool, o->handle);

	for (size_t i = 0; i < o->size; i++)
		p[i] = pattern_byte(o, i);
	zs_unmap_object(pool, o->handle);
}

/* True when the object still holds its pattern. */
static bool obj_ok(struct zs_pool *pool, const struct obj *o)
{
	const uint8_t *p = zs_map_object(pool, o->handle);
	bool ok = true;

	for (size_t i = 0; i < o->size && ok; i++)
		ok = p[i] == pattern_byte(o, i);
	zs_unmap_object(pool, o->handle);
	return ok;
}

static bool obj_alloc(struct zs_pool *pool, struct obj *o, size_t size, uint32_t seed)
{
	o->handle = zs_malloc(pool, size);
	if (!o->handle)
		return false;
	o->size = (uint32_t)size;
	o->seed = seed;
	obj_fill(pool, o);
	return true;
}

/* ---- single-threaded --------------------------------------------------- */
#ifndef ZS_TEST_TSAN
/* Fisher-Yates, so objects are freed in an order unrelated to allocation. */
static void shuffle(struct obj *objs, size_t n, uint64_t *s)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i + rnd(s) % (n - i);
		struct obj t = objs[i];

		objs[i] = objs[j];
		objs[j] = t;
	}
}

static long rss_pages(void)
{
	long size = 0, resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2)
			resident = -1;
		fclose(f);
	}
	return resident;
}

/* VmPTE of /proc/self/status in kB, or -1. */
static long pte_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPTE: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* The zspages a class row counts in its 10% .. 100% columns. */
static unsigned long inuse_zspages(const struct zs_class_stat *st)
{
	unsigned long n = 0;

	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		n += st->inuse_ratio[c];
	return n;
}

/*
 * The inuse columns as the kernel's get_fullness_group() fills them: four
 * zspages of the 32-byte class (128 objects each at order 3) left with 1,
 * 64, 127 and 128 objects are at 0%, 50%, 99% and 100%, which the kernel
 * lists under 10%, 60%, 99% and 100%.
 */
static void test_inuse_columns(void)
{
	enum { OBJS = 128 };
	static const unsigned int keep[4] = { 1, 64, 127, 128 };
	static const unsigned int column[4] = { 0, 5, 9, 10 };
	struct zs_pool *pool = zs_create_pool("inuse", 3, ZS_LOCK_CLASS);
	static unsigned long h[4 * OBJS];
	struct zs_class_stat st;

	CHECK(pool, "create");
	CHECK(zs_class_stat(pool, 0, &st) && st.size == 32 && st.objs_per_zspage == OBJS,
	      "class 0: size %u, %u objects per zspage", st.size, st.objs_per_zspage);
	/* One thread, no frees yet: each zspage fills before the next is made. */
	for (size_t i = 0; i < 4 * OBJS; i++)
		CHECK((h[i] = zs_malloc(pool, 32 - ZS_HANDLE_SIZE)), "malloc %zu", i);
	for (unsigned int z = 0; z < 4; z++)
		for (unsigned int i = keep[z]; i < OBJS; i++)
			zs_free(pool, h[z * OBJS + i]);
	CHECK(zs_class_stat(pool, 0, &st), "class 0");
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++) {
		unsigned long want = 0;

		for (unsigned int z = 0; z < 4; z++)
			want += column[z] == c;
		CHECK(st.inuse_ratio[c] == want, "column %u: %lu zspages, want %lu", c,
		      st.inuse_ratio[c], want);
	}
	for (unsigned int z = 0; z < 4; z++)
		for (unsigned int i = 0; i < keep[z]; i++)
			zs_free(pool, h[z * OBJS + i]);
	CHECK(zs_class_stat(pool, 0, &st) && inuse_zspages(&st) == 0, "zspages left listed");
	zs_destroy_pool(pool);
}

static void test_bad_args(void)
{
	struct zs_pool *pool = zs_create_pool("args", 2, ZS_LOCK_CLASS);

	CHECK(pool, "create: %s", strerror(errno));
	errno = 0;
	CHECK(zs_malloc(pool, 0) == 0 && errno == EINVAL, "size 0");
	errno = 0;
	CHECK(zs_malloc(pool, ZS_MAX_ALLOC_SIZE + 1) == 0 && errno == EINVAL, "size 4097");
	zs_free(pool, 0);	/* a no-op, as the kernel's */
	CHECK(zs_get_total_pages(pool) == 0, "pages");
	CHECK(zs_get_metadata_bytes(pool) > 0, "metadata");
	zs_destroy_pool(pool);
}

/*
 * Every request size 1..4096 once, then random sizes; interleaved frees and
 * reallocations; every survivor verified after each round; all freed at the
 * end and the pool back to zero pages.
 */
static void test_alloc_map_free(unsigned int order, enum zs_lock_mode mode)
{
	enum { N = 12000 };
	static struct obj objs[N];
	struct zs_pool *pool = zs_create_pool("basic", order, mode);
	uint64_t s = 0x1234567 + order * 31 + mode;
	size_t n = 0;
	struct zs_class_stat st;

	CHECK(pool, "create: %s", strerror(errno));
	for (size_t size = 1; size <= ZS_MAX_ALLOC_SIZE; size++, n++)
		CHECK(obj_alloc(pool, &objs[n], size, (uint32_t)n), "malloc(%zu): %s", size,
		      strerror(errno));
	for (; n < N; n++) {
		/* Half small (compressed text lands there), half anywhere. */
		size_t size = (rnd(&s) & 1) ? 1 + rnd(&s) % 1024 : 1 + rnd(&s) % ZS_MAX_ALLOC_SIZE;

		CHECK(obj_alloc(pool, &objs[n], size, (uint32_t)rnd(&s)), "malloc(%zu)", size);
	}
	/* Handles are distinct, objects do not overlap: patterns all intact. */
	for (size_t i = 0; i < N; i++)
		CHECK(obj_ok(pool, &objs[i]), "order %u %s: object %zu (size %u) corrupt", order,
		      mode_name[mode], i, objs[i].size);

	/* A huge object is one page of its own, page-aligned, and map never copies. */
	{
		unsigned long h = zs_malloc(pool, ZS_MAX_ALLOC_SIZE);
		uint8_t *p = zs_map_object(pool, h), *q;

		CHECK(((uintptr_t)p & (ZS_PAGE_SIZE - 1)) == 0, "huge object at %p", (void *)p);
		memset(p, 0x5a, ZS_MAX_ALLOC_SIZE);
		q = zs_map_object(pool, h);	/* nested map: the same bytes */
		CHECK(p == q, "two maps, two addresses");
		zs_unmap_object(pool, h);
		zs_unmap_object(pool, h);
		CHECK(zs_class_stat(pool, ZS_SIZE_CLASSES - 1, &st) && st.obj_used >= 1,
		      "huge class empty");
		zs_free(pool, h);
	}

	for (int round = 0; round < 6; round++) {
		for (size_t i = 0; i < N; i++) {
			if (rnd(&s) % 3)
				continue;
			zs_free(pool, objs[i].handle);
			CHECK(obj_alloc(pool, &objs[i], 1 + rnd(&s) % ZS_MAX_ALLOC_SIZE,
					(uint32_t)rnd(&s)), "realloc");
		}
		for (size_t i = 0; i < N; i++)
			CHECK(obj_ok(pool, &objs[i]), "order %u %s round %d: object %zu corrupt",
			      order, mode_name[mode], round, i);
	}

	/* Statistics add up: objects in use, and pages == sum of pages_used. */
	{
		unsigned long used = 0, pages = 0;

		for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++) {
			if (!zs_class_stat(pool, i, &st))
				continue;
			CHECK(st.obj_used <= st.obj_allocated, "class %u", i);
			CHECK(st.obj_allocated % st.objs_per_zspage == 0, "class %u", i);
			CHECK(inuse_zspages(&st) * st.objs_per_zspage == st.obj_allocated,
			      "class %u: %lu zspages in the inuse columns, %lu objects allocated", i,
			      inuse_zspages(&st), st.obj_allocated);
			used += st.obj_used;
			pages += st.pages_used;
		}
		CHECK(used == N, "obj_used total %lu, want %d", used, N);
		CHECK(pages == zs_get_total_pages(pool), "pages_used %lu, total %lu", pages,
		      zs_get_total_pages(pool));
	}

	/* Free in a scrambled order, verifying the rest now and then. */
	shuffle(objs, N, &s);
	for (size_t i = 0; i < N; i++) {
		zs_free(pool, objs[i].handle);
		if (i % 2000 == 0)
			for (size_t k = i + 1; k < N; k++)
				CHECK(obj_ok(pool, &objs[k]), "after frees, object corrupt");
	}
	CHECK(zs_get_total_pages(pool) == 0, "order %u %s: %lu pages left after freeing all", order,
	      mode_name[mode], zs_get_total_pages(pool));
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++)
		if (zs_class_stat(pool, i, &st))
			CHECK(st.obj_allocated == 0 && st.obj_used == 0 && inuse_zspages(&st) == 0,
			      "class %u not empty", i);
	zs_destroy_pool(pool);
}

/* The bound the pool documents for its reserve of committed emptied runs. */
#define RESERVE_MIN_PAGES	ZS_RESERVE_MIN_PAGES

static unsigned long reserve_bound(const struct zs_pool *pool)
{
	unsigned long p = zs_get_total_pages(pool) / 64;

	return p > RESERVE_MIN_PAGES ? p : RESERVE_MIN_PAGES;
}

/* Emptied zspages go back to the OS: total pages and the process RSS fall,
 * all but the reserve (at most 1 MiB once the pool is empty). */
static void test_memory_returned(void)
{
	enum { N = 60000 };	/* ~ 60 MiB of 1000-byte objects */
	static struct obj objs[N];
	struct zs_pool *pool = zs_create_pool("rss", 2, ZS_LOCK_CLASS);
	long rss0, rss1, rss2;
	unsigned long pages, reserve;

	CHECK(pool, "create");
	rss0 = rss_pages();
	for (size_t i = 0; i < N; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i), "malloc");
	pages = zs_get_total_pages(pool);
	rss1 = rss_pages();
	CHECK(pages >= N * 1000UL / ZS_PAGE_SIZE, "total pages %lu", pages);
	CHECK(rss0 > 0 && rss1 - rss0 >= (long)pages * 9 / 10, "RSS grew %ld pages for %lu",
	      rss1 - rss0, pages);
	for (size_t i = 0; i < N; i++)
		zs_free(pool, objs[i].handle);
	rss2 = rss_pages();
	reserve = zs_get_reserve_pages(pool);
	CHECK(zs_get_total_pages(pool) == 0, "%lu pages left", zs_get_total_pages(pool));
	CHECK(reserve <= RESERVE_MIN_PAGES, "reserve %lu pages with the pool empty", reserve);
	/* Only metadata (handle table, descriptors) and the reserve may stay
	 * resident. */
	CHECK(rss1 - rss2 >= (long)(pages - reserve) * 9 / 10,
	      "RSS fell %ld pages, the pool freed %lu, reserve %lu", rss1 - rss2, pages, reserve);
	printf("memory returned: %lu pool pages, RSS +%ld then -%ld pages, reserve %lu pages, "
	       "metadata %zu bytes\n",
	       pages, rss1 - rss0, rss1 - rss2, reserve, zs_get_metadata_bytes(pool));

	/* Reuse: the parked runs serve the next allocations, no new address space. */
	for (size_t i = 0; i < N; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i + 7), "malloc again");
	CHECK(zs_get_total_pages(pool) == pages, "pages %lu, before %lu",
	      zs_get_total_pages(pool), pages);
	for (size_t i = 0; i < N; i++) {
		CHECK(obj_ok(pool, &objs[i]), "reused object corrupt");
		zs_free(pool, objs[i].handle);
	}
	zs_destroy_pool(pool);
}

/*
 * An object in every class costs a page of each class's handle table, and
 * those pages share their page tables: the tables are interleaved page by
 * page. One table after the other, each first page took a page-table page
 * of its own (a page of page tables a class, ~100 classes).
 */
static void test_page_tables(void)
{
	enum { SIZES = (ZS_PAGE_SIZE - ZS_MIN_ALLOC_SIZE) / ZS_SIZE_CLASS_DELTA + 1 };
	static struct obj objs[SIZES];
	struct zs_pool *pool = zs_create_pool("pte", 2, ZS_LOCK_CLASS);
	long pte0, pte1;

	CHECK(pool, "create");
	pte0 = pte_kb();
	for (size_t i = 0; i < SIZES; i++)
		CHECK(obj_alloc(pool, &objs[i], ZS_MIN_ALLOC_SIZE + i * ZS_SIZE_CLASS_DELTA - ZS_HANDLE_SIZE,
				(uint32_t)i), "malloc size %zu", i);
	pte1 = pte_kb();
	CHECK(pte0 >= 0 && pte1 - pte0 <= 64, "page tables grew %ld kB for an object in every class", pte1 - pte0);
	printf("page tables: +%ld kB for an object in each of %d sizes\n", pte1 - pte0, SIZES);
	for (size_t i = 0; i < SIZES; i++) {
		CHECK(obj_ok(pool, &objs[i]), "object corrupt");
		zs_free(pool, objs[i].handle);
	}
	zs_destroy_pool(pool);
}

/*
 * The reserve: emptied runs up to the bound stay committed and are reused
 * first, so refilling the pool needs new pages only for the runs that were
 * decommitted; the bound holds after every free while the pool shrinks;
 * compaction and a release (a quiet owner) empty it; with no floor (a pool
 * under a memory limit) an emptied pool keeps none.
 */
static void test_reserve(void)
{
	enum { SMALL = 1600, BIG = 48000 };	/* 1000-byte objects, 4 to a 1-page zspage */
	static struct obj objs[BIG];
	struct zs_pool *pool = zs_create_pool("reserve", 2, ZS_LOCK_CLASS);
	uint64_t s = 0xfeed;
	unsigned long pages, reserve, max_reserve = 0;
	long rss_a, rss_b;

	CHECK(pool, "create");
	for (size_t i = 0; i < SMALL; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i), "malloc");
	pages = zs_get_total_pages(pool);
	CHECK(pages > RESERVE_MIN_PAGES + 64, "only %lu pages", pages);
	for (size_t i = 0; i < SMALL; i++)
		zs_free(pool, objs[i].handle);
	reserve = zs_get_reserve_pages(pool);
	/* More was freed than the reserve holds: it is full, no fuller. */
	CHECK(reserve == RESERVE_MIN_PAGES, "reserve %lu after freeing %lu pages", reserve, pages);

	/* Refill: the committed runs come back without a page fault; only the
	 * decommitted ones need new pages. */
	rss_a = rss_pages();
	for (size_t i = 0; i < SMALL; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i + 3), "malloc again");
	rss_b = rss_pages();
	CHECK(zs_get_reserve_pages(pool) == 0, "reserve %lu with the pool refilled",
	      zs_get_reserve_pages(pool));
	CHECK(rss_b - rss_a <= (long)(pages - reserve) + 32,
	      "RSS grew %ld pages refilling %lu pool pages with %lu committed", rss_b - rss_a,
	      pages, reserve);
	printf("reserve: %lu of %lu pages kept committed, refill grew RSS by %ld pages\n",
	       reserve, pages, rss_b - rss_a);
	for (size_t i = 0; i < SMALL; i++) {
		CHECK(obj_ok(pool, &objs[i]), "object in a reused committed run corrupt");
		zs_free(pool, objs[i].handle);
	}
	CHECK(zs_get_reserve_pages(pool) == RESERVE_MIN_PAGES, "reserve %lu", zs_get_reserve_pages(pool));
	rss_a = rss_pages();
	zs_release_reserve(pool);
	rss_b = rss_pages();
	CHECK(zs_get_reserve_pages(pool) == 0, "reserve %lu after the release", zs_get_reserve_pages(pool));
	CHECK(rss_a - rss_b >= (long)RESERVE_MIN_PAGES * 9 / 10, "RSS fell %ld pages releasing %lu",
	      rss_a - rss_b, RESERVE_MIN_PAGES);

	/* No floor: an emptied pool keeps nothing; lowering the floor trims
	 * what the reserve holds at once. */
	for (size_t i = 0; i < SMALL; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i + 5), "malloc, floored");
	for (size_t i = 0; i < SMALL; i++)
		zs_free(pool, objs[i].handle);
	CHECK(zs_get_reserve_pages(pool) == RESERVE_MIN_PAGES, "reserve %lu", zs_get_reserve_pages(pool));
	zs_set_reserve_min(pool, 0);
	CHECK(zs_get_reserve_pages(pool) == 0, "reserve %lu with the floor lowered", zs_get_reserve_pages(pool));
	for (size_t i = 0; i < SMALL; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i + 7), "malloc, no floor");
	for (size_t i = 0; i < SMALL; i++) {
		CHECK(obj_ok(pool, &objs[i]), "object corrupt, no floor");
		zs_free(pool, objs[i].handle);
	}
	CHECK(zs_get_reserve_pages(pool) == 0, "reserve %lu of an empty pool with no floor",
	      zs_get_reserve_pages(pool));
	zs_set_reserve_min(pool, RESERVE_MIN_PAGES);

	/* A large pool shrinking in random order: the bound (1/64 of what is
	 * left, at least 1 MiB) holds after every free. */
	for (size_t i = 0; i < BIG; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i), "malloc big");
	shuffle(objs, BIG, &s);
	for (size_t i = 0; i < BIG; i++) {
		if (i % 8 == 0)
			continue;	/* survivors, for compaction */
		zs_free(pool, objs[i].handle);
		reserve = zs_get_reserve_pages(pool);
		CHECK(reserve <= reserve_bound(pool), "reserve %lu pages, pool %lu pages", reserve,
		      zs_get_total_pages(pool));
		max_reserve = reserve > max_reserve ? reserve : max_reserve;
	}
	CHECK(max_reserve > 0, "the reserve never held a run");

	/* Compaction is a request for memory: the reserve goes too. */
	CHECK(zs_compact(pool) > 0, "compaction freed nothing");
	CHECK(zs_get_reserve_pages(pool) == 0, "reserve %lu after compaction",
	      zs_get_reserve_pages(pool));
	for (size_t i = 0; i < BIG; i += 8) {
		CHECK(obj_ok(pool, &objs[i]), "object corrupt after compaction");
		zs_free(pool, objs[i].handle);
	}
	CHECK(zs_get_total_pages(pool) == 0, "pages left");
	zs_destroy_pool(pool);
}

/*
 * Metadata is counted as its pages are first used: a page of handle table
 * per 512 objects of a class and a page of descriptors per few dozen
 * zspages; it does not fall when objects are freed (the pages stay).
 */
static void test_metadata(void)
{
	enum { N = 5000 };	/* 1000-byte objects: 4 to a 1-page zspage */
	static struct obj objs[N];
	struct zs_pool *pool = zs_create_pool("meta", 2, ZS_LOCK_CLASS);
	size_t m0, m1, handles = (N * sizeof(uint64_t) + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	size_t descs_max = (N / 4 * 64 + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;

	CHECK(pool, "create");
	m0 = zs_get_metadata_bytes(pool);
	for (size_t i = 0; i < N; i++)
		CHECK(obj_alloc(pool, &objs[i], 1000, (uint32_t)i), "malloc");
	m1 = zs_get_metadata_bytes(pool);
	CHECK(m1 - m0 >= handles + ZS_PAGE_SIZE && m1 - m0 <= handles + descs_max,
	      "metadata grew %zu bytes for %d handles (%zu) and %d zspages", m1 - m0, N, handles,
	      N / 4);
	for (size_t i = 0; i < N; i++)
		zs_free(pool, objs[i].handle);
	CHECK(zs_get_metadata_bytes(pool) == m1, "metadata %zu after freeing, %zu before",
	      zs_get_metadata_bytes(pool), m1);
	zs_destroy_pool(pool);
}

/*
 * Fragment one class (free 3 of every 4 objects), compact, and check that
 * pages came back, were counted, and every survivor is intact. A mapped
 * object must stay where it is through compaction.
 */
static void test_compaction(unsigned int order, enum zs_lock_mode mode, size_t size)
{
	enum { N = 20000 };
	static struct obj objs[N];
	struct zs_pool *pool = zs_create_pool("compact", order, mode);
	unsigned int ci = (unsigned int)((size + ZS_HANDLE_SIZE - ZS_MIN_ALLOC_SIZE + 15) / 16);
	unsigned long before, after, freed;
	struct zs_class_stat st;
	struct obj *pinned = NULL;
	uint8_t *pinned_at = NULL;

	CHECK(pool, "create");
	while (!zs_class_stat(pool, ci, &st))
		ci++;	/* the class it merged into */
	for (size_t i = 0; i < N; i++)
		CHECK(obj_alloc(pool, &objs[i], size, (uint32_t)(i * 3)), "malloc");
	for (size_t i = 0; i < N; i++)
		if (i % 4 != 0)
			zs_free(pool, objs[i].handle);

	CHECK(zs_class_stat(pool, ci, &st) && st.obj_used == N / 4, "obj_used %lu", st.obj_used);
	CHECK(st.freeable > 0, "size %zu: nothing freeable after freeing 3/4", size);
	CHECK(st.inuse_ratio[0] + st.inuse_ratio[1] + st.inuse_ratio[2] + st.inuse_ratio[3] > 0,
	      "no zspage under 40%% in use, with a quarter of the objects left");

	/* Pin one survivor in the middle. */
	pinned = &objs[N / 2];
	pinned_at = zs_map_object(pool, pinned->handle);

	before = zs_get_total_pages(pool);
	freed = zs_compact(pool);
	after = zs_get_total_pages(pool);
	CHECK(freed > 0, "order %u %s size %zu: compaction freed nothing", order, mode_name[mode],
	      size);
	CHECK(before - after == freed, "pages %lu -> %lu, compact says %lu", before, after, freed);
	CHECK(zs_get_pages_compacted(pool) == freed, "pages_compacted %lu, freed %lu",
	      zs_get_pages_compacted(pool), freed);
	/* Near-perfect packing: at most a zspage or so of waste besides the pinned one. */
	CHECK(zs_class_stat(pool, ci, &st) &&
	      st.freeable <= 2UL * st.pages_per_zspage, "freeable %lu after compaction",
	      st.freeable);

	/* The pinned object did not move. */
	CHECK(zs_map_object(pool, pinned->handle) == pinned_at, "a mapped object moved");
	zs_unmap_object(pool, pinned->handle);
	for (size_t i = 0; i < pinned->size; i++)
		CHECK(pinned_at[i] == pattern_byte(pinned, i), "pinned object changed");
	zs_unmap_object(pool, pinned->handle);

	for (size_t i = 0; i < N; i += 4)
		CHECK(obj_ok(pool, &objs[i]), "order %u %s: object %zu corrupt after compaction",
		      order, mode_name[mode], i);
	/* Nothing left to do: a second pass frees nothing and counts nothing. */
	CHECK(zs_compact(pool) <= 2UL * st.pages_per_zspage, "second compaction");
	printf("compaction: order %u %s size %zu: %lu -> %lu pages (%lu freed)\n", order,
	       mode_name[mode], size, before, after, freed);
	for (size_t i = 0; i < N; i += 4)
		zs_free(pool, objs[i].handle);
	CHECK(zs_get_total_pages(pool) == 0, "pages left");
	zs_destroy_pool(pool);
}

#endif /* !ZS_TEST_TSAN */

/* ---- concurrent -------------------------------------------------------- */

#ifdef ZS_TEST_TSAN
#define STRESS_OPS	30000
#define STRESS_SLOTS	1500
#else
#define STRESS_OPS	150000
#define STRESS_SLOTS	4000
#endif
#define STRESS_THREADS	4

struct stress {
	struct zs_pool *pool;
	atomic_bool stop;
	atomic_int running;
	atomic_ulong compacted;
	atomic_ulong compactions;
};

struct worker {
	struct stress *st;
	unsigned int id;
	unsigned long bad;
	struct obj objs[STRESS_SLOTS];
};

static void *stress_worker(void *arg)
{
	struct worker *w = arg;
	struct zs_pool *pool = w->st->pool;
	uint64_t s = 0x9e3779b97f4a7c15ULL * (w->id + 1);

	for (long op = 0; op < STRESS_OPS; op++) {
		struct obj *o = &w->objs[rnd(&s) % STRESS_SLOTS];
		unsigned int what = (unsigned int)(rnd(&s) % 8);

		if (!o->handle) {
			/* Mostly compressed-page sizes, some huge. */
			size_t size = what == 0 ? 1 + rnd(&s) % ZS_MAX_ALLOC_SIZE
						: 16 + rnd(&s) % 2500;

			if (!obj_alloc(pool, o, size, (uint32_t)rnd(&s)))
				w->bad++;
		} else if (what < 3) {
			/* Map, hold it across a yield, verify, unmap. */
			const uint8_t *p = zs_map_object(pool, o->handle);

			if (what == 0)
				sched_yield();
			for (size_t i = 0; i < o->size; i++)
				if (p[i] != pattern_byte(o, i)) {
					w->bad++;
					break;
				}
			zs_unmap_object(pool, o->handle);
		} else {
			if (!obj_ok(pool, o))
				w->bad++;
			zs_free(pool, o->handle);
			o->handle = 0;
		}
	}
	/* Leave the survivors fragmented for the final compaction. */
	atomic_fetch_sub(&w->st->running, 1);
	return NULL;
}

static void *stress_compactor(void *arg)
{
	struct stress *st = arg;

	while (atomic_load(&st->running) > 0) {
		atomic_fetch_add(&st->compacted, zs_compact(st->pool));
		atomic_fetch_add(&st->compactions, 1);
	}
	return NULL;
}

static void test_concurrent(unsigned int order, enum zs_lock_mode mode)
{
	static struct worker workers[STRESS_THREADS];
	pthread_t tw[STRESS_THREADS], tc;
	struct stress st = { 0 };
	unsigned long bad = 0, live = 0, freed;

	st.pool = zs_create_pool("stress", order, mode);
	CHECK(st.pool, "create: %s", strerror(errno));
	atomic_store(&st.running, STRESS_THREADS);
	for (unsigned int i = 0; i < STRESS_THREADS; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].st = &st;
		workers[i].id = i + order * 16 + mode * 64;
		CHECK(pthread_create(&tw[i], NULL, stress_worker, &workers[i]) == 0, "thread");
	}
	CHECK(pthread_create(&tc, NULL, stress_compactor, &st) == 0, "thread");
	for (unsigned int i = 0; i < STRESS_THREADS; i++)
		pthread_join(tw[i], NULL);
	pthread_join(tc, NULL);

	for (unsigned int i = 0; i < STRESS_THREADS; i++) {
		bad += workers[i].bad;
		for (size_t k = 0; k < STRESS_SLOTS; k++)
			live += workers[i].objs[k].handle != 0;
	}
	CHECK(bad == 0, "order %u %s: %lu corrupt objects or failed allocations", order,
	      mode_name[mode], bad);

	/* Fragment what is left, compact, everything still intact. */
	for (unsigned int i = 0; i < STRESS_THREADS; i++)
		for (size_t k = 0; k < STRESS_SLOTS; k++) {
			struct obj *o = &workers[i].objs[k];

			if (o->handle && k % 4) {
				zs_free(st.pool, o->handle);
				o->handle = 0;
			}
		}
	freed = zs_compact(st.pool);
	CHECK(freed > 0, "final compaction freed nothing");
	for (unsigned int i = 0; i < STRESS_THREADS; i++)
		for (size_t k = 0; k < STRESS_SLOTS; k++) {
			struct obj *o = &workers[i].objs[k];

			if (!o->handle)
				continue;
			CHECK(obj_ok(st.pool, o), "order %u %s: object corrupt after final compaction",
			      order, mode_name[mode]);
			zs_free(st.pool, o->handle);
		}
	CHECK(zs_get_total_pages(st.pool) == 0, "%lu pages left", zs_get_total_pages(st.pool));
	printf("concurrent: order %u %s lock: %d threads x %d ops, %lu live at the end, "
	       "%lu compactions freed %lu pages meanwhile, final compaction %lu\n",
	       order, mode_name[mode], STRESS_THREADS, STRESS_OPS, live,
	       atomic_load(&st.compactions), atomic_load(&st.compacted), freed);
	zs_destroy_pool(st.pool);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef ZS_TEST_TSAN
	printf("test_zs_tsan: start\n");	/* the runtime started: failures count */
	test_concurrent(2, ZS_LOCK_CLASS);
	test_concurrent(4, ZS_LOCK_POOL);
	printf("test_zs_tsan: ok\n");
#else
	test_bad_args();
	test_inuse_columns();
	for (unsigned int order = ZS_MIN_PAGE_ORDER; order <= ZS_MAX_PAGE_ORDER; order++) {
		test_alloc_map_free(order, ZS_LOCK_CLASS);
		test_alloc_map_free(order, ZS_LOCK_POOL);
	}
	test_memory_returned();
	test_page_tables();
	test_reserve();
	test_metadata();
	test_compaction(2, ZS_LOCK_CLASS, 200);
	test_compaction(3, ZS_LOCK_POOL, 1000);
	test_compaction(4, ZS_LOCK_CLASS, 3000);
	test_compaction(2, ZS_LOCK_POOL, 24);	/* the smallest class */
	test_concurrent(2, ZS_LOCK_CLASS);
	test_concurrent(2, ZS_LOCK_POOL);
	test_concurrent(4, ZS_LOCK_CLASS);
	printf("test_zsmalloc: ok\n");
#endif
	return 0;
}
