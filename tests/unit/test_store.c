/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store.c - the page store, one thread: round trips of zero, same-filled,
 * text, binary and random pages with lz4 and zstd at orders 2..4; exclusive
 * load giving the memory back (counters and RSS); incompressible pages stored
 * as-is; the decompress-failure path (injected, and real corruption of a
 * pool object); mem_limit; bad arguments.
 */
#include "config.h"
#include "core/store.h"
#include "core/comp.h"
#include "test_store_util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define NPAGES 256

static uint8_t *pages[TP__COUNT];

static struct zswap_store *mk(enum zswap_comp comp, int level, unsigned int order,
			      enum zs_lock_mode lock, unsigned int nr_pools, uint64_t limit)
{
	struct zswap_store_config cfg = {
		.comp = comp, .level = level, .order = order, .lock = lock,
		.nr_pools = nr_pools, .mem_limit = limit, .nr_workspaces = 0,
	};
	struct zswap_store *s = zswap_store_create(&cfg);

	TP_CHECK(s);
	return s;
}

static struct zswap_stats stats(struct zswap_store *s)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	zswap_store_stats(s, &st);
	return st;
}

/* Everything the store holds is gone: the state after loading it all back. */
static void check_empty(struct zswap_store *s)
{
	struct zswap_stats st = stats(s);

	TP_CHECK_EQ(st.stored_pages, 0);
	TP_CHECK_EQ(st.pool_total_size, 0);
	TP_CHECK_EQ(st.same_filled_pages, 0);
	TP_CHECK_EQ(st.same_pages, 0);
	TP_CHECK_EQ(st.stored_incompressible_pages, 0);
	TP_CHECK_EQ(st.huge_pages, 0);
	TP_CHECK_EQ(st.orig_data_size, 0);
	TP_CHECK_EQ(st.compr_data_size, 0);
	/* zram's definition: pool pages only; metadata apart, and it stays. */
	TP_CHECK_EQ(st.mem_used_total, 0);
	TP_CHECK(st.pool_metadata_bytes > 0);
}

static void test_round_trip(enum zswap_comp comp, int level, unsigned int order)
{
	struct zswap_store *s = mk(comp, level, order, ZS_LOCK_CLASS, 1, 0);
	static struct zswap_entry e[TP__COUNT][NPAGES];
	static uint8_t out[TP_PAGE];
	size_t huge = zs_huge_class_size(zswap_store_pool(s, 0));
	uint64_t n = 0, same = 0, raw = 0, bytes = 0;

	memset(e, 0, sizeof(e));
	for (int k = 0; k < TP__COUNT; k++)
		for (size_t p = 0; p < NPAGES; p++) {
			const uint8_t *pg = pages[k] + p * TP_PAGE;

			TP_CHECK_EQ(zswap_store_page(s, pg, &e[k][p]), 0);
			n++;
			switch (zswap_entry_type(&e[k][p])) {
			case ZE_SAME:
				TP_CHECK_EQ(zswap_entry_length(&e[k][p]), 0);
				TP_CHECK(zswap_entry_word(&e[k][p]) == *(const uint64_t *)pg);
				same++;
				break;
			case ZE_COMPRESSED:
				TP_CHECK(zswap_entry_length(&e[k][p]) > 0 && zswap_entry_length(&e[k][p]) < huge);
				bytes += zswap_entry_length(&e[k][p]);
				break;
			case ZE_RAW:
				TP_CHECK_EQ(zswap_entry_length(&e[k][p]), TP_PAGE);
				bytes += TP_PAGE;
				raw++;
				break;
			default:
				TP_CHECK(0);
			}
			if (k == TP_ZERO)
				TP_CHECK(zswap_entry_is_zero(&e[k][p]));
			if (k == TP_SAME)
				TP_CHECK(zswap_entry_type(&e[k][p]) == ZE_SAME && zswap_entry_word(&e[k][p]) != 0);
			if (k == TP_RANDOM)
				TP_CHECK_EQ(zswap_entry_type(&e[k][p]), ZE_RAW);
			if (k == TP_TEXT)
				TP_CHECK_EQ(zswap_entry_type(&e[k][p]), ZE_COMPRESSED);
		}

	struct zswap_stats st = stats(s);
	TP_CHECK_EQ(st.stored_pages, n);
	TP_CHECK_EQ(st.zswpout, n);
	TP_CHECK_EQ(st.same_filled_pages, same);
	TP_CHECK_EQ(st.same_pages, same);
	TP_CHECK_EQ(st.stored_incompressible_pages, raw);
	TP_CHECK_EQ(st.huge_pages, raw);
	TP_CHECK_EQ(st.reject_compress_poor, 0);
	TP_CHECK_EQ(st.compr_data_size, bytes);
	TP_CHECK_EQ(st.orig_data_size, n * TP_PAGE);
	TP_CHECK(st.pool_total_size > 0);
	/* mem_used_total is zram's: the pool's pages, nothing else. */
	TP_CHECK_EQ(st.mem_used_total, st.pool_total_size);
	TP_CHECK_EQ(st.mem_used_total % TP_PAGE, 0);
	TP_CHECK(st.mem_used_max >= st.mem_used_total);
	TP_CHECK(st.pool_total_size >= bytes);
	/* Metadata is reported apart: at least one 8-byte handle per object. */
	TP_CHECK(st.pool_metadata_bytes >= (n - same) * 8);
	fprintf(stderr, "%s:%d order %u: %llu pages, compr %llu, pool %llu, mem_used %llu (%.3f of compr), "
		"metadata %llu\n",
		comp_name(comp), level, order, (unsigned long long)n,
		(unsigned long long)st.compr_data_size, (unsigned long long)st.pool_total_size,
		(unsigned long long)st.mem_used_total,
		(double)st.mem_used_total / (double)st.compr_data_size,
		(unsigned long long)st.pool_metadata_bytes);

	for (int k = 0; k < TP__COUNT; k++)
		for (size_t p = 0; p < NPAGES; p++) {
			memset(out, 0x5A, sizeof(out));
			TP_CHECK_EQ(zswap_load_page(s, &e[k][p], out), 0);
			TP_CHECK(memcmp(out, pages[k] + p * TP_PAGE, TP_PAGE) == 0);
			TP_CHECK_EQ(zswap_entry_type(&e[k][p]), ZE_NONE);
			/* exclusive: a second load finds nothing */
			TP_CHECK_EQ(zswap_load_page(s, &e[k][p], out), -EINVAL);
		}
	st = stats(s);
	TP_CHECK_EQ(st.zswpin, n);
	TP_CHECK_EQ(st.decompress_fail, 0);
	check_empty(s);
	zswap_store_destroy(s);
}

