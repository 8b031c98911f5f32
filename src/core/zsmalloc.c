/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zsmalloc.c - the pool: size classes, zspages, fullness groups, compaction.
 *
 * Data layout
 * -----------
 * A pool owns three reserved ranges (prim_alloc, MAP_NORESERVE: only what is
 * touched is backed), and one small prim_alloc'ed struct zs_pool:
 *
 *   arena        up to 64 GiB of address space. Zspages are runs of
 *                pages_per_zspage contiguous 4 KiB pages carved from it by a
 *                bump pointer. A run is never split or merged: once carved it
 *                keeps its length and its descriptor for the pool's life. An
 *                emptied run is parked for any class of that length to reuse,
 *                on one of two lists per length: "warm" (still committed: the
 *                reserve) or "cold" (decommitted with MADV_DONTNEED: RSS fell).
 *   descriptors  struct zspage[], one per run ever carved, indexed by the
 *                zspage id. Its base, npages and id never change once written,
 *                which is what lets zs_map_object() read them without a lock.
 *   handle space one table of 64-bit slots per kept size class. A slot holds
 *                the location of one object.
 *
 * What a handle encodes (an opaque unsigned long, never 0):
 *
 *   bit 0       1 (ZS_OBJ_TAG): a handle is never 0 and never looks like a
 *               free-object link
 *   bits 1..8   size class index (the kept class, 0..254)
 *   bits 9..    slot index in that class's handle table
 *
 * So a handle never changes when compaction moves its object: only the slot
 * does. Handle slots are allocated and freed under the class lock (free
 * slots form a list threaded through the slots), so with ZS_LOCK_CLASS two
 * classes never contend on anything.
 *
 * A slot holds  (zspage id << 17) | (object index << 1) | 1  while allocated,
 * and (next free slot << 1) while free.
 *
 * Objects. An object of class size S is S bytes at base + index * S. Its
 * first ZS_HANDLE_SIZE bytes hold its handle (bit 0 set), so compaction can
 * walk a zspage and find which handle to repoint; the caller's bytes follow
 * (zs_map_object returns base + index * S + 8). A free object's first word
 * is the index of the next free object << 1 (bit 0 clear). zs_malloc adds
 * ZS_HANDLE_SIZE to the request before the class lookup, as the kernel does.
 * The huge class (one object per one-page zspage) has no room for the
 * header: its handle lives in the zspage descriptor instead and the caller's
 * bytes start at offset 0.
 *
 * Why ZS_ALIGN is 8: every class size is a multiple of 16 (ZS_SIZE_CLASS_DELTA)
 * and the minimum is 32, so every object and its 8-byte header word are
 * naturally aligned and the header/link word is read and written as one
 * aligned 64-bit word. Since zspages are virtually contiguous, no object
 * ever straddles a mapping boundary: zs_map_object never copies (the kernel
 * must, for objects spanning two physical pages).
 *
 * The reserve. Decommitting every emptied run and faulting its pages in again
 * when the run is reused is a sizeable share of a store+load (docs/DESIGN.md,
 * "The store"): one madvise, with a TLB-shootdown IPI when the process runs on
 * several CPUs, plus one page fault per page. So up to reserve_min pages
 * (ZS_RESERVE_MIN_PAGES unless zs_set_reserve_min said otherwise) or
 * 1/2^ZS_RESERVE_SHIFT of the pool's pages, whichever is larger, of emptied
 * runs stay committed on the warm lists and are reused first; a run emptied
 * beyond that is decommitted, and when the pool shrinks the reserve is trimmed
 * to the new bound, so RSS still falls when a sizeable amount is freed.
 * zs_compact() empties the reserve: whoever compacts wants memory back.
 * Reserve pages are not pool pages (zs_get_total_pages()), as the kernel's
 * freed zspage pages are not; zs_get_reserve_pages() tells how many there are.
 *
 * Objects [0, bump) of a zspage have been handed out at least once; objects
 * past bump are untouched, so a fresh zspage costs no initialisation writes
 * and its pages are backed one by one as objects land on them.
 *
 * Fullness groups. The kernel's newer ten-group scheme (6.3+): a zspage with
 * inuse of objs_per_zspage objects in use is in
 *   ZS_INUSE_RATIO_0    inuse == 0 (transient: the zspage is released at once)
 *   ZS_INUSE_RATIO_10 .. ZS_INUSE_RATIO_99
 *                       group 1 + (100 * inuse / objs_per_zspage) / 10
 *   ZS_INUSE_RATIO_100  full
 * Allocation takes the first zspage of the fullest non-full group (at most
 * ten list heads to look at), so the pool packs objects into few zspages;
 * compaction moves objects from the sparsest zspages into the fullest. Each
 * class counts its zspages per group as they change group (the kernel's
 * class_stat_inc in insert_zspage): the debugfs columns 10% .. 100%.
 *
 * Locking. ZS_LOCK_CLASS: one mutex per kept size class (merged classes share
 * it); ZS_LOCK_POOL: every class points at the pool's one mutex. The class
 * lock covers the class's lists, zspage inuse/free lists, handle table and
 * statistics. Free runs have a lock per run length, taken inside a class
 * lock (never the other way round). Locks are held only inside this file,
 * never across a call out, and never across a syscall: decommitting an
 * emptied zspage happens after the class lock is dropped.
 *
 * Mapping versus compaction. zspage->mapcount counts mapped objects, or is -1
 * while compaction moves objects out of the zspage. zs_map_object reads the
 * slot, increments mapcount unless it is -1, and re-reads the slot: if the
 * object is still there it is pinned (compaction's 0 -> -1 exchange fails on
 * a pinned zspage, and such a zspage is skipped as a source). In
 * ZS_LOCK_CLASS mode this takes no lock at all; in ZS_LOCK_POOL mode it runs
 * under the pool lock, as the kernel's zs_map_object does when one lock
 * guards the whole pool.
 * zs_unmap_object only decrements.
 */
