/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the compressed page store: zswap's store/load/invalidate.
 *
 * A store owns one or more zs pools (ZSWAP_NR_POOLS) per compressor in use,
 * the compressors, and the counters. As the kernel's zswap keeps a
 * zswap_pool per compressor, a change of ZSWAP_COMPRESSOR at run time
 * (zswap_store_set_comp) sends new stores to the new compressor's pools;
 * a page stored before stays where it is, readable, until it is loaded,
 * dropped or written back, and a compressor's pools and workspaces go once
 * the last of its pages has (zswap_store_reap). The caller keeps one struct zswap_entry per stored page, the way
 * the kernel's zswap keeps a zswap_entry per swap slot; the store never
 * allocates per-page metadata of its own.
 *
 * Thread-safe. Nothing here calls malloc: the compressor workspaces come
 * from prim, at zswap_store_create() and at a change of compressor.
 */
#ifndef ZSWAP_STORE_H
#define ZSWAP_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "zswap.h"
#include "core/comp.h"
#include "core/zsmalloc.h"

enum zswap_entry_type {
	ZE_NONE = 0,		/* nothing stored */
	ZE_SAME = 1,		/* same-filled: a 4-byte pattern repeated over the page */
	ZE_COMPRESSED = 2,	/* a zs handle, length bytes of compressed data */
	ZE_RAW = 3,		/* incompressible: a zs handle holding the page as-is */
	ZE_BACKED = 4,		/* written back: a slot of the second tier (src/core/backing.h) */
};

/*
 * One stored page, 8 bytes, kept by the caller (a slot array holds one per
 * managed page, resident or not, so every byte here is paid on every page):
 *
 *   bits  0..1   type (enum zswap_entry_type)
 *   ZE_SAME:     bits 32..63 the 4-byte pattern, bits 2..31 zero
 *   pool object: bits 2..7 the zs pool's index among its compressor's
 *                (ZSWAP_NR_POOLS, at most 64), bits 8..19 the compressed
 *                length (0 for ZE_RAW, which holds PAGE_SIZE bytes), bits
 *                20..59 the zs handle shifted right by one (its bit 0 is
 *                zsmalloc's tag, always set), bits 60..61 the compressor
 *                (enum zswap_comp) whose pools hold it
 *   ZE_BACKED:   bits 0..1 as ZE_SAME, bit 2 set, bits 3..63 the tier's file
 *                (its index, bits 59..63: 0 the process's own unless it is
 *                a fork child, which writes a file of its own and reads
 *                those it inherited) and slot there (bits 3..58)
 *
 * Only the store writes it; read it through the accessors below.
 */
struct zswap_entry {
	uint64_t w;
};

#define ZE_TYPE_MASK		3ull
#define ZE_POOL_SHIFT		2
#define ZE_POOL_MASK		63ull
#define ZE_LEN_SHIFT		8
#define ZE_LEN_MASK		0xfffull
#define ZE_HANDLE_SHIFT		20
#define ZE_COMP_SHIFT		60
#define ZE_COMP_MASK		3ull
#define ZE_SAME_SHIFT		32
#define ZE_BACKED_BIT		4ull
#define ZE_SLOT_SHIFT		3
/* Pool entries only: the handle takes bits 20..59; bit 62 says
 * recompression was tried (it is not tried again: the page must change,
 * which stores it anew), bit 63 that the object is the recompression
 * algorithm's. */
#define ZE_HANDLE_MASK		((1ull << (ZS_HANDLE_BITS - 1)) - 1)
#define ZE_TRIED_BIT		(1ull << 62)
#define ZE_RECOMP_BIT		(1ull << 63)

static inline enum zswap_entry_type zswap_entry_type(const struct zswap_entry *e)
{
	if ((e->w & (ZE_TYPE_MASK | ZE_BACKED_BIT)) == (ZE_SAME | ZE_BACKED_BIT))
		return ZE_BACKED;
	return (enum zswap_entry_type)(e->w & ZE_TYPE_MASK);
}

/* A ZE_BACKED entry whose page is lost (zswap_entry_mark_lost). */
#define ZE_SLOT_LOST		(~0ull >> ZE_SLOT_SHIFT)
/* Files of the tier an entry can name (index 31 is the lost entry's). */
#define ZE_TIERS		16
#define ZE_TIER_SHIFT		56
#define ZE_TIER_SLOT_MASK	((1ull << ZE_TIER_SHIFT) - 1)