/* A zero page may be loaded with dst NULL (the caller maps the zero page);
 * any other page may not. Invalidate drops each kind. */
static void test_zero_and_invalidate(void)
{
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 1, 0);
	struct zswap_entry e[TP__COUNT];
	uint8_t out[TP_PAGE];

	TP_CHECK_EQ(zswap_store_page(s, pages[TP_ZERO], &e[TP_ZERO]), 0);
	TP_CHECK_EQ(zswap_load_page(s, &e[TP_ZERO], NULL), 0);
	TP_CHECK_EQ(zswap_store_page(s, pages[TP_SAME], &e[TP_SAME]), 0);
	TP_CHECK_EQ(zswap_load_page(s, &e[TP_SAME], NULL), -EINVAL);
	TP_CHECK_EQ(zswap_entry_type(&e[TP_SAME]), ZE_SAME);	/* refused, still stored */
	TP_CHECK_EQ(zswap_load_page(s, &e[TP_SAME], out), 0);
	TP_CHECK(memcmp(out, pages[TP_SAME], TP_PAGE) == 0);

	for (int k = 0; k < TP__COUNT; k++)
		TP_CHECK_EQ(zswap_store_page(s, pages[k], &e[k]), 0);
	TP_CHECK_EQ(stats(s).stored_pages, TP__COUNT);
	for (int k = 0; k < TP__COUNT; k++) {
		zswap_invalidate(s, &e[k]);
		TP_CHECK_EQ(zswap_entry_type(&e[k]), ZE_NONE);
		zswap_invalidate(s, &e[k]);		/* harmless twice */
	}
	check_empty(s);
	TP_CHECK_EQ(stats(s).zswpin, 2);
	zswap_store_destroy(s);
}

/* A page whose compressed form lands at or above the huge class size is
 * stored as-is, whatever it compresses to; one just below is compressed. */
