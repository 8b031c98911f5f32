/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zsmalloc.h - a zsmalloc-style allocator for compressed pages, in user space.
 *
 * The size classes are the kernel's (mm/zsmalloc.c with patches 1-5 of the
 * "configurable zspage size" series): ZS_ALIGN 8, an 8-byte handle header
 * added to every request before the class lookup, 32-byte minimum, classes
 * every PAGE_SIZE >> 8 = 16 bytes up to PAGE_SIZE (255 classes), pages per
 * zspage chosen per class by get_pages_per_zspage() over 1 .. 2^order pages,
 * equal classes merged into the larger, and a huge class watermark of 3264,
 * 3632 and 3840 bytes for orders 2, 3 and 4.
 *
 * All functions are thread-safe. None calls malloc after zs_create_pool().
 */
#ifndef ZSWAP_ZSMALLOC_H
#define ZSWAP_ZSMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/prim.h"

#define ZS_MIN_PAGE_ORDER	2
#define ZS_MAX_PAGE_ORDER	4
#define ZS_DEFAULT_PAGE_ORDER	3
#define ZS_MAX_PAGES_PER_ZSPAGE	(1U << ZS_MAX_PAGE_ORDER)

#define ZS_ALIGN		8
#define ZS_HANDLE_SIZE		8
/* Handles are odd and below 2^ZS_HANDLE_BITS (a 32-bit slot index, a class
 * index, a tag bit): the store packs them into its 8-byte entries. */
#define ZS_HANDLE_BITS		41
#define ZS_MIN_ALLOC_SIZE	32
#define ZS_MAX_ALLOC_SIZE	ZS_PAGE_SIZE
#define ZS_SIZE_CLASS_DELTA	(ZS_PAGE_SIZE >> 8)
#define ZS_SIZE_CLASSES		(((ZS_MAX_ALLOC_SIZE - ZS_MIN_ALLOC_SIZE) + ZS_SIZE_CLASS_DELTA - 1) \
				 / ZS_SIZE_CLASS_DELTA + 1)

/* How the pool serialises: one lock per size class (the kernel since 6.11,
 * one lock per class), or one lock for the whole pool (the kernel's
 * consolidation of zsmalloc's locks into the pool's). */
enum zs_lock_mode {
	ZS_LOCK_CLASS = 0,
	ZS_LOCK_POOL = 1,
};

struct zs_pool;

/* Create a pool whose zspages hold up to 2^order pages (order 2..4). The
 * pool's memory comes from prim (never malloc). NULL on bad order or ENOMEM. */
struct zs_pool *zs_create_pool(const char *name, unsigned int order, enum zs_lock_mode mode);

/* Free every zspage and the pool itself. No object may be in use. */
void zs_destroy_pool(struct zs_pool *pool);

/* Allocate an object of size bytes (1 .. ZS_MAX_ALLOC_SIZE). Returns an opaque
 * non-zero handle, or 0 when memory is exhausted (errno ENOMEM) or size is
 * out of range (errno EINVAL). */
unsigned long zs_malloc(struct zs_pool *pool, size_t size);

/* Free an object. The handle must not be mapped. */
void zs_free(struct zs_pool *pool, unsigned long handle);

/* Map an object: returns a pointer to its size bytes, valid until
 * zs_unmap_object(). A mapped object is never moved by compaction. Objects
 * never straddle a mapping boundary (zspages are virtually contiguous), so
 * map never copies. */
void *zs_map_object(struct zs_pool *pool, unsigned long handle);
void zs_unmap_object(struct zs_pool *pool, unsigned long handle);

/* Object sizes at or above this (before the handle header is added) land in
 * the huge class, one object per page: the kernel's zs_huge_class_size(). */
size_t zs_huge_class_size(const struct zs_pool *pool);

/* The index of the class an object of size bytes lands in (merged classes
 * share one): recompression keeps a smaller object only when its class is
 * smaller, since within one class it frees nothing. */