/* The tier's file index and slot of a ZE_BACKED entry, as one number:
 * consecutive numbers are consecutive slots of one file. */
static inline uint64_t zswap_entry_slot(const struct zswap_entry *e)
{
	return e->w >> ZE_SLOT_SHIFT;
}

/* Bytes the entry holds in the pool: 0 for ZE_NONE, ZE_SAME and ZE_BACKED. */
static inline uint32_t zswap_entry_length(const struct zswap_entry *e)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	if (t == ZE_RAW)
		return ZS_PAGE_SIZE;
	return t == ZE_COMPRESSED ? (uint32_t)((e->w >> ZE_LEN_SHIFT) & ZE_LEN_MASK) : 0;
}

/* A pool entry that saves less than a quarter of a page (held as-is, or
 * compressed to 3 KiB or more): the second tier takes these first. */
#define ZSWAP_POOR_LEN		(ZS_PAGE_SIZE * 3 / 4)

static inline bool zswap_entry_poor(const struct zswap_entry *e)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	return t == ZE_RAW || (t == ZE_COMPRESSED && zswap_entry_length(e) >= ZSWAP_POOR_LEN);
}

static inline unsigned int zswap_entry_pool(const struct zswap_entry *e)
{
	return (unsigned int)((e->w >> ZE_POOL_SHIFT) & ZE_POOL_MASK);
}

/* The compressor whose pools hold a pool entry (ZE_COMPRESSED, ZE_RAW). */
static inline enum zswap_comp zswap_entry_comp(const struct zswap_entry *e)
{
	return (enum zswap_comp)((e->w >> ZE_COMP_SHIFT) & ZE_COMP_MASK);
}

static inline unsigned long zswap_entry_handle(const struct zswap_entry *e)
{
	return (unsigned long)((e->w >> ZE_HANDLE_SHIFT) & ZE_HANDLE_MASK) << 1 | 1ul;
}

/* A pool entry recompression has seen (zswap_recompress_entry). */
static inline bool zswap_entry_tried(const struct zswap_entry *e)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	return (t == ZE_COMPRESSED || t == ZE_RAW) && (e->w & ZE_TRIED_BIT);
}

/* A pool entry compressed with the recompression algorithm. */
static inline bool zswap_entry_recompressed(const struct zswap_entry *e)
{
	return zswap_entry_type(e) == ZE_COMPRESSED && (e->w & ZE_RECOMP_BIT);
}

/* The 8-byte word a ZE_SAME page repeats. */
static inline uint64_t zswap_entry_word(const struct zswap_entry *e)
{
	uint64_t v = e->w >> ZE_SAME_SHIFT;

	return v << 32 | v;
}

struct zswap_store_config {
	enum zswap_comp comp;		/* ZSWAP_COMPRESSOR at start (zswap_store_set_comp) */
	int level;			/* zstd level (1..19); ignored for lz4 (acceleration 1) and lzo */
	unsigned int order;		/* ZSWAP_ZSPAGE_ORDER, 2..4 */
	enum zs_lock_mode lock;		/* ZSWAP_POOL_LOCK */
	unsigned int nr_pools;		/* ZSWAP_NR_POOLS, 1..64: a page goes to its workspace's pool */
	uint64_t mem_limit;		/* bytes the pools may use, 0 = no limit */
	uint64_t accept_limit;		/* once mem_limit was hit, stores are refused until the
					 * pools are below this (zswap's accept_threshold_percent
					 * hysteresis); 0 = accept again as soon as below mem_limit */
	unsigned int nr_workspaces;	/* compressor workspaces made up front; 0 = a default */
	enum zswap_comp recomp;		/* ZSWAP_RECOMP_ALGORITHM: the second compressor */
	int recomp_level;
	bool refuse_poor;		/* ZSWAP_WRITEBACK=0 (memory.zswap.writeback 0): eviction's
					 * stores refuse a page that does not compress */
};

struct zswap_store;

/* Create a store. Allocates everything it will ever need from prim. NULL
 * with errno on a bad config (EINVAL) or no memory (ENOMEM). */
struct zswap_store *zswap_store_create(const struct zswap_store_config *cfg);
void zswap_store_destroy(struct zswap_store *s);