static void test_incompressible(unsigned int order)
{
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, order, ZS_LOCK_CLASS, 1, 0);
	size_t huge = zs_huge_class_size(zswap_store_pool(s, 0));
	static uint8_t pg[TP_PAGE], out[TP_PAGE];
	bool seen_raw = false, seen_comp = false;
	uint64_t raw = 0, raw_since = 0;

	/* Random bytes then zeros: LZ4 output is about the random part plus a
	 * few bytes, so sweeping the split crosses the huge class size. */
	for (size_t rnd = 2800; rnd <= 4096; rnd += 16) {
		struct zswap_entry e;
		uint64_t st = rnd;

		memset(pg, 0, sizeof(pg));
		for (size_t i = 0; i < rnd; i++)
			pg[i] = (uint8_t)tp_rand(&st);
		TP_CHECK_EQ(zswap_store_page(s, pg, &e), 0);
		if (zswap_entry_type(&e) == ZE_RAW) {
			seen_raw = true;
			raw++;
			raw_since++;
			TP_CHECK_EQ(zswap_entry_length(&e), TP_PAGE);
			TP_CHECK(rnd + 64 > huge);
		} else {
			TP_CHECK_EQ(zswap_entry_type(&e), ZE_COMPRESSED);
			seen_comp = true;
			TP_CHECK(zswap_entry_length(&e) < huge);
		}
		struct zswap_stats sts = stats(s);
		TP_CHECK_EQ(sts.stored_incompressible_pages, raw);
		TP_CHECK_EQ(sts.huge_pages, raw);
		TP_CHECK_EQ(sts.huge_pages_since, raw_since);
		TP_CHECK_EQ(sts.reject_compress_poor, 0);
		TP_CHECK_EQ(zswap_load_page(s, &e, out), 0);
		TP_CHECK(memcmp(out, pg, TP_PAGE) == 0);
		sts = stats(s);
		TP_CHECK_EQ(sts.huge_pages, 0);
		/* zram's huge_pages_since: every page stored whole, gone or not. */
		TP_CHECK_EQ(sts.huge_pages_since, raw_since);
		raw = 0;
	}
	TP_CHECK(seen_raw && seen_comp);
	check_empty(s);
	zswap_store_destroy(s);
}

/*
 * Recompression (zram's recompress): text stored by lz4 and recompressed
 * by zstd:19 goes to a smaller class (its bytes and the entry change) and
 * loads exactly; an entry is tried once; a page that only the huge class
 * takes stays as it was; huge_only and the threshold skip what they leave
 * out.
 */
static void test_recompress(void)
{
	struct zswap_store_config cfg = {
		.comp = ZSWAP_COMP_LZ4, .order = 3, .lock = ZS_LOCK_CLASS, .nr_pools = 1,
		.recomp = ZSWAP_COMP_ZSTD, .recomp_level = 19,
	};
	struct zswap_store *s = zswap_store_create(&cfg);
	static struct zswap_entry e[NPAGES];
	static uint8_t out[TP_PAGE];
	size_t done = 0;

	TP_CHECK(s);
	for (size_t i = 0; i < NPAGES; i++)
		TP_CHECK_EQ(zswap_store_page(s, pages[TP_TEXT] + i * TP_PAGE, &e[i]), 0);
	uint64_t before = stats(s).compr_data_size;
	for (size_t i = 0; i < NPAGES; i++) {
		struct zswap_entry was = e[i];
		if (zswap_entry_type(&e[i]) != ZE_COMPRESSED)
			continue;
		TP_CHECK_EQ(zswap_recompress_entry(s, &e[i], 0, true), ZSWAP_RECOMP_SKIP);
		TP_CHECK_EQ(zswap_recompress_entry(s, &e[i], TP_PAGE, false), ZSWAP_RECOMP_SKIP);
		int rc = zswap_recompress_entry(s, &e[i], 0, false);
		TP_CHECK(rc == ZSWAP_RECOMP_DONE || rc == ZSWAP_RECOMP_KEPT);
		TP_CHECK(zswap_entry_tried(&e[i]));
		if (rc == ZSWAP_RECOMP_DONE) {
			done++;
			TP_CHECK(zswap_entry_recompressed(&e[i]));
			TP_CHECK(zswap_entry_length(&e[i]) < zswap_entry_length(&was));
		} else {
			TP_CHECK_EQ(e[i].w, was.w | ZE_TRIED_BIT);
		}
		TP_CHECK_EQ(zswap_recompress_entry(s, &e[i], 0, false), ZSWAP_RECOMP_SKIP);
	}
	TP_CHECK(done > NPAGES / 2);
	TP_CHECK(stats(s).compr_data_size < before);
	for (size_t i = 0; i < NPAGES; i++) {
		TP_CHECK_EQ(zswap_load_page(s, &e[i], out), 0);
		TP_CHECK(memcmp(out, pages[TP_TEXT] + i * TP_PAGE, TP_PAGE) == 0);
	}
	/* Random bytes: held whole, no class below for zstd either. */
	TP_CHECK_EQ(zswap_store_page(s, pages[TP_RANDOM], &e[0]), 0);
	TP_CHECK_EQ(zswap_entry_type(&e[0]), ZE_RAW);
	TP_CHECK_EQ(zswap_recompress_entry(s, &e[0], 0, true), ZSWAP_RECOMP_KEPT);
	TP_CHECK_EQ(stats(s).huge_pages, 1);
	TP_CHECK_EQ(zswap_load_page(s, &e[0], out), 0);
	TP_CHECK(memcmp(out, pages[TP_RANDOM], TP_PAGE) == 0);
	check_empty(s);
	zswap_store_destroy(s);
}