#include "config.h"
#include "core/zsmalloc.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "base/log.h"

#define ZS_ARENA_MAX_BYTES	(64UL << 30)
#define ZS_ARENA_MIN_BYTES	(1UL << 30)

/* Emptied runs kept committed: at most max(the floor, pool pages / 64). */
#define ZS_RESERVE_SHIFT	6

#define ZS_OBJ_TAG		1UL
#define ZS_HANDLE_CLASS_SHIFT	1
#define ZS_HANDLE_CLASS_MASK	0xffUL
#define ZS_HANDLE_SLOT_SHIFT	9
#define ZS_LOC_IDX_SHIFT	1
#define ZS_LOC_IDX_MASK		0xffffUL
#define ZS_LOC_ID_SHIFT		17

#define ZS_OBJ_NONE		0xffffU
#define ZS_SLOT_NONE		UINT32_MAX

enum zs_fullness_group {
	ZS_INUSE_RATIO_0 = 0,
	ZS_INUSE_RATIO_10 = 1,
	/* groups 2 .. 9: 20% .. 90% */
	ZS_INUSE_RATIO_99 = 10,
	ZS_INUSE_RATIO_100 = 11,
	ZS_NR_FULLNESS_GROUPS = 12,
};
_Static_assert(ZS_INUSE_RATIO_100 - ZS_INUSE_RATIO_10 + 1 == ZS_INUSE_COLUMNS,
	       "the classes table has a column per group in use");

struct zspage {
	struct zspage *next;	/* fullness list of its class, or free-run list */
	struct zspage *prev;
	char *base;		/* first byte of the run: written once, at carving */
	unsigned long huge_handle; /* huge class: the one object's handle */
	uint32_t id;		/* index in the descriptor table: written once */
	uint16_t npages;	/* run length: written once */
	uint16_t class_idx;
	uint16_t inuse;
	uint16_t bump;		/* objects [0, bump) have been handed out */
	uint16_t freelist;	/* first free object below bump, or ZS_OBJ_NONE */
	uint8_t fullness;	/* enum zs_fullness_group */
	_Atomic int mapcount;	/* mapped objects; -1 while compaction empties it */
};

struct size_class {
	pthread_mutex_t *lock;	/* &own_lock, or the pool lock in ZS_LOCK_POOL mode */
	struct zspage *fullness_list[ZS_NR_FULLNESS_GROUPS];
	unsigned int size;
	unsigned int index;
	unsigned int pages_per_zspage;
	unsigned int objs_per_zspage;
	bool huge;

	/* statistics, under lock */
	unsigned long obj_allocated;
	unsigned long obj_used;
	unsigned long nr_zspages[ZS_NR_FULLNESS_GROUPS];	/* listed zspages per group */

	/* handle table, under lock (slot contents are also read by map):
	 * slot i at slots[(i / ZS_SLOTS_PER_PAGE) * slot_stride + i % ZS_SLOTS_PER_PAGE] */
	_Atomic uint64_t *slots;
	size_t slot_stride;
	uint32_t slot_cap;
	uint32_t slot_free;		/* head of the free-slot list */
	_Atomic uint32_t slot_top;	/* slots [0, top) have been used */

	pthread_mutex_t own_lock;
} __attribute__((aligned(64)));

struct zs_pool {
	char name[32];
	unsigned int order;
	enum zs_lock_mode mode;
	size_t huge_class_size;		/* zs_huge_class_size() */
	size_t huge_watermark;		/* size of the largest class sharing pages */

	struct size_class *size_class[ZS_SIZE_CLASSES];
	struct size_class classes[ZS_SIZE_CLASSES];
	pthread_mutex_t pool_lock;

	/* arena: runs carved by a bump pointer (in pages) */
	char *arena;
	size_t arena_bytes;
	size_t arena_pages;
	_Atomic size_t arena_top;

	/* descriptors: one per carved run */
	struct zspage *descs;
	size_t descs_bytes;
	_Atomic uint32_t desc_top;

	/* free runs, two lists and one lock per run length. Written whenever a
	 * zspage is made or emptied, so on lines of their own: the read-mostly
	 * fields above (descs, arena) are read by every map and free. */
	struct zspage *warm_runs[ZS_MAX_PAGES_PER_ZSPAGE + 1]	/* committed: the reserve */
		__attribute__((aligned(64)));
	struct zspage *cold_runs[ZS_MAX_PAGES_PER_ZSPAGE + 1];	/* decommitted */
	pthread_mutex_t run_lock[ZS_MAX_PAGES_PER_ZSPAGE + 1];
	_Atomic unsigned long reserve_pages;	/* pages of the runs on warm lists */
	_Atomic unsigned long reserve_min;	/* the reserve's floor (zs_set_reserve_min) */

	_Atomic uint64_t *handle_space;
	size_t handle_space_bytes;

	_Atomic unsigned long pages_allocated __attribute__((aligned(64)));
	_Atomic unsigned long pages_compacted;
	size_t pool_bytes;
	/* Pages of handle tables and descriptors touched so far (they only
	 * grow), in bytes: counted as they are first used, so that
	 * zs_get_metadata_bytes() is one read. */
	_Atomic size_t meta_bytes;
};

/* ---- geometry ---------------------------------------------------------- */