/* Store one PAGE_SIZE page. On success fills *e and returns 0. Errors:
 * -ENOMEM (pool allocation failed: reject_alloc_fail), -ENOSPC (mem_limit
 * reached: pool_limit_hit), -EIO (the compressor failed: reject_compress_fail).
 * A page that would not shrink is stored as-is (ZE_RAW), never rejected. */
int zswap_store_page(struct zswap_store *s, const void *page, struct zswap_entry *e);

/* The same for eviction, which may leave a page where it is: with
 * refuse_poor, a page that does not compress below PAGE_SIZE is refused,
 * -E2BIG (reject_compress_poor), as zswap_compress() refuses it for a memory
 * cgroup that does not write back; one that compresses to less, yet not
 * below the huge class, is stored as-is as ever. */
int zswap_store_page_evict(struct zswap_store *s, const void *page, struct zswap_entry *e);

/* Exclusive load: decompress *e into dst (PAGE_SIZE bytes) and free it, in
 * one step; afterwards *e is ZE_NONE and no compressed copy remains. Returns
 * 0, or -EIO when the data cannot be restored (decompress_fail; the entry is
 * freed all the same and dst must not be used). dst may be NULL only for a
 * same-filled zero entry (zswap_entry_is_zero), whose page the caller maps
 * itself. A ZE_BACKED entry is read from the tier (dst page-aligned) and its
 * slot freed; -EIO if it does not read back or verify. */
int zswap_load_page(struct zswap_store *s, struct zswap_entry *e, void *dst);

/* Drop a stored page without loading it (munmap, MADV_DONTNEED...). */
void zswap_invalidate(struct zswap_store *s, struct zswap_entry *e);

/* The second tier: the store writes back to it and loads from it. Set once,
 * before the first write-back (at start-up, or by the writer's thread when
 * writeback is turned on at run time); NULL (the default) for none. */
struct backing;
void zswap_store_set_backing(struct zswap_store *s, struct backing *b);

/* New pool limits (ZSWAP_MAX_POOL_*, the accept threshold) while it runs:
 * cfg.mem_limit and cfg.accept_limit as at creation. */
void zswap_store_set_limit(struct zswap_store *s, uint64_t mem_limit, uint64_t accept_limit);

/* mem_used_max starts again from the pool's size now (zram's mem_used_max
 * reset). */
void zswap_store_reset_max(struct zswap_store *s);
struct backing *zswap_store_backing(const struct zswap_store *s);

/* Write back a pool entry (ZE_COMPRESSED or ZE_RAW) to the tier: its page
 * is restored into buf (page-aligned scratch, PAGE_SIZE), written, and the
 * pool's copy freed; *e becomes ZE_BACKED. 0, or -ENOSPC / -EIO (the write
 * failed: *e is unchanged and still in the pool), -EINVAL (no tier, or not
 * a pool entry), -EBADMSG (the pool's copy cannot be restored: unchanged). */
int zswap_writeback_entry(struct zswap_store *s, struct zswap_entry *e, void *buf);

/* The same in two steps, for a batch written with backing_write_batch():
 * restore the page (0, -EINVAL, -EBADMSG), then commit the slot it was
 * written to (slot < 0: the write failed, counted; *e is unchanged). */
int zswap_writeback_restore(struct zswap_store *s, const struct zswap_entry *e, void *buf);
void zswap_writeback_commit(struct zswap_store *s, struct zswap_entry *e, int64_t slot);

/* A fork child's own file for what it writes back (b, open and writable),
 * beside the files it inherited, which it only reads. False when no index
 * is left (ZE_TIERS): the child then writes nothing back. */
bool zswap_store_fork_tier(struct zswap_store *s, struct backing *b);

/* Exclusive load of n (at most 64) ZE_BACKED entries whose slots follow
 * each other (e[k]'s is e[0]'s + k) into dst, n pages, with one read:
 * readahead from the tier. Every entry is freed; returns the pages that
 * failed to read or verify (bit k: e[k]), 0 when none did. */
uint64_t zswap_load_backed_run(struct zswap_store *s, struct zswap_entry *const *e, size_t n, void *dst);

/* Make e the entry of a page whose data is lost (read back from the tier
 * where its fault could not be answered with a poison at once): it holds
 * nothing, frees nothing, and every load of it fails, so that the page's
 * own fault poisons it. */
void zswap_entry_mark_lost(struct zswap_entry *e);