/*
 * ZSWAP_WRITEBACK=0 (refuse_poor): eviction's stores refuse a page that
 * does not compress below PAGE_SIZE, counted in reject_compress_poor, as
 * zswap_compress() refuses it for a memory cgroup that does not write back;
 * a page compressing to less, yet not below the huge class, is stored as-is
 * as ever, and so is every page stored by zswap_store_page() (a page put
 * back by the fault path) and every page without refuse_poor.
 */
static void test_refuse_poor(enum zswap_comp comp, int level)
{
	struct zswap_store_config cfg = {
		.comp = comp, .level = level, .order = 3, .lock = ZS_LOCK_CLASS, .nr_pools = 1,
		.refuse_poor = true,
	};
	struct zswap_store *s = zswap_store_create(&cfg), *plain = mk(comp, level, 3, ZS_LOCK_CLASS, 1, 0);
	static struct zswap_entry e[NPAGES];
	static uint8_t pg[TP_PAGE], out[TP_PAGE];
	uint64_t refused = 0, raw = 0;
	struct zswap_stats st;

	TP_CHECK(s);
	for (size_t p = 0; p < NPAGES; p++) {
		memset(&e[p], 0, sizeof(e[p]));
		TP_CHECK_EQ(zswap_store_page_evict(s, pages[TP_RANDOM] + p * TP_PAGE, &e[p]), -E2BIG);
		TP_CHECK_EQ(zswap_entry_type(&e[p]), ZE_NONE);
		TP_CHECK_EQ(zswap_store_page_evict(s, pages[TP_TEXT] + p * TP_PAGE, &e[p]), 0);
		TP_CHECK_EQ(zswap_entry_type(&e[p]), ZE_COMPRESSED);
	}
	st = stats(s);
	TP_CHECK_EQ(st.reject_compress_poor, NPAGES);
	TP_CHECK_EQ(st.stored_pages, NPAGES);
	TP_CHECK_EQ(st.stored_incompressible_pages, 0);
	for (size_t p = 0; p < NPAGES; p++) {
		TP_CHECK_EQ(zswap_load_page(s, &e[p], out), 0);
		TP_CHECK(memcmp(out, pages[TP_TEXT] + p * TP_PAGE, TP_PAGE) == 0);
	}

	/* Random bytes then zeros: from the huge class up to a page, stored
	 * whole; only what does not shrink at all is refused. */
	for (size_t rnd = 3000; rnd <= TP_PAGE; rnd += 8) {
		uint64_t seed = rnd;
		int r;

		memset(pg, 0, sizeof(pg));
		for (size_t i = 0; i < rnd; i++)
			pg[i] = (uint8_t)tp_rand(&seed);
		memset(&e[0], 0, sizeof(e[0]));
		r = zswap_store_page_evict(s, pg, &e[0]);
		if (r == -E2BIG) {
			refused++;
			/* Each compressor's own overhead on random bytes sets where
			 * the output reaches a page: lzo's ~3920, zstd's ~4016, lz4's
			 * ~4060 bytes of them; all well past every huge class. */
			TP_CHECK(rnd > 3800);
			continue;
		}
		TP_CHECK_EQ(r, 0);
		if (zswap_entry_type(&e[0]) == ZE_RAW)
			raw++;
		TP_CHECK_EQ(zswap_load_page(s, &e[0], out), 0);
		TP_CHECK(memcmp(out, pg, TP_PAGE) == 0);
	}
	TP_CHECK(refused > 0 && raw > 0);
	TP_CHECK_EQ(stats(s).reject_compress_poor, NPAGES + refused);
	TP_CHECK_EQ(stats(s).huge_pages_since, raw);

	/* Put back by the fault path, and without refuse_poor: stored whole. */
	TP_CHECK_EQ(zswap_store_page(s, pages[TP_RANDOM], &e[0]), 0);
	TP_CHECK_EQ(zswap_entry_type(&e[0]), ZE_RAW);
	TP_CHECK_EQ(zswap_load_page(s, &e[0], out), 0);
	TP_CHECK_EQ(zswap_store_page_evict(plain, pages[TP_RANDOM], &e[0]), 0);
	TP_CHECK_EQ(zswap_entry_type(&e[0]), ZE_RAW);
	TP_CHECK_EQ(zswap_load_page(plain, &e[0], out), 0);
	TP_CHECK(memcmp(out, pages[TP_RANDOM], TP_PAGE) == 0);
	TP_CHECK_EQ(stats(plain).reject_compress_poor, 0);
	TP_CHECK_EQ(stats(s).reject_compress_poor, NPAGES + refused);
	check_empty(s);
	check_empty(plain);
	zswap_store_destroy(s);
	zswap_store_destroy(plain);
}