/*
 * The kernel's get_pages_per_zspage() with the configurable zspage order: the
 * number of pages (1 .. 2^order) whose zspage wastes the smallest share of
 * its bytes, the first one to reach the best used percentage, stopping at a
 * perfect fit.
 */
unsigned int zs_pages_per_zspage(unsigned int class_size, unsigned int order)
{
	unsigned int max_pages = 1U << order;
	unsigned int best = 1, max_usedpc = 0;

	if (class_size == 0)
		return 1;
	for (unsigned int i = 1; i <= max_pages; i++) {
		unsigned int zspage_size = i * (unsigned int)ZS_PAGE_SIZE;
		unsigned int waste = zspage_size % class_size;
		unsigned int usedpc = (zspage_size - waste) * 100 / zspage_size;

		if (usedpc > max_usedpc) {
			max_usedpc = usedpc;
			best = i;
		}
		if (usedpc == 100)
			break;
	}
	return best;
}

/* The class index for a request that already includes the handle header. */
static unsigned int zs_class_index(size_t size)
{
	unsigned int idx = 0;

	if (size > ZS_MIN_ALLOC_SIZE)
		idx = (unsigned int)((size - ZS_MIN_ALLOC_SIZE + ZS_SIZE_CLASS_DELTA - 1) /
				     ZS_SIZE_CLASS_DELTA);
	return idx < ZS_SIZE_CLASSES - 1 ? idx : ZS_SIZE_CLASSES - 1;
}

static unsigned int zs_fullness(const struct size_class *class, unsigned int inuse)
{
	if (inuse == 0)
		return ZS_INUSE_RATIO_0;
	if (inuse == class->objs_per_zspage)
		return ZS_INUSE_RATIO_100;
	/* Integer division: 1 of 127 is 0%, yet belongs to the 10% group. */
	return 1 + (100 * inuse / class->objs_per_zspage) / 10;
}

/* ---- locks ------------------------------------------------------------- */

static void zs_lock_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	/* Critical sections are short: spin a little before sleeping. */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
}

static inline void zs_lock(struct size_class *class)
{
	pthread_mutex_lock(class->lock);
}

static inline void zs_unlock(struct size_class *class)
{
	pthread_mutex_unlock(class->lock);
}

/* ---- handles, locations, objects -------------------------------------- */

_Static_assert(ZS_HANDLE_SLOT_SHIFT + 32 <= ZS_HANDLE_BITS, "handles outgrow ZS_HANDLE_BITS");

static inline unsigned long zs_make_handle(const struct size_class *class, uint32_t slot)
{
	return ((unsigned long)slot << ZS_HANDLE_SLOT_SHIFT) |
	       ((unsigned long)class->index << ZS_HANDLE_CLASS_SHIFT) | ZS_OBJ_TAG;
}

static inline uint32_t zs_handle_slot(unsigned long handle)
{
	return (uint32_t)(handle >> ZS_HANDLE_SLOT_SHIFT);
}

/* The class a handle belongs to; a handle that cannot be ours aborts. */
static struct size_class *zs_handle_class(struct zs_pool *pool, unsigned long handle)
{
	unsigned long ci = (handle >> ZS_HANDLE_CLASS_SHIFT) & ZS_HANDLE_CLASS_MASK;
	struct size_class *class;

	ZS_CHECK(handle & ZS_OBJ_TAG);
	ZS_CHECK(ci < ZS_SIZE_CLASSES);
	class = pool->size_class[ci];
	ZS_CHECK(class->index == ci);
	ZS_CHECK(zs_handle_slot(handle) < class->slot_cap);
	return class;
}

static inline uint64_t zs_make_loc(const struct zspage *zspage, unsigned int idx)
{
	return ((uint64_t)zspage->id << ZS_LOC_ID_SHIFT) |
	       ((uint64_t)idx << ZS_LOC_IDX_SHIFT) | ZS_OBJ_TAG;
}

static inline struct zspage *zs_loc_zspage(struct zs_pool *pool, uint64_t loc)
{
	return &pool->descs[loc >> ZS_LOC_ID_SHIFT];
}

static inline unsigned int zs_loc_idx(uint64_t loc)
{
	return (unsigned int)((loc >> ZS_LOC_IDX_SHIFT) & ZS_LOC_IDX_MASK);
}

static inline char *zs_obj_addr(const struct size_class *class, const struct zspage *zspage,
				unsigned int idx)
{
	return zspage->base + (size_t)idx * class->size;
}

static inline uint64_t *zs_obj_header(const struct size_class *class,
				      const struct zspage *zspage, unsigned int idx)
{
	return (uint64_t *)(void *)zs_obj_addr(class, zspage, idx);
}

/*
 * The handle tables of a pool's classes, page by page interleaved: page p
 * of every class, then page p + 1 of every class. Each class's table alone
 * (its slots contiguous, one table after the other) put the first page of
 * each in a 2 MiB range of its own, and each such page cost a page of page
 * tables too (VmPTE, which memcg charges and so does the limit): about
 * 400 KiB of page tables in every process that stored a page.
 */
#define ZS_SLOTS_PER_PAGE	(ZS_PAGE_SIZE / sizeof(uint64_t))

static inline _Atomic uint64_t *zs_slot(const struct size_class *class, uint32_t slot)
{
	return class->slots + (slot / ZS_SLOTS_PER_PAGE) * class->slot_stride + slot % ZS_SLOTS_PER_PAGE;
}