/* Read a ZE_BACKED entry's page into dst without freeing it (fork's frozen
 * state serves pages so; so does a refault that keeps the slot). 0, or -EIO. */
int zswap_read_backed(struct zswap_store *s, const struct zswap_entry *e, void *dst);

/* zswap_load_backed_run without freeing: the entries and their slots stay. */
uint64_t zswap_read_backed_run(struct zswap_store *s, struct zswap_entry *const *e, size_t n, void *dst);

/*
 * The swap cache, for the second tier. The kernel keeps a page read back
 * from swap in its swap slot as long as the page stays clean and swap is
 * not half full: evicted again unchanged, it is dropped without a write.
 * zswap_backed_keepable: whether a ZE_BACKED entry's slot may be kept for
 * the page being read back (its file less than half full of its cap);
 * zswap_backed_same: whether page is still what the entry's slot holds
 * (backing_same: a 128-bit digest, no read).
 */
bool zswap_backed_keepable(const struct zswap_store *s, const struct zswap_entry *e);
bool zswap_backed_same(const struct zswap_store *s, const struct zswap_entry *e, const void *page);
/* This process's tier file is at least half full: kept slots go back. */
bool zswap_swap_full(const struct zswap_store *s);

/* The swap_cached_pages gauge and swap_cached_reclaimed: n slots kept for
 * pages read back; a kept slot freed (the page changed, left or went);
 * a page evicted again unchanged to the slot it kept (then an ordinary
 * ZE_BACKED entry). */
void zswap_kept_add(struct zswap_store *s, unsigned int n);
void zswap_kept_release(struct zswap_store *s, struct zswap_entry *e);
void zswap_kept_reclaimed(struct zswap_store *s);

static inline bool zswap_entry_is_zero(const struct zswap_entry *e)
{
	return e->w == ZE_SAME;
}

/* Fill the store's part of a statistics snapshot (the zswap, vmstat and
 * mm_stat fields); engine fields are left untouched. */
void zswap_store_stats(struct zswap_store *s, struct zswap_stats *st);

/* Whether a store of a page that is not same-filled would be accepted now
 * by the pool limit (mem_limit and its hysteresis); updates the hysteresis
 * as a store would. For reclaim, so it does not compress pages the store
 * would refuse. */
bool zswap_store_accepting(struct zswap_store *s);

/*
 * Recompression (zram's recompress): compress pool entry *e again with the
 * second algorithm and keep the result only when it lands in a smaller size
 * class. The caller owns the entry (no load or invalidate meanwhile).
 * Entries of fewer than threshold bytes, huge_only and not held whole, or
 * tried before, are skipped. Returns ZSWAP_RECOMP_DONE (*e names the new
 * object), ZSWAP_RECOMP_KEPT (no smaller class: *e is as it was, marked
 * tried), ZSWAP_RECOMP_SKIP, or -EIO (the page could not be restored or the
 * compressor failed: *e as it was, marked tried) / -ENOMEM (no room for the
 * new object: *e as it was, not marked).
 */
enum { ZSWAP_RECOMP_SKIP, ZSWAP_RECOMP_DONE, ZSWAP_RECOMP_KEPT };
int zswap_recompress_entry(struct zswap_store *s, struct zswap_entry *e, size_t threshold, bool huge_only);

/* Whether page compresses below PAGE_SIZE at all with the store's
 * compressor (zram's incompressible pages do not): writeback's
 * "incompressible" asks it of pages held whole. */
bool zswap_store_page_shrinks(struct zswap_store *s, const void *page);

/* Pages in the pool now that save less than a quarter of a page
 * (zswap_entry_poor: those held as-is included), without a whole snapshot:
 * the reclaimer asks at every step. */
uint64_t zswap_store_poor_pages(struct zswap_store *s);

/* The pool is full and writeback could make no room in it (zswap's
 * reject_reclaim_fail: its shrink worker failed while stores were being
 * refused). Counted by the caller that tried. */
void zswap_store_reclaim_failed(struct zswap_store *s);

/* Compact every pool; returns pages freed. */
unsigned long zswap_store_compact(struct zswap_store *s);

/* The same, stopping once about max_pages pages are freed. */
unsigned long zswap_store_compact_some(struct zswap_store *s, unsigned long max_pages);