static long rss_kib(void)
{
	char buf[256];
	int fd = open("/proc/self/statm", O_RDONLY);
	ssize_t n;
	long size = 0, res = 0;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%ld %ld", &size, &res) != 2)
		return -1;
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Exclusive load gives the memory back: 32 MiB of incompressible pages
 * raise RSS by about that, and loading them all makes it fall again. */
static void test_memory_returned(void)
{
	const size_t n = 8192;
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 1, 0);
	struct zswap_entry *e = calloc(n, sizeof(*e));
	static uint8_t pg[TP_PAGE];
	uint64_t st = 7;
	long before, stored, after;

	TP_CHECK(e);
	before = rss_kib();
	if (before < 0) {
		fprintf(stderr, "no /proc/self/statm: RSS part skipped\n");
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < TP_PAGE / 8; j++)
			((uint64_t *)pg)[j] = tp_rand(&st);
		TP_CHECK_EQ(zswap_store_page(s, pg, &e[i]), 0);
	}
	stored = rss_kib();
	TP_CHECK(stats(s).pool_total_size >= n * TP_PAGE);
	for (size_t i = 0; i < n; i++)
		TP_CHECK_EQ(zswap_load_page(s, &e[i], pg), 0);
	after = rss_kib();
	check_empty(s);
	fprintf(stderr, "RSS: %ld KiB before, %ld KiB stored, %ld KiB after loading all\n",
		before, stored, after);
	if (before >= 0) {
		TP_CHECK(stored - before > (long)(n * TP_PAGE / 1024) * 3 / 4);
		TP_CHECK(stored - after > (long)(n * TP_PAGE / 1024) * 3 / 4);
	}
	free(e);
	zswap_store_destroy(s);
}

/* Injected failures and a real corrupt object: -EIO, counted, entry freed,
 * nothing left in the pool, and the next load works. */
static void test_decompress_fail(enum zswap_comp comp)
{
	struct zswap_store *s = mk(comp, 0, 2, ZS_LOCK_CLASS, 4, 0);
	struct zswap_entry e[4];
	static uint8_t out[TP_PAGE];

	for (int i = 0; i < 4; i++) {
		TP_CHECK_EQ(zswap_store_page(s, pages[TP_TEXT] + i * TP_PAGE, &e[i]), 0);
		TP_CHECK_EQ(zswap_entry_type(&e[i]), ZE_COMPRESSED);
	}
	zswap_store_inject(s, ZSWAP_INJECT_DECOMPRESS, 1);
	TP_CHECK_EQ(zswap_load_page(s, &e[0], out), -EIO);
	TP_CHECK_EQ(zswap_entry_type(&e[0]), ZE_NONE);
	TP_CHECK_EQ(stats(s).decompress_fail, 1);
	TP_CHECK_EQ(stats(s).stored_pages, 3);
	TP_CHECK_EQ(zswap_load_page(s, &e[1], out), 0);	/* only one was injected */
	TP_CHECK(memcmp(out, pages[TP_TEXT] + TP_PAGE, TP_PAGE) == 0);

	/* Real corruption: scribble over the object in the pool. */
	struct zs_pool *pool = zswap_store_pool(s, zswap_entry_pool(&e[2]));
	uint8_t *obj = zs_map_object(pool, zswap_entry_handle(&e[2]));
	memset(obj, 0xFF, zswap_entry_length(&e[2]));
	zs_unmap_object(pool, zswap_entry_handle(&e[2]));
	TP_CHECK_EQ(zswap_load_page(s, &e[2], out), -EIO);
	TP_CHECK_EQ(zswap_entry_type(&e[2]), ZE_NONE);

	/* The other pages are intact. */
	TP_CHECK_EQ(zswap_load_page(s, &e[3], out), 0);
	TP_CHECK(memcmp(out, pages[TP_TEXT] + 3 * TP_PAGE, TP_PAGE) == 0);

	struct zswap_stats st = stats(s);
	TP_CHECK_EQ(st.decompress_fail, 2);
	TP_CHECK_EQ(st.zswpin, 2);
	check_empty(s);
	zswap_store_destroy(s);
}