/* Take a slot from the class's handle table; ZS_SLOT_NONE when it is full. */
static uint32_t zs_slot_alloc(struct zs_pool *pool, struct size_class *class)
{
	uint32_t slot = class->slot_free;

	if (slot != ZS_SLOT_NONE) {
		uint64_t w = atomic_load_explicit(zs_slot(class, slot), memory_order_relaxed);

		ZS_CHECK(!(w & ZS_OBJ_TAG));
		class->slot_free = (uint32_t)(w >> 1);
		return slot;
	}
	slot = atomic_load_explicit(&class->slot_top, memory_order_relaxed);
	if (slot >= class->slot_cap)
		return ZS_SLOT_NONE;
	atomic_store_explicit(&class->slot_top, slot + 1, memory_order_relaxed);
	/* The first slot of a page of the table: that page becomes metadata. */
	if ((slot * sizeof(uint64_t)) % ZS_PAGE_SIZE == 0)
		atomic_fetch_add_explicit(&pool->meta_bytes, ZS_PAGE_SIZE, memory_order_relaxed);
	return slot;
}

static void zs_slot_free(struct size_class *class, uint32_t slot)
{
	atomic_store_explicit(zs_slot(class, slot), (uint64_t)class->slot_free << 1,
			      memory_order_relaxed);
	class->slot_free = slot;
}

/* Take a free object index from a non-full zspage. */
static unsigned int zs_obj_take(const struct size_class *class, struct zspage *zspage)
{
	unsigned int idx = zspage->freelist;

	if (idx != ZS_OBJ_NONE) {
		if (!class->huge) {
			uint64_t link = *zs_obj_header(class, zspage, idx);

			ZS_CHECK(!(link & ZS_OBJ_TAG));
			zspage->freelist = (uint16_t)(link >> 1);
		} else {
			zspage->freelist = ZS_OBJ_NONE;
		}
		return idx;
	}
	ZS_CHECK(zspage->bump < class->objs_per_zspage);
	return zspage->bump++;
}

/* Return object idx to its zspage's free list. */
static void zs_obj_put(const struct size_class *class, struct zspage *zspage, unsigned int idx)
{
	if (!class->huge)
		*zs_obj_header(class, zspage, idx) = (uint64_t)zspage->freelist << 1;
	zspage->freelist = (uint16_t)idx;
}

/* ---- fullness lists ---------------------------------------------------- */

static void zs_list_add(struct size_class *class, struct zspage *zspage, unsigned int fg)
{
	struct zspage *head = class->fullness_list[fg];

	zspage->prev = NULL;
	zspage->next = head;
	if (head)
		head->prev = zspage;
	class->fullness_list[fg] = zspage;
	zspage->fullness = (uint8_t)fg;
	class->nr_zspages[fg]++;
}

static void zs_list_del(struct size_class *class, struct zspage *zspage)
{
	if (zspage->prev)
		zspage->prev->next = zspage->next;
	else
		class->fullness_list[zspage->fullness] = zspage->next;
	if (zspage->next)
		zspage->next->prev = zspage->prev;
	zspage->next = zspage->prev = NULL;
	class->nr_zspages[zspage->fullness]--;
}

/* Move a listed zspage to the group its inuse now says. */
static void zs_fix_fullness(struct size_class *class, struct zspage *zspage)
{
	unsigned int fg = zs_fullness(class, zspage->inuse);

	if (fg != zspage->fullness) {
		zs_list_del(class, zspage);
		zs_list_add(class, zspage, fg);
	}
}

/* The first zspage of the fullest group that still has room, or NULL. */
static struct zspage *zs_find_fullest(struct size_class *class)
{
	for (int fg = ZS_INUSE_RATIO_99; fg >= ZS_INUSE_RATIO_10; fg--)
		if (class->fullness_list[fg])
			return class->fullness_list[fg];
	return NULL;
}

/* ---- runs: the arena's free lists ------------------------------------- */

static size_t zs_page_round(size_t n)
{
	return (n + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
}

/* How many pages of emptied runs may stay committed, for the pool's size now. */
static unsigned long zs_reserve_limit(const struct zs_pool *pool)
{
	unsigned long p = atomic_load_explicit(&pool->pages_allocated, memory_order_relaxed);
	unsigned long min = atomic_load_explicit(&pool->reserve_min, memory_order_relaxed);

	p >>= ZS_RESERVE_SHIFT;
	return p > min ? p : min;
}

static void zs_run_push(struct zspage **list, struct zspage *z)
{
	z->prev = NULL;
	z->next = *list;
	*list = z;
}

static struct zspage *zs_run_pop(struct zspage **list)
{
	struct zspage *z = *list;

	if (z) {
		*list = z->next;
		z->next = NULL;
	}
	return z;
}

/* A run of npages pages with its descriptor: a committed one from the
 * reserve, else a decommitted one, else carved from the arena. */
static struct zspage *zs_run_get(struct zs_pool *pool, unsigned int npages)
{
	struct zspage *z;
	size_t top, desc_before, desc_after;
	uint32_t id;

	pthread_mutex_lock(&pool->run_lock[npages]);
	z = zs_run_pop(&pool->warm_runs[npages]);
	if (z)
		atomic_fetch_sub_explicit(&pool->reserve_pages, npages, memory_order_relaxed);
	else
		z = zs_run_pop(&pool->cold_runs[npages]);
	pthread_mutex_unlock(&pool->run_lock[npages]);
	if (z)
		return z;

	top = atomic_load_explicit(&pool->arena_top, memory_order_relaxed);
	do {
		if (top + npages > pool->arena_pages)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&pool->arena_top, &top, top + npages,
							memory_order_relaxed,
							memory_order_relaxed));
	/* At most one descriptor per arena page, so the table cannot run out first. */
	id = atomic_fetch_add_explicit(&pool->desc_top, 1, memory_order_relaxed);
	ZS_CHECK(id < pool->arena_pages);
	/* Ids are unique, so each page of the table is counted once. */
	desc_before = zs_page_round((size_t)id * sizeof(struct zspage));
	desc_after = zs_page_round((size_t)(id + 1) * sizeof(struct zspage));
	if (desc_after != desc_before)
		atomic_fetch_add_explicit(&pool->meta_bytes, desc_after - desc_before,
					  memory_order_relaxed);
	z = &pool->descs[id];
	z->base = pool->arena + top * ZS_PAGE_SIZE;
	z->id = id;
	z->npages = (uint16_t)npages;
	return z;
}