/* Decommit every pool's reserve of emptied zspages (zs_release_reserve). */
void zswap_store_release_reserve(struct zswap_store *s);

/* The floor of every pool's reserve, those made later too
 * (zs_set_reserve_min). */
void zswap_store_set_reserve_min(struct zswap_store *s, unsigned long pages);

/* Pages compaction could free now, over every pool. */
unsigned long zswap_store_freeable_pages(struct zswap_store *s);

/* The current compressor's pool (index), for tests and benchmarks. */
struct zs_pool *zswap_store_pool(struct zswap_store *s, unsigned int index);

/* How many pools each compressor has (ZSWAP_NR_POOLS; indices 0 .. n-1). */
unsigned int zswap_store_nr_pools(const struct zswap_store *s);

/* The pool a pool entry (ZE_COMPRESSED, ZE_RAW) is in, NULL for any other:
 * valid as long as the entry is. */
struct zs_pool *zswap_store_entry_pool(struct zswap_store *s, const struct zswap_entry *e);

/* Over every pool of every compressor in use: the pages and the metadata
 * bytes (the running totals, taking no lock), and class index's row summed
 * (false when the class is merged into a larger one; safe against a
 * compressor's pools going meanwhile). */
uint64_t zswap_store_pool_pages(struct zswap_store *s);
uint64_t zswap_store_meta_bytes(struct zswap_store *s);
bool zswap_store_class_stat(struct zswap_store *s, unsigned int index, struct zs_class_stat *sum);

/*
 * ZSWAP_COMPRESSOR at run time (the kernel's zswap_compressor parameter):
 * from now on pages are stored with comp/level into its own pools, made
 * here unless pages of comp are still held (their pools then take the new
 * ones too; a new zstd level only remakes the workspaces). The pools of
 * the compressor before stay until their last page goes. Not on a fault
 * path: it allocates (prim) and waits for every workspace. 0, -EINVAL (an
 * unknown compressor), -ENOPKG (its library is missing: comp_missing) or
 * -ENOMEM (nothing changed).
 */
int zswap_store_set_comp(struct zswap_store *s, enum zswap_comp comp, int level);

/* Free the pools and workspaces of every compressor but the current one
 * that holds no page any more; returns how many compressors it freed. A
 * quick test when no old compressor is left. Not on a fault path. */
unsigned int zswap_store_reap(struct zswap_store *s);

/* Whether a compressor besides the current one is in use (a load). */
bool zswap_store_reap_due(const struct zswap_store *s);

/* One compressor's pools, for the dump: its name and level, the pages its
 * pools hold (same-filled pages are in none) and their size in bytes. */
struct zswap_store_comp_stat {
	enum zswap_comp comp;
	int level;
	bool current;
	uint64_t stored_pages;
	uint64_t pool_total_size;
};

/* Fill out[] with the compressors in use, the current one first; returns
 * how many. *freed: how many compressors' pools were freed since start. */
unsigned int zswap_store_comp_stats(struct zswap_store *s, struct zswap_store_comp_stat out[ZSWAP_COMP_KINDS],
				    uint64_t *freed);

/* The pages the store holds: entries in its pools (same-filled ones
 * included) and slots in use in its tiers (kept ones included). Exact only
 * while nothing is stored or loaded meanwhile (the fork's freeze).
 * zswap_store_empty: none. */
uint64_t zswap_store_held(struct zswap_store *s);
bool zswap_store_empty(struct zswap_store *s);

/* The fork child's lock of the compressors' pools, made afresh (a thread of
 * the parent may have held it at the copy). */
void zswap_store_fork_child(struct zswap_store *s);

/* Test hooks: make the next n operations of a kind fail, so that each
 * failure path can be exercised (ZSWAP_INJECT_*_FAIL): DECOMPRESS, loads
 * of pool-held pages (ZE_COMPRESSED or ZE_RAW; same-filled pages have no
 * data to corrupt) fail as if the data were corrupt; COMPRESS, the
 * compressor fails (reject_compress_fail); ALLOC, the pool has no memory
 * for the object (reject_alloc_fail). */
enum zswap_inject { ZSWAP_INJECT_DECOMPRESS, ZSWAP_INJECT_COMPRESS, ZSWAP_INJECT_ALLOC, ZSWAP_INJECT__COUNT };
void zswap_store_inject(struct zswap_store *s, enum zswap_inject kind, unsigned int n);

#endif