/* mem_limit: stores are refused with -ENOSPC once the pools would pass it,
 * and accepted again once memory is freed. The limit bounds pool pages plus
 * metadata (what the process pays), not mem_used_total alone. */
static void test_mem_limit(unsigned int nr_pools)
{
	const uint64_t limit = 2 << 20;
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, nr_pools, limit);
	static struct zswap_entry e[2048];
	size_t ok = 0;
	int r = 0;

	for (size_t i = 0; i < 2048 && r == 0; i++) {
		r = zswap_store_page(s, pages[TP_RANDOM] + (i % NPAGES) * TP_PAGE, &e[i]);
		if (r == 0)
			ok++;
	}
	TP_CHECK_EQ(r, -ENOSPC);
	TP_CHECK(ok > 0);
	struct zswap_stats st = stats(s);
	TP_CHECK(st.pool_limit_hit >= 1);
	TP_CHECK_EQ(st.mem_limit, limit);
	TP_CHECK(st.mem_used_total + st.pool_metadata_bytes <= limit);
	/* Refused near the limit, not far below it: the last store that
	 * failed would have added one page (raw) and maybe a page of metadata. */
	TP_CHECK(st.mem_used_total + st.pool_metadata_bytes + 3 * TP_PAGE > limit);
	TP_CHECK_EQ(st.stored_pages, ok);
	/* Same-filled pages take no pool space: still accepted. */
	struct zswap_entry z;
	TP_CHECK_EQ(zswap_store_page(s, pages[TP_ZERO], &z), 0);
	zswap_invalidate(s, &z);
	for (size_t i = 0; i < ok; i++)
		zswap_invalidate(s, &e[i]);
	check_empty(s);
	TP_CHECK_EQ(zswap_store_page(s, pages[TP_RANDOM], &e[0]), 0);
	zswap_invalidate(s, &e[0]);
	zswap_store_destroy(s);
}

/* With 32 pools each entry names its pool, and a thread storing alone fills
 * one pool (its workspace's) rather than scattering pages over all 32. */
static void test_nr_pools(void)
{
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 32, 0);
	static struct zswap_entry e[NPAGES];
	static uint8_t out[TP_PAGE];
	unsigned int used = 0;

	TP_CHECK_EQ(zswap_store_nr_pools(s), 32);
	TP_CHECK(zswap_store_pool(s, 31) && !zswap_store_pool(s, 32));
	for (size_t p = 0; p < NPAGES; p++) {
		TP_CHECK_EQ(zswap_store_page(s, pages[TP_TEXT] + p * TP_PAGE, &e[p]), 0);
		TP_CHECK(zswap_entry_pool(&e[p]) < 32);
		TP_CHECK_EQ(zswap_entry_pool(&e[p]), zswap_entry_pool(&e[0]));
	}
	for (unsigned int i = 0; i < 32; i++)
		if (zs_get_total_pages(zswap_store_pool(s, i)))
			used++;
	TP_CHECK_EQ(used, 1);
	for (size_t p = 0; p < NPAGES; p++) {
		TP_CHECK_EQ(zswap_load_page(s, &e[p], out), 0);
		TP_CHECK(memcmp(out, pages[TP_TEXT] + p * TP_PAGE, TP_PAGE) == 0);
	}
	check_empty(s);
	zswap_store_destroy(s);
}