/* Decommit committed runs, the longest first, until the reserve is at most
 * limit pages. No lock is held across the madvise. */
static void zs_reserve_trim(struct zs_pool *pool, unsigned long limit)
{
	for (unsigned int n = ZS_MAX_PAGES_PER_ZSPAGE; n >= 1; n--) {
		while (atomic_load_explicit(&pool->reserve_pages, memory_order_relaxed) > limit) {
			struct zspage *z;

			pthread_mutex_lock(&pool->run_lock[n]);
			z = zs_run_pop(&pool->warm_runs[n]);
			if (z)
				atomic_fetch_sub_explicit(&pool->reserve_pages, n, memory_order_relaxed);
			pthread_mutex_unlock(&pool->run_lock[n]);
			if (!z)
				break;
			prim_decommit(z->base, (size_t)n * ZS_PAGE_SIZE);
			pthread_mutex_lock(&pool->run_lock[n]);
			zs_run_push(&pool->cold_runs[n], z);
			pthread_mutex_unlock(&pool->run_lock[n]);
		}
	}
}

/* Park an emptied run for reuse: committed while the reserve has room for
 * it, else decommitted (RSS falls); then trim the reserve if the pool has
 * shrunk below what it was sized for. Called with no lock held. */
static void zs_run_put(struct zs_pool *pool, struct zspage *z)
{
	unsigned int npages = z->npages;
	unsigned long limit = zs_reserve_limit(pool);
	unsigned long r = atomic_load_explicit(&pool->reserve_pages, memory_order_relaxed);

	/* Claim room first, so concurrent frees never overfill the reserve. */
	while (r + npages <= limit) {
		if (atomic_compare_exchange_weak_explicit(&pool->reserve_pages, &r, r + npages,
							  memory_order_relaxed,
							  memory_order_relaxed)) {
			pthread_mutex_lock(&pool->run_lock[npages]);
			zs_run_push(&pool->warm_runs[npages], z);
			pthread_mutex_unlock(&pool->run_lock[npages]);
			return;
		}
	}
	prim_decommit(z->base, (size_t)npages * ZS_PAGE_SIZE);
	pthread_mutex_lock(&pool->run_lock[npages]);
	zs_run_push(&pool->cold_runs[npages], z);
	pthread_mutex_unlock(&pool->run_lock[npages]);
	if (r > limit)
		zs_reserve_trim(pool, limit);
}

/* Make a run a fresh, empty zspage of class (under the class lock). */
static void zs_zspage_init(struct zs_pool *pool, struct size_class *class, struct zspage *z)
{
	z->class_idx = (uint16_t)class->index;
	z->inuse = 0;
	z->bump = 0;
	z->freelist = ZS_OBJ_NONE;
	z->huge_handle = 0;
	zs_list_add(class, z, ZS_INUSE_RATIO_0);
	class->obj_allocated += class->objs_per_zspage;
	atomic_fetch_add_explicit(&pool->pages_allocated, class->pages_per_zspage,
				  memory_order_relaxed);
}

/* Unlist an empty zspage (under the class lock); the caller then zs_run_put()s
 * it after dropping the lock. */
static void zs_zspage_release(struct zs_pool *pool, struct size_class *class, struct zspage *z)
{
	ZS_CHECK(z->inuse == 0);
	zs_list_del(class, z);
	class->obj_allocated -= class->objs_per_zspage;
	atomic_fetch_sub_explicit(&pool->pages_allocated, class->pages_per_zspage,
				  memory_order_relaxed);
}

/* ---- pool -------------------------------------------------------------- */

static void zs_init_classes(struct zs_pool *pool)
{
	struct size_class *prev = NULL;

	/* From the largest down, so a class merges into the larger one it equals. */
	for (int i = ZS_SIZE_CLASSES - 1; i >= 0; i--) {
		unsigned int size = ZS_MIN_ALLOC_SIZE + (unsigned int)i * ZS_SIZE_CLASS_DELTA;
		unsigned int ppz, objs;
		struct size_class *class;

		if (size > ZS_MAX_ALLOC_SIZE)
			size = ZS_MAX_ALLOC_SIZE;
		ppz = zs_pages_per_zspage(size, pool->order);
		objs = ppz * (unsigned int)ZS_PAGE_SIZE / size;

		/* The first class (from the top) whose objects share pages. */
		if (ppz != 1 && objs != 1 && !pool->huge_watermark) {
			pool->huge_watermark = size;
			/* zs_malloc adds the header before the lookup. */
			pool->huge_class_size = size - (ZS_HANDLE_SIZE - 1);
		}
		if (prev && prev->pages_per_zspage == ppz && prev->objs_per_zspage == objs) {
			pool->size_class[i] = prev;
			continue;
		}
		class = &pool->classes[i];
		class->size = size;
		class->index = (unsigned int)i;
		class->pages_per_zspage = ppz;
		class->objs_per_zspage = objs;
		class->huge = ppz == 1 && objs == 1;
		class->slot_free = ZS_SLOT_NONE;
		pool->size_class[i] = class;
		prev = class;
	}
}