unsigned int zs_class_of(const struct zs_pool *pool, size_t size);

/* The size of the largest class that still shares pages (3264/3632/3840). */
size_t zs_huge_class_watermark(const struct zs_pool *pool);

/* Move objects out of sparse zspages into fuller ones and free the emptied
 * zspages. Safe against concurrent zs_malloc/zs_free/zs_map_object.
 * Returns the number of pages freed (also added to pages_compacted). */
unsigned long zs_compact(struct zs_pool *pool);

/* The same, stopping once about max_pages pages are freed (a class's round
 * may free a whole zspage past it): for a caller that must not hold off
 * others for the whole pool's compaction. */
unsigned long zs_compact_some(struct zs_pool *pool, unsigned long max_pages);

/* Decommit the reserve (below): for a pool whose owner has gone quiet. */
void zs_release_reserve(struct zs_pool *pool);

/* The reserve's floor in pages (ZS_RESERVE_MIN_PAGES at creation): 0 for a
 * pool whose memory counts in a limit, where the reserve is then 1/64 of
 * the pool's pages; trims the reserve to the new bound at once. */
#define ZS_RESERVE_MIN_PAGES	((1UL << 20) / ZS_PAGE_SIZE)
void zs_set_reserve_min(struct zs_pool *pool, unsigned long pages);

/* Pages compaction could free now (the kernel's zs_can_compact() summed
 * over the classes; each class lock taken in turn). */
unsigned long zs_get_freeable_pages(struct zs_pool *pool);

/* Pages (4 KiB) held by the pool's zspages now. */
unsigned long zs_get_total_pages(const struct zs_pool *pool);

/* Pages freed by compaction since the pool was created. */
unsigned long zs_get_pages_compacted(const struct zs_pool *pool);

/* Bytes of metadata the pool keeps besides zspages: the pages of its handle
 * tables and zspage descriptors touched so far (they never shrink) and the
 * pool structure. Not pool pages: the kernel keeps the equivalent in struct
 * page and a kmem cache and does not count it in zs_get_total_pages().
 * O(1): one read. */
size_t zs_get_metadata_bytes(const struct zs_pool *pool);

/* Pages of emptied zspages kept committed for reuse (the reserve: at most
 * max(the floor, zs_get_total_pages() / 64) once a free settles it; emptied
 * by zs_compact()). Neither pool pages nor metadata, yet resident. */
unsigned long zs_get_reserve_pages(const struct zs_pool *pool);

/* The order the pool was created with. */
unsigned int zs_get_order(const struct zs_pool *pool);

/* The kernel's fullness columns: zspages by inuse ratio, 100 * inuse /
 * objs_per_zspage. Column k (0..9, headed "10%" .. "90%", "99%") counts the
 * zspages in use whose ratio is 10k .. 10k+9; column 10 ("100%") the full
 * ones (ZS_INUSE_RATIO_10 .. ZS_INUSE_RATIO_100). */
#define ZS_INUSE_COLUMNS	11

/* One row of the kernel's debugfs "classes" file. */
struct zs_class_stat {
	unsigned int index;
	unsigned int size;
	unsigned long inuse_ratio[ZS_INUSE_COLUMNS];
	unsigned long obj_allocated;
	unsigned long obj_used;
	unsigned long pages_used;
	unsigned int pages_per_zspage;
	unsigned long freeable;
	unsigned int objs_per_zspage;
};

/* Fill *st for class index (0 .. ZS_SIZE_CLASSES-1). Returns false when that
 * index is merged into a larger class (the kernel skips those rows). */
bool zs_class_stat(struct zs_pool *pool, unsigned int index, struct zs_class_stat *st);

/* The kernel's per-class geometry, without a pool: pages per zspage chosen by
 * get_pages_per_zspage() for class_size at the given order. */
unsigned int zs_pages_per_zspage(unsigned int class_size, unsigned int order);

#endif