static void test_bad_config(void)
{
	struct zswap_store_config cfg = { .comp = ZSWAP_COMP_LZ4, .order = 2, .nr_pools = 1 };

	cfg.order = 1;
	errno = 0;
	TP_CHECK(!zswap_store_create(&cfg) && errno == EINVAL);
	cfg.order = 5;
	TP_CHECK(!zswap_store_create(&cfg) && errno == EINVAL);
	cfg.order = 2;
	cfg.comp = (enum zswap_comp)9;
	TP_CHECK(!zswap_store_create(&cfg) && errno == EINVAL);
	cfg.comp = ZSWAP_COMP_LZ4;
	cfg.nr_pools = 65;
	TP_CHECK(!zswap_store_create(&cfg) && errno == EINVAL);
	cfg.nr_pools = 1;
	cfg.lock = (enum zs_lock_mode)3;
	TP_CHECK(!zswap_store_create(&cfg) && errno == EINVAL);
	TP_CHECK(!zswap_store_create(NULL) && errno == EINVAL);
}

/* Same-filled means a 4-byte pattern repeated (the entry keeps 4 bytes);
 * a page of one 8-byte word with unequal halves (a double, a pointer) is
 * compressed. Either way it comes back exact. */
static void test_same_patterns(void)
{
	static const uint64_t same[] = { ~0ull, 0x0101010101010101ull, 0x8000000180000001ull };
	static const uint64_t other[] = { 0x3ff0000000000000ull, 0x00007f0012345678ull, 1ull };
	struct zswap_store *s = mk(ZSWAP_COMP_LZ4, 0, 2, ZS_LOCK_CLASS, 1, 0);
	static uint64_t pg[TP_PAGE / 8], out[TP_PAGE / 8];
	struct zswap_entry e;

	for (size_t k = 0; k < 6; k++) {
		uint64_t w = k < 3 ? same[k] : other[k - 3];

		for (size_t i = 0; i < TP_PAGE / 8; i++)
			pg[i] = w;
		TP_CHECK_EQ(zswap_store_page(s, pg, &e), 0);
		if (k < 3) {
			TP_CHECK_EQ(zswap_entry_type(&e), ZE_SAME);
			TP_CHECK(zswap_entry_word(&e) == w);
			TP_CHECK_EQ(stats(s).same_filled_pages, 1);
			TP_CHECK_EQ(stats(s).pool_total_size, 0);
		} else {
			TP_CHECK_EQ(zswap_entry_type(&e), ZE_COMPRESSED);
			TP_CHECK(zswap_entry_length(&e) > 0 && zswap_entry_length(&e) < 64);
			TP_CHECK_EQ(stats(s).same_filled_pages, 0);
		}
		memset(out, 0xa5, sizeof(out));
		TP_CHECK_EQ(zswap_load_page(s, &e, out), 0);
		TP_CHECK(memcmp(out, pg, TP_PAGE) == 0);
		TP_CHECK_EQ(zswap_entry_type(&e), ZE_NONE);
	}
	check_empty(s);
	zswap_store_destroy(s);
}

int main(void)
{
	for (int k = 0; k < TP__COUNT; k++)
		pages[k] = tp_pages((enum tp_kind)k, NPAGES, 1000 + (uint64_t)k);

	for (unsigned int order = 2; order <= 4; order++) {
		test_round_trip(ZSWAP_COMP_LZ4, 0, order);
		test_round_trip(ZSWAP_COMP_ZSTD, 3, order);
		test_round_trip(ZSWAP_COMP_LZO, 0, order);
		test_incompressible(order);
	}
	test_refuse_poor(ZSWAP_COMP_LZ4, 0);
	test_refuse_poor(ZSWAP_COMP_ZSTD, 3);
	test_refuse_poor(ZSWAP_COMP_LZO, 0);
	test_round_trip(ZSWAP_COMP_ZSTD, 1, 2);
	test_round_trip(ZSWAP_COMP_ZSTD, 19, 3);
	test_zero_and_invalidate();
	test_same_patterns();
	test_memory_returned();
	test_decompress_fail(ZSWAP_COMP_LZ4);
	test_decompress_fail(ZSWAP_COMP_ZSTD);
	test_decompress_fail(ZSWAP_COMP_LZO);
	test_mem_limit(1);
	test_mem_limit(8);
	test_nr_pools();
	test_bad_config();
	test_recompress();
	for (int k = 0; k < TP__COUNT; k++)
		free(pages[k]);
	return 0;
}