struct zs_pool *zs_create_pool(const char *name, unsigned int order, enum zs_lock_mode mode)
{
	struct zs_pool *pool;
	unsigned int nr_kept = 0, k = 0;
	size_t slots_per_class;

	if (order < ZS_MIN_PAGE_ORDER || order > ZS_MAX_PAGE_ORDER ||
	    (mode != ZS_LOCK_CLASS && mode != ZS_LOCK_POOL)) {
		errno = EINVAL;
		return NULL;
	}
	pool = prim_alloc(sizeof(*pool));
	if (!pool)
		return NULL;
	pool->pool_bytes = (sizeof(*pool) + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
	pool->order = order;
	pool->mode = mode;
	pool->reserve_min = ZS_RESERVE_MIN_PAGES;
	if (name) {
		size_t n = strnlen(name, sizeof(pool->name) - 1);
		memcpy(pool->name, name, n);
	}

	/* Address space is plentiful but may be capped (RLIMIT_AS, sanitizers). */
	for (size_t len = ZS_ARENA_MAX_BYTES; len >= ZS_ARENA_MIN_BYTES && !pool->arena; len /= 2) {
		pool->arena = prim_alloc(len);
		if (pool->arena)
			pool->arena_bytes = len;
	}
	if (!pool->arena)
		goto fail;
	pool->arena_pages = pool->arena_bytes / ZS_PAGE_SIZE;
	pool->descs_bytes = pool->arena_pages * sizeof(struct zspage);
	pool->descs = prim_alloc(pool->descs_bytes);
	if (!pool->descs)
		goto fail;

	zs_init_classes(pool);
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++)
		nr_kept += pool->size_class[i]->index == i;
	/* Enough handles to fill the arena with huge objects (one per page). */
	slots_per_class = pool->arena_pages;
	if (slots_per_class > UINT32_MAX - 1)
		slots_per_class = UINT32_MAX - 1;
	slots_per_class -= slots_per_class % ZS_SLOTS_PER_PAGE;	/* whole pages: the interleave's rows */
	pool->handle_space_bytes = (size_t)nr_kept * slots_per_class * sizeof(uint64_t);
	pool->handle_space = prim_alloc(pool->handle_space_bytes);
	if (!pool->handle_space)
		goto fail;

	zs_lock_init(&pool->pool_lock);
	for (unsigned int i = 0; i <= ZS_MAX_PAGES_PER_ZSPAGE; i++)
		zs_lock_init(&pool->run_lock[i]);
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++) {
		struct size_class *class = &pool->classes[i];

		if (pool->size_class[i] != class)
			continue;
		class->slots = pool->handle_space + (size_t)k++ * ZS_SLOTS_PER_PAGE;
		class->slot_stride = (size_t)nr_kept * ZS_SLOTS_PER_PAGE;
		class->slot_cap = (uint32_t)slots_per_class;
		zs_lock_init(&class->own_lock);
		class->lock = mode == ZS_LOCK_POOL ? &pool->pool_lock : &class->own_lock;
	}
	return pool;

fail:
	if (pool->handle_space)
		prim_free(pool->handle_space, pool->handle_space_bytes);
	if (pool->descs)
		prim_free(pool->descs, pool->descs_bytes);
	if (pool->arena)
		prim_free(pool->arena, pool->arena_bytes);
	prim_free(pool, sizeof(*pool));
	errno = ENOMEM;
	return NULL;
}

void zs_destroy_pool(struct zs_pool *pool)
{
	if (!pool)
		return;
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++)
		if (pool->size_class[i] == &pool->classes[i])
			pthread_mutex_destroy(&pool->classes[i].own_lock);
	for (unsigned int i = 0; i <= ZS_MAX_PAGES_PER_ZSPAGE; i++)
		pthread_mutex_destroy(&pool->run_lock[i]);
	pthread_mutex_destroy(&pool->pool_lock);
	prim_free(pool->handle_space, pool->handle_space_bytes);
	prim_free(pool->descs, pool->descs_bytes);
	prim_free(pool->arena, pool->arena_bytes);
	prim_free(pool, sizeof(*pool));
}

/* ---- allocation -------------------------------------------------------- */

unsigned long zs_malloc(struct zs_pool *pool, size_t size)
{
	struct size_class *class;
	struct zspage *zspage;
	unsigned long handle;
	unsigned int idx;
	uint32_t slot;

	if (!pool || size == 0 || size > ZS_MAX_ALLOC_SIZE) {
		errno = EINVAL;
		return 0;
	}
	class = pool->size_class[zs_class_index(size + ZS_HANDLE_SIZE)];

	zs_lock(class);
	slot = zs_slot_alloc(pool, class);
	if (slot == ZS_SLOT_NONE)
		goto nomem;
	zspage = zs_find_fullest(class);
	if (!zspage) {
		zspage = zs_run_get(pool, class->pages_per_zspage);
		if (!zspage) {
			zs_slot_free(class, slot);
			goto nomem;
		}
		zs_zspage_init(pool, class, zspage);
	}
	idx = zs_obj_take(class, zspage);
	handle = zs_make_handle(class, slot);
	if (class->huge)
		zspage->huge_handle = handle;
	else
		*zs_obj_header(class, zspage, idx) = handle;
	/* Release: a lock-free mapper that reads this slot sees base and header. */
	atomic_store_explicit(zs_slot(class, slot), zs_make_loc(zspage, idx), memory_order_release);
	zspage->inuse++;
	class->obj_used++;
	zs_fix_fullness(class, zspage);
	zs_unlock(class);
	return handle;

nomem:
	zs_unlock(class);
	errno = ENOMEM;
	return 0;
}

void zs_free(struct zs_pool *pool, unsigned long handle)
{
	struct size_class *class;
	struct zspage *zspage, *release = NULL;
	unsigned int idx;
	uint32_t slot;
	uint64_t loc;

	if (!pool || !handle)
		return;
	class = zs_handle_class(pool, handle);
	slot = zs_handle_slot(handle);

	zs_lock(class);
	ZS_CHECK(slot < atomic_load_explicit(&class->slot_top, memory_order_relaxed));
	loc = atomic_load_explicit(zs_slot(class, slot), memory_order_relaxed);
	ZS_CHECK(loc & ZS_OBJ_TAG);	/* double free */
	zspage = zs_loc_zspage(pool, loc);
	idx = zs_loc_idx(loc);
	ZS_CHECK(zspage->class_idx == class->index && idx < zspage->bump && zspage->inuse);
	if (class->huge) {
		ZS_CHECK(zspage->huge_handle == handle);
		zspage->huge_handle = 0;
	} else {
		ZS_CHECK(*zs_obj_header(class, zspage, idx) == handle);
	}
	zs_obj_put(class, zspage, idx);
	zs_slot_free(class, slot);
	zspage->inuse--;
	class->obj_used--;
	if (zspage->inuse == 0) {
		zs_zspage_release(pool, class, zspage);
		release = zspage;
	} else {
		zs_fix_fullness(class, zspage);
	}
	zs_unlock(class);

	if (release)
		zs_run_put(pool, release);
}

/* ---- mapping ----------------------------------------------------------- */

static void zs_cpu_relax(unsigned int *spins)
{
	if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	} else {
		sched_yield();
	}
}

/* Pin the zspage that holds handle's object; returns that zspage and index. */
static struct zspage *zs_pin(struct zs_pool *pool, struct size_class *class,
			     uint32_t slot, unsigned int *idx)
{
	unsigned int spins = 0;

	for (;;) {
		uint64_t loc = atomic_load_explicit(zs_slot(class, slot), memory_order_acquire);
		struct zspage *zspage;
		int c;

		ZS_CHECK(loc & ZS_OBJ_TAG);	/* mapping a freed handle */
		zspage = zs_loc_zspage(pool, loc);
		c = atomic_load_explicit(&zspage->mapcount, memory_order_relaxed);
		if (c < 0 || !atomic_compare_exchange_weak_explicit(&zspage->mapcount, &c, c + 1,
								    memory_order_acquire,
								    memory_order_relaxed)) {
			zs_cpu_relax(&spins);	/* compaction is moving it out */
			continue;
		}
		if (atomic_load_explicit(zs_slot(class, slot), memory_order_acquire) == loc) {
			*idx = zs_loc_idx(loc);
			return zspage;
		}
		/* Moved between our two reads: drop the pin and look again. */
		atomic_fetch_sub_explicit(&zspage->mapcount, 1, memory_order_release);
	}
}

void *zs_map_object(struct zs_pool *pool, unsigned long handle)
{
	struct size_class *class = zs_handle_class(pool, handle);
	struct zspage *zspage;
	unsigned int idx;
	char *obj;

	if (pool->mode == ZS_LOCK_POOL)
		zs_lock(class);
	zspage = zs_pin(pool, class, zs_handle_slot(handle), &idx);
	if (pool->mode == ZS_LOCK_POOL)
		zs_unlock(class);
	obj = zs_obj_addr(class, zspage, idx);
	return class->huge ? obj : obj + ZS_HANDLE_SIZE;
}

void zs_unmap_object(struct zs_pool *pool, unsigned long handle)
{
	struct size_class *class = zs_handle_class(pool, handle);
	/* Pinned: the slot cannot change under us. */
	uint64_t loc = atomic_load_explicit(zs_slot(class, zs_handle_slot(handle)),
					    memory_order_relaxed);
	struct zspage *zspage;
	int old;

	ZS_CHECK(loc & ZS_OBJ_TAG);
	zspage = zs_loc_zspage(pool, loc);
	/* Release: our writes to the object precede compaction's copy of it. */
	old = atomic_fetch_sub_explicit(&zspage->mapcount, 1, memory_order_release);
	ZS_CHECK(old > 0);
}

/* ---- compaction -------------------------------------------------------- */

/* The kernel's zs_can_compact(): pages that compaction could free in class. */
static unsigned long zs_can_compact(const struct size_class *class)
{
	unsigned long wasted;

	if (class->obj_allocated <= class->obj_used)
		return 0;
	wasted = (class->obj_allocated - class->obj_used) / class->objs_per_zspage;
	return wasted * class->pages_per_zspage;
}

/* The sparsest zspage other than dst that nobody has mapped, claimed for
 * moving (mapcount -1); NULL if none. */
static struct zspage *zs_claim_src(struct size_class *class, const struct zspage *dst)
{
	for (int fg = ZS_INUSE_RATIO_10; fg <= ZS_INUSE_RATIO_99; fg++) {
		for (struct zspage *z = class->fullness_list[fg]; z; z = z->next) {
			int zero = 0;

			if (z == dst)
				continue;
			if (atomic_compare_exchange_strong_explicit(&z->mapcount, &zero, -1,
								    memory_order_acquire,
								    memory_order_relaxed))
				return z;
		}
	}
	return NULL;
}

/* Move objects from src to dst until src is empty or dst is full. */
static void zs_migrate(struct size_class *class, struct zspage *src, struct zspage *dst)
{
	for (unsigned int i = 0; i < src->bump && src->inuse; i++) {
		uint64_t *hdr = zs_obj_header(class, src, i);
		unsigned long handle = *hdr;
		unsigned int j;

		if (!(handle & ZS_OBJ_TAG))
			continue;	/* free object */
		if (dst->inuse == class->objs_per_zspage)
			break;
		j = zs_obj_take(class, dst);
		memcpy(zs_obj_addr(class, dst, j), hdr, class->size);
		atomic_store_explicit(zs_slot(class, zs_handle_slot(handle)), zs_make_loc(dst, j),
				      memory_order_release);
		zs_obj_put(class, src, i);
		src->inuse--;
		dst->inuse++;
	}
}

static unsigned long zs_compact_class(struct zs_pool *pool, struct size_class *class, unsigned long budget)
{
	unsigned long freed = 0;

	/*
	 * One source zspage per round, the lock dropped between rounds so
	 * allocation and free are not starved. Each round empties its source or
	 * fills its destination, so the number of non-full zspages falls and
	 * the loop ends.
	 */
	while (freed < budget) {
		struct zspage *dst, *src;

		zs_lock(class);
		if (!zs_can_compact(class) ||
		    !(dst = zs_find_fullest(class)) ||
		    !(src = zs_claim_src(class, dst))) {
			zs_unlock(class);
			break;
		}
		zs_migrate(class, src, dst);
		zs_fix_fullness(class, dst);
		/* Release: the moved slots are visible to whoever pins src next. */
		atomic_store_explicit(&src->mapcount, 0, memory_order_release);
		if (src->inuse == 0) {
			zs_zspage_release(pool, class, src);
			zs_unlock(class);
			zs_run_put(pool, src);
			freed += class->pages_per_zspage;
			continue;
		}
		zs_fix_fullness(class, src);
		zs_unlock(class);
	}
	return freed;
}

unsigned long zs_compact(struct zs_pool *pool)
{
	return zs_compact_some(pool, ULONG_MAX);
}

unsigned long zs_compact_some(struct zs_pool *pool, unsigned long max_pages)
{
	unsigned long freed = 0;

	for (int i = ZS_SIZE_CLASSES - 1; i >= 0 && freed < max_pages; i--) {
		struct size_class *class = pool->size_class[i];

		if (class->index != (unsigned int)i || class->huge)
			continue;
		freed += zs_compact_class(pool, class, max_pages - freed);
	}
	/* Compaction is a request for memory: the reserve goes too. */
	zs_reserve_trim(pool, 0);
	atomic_fetch_add_explicit(&pool->pages_compacted, freed, memory_order_relaxed);
	return freed;
}

void zs_release_reserve(struct zs_pool *pool)
{
	zs_reserve_trim(pool, 0);
}

void zs_set_reserve_min(struct zs_pool *pool, unsigned long pages)
{
	atomic_store_explicit(&pool->reserve_min, pages, memory_order_relaxed);
	zs_reserve_trim(pool, zs_reserve_limit(pool));
}

unsigned long zs_get_freeable_pages(struct zs_pool *pool)
{
	unsigned long n = 0;

	for (int i = ZS_SIZE_CLASSES - 1; i >= 0; i--) {
		struct size_class *class = pool->size_class[i];

		if (class->index != (unsigned int)i || class->huge)
			continue;
		zs_lock(class);
		n += zs_can_compact(class);
		zs_unlock(class);
	}
	return n;
}

/* ---- statistics -------------------------------------------------------- */

size_t zs_huge_class_size(const struct zs_pool *pool)
{
	return pool->huge_class_size;
}

unsigned int zs_class_of(const struct zs_pool *pool, size_t size)
{
	if (size > ZS_MAX_ALLOC_SIZE)
		size = ZS_MAX_ALLOC_SIZE;
	return pool->size_class[zs_class_index(size + ZS_HANDLE_SIZE)]->index;
}

size_t zs_huge_class_watermark(const struct zs_pool *pool)
{
	return pool->huge_watermark;
}

unsigned long zs_get_total_pages(const struct zs_pool *pool)
{
	return atomic_load_explicit(&pool->pages_allocated, memory_order_relaxed);
}

unsigned long zs_get_pages_compacted(const struct zs_pool *pool)
{
	return atomic_load_explicit(&pool->pages_compacted, memory_order_relaxed);
}

size_t zs_get_metadata_bytes(const struct zs_pool *pool)
{
	return pool->pool_bytes + atomic_load_explicit(&pool->meta_bytes, memory_order_relaxed);
}

unsigned long zs_get_reserve_pages(const struct zs_pool *pool)
{
	return atomic_load_explicit(&pool->reserve_pages, memory_order_relaxed);
}

unsigned int zs_get_order(const struct zs_pool *pool)
{
	return pool->order;
}

bool zs_class_stat(struct zs_pool *pool, unsigned int index, struct zs_class_stat *st)
{
	struct size_class *class;

	if (index >= ZS_SIZE_CLASSES)
		return false;
	class = pool->size_class[index];
	if (class->index != index)
		return false;

	zs_lock(class);
	st->index = index;
	st->size = class->size;
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		st->inuse_ratio[c] = class->nr_zspages[ZS_INUSE_RATIO_10 + c];
	st->obj_allocated = class->obj_allocated;
	st->obj_used = class->obj_used;
	st->freeable = zs_can_compact(class);
	zs_unlock(class);

	st->pages_per_zspage = class->pages_per_zspage;
	st->objs_per_zspage = class->objs_per_zspage;
	st->pages_used = st->obj_allocated / class->objs_per_zspage * class->pages_per_zspage;
	return true;
}
