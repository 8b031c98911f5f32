/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.c - zswap's store, load and invalidate over zs pools.
 *
 * Layout: one prim block holds the store, its workspaces and their memory:
 *
 *   struct zswap_store | struct store_ws[nr_ws] | the recompression
 *   algorithm's states (comp_ws_size each) | the compressed-output buffers
 *   (COMP_BUF_SIZE each)
 *
 * and each compressor in use has a prim block of its own with a state per
 * workspace (struct store_kind), made when the compressor is chosen.
 *
 * Compressors. As the kernel's zswap keeps a zswap_pool per compressor, each
 * compressor in use has its own zs pools (pools[kind * STORE_MAX_POOLS +
 * index]) and its own state in every workspace, and each entry names its
 * compressor (bits 60..61). A store reads the current compressor (cur)
 * under its workspace's lock and holds that lock until the entry is made,
 * and loads, drops, recompression and writeback hold one too: so after cur
 * changes, once every workspace's lock has been taken and released, no
 * thread is still storing to the compressor before (a grace period, as
 * RCU's, with the locks the store takes anyway: the fault path gains no
 * lock and no shared write). zswap_store_reap then counts, in the same
 * pass, the objects each compressor's pools hold (a gauge per workspace,
 * like the others): a compressor other than the current one with none left
 * has no entry naming it, and no thread can make one, so its pools and
 * workspace states are freed, under kinds_lock, which the pools' readers
 * (the statistics, compaction) hold too.
 *
 * Workspaces. Compressing needs a compressor state and an output buffer; both
 * are made at create time, nr_workspaces of them (2 * CPUs + 8 by default),
 * each with its own mutex. A thread takes one with trylock, starting at the
 * one it used last (a __thread hint keyed by the store, so an uncontended
 * thread always finds "its" workspace in one CAS); if all are busy it waits
 * on the first it tried. Every call releases its workspace before returning,
 * so a thread that stops calling holds nothing and a fault handler can never
 * wait on a thread that is not inside the store.
 *
 * Counters live in the workspaces. Only the thread holding a workspace writes
 * its counters (a relaxed load and store: no locked instruction, no shared
 * cache line), and zswap_store_stats() sums them. Gauges (stored_pages,
 * same_filled_pages, ...) are kept as signed deltas: a page stored through one
 * workspace and loaded through another adds +1 and -1 to different slots.
 *
 * Memory use. mem_used_total is the pools' pages only, as zram's mm_stat
 * (zs_get_total_pages() * PAGE_SIZE: the kernel keeps zspage metadata in
 * struct page and handles in a kmem cache, and counts neither);
 * mem_used_max is its high-water mark. The pools' own metadata (handle
 * tables, zspage descriptors) is reported apart, as pool_metadata_bytes.
 * mem_limit bounds pool pages plus metadata: what the process pays. So that
 * the store path need not sum every pool, the store keeps running totals of
 * both: after each zs_malloc and zs_free it compares the pool's page count
 * and metadata (two reads, usually equal to what it saw last) with what it
 * saw last and adds the difference, taken with an exchange so concurrent
 * threads never count a change twice. The statistics sum the pools exactly.
 *
 * Pool limit: once mem_limit is reached, stores are refused until the pools
 * shrink below accept_limit (store_limit_ok: zswap's accept threshold).
 *
 * Entries are the caller's (struct zswap_entry); the store never keeps
 * per-page state and never allocates after zswap_store_create().
 */
#include "config.h"
#include "core/store.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "base/layout.h"
#include "core/backing.h"
#include "core/comp.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/prim.h"

#define STORE_MAX_POOLS		64
#define STORE_POOL_IDS		(ZSWAP_COMP_KINDS * STORE_MAX_POOLS)
#define STORE_MAX_WORKSPACES	1024
#define STORE_WORDS		(ZS_PAGE_SIZE / sizeof(uint64_t))

/* Written only by the thread holding the workspace; read by anyone. */
struct store_counters {
	_Atomic int64_t stored;		/* gauge: pages held (same-filled included) */
	_Atomic int64_t same;		/* gauge: same-filled pages */
	_Atomic int64_t raw;		/* gauge: pages held as-is (huge class) */
	_Atomic int64_t poor;		/* gauge: pages saving less than a quarter (raw included) */
	_Atomic int64_t raw_since;	/* pages stored as-is, since start (zram's huge_pages_since) */
	_Atomic int64_t compr_bytes;	/* gauge: bytes of objects in the pools */
	_Atomic int64_t zswpout;
	_Atomic int64_t zswpin;
	_Atomic int64_t reject_compress_poor;
	_Atomic int64_t reject_compress_fail;
	_Atomic int64_t reject_alloc_fail;
	_Atomic int64_t pool_limit_hit;
	_Atomic int64_t decompress_fail;
	_Atomic int64_t written_back;
	_Atomic int64_t writeback_failed;
	_Atomic int64_t reject_reclaim_fail;
	_Atomic int64_t objs[ZSWAP_COMP_KINDS];	/* gauge: objects in each compressor's pools */
};

struct store_ws {
	pthread_mutex_t lock;
	struct comp_ws comp[ZSWAP_COMP_KINDS];	/* each compressor's in use (store_kind) */
	struct comp_ws recomp;		/* ZSWAP_RECOMP_ALGORITHM's: loads of recompressed entries */
	uint8_t *buf;			/* COMP_BUF_SIZE bytes of compressed output */
	struct store_counters c;
} __attribute__((aligned(64)));

/* A compressor in use: its pools exist and every workspace has its state
 * in mem (nr_ws states of mem_len / nr_ws bytes). Under kinds_lock. */
struct store_kind {
	bool live;
	int level;
	uint8_t *mem;
	size_t mem_len;
};

struct zswap_store {
	struct zswap_store_config cfg;
	_Atomic unsigned int cur;	/* the compressor new pages go to (enum zswap_comp) */
	unsigned int nr_pools;
	unsigned int nr_ws;
	size_t huge_size;		/* compressed lengths >= this are stored as-is */
	size_t block_len;		/* the prim block holding all of this */
	size_t recomp_len;		/* each workspace's recompression state, in recomp_mem */
	uint8_t *recomp_mem;
	_Atomic bool recomp_ready;	/* every workspace's recomp set up (store_recomp_prepare) */
	struct store_ws *ws;
	struct zs_pool *pools[STORE_POOL_IDS];	/* by store_pool_id; NULL for a compressor not in use */
	pthread_mutex_t kinds_lock;	/* kinds[], and pools[] against their freeing */
	unsigned long reserve_min;	/* the pools' reserve floor (zswap_store_set_reserve_min) */
	struct store_kind kinds[ZSWAP_COMP_KINDS];
	_Atomic unsigned int old_live;	/* compressors in use besides cur: zswap_store_reap has work */
	_Atomic uint64_t kinds_freed;
	uint64_t compacted_gone;	/* pages_compacted of pools freed (kinds_lock) */
	_Atomic unsigned int inject[ZSWAP_INJECT__COUNT];	/* read by every load and store: not beside the totals */
	struct backing *tiers[ZE_TIERS];	/* the second tier's files by index, or NULL */
	unsigned int own;			/* the one this process writes */
	_Atomic bool reached_full;	/* mem_limit was hit: refuse until below accept_limit */
	_Atomic int64_t swap_cached;	/* slots kept for pages read back (zswap_kept_*) */
	_Atomic uint64_t swap_cached_reclaimed;

	/* Running totals, written whenever any pool grows or shrinks: on lines
	 * of their own, apart from the read-mostly fields above that every
	 * store and load reads. */
	_Atomic int64_t pages_total __attribute__((aligned(64))); /* sum of pages_seen */
	_Atomic int64_t meta_total;	/* sum of meta_seen: the pools' metadata bytes */
	_Atomic uint64_t mem_used_max;	/* high-water mark of pages_total, in bytes */
	_Atomic unsigned long pages_seen[STORE_POOL_IDS] __attribute__((aligned(64)));
	_Atomic size_t meta_seen[STORE_POOL_IDS];
};

/* The workspace this thread used last, for the store it used it with. */
static __thread struct {
	const struct zswap_store *s;
	unsigned int idx;
} store_tls;

static inline void cnt_add(_Atomic int64_t *c, int64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static uint64_t store_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* Take a workspace: the last one this thread used if free, else any free one,
 * else wait for the first one tried. Never allocates. */
static struct store_ws *store_ws_get(struct zswap_store *s)
{
	unsigned int start, idx;

	if (store_tls.s == s && store_tls.idx < s->nr_ws)
		start = store_tls.idx;
	else
		start = (unsigned int)(store_mix((uintptr_t)&store_tls) % s->nr_ws);
	idx = start;
	for (unsigned int i = 0; i < s->nr_ws; i++) {
		if (pthread_mutex_trylock(&s->ws[idx].lock) == 0)
			goto got;
		if (++idx == s->nr_ws)
			idx = 0;
	}
	idx = start;
	pthread_mutex_lock(&s->ws[idx].lock);
got:
	store_tls.s = s;
	store_tls.idx = idx;
	return &s->ws[idx];
}

static void store_ws_put(struct store_ws *w)
{
	pthread_mutex_unlock(&w->lock);
}

/* One repeated 8-byte word (zero included)? Compares a cache line at a time
 * so the loop vectorises; most pages differ in the first line. */
static bool store_same_filled(const void *page, uint64_t *word)
{
	const uint64_t *p = page;
	uint64_t v = p[0];

	/* The entry keeps 4 bytes of pattern: zeros, memset's bytes, a
	 * repeated int. A page of one 8-byte word with unequal halves is
	 * compressed instead (to a few dozen bytes). */
	if (p[STORE_WORDS - 1] != v || (v >> 32) != (v & 0xffffffffu))
		return false;
	for (size_t i = 0; i < STORE_WORDS; i += 8) {
		uint64_t d = 0;

		for (size_t j = 0; j < 8; j++)
			d |= p[i + j] ^ v;
		if (d)
			return false;
	}
	*word = v;
	return true;
}

static void store_fill(void *dst, uint64_t v)
{
	uint64_t *p = dst;

	if (!v) {
		memset(dst, 0, ZS_PAGE_SIZE);
		return;
	}
	for (size_t i = 0; i < STORE_WORDS; i++)
		p[i] = v;
}

static inline unsigned int store_pool_id(unsigned int kind, unsigned int index)
{
	return kind * STORE_MAX_POOLS + index;
}

/* The pool id of a pool entry. */
static inline unsigned int store_entry_id(const struct zswap_entry *e)
{
	return store_pool_id(zswap_entry_comp(e), zswap_entry_pool(e));
}

/* A pool entry names a pool of a compressor in use: a corrupt word is
 * refused rather than followed. */
static bool store_entry_ok(const struct zswap_store *s, const struct zswap_entry *e)
{
	return zswap_entry_pool(e) < s->nr_pools && zswap_entry_comp(e) < ZSWAP_COMP_KINDS &&
	       s->pools[store_entry_id(e)];
}

/* The pools' metadata, summed exactly: for the statistics. */
static uint64_t store_meta_bytes(struct zswap_store *s)
{
	uint64_t total = 0;

	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++)
		if (s->pools[i])
			total += zs_get_metadata_bytes(s->pools[i]);
	pthread_mutex_unlock(&s->kinds_lock);
	return total;
}

static uint64_t store_pool_pages(struct zswap_store *s)
{
	uint64_t total = 0;

	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++)
		if (s->pools[i])
			total += zs_get_total_pages(s->pools[i]);
	pthread_mutex_unlock(&s->kinds_lock);
	return total;
}

/* mem_used_total as zram defines it, summed exactly: pool pages only. */
static uint64_t store_mem_used(struct zswap_store *s)
{
	return store_pool_pages(s) * ZS_PAGE_SIZE;
}

/* The running totals (store_pool_sync), for the reclaimer's frequent
 * readings: no lock, so no fork copies one held by them. */
uint64_t zswap_store_pool_pages(struct zswap_store *s)
{
	int64_t pages = atomic_load_explicit(&s->pages_total, memory_order_relaxed);

	return pages > 0 ? (uint64_t)pages : 0;
}

uint64_t zswap_store_meta_bytes(struct zswap_store *s)
{
	int64_t meta = atomic_load_explicit(&s->meta_total, memory_order_relaxed);

	return meta > 0 ? (uint64_t)meta : 0;
}

/* The running total of pool pages, in bytes. */
static uint64_t store_pool_bytes_fast(const struct zswap_store *s)
{
	int64_t pages = atomic_load_explicit(&s->pages_total, memory_order_relaxed);

	return pages > 0 ? (uint64_t)pages * ZS_PAGE_SIZE : 0;
}

/* What mem_limit bounds, from the running totals: pool pages + metadata. */
static uint64_t store_charged_fast(const struct zswap_store *s)
{
	int64_t meta = atomic_load_explicit(&s->meta_total, memory_order_relaxed);

	return store_pool_bytes_fast(s) + (meta > 0 ? (uint64_t)meta : 0);
}

static void store_update_max(struct zswap_store *s, uint64_t used)
{
	uint64_t max = atomic_load_explicit(&s->mem_used_max, memory_order_relaxed);

	while (used > max &&
	       !atomic_compare_exchange_weak_explicit(&s->mem_used_max, &max, used,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* Fold a change in pool idx's pages and metadata into the running totals.
 * Returns true if either grew (two reads, almost always both unchanged). */
static bool store_pool_sync(struct zswap_store *s, unsigned int idx)
{
	unsigned long pages = zs_get_total_pages(s->pools[idx]), old;
	size_t meta = zs_get_metadata_bytes(s->pools[idx]), old_meta;
	bool grew = false;

	if (atomic_load_explicit(&s->pages_seen[idx], memory_order_relaxed) != pages) {
		old = atomic_exchange_explicit(&s->pages_seen[idx], pages, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->pages_total, (int64_t)(pages - old),
					  memory_order_relaxed);
		grew = pages > old;
	}
	if (atomic_load_explicit(&s->meta_seen[idx], memory_order_relaxed) != meta) {
		old_meta = atomic_exchange_explicit(&s->meta_seen[idx], meta, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->meta_total, (int64_t)(meta - old_meta),
					  memory_order_relaxed);
		grew = grew || meta > old_meta;
	}
	return grew;
}

/*
 * The pool limit with zswap's hysteresis (mm/zswap.c, zswap_check_limits):
 * once the pools reach mem_limit, stores are refused (pool_limit_hit) until
 * they have shrunk below accept_limit (ZSWAP_ACCEPT_THRESHOLD_PERCENT of the
 * limit), so a full pool does not flip between accepting and refusing on
 * every page that comes and goes. True if a store may go ahead.
 */
static bool store_limit_ok(struct zswap_store *s)
{
	uint64_t charged, accept;

	if (!s->cfg.mem_limit)
		return true;
	charged = store_charged_fast(s);
	if (charged >= s->cfg.mem_limit) {
		if (!atomic_load_explicit(&s->reached_full, memory_order_relaxed))
			atomic_store_explicit(&s->reached_full, true, memory_order_relaxed);
		return false;
	}
	if (!atomic_load_explicit(&s->reached_full, memory_order_relaxed))
		return true;
	accept = s->cfg.accept_limit ? s->cfg.accept_limit : s->cfg.mem_limit;
	if (charged >= accept)
		return false;
	atomic_store_explicit(&s->reached_full, false, memory_order_relaxed);
	return true;
}

void zswap_store_reclaim_failed(struct zswap_store *s)
{
	struct store_ws *w = store_ws_get(s);

	cnt_add(&w->c.reject_reclaim_fail, 1);
	store_ws_put(w);
}

bool zswap_store_accepting(struct zswap_store *s)
{
	return store_limit_ok(s);
}

/* After an allocation from pool idx: if the pool grew, raise mem_used_max
 * and say whether mem_limit is now exceeded. */
static bool store_grew_past_limit(struct zswap_store *s, unsigned int idx)
{
	if (!store_pool_sync(s, idx))
		return false;
	store_update_max(s, store_pool_bytes_fast(s));
	return s->cfg.mem_limit && store_charged_fast(s) > s->cfg.mem_limit;
}

/* The pool for the next store: the workspace's own. A thread keeps its
 * workspace, so each storing thread fills its own pool: concurrent stores
 * never meet on a class lock, and a lone thread's pages are not scattered
 * over partly filled zspages in every pool (which a per-page hash, like the
 * kernel's hash of the entry address, does: measured in docs/bench/pool.md). */
static unsigned int store_pick_pool(const struct zswap_store *s, const struct store_ws *w)
{
	return (unsigned int)(w - s->ws) % s->nr_pools;
}

_Static_assert(ZE_HANDLE_SHIFT + ZS_HANDLE_BITS - 1 <= ZE_COMP_SHIFT, "a zs handle does not fit below the compressor");
_Static_assert(ZE_COMP_SHIFT + 2 <= 62, "the compressor does not fit below ZE_TRIED_BIT");
_Static_assert(ZSWAP_COMP_KINDS - 1 <= ZE_COMP_MASK, "a compressor does not fit the entry");
_Static_assert(ZS_PAGE_SIZE - 1 <= ZE_LEN_MASK, "a compressed length does not fit the entry");
_Static_assert(sizeof(struct zswap_entry) == 8, "the entry is paid on every managed page");

static void store_entry_clear(struct zswap_entry *e)
{
	e->w = ZE_NONE;
}

/* Consume one injected failure of a kind, if any are pending. */
static bool store_take_injected(struct zswap_store *s, enum zswap_inject kind)
{
	return inject_take(&s->inject[kind]) != 0;
}

/* Whether a page that does not fit below the huge class would not shrink
 * at all: the kernel's dlen >= PAGE_SIZE, its compressor out of room. A
 * second compression, paid only by such pages and only with refuse_poor. */
static bool store_poor(struct store_ws *w, unsigned int kind, const void *page)
{
	return comp_compress(&w->comp[kind], page, w->buf, ZS_PAGE_SIZE - 1) == 0;
}

static int store_page(struct zswap_store *s, const void *page, struct zswap_entry *e, bool may_refuse)
{
	struct store_ws *w = store_ws_get(s);
	/* Read under the workspace's lock, held until the entry names it:
	 * zswap_store_reap's grace period. */
	unsigned int kind = atomic_load_explicit(&s->cur, memory_order_acquire);
	const void *src = w->buf;
	unsigned long handle;
	unsigned int idx;
	uint64_t word;
	uint8_t type = ZE_COMPRESSED;
	void *obj;
	int n, ret = 0;

	if (store_same_filled(page, &word)) {
		e->w = (word >> 32) << ZE_SAME_SHIFT | ZE_SAME;
		cnt_add(&w->c.same, 1);
		goto stored;
	}
	if (!store_limit_ok(s)) {
		cnt_add(&w->c.pool_limit_hit, 1);
		ret = -ENOSPC;
		goto out;
	}

	/* A result that would land in the huge class saves nothing: limit the
	 * output below it, and store the page as-is when it does not fit. */
	n = store_take_injected(s, ZSWAP_INJECT_COMPRESS) ? -EIO
								: comp_compress(&w->comp[kind], page, w->buf, s->huge_size - 1);
	if (n < 0) {
		cnt_add(&w->c.reject_compress_fail, 1);
		ret = -EIO;
		goto out;
	}
	/* Kept whole, a page that does not shrink saves nothing, and with no
	 * tier to go to it could never leave the pool: the kernel refuses it
	 * then, and the page stays resident. */
	if (n == 0 && may_refuse && s->cfg.refuse_poor && store_poor(w, kind, page)) {
		cnt_add(&w->c.reject_compress_poor, 1);
		ret = -E2BIG;
		goto out;
	}
	if (n == 0) {
		src = page;
		n = (int)ZS_PAGE_SIZE;
		type = ZE_RAW;
	}

	idx = store_pool_id(kind, store_pick_pool(s, w));
	handle = store_take_injected(s, ZSWAP_INJECT_ALLOC) ? 0 : zs_malloc(s->pools[idx], (size_t)n);
	if (!handle) {
		cnt_add(&w->c.reject_alloc_fail, 1);
		ret = -ENOMEM;
		goto out;
	}
	if (store_grew_past_limit(s, idx)) {
		atomic_store_explicit(&s->reached_full, true, memory_order_relaxed);
		zs_free(s->pools[idx], handle);
		store_pool_sync(s, idx);
		cnt_add(&w->c.pool_limit_hit, 1);
		ret = -ENOSPC;
		goto out;
	}
	obj = zs_map_object(s->pools[idx], handle);
	memcpy(obj, src, (size_t)n);
	zs_unmap_object(s->pools[idx], handle);

	e->w = (uint64_t)kind << ZE_COMP_SHIFT | (uint64_t)(handle >> 1) << ZE_HANDLE_SHIFT |
	       (uint64_t)(type == ZE_RAW ? 0 : n) << ZE_LEN_SHIFT |
	       (uint64_t)(idx - store_pool_id(kind, 0)) << ZE_POOL_SHIFT | type;
	cnt_add(&w->c.compr_bytes, n);
	cnt_add(&w->c.objs[kind], 1);
	if (type == ZE_RAW) {
		cnt_add(&w->c.raw, 1);
		cnt_add(&w->c.raw_since, 1);
	}
	if (zswap_entry_poor(e))
		cnt_add(&w->c.poor, 1);
stored:
	cnt_add(&w->c.stored, 1);
	cnt_add(&w->c.zswpout, 1);
out:
	store_ws_put(w);
	return ret;
}

bool zswap_store_page_shrinks(struct zswap_store *s, const void *page)
{
	struct store_ws *w = store_ws_get(s);
	bool poor = store_poor(w, atomic_load_explicit(&s->cur, memory_order_acquire), page);

	store_ws_put(w);
	return !poor;
}

int zswap_store_page(struct zswap_store *s, const void *page, struct zswap_entry *e)
{
	return store_page(s, page, e, false);
}

int zswap_store_page_evict(struct zswap_store *s, const void *page, struct zswap_entry *e)
{
	return store_page(s, page, e, true);
}

/* Free a pool entry and take it out of the gauges (w held). */
static void store_drop(struct zswap_store *s, struct store_ws *w, struct zswap_entry *e)
{
	if (zswap_entry_type(e) == ZE_SAME) {
		cnt_add(&w->c.same, -1);
	} else {
		zs_free(s->pools[store_entry_id(e)], zswap_entry_handle(e));
		store_pool_sync(s, store_entry_id(e));
		cnt_add(&w->c.compr_bytes, -(int64_t)zswap_entry_length(e));
		cnt_add(&w->c.objs[zswap_entry_comp(e)], -1);
		if (zswap_entry_type(e) == ZE_RAW)
			cnt_add(&w->c.raw, -1);
		if (zswap_entry_poor(e))
			cnt_add(&w->c.poor, -1);
	}
	cnt_add(&w->c.stored, -1);
	store_entry_clear(e);
}

/* A pool entry's page into dst: copied (ZE_RAW) or decompressed (w held).
 * 0, or the decompressor's error. */
static int store_restore(struct zswap_store *s, struct store_ws *w, const struct zswap_entry *e, void *dst)
{
	struct zs_pool *pool = s->pools[store_entry_id(e)];
	unsigned long handle = zswap_entry_handle(e);
	const void *obj = zs_map_object(pool, handle);
	int ret = 0;

	if (zswap_entry_type(e) == ZE_RAW)
		memcpy(dst, obj, ZS_PAGE_SIZE);
	else
		ret = comp_decompress(zswap_entry_recompressed(e) ? &w->recomp : &w->comp[zswap_entry_comp(e)], obj,
				      zswap_entry_length(e), dst);
	zs_unmap_object(pool, handle);
	return ret;
}

/* The recompressed object of n bytes at w->buf + PAGE_SIZE replaces e's in
 * its pool (w held). */
static int store_recomp_replace(struct zswap_store *s, struct store_ws *w, struct zswap_entry *e, int n)
{
	unsigned int idx = store_entry_id(e);
	struct zs_pool *pool = s->pools[idx];
	unsigned long handle = zs_malloc(pool, (size_t)n);

	if (!handle)
		return -ENOMEM;
	void *obj = zs_map_object(pool, handle);
	memcpy(obj, w->buf + ZS_PAGE_SIZE, (size_t)n);
	zs_unmap_object(pool, handle);
	bool was_raw = zswap_entry_type(e) == ZE_RAW, was_poor = zswap_entry_poor(e);
	int64_t was_len = zswap_entry_length(e);
	zs_free(pool, zswap_entry_handle(e));
	store_pool_sync(s, idx);
	e->w = (e->w & (ZE_COMP_MASK << ZE_COMP_SHIFT | ZE_POOL_MASK << ZE_POOL_SHIFT)) |
	       (uint64_t)(handle >> 1) << ZE_HANDLE_SHIFT | (uint64_t)n << ZE_LEN_SHIFT | ZE_COMPRESSED |
	       ZE_TRIED_BIT | ZE_RECOMP_BIT;
	cnt_add(&w->c.compr_bytes, n - was_len);
	if (was_raw)
		cnt_add(&w->c.raw, -1);
	cnt_add(&w->c.poor, (int64_t)zswap_entry_poor(e) - (int64_t)was_poor);
	return ZSWAP_RECOMP_DONE;
}

/* One compressor state (the struct comp_ws at off in struct store_ws) set
 * up in every workspace, workspace i's over mem + i * len, each under the
 * workspace's lock: no thread holding a workspace meets a state half made,
 * and once this returns none uses the memory the states had before. */
static bool store_ws_setup(struct zswap_store *s, size_t off, enum zswap_comp comp, int level, uint8_t *mem,
			   size_t len)
{
	for (unsigned int i = 0; i < s->nr_ws; i++) {
		struct store_ws *w = &s->ws[i];

		pthread_mutex_lock(&w->lock);
		int rc = comp_ws_init((struct comp_ws *)((uint8_t *)w + off), comp, level, mem + (size_t)i * len, len);
		pthread_mutex_unlock(&w->lock);
		if (rc) {
			zlog("%s workspace of %zu bytes could not be set up", comp_name(comp), len);
			return false;
		}
	}
	return true;
}

/*
 * The second compressor's workspaces are set up at the first recompression,
 * not at start: a zstd context is tens of kilobytes resident a workspace,
 * and most processes never recompress. Every workspace is set up under its
 * lock before any entry is recompressed, so a load that meets a recompressed
 * entry always finds its decompressor. Returns false if one could not be.
 */
static bool store_recomp_prepare(struct zswap_store *s)
{
	if (atomic_load_explicit(&s->recomp_ready, memory_order_acquire))
		return true;
	if (!store_ws_setup(s, offsetof(struct store_ws, recomp), s->cfg.recomp, s->cfg.recomp_level, s->recomp_mem,
			    s->recomp_len)) {
		zlog("no recompression");
		return false;
	}
	atomic_store_explicit(&s->recomp_ready, true, memory_order_release);
	return true;
}

int zswap_recompress_entry(struct zswap_store *s, struct zswap_entry *e, size_t threshold, bool huge_only)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	if ((t != ZE_COMPRESSED && t != ZE_RAW) || (e->w & ZE_TRIED_BIT) || zswap_entry_length(e) < threshold ||
	    (huge_only && t != ZE_RAW) || !store_entry_ok(s, e))
		return ZSWAP_RECOMP_SKIP;
	if (!store_recomp_prepare(s))
		return -EIO;

	struct store_ws *w = store_ws_get(s);
	struct zs_pool *pool = s->pools[store_entry_id(e)];
	unsigned int was = zs_class_of(pool, zswap_entry_length(e));
	int n = store_restore(s, w, e, w->buf);
	/* A result of the same class frees nothing: ask for less. */
	if (n == 0)
		n = comp_compress(&w->recomp, w->buf, w->buf + ZS_PAGE_SIZE,
				  t == ZE_RAW ? s->huge_size - 1 : zswap_entry_length(e) - 1);
	int ret;
	if (n < 0) {
		ret = -EIO;
	} else if (n == 0 || zs_class_of(pool, (size_t)n) >= was) {
		ret = ZSWAP_RECOMP_KEPT;
	} else {
		ret = store_recomp_replace(s, w, e, n);
		if (ret == -ENOMEM)
			goto out;
	}
	if (ret != ZSWAP_RECOMP_DONE)
		e->w |= ZE_TRIED_BIT;
out:
	store_ws_put(w);
	return ret;
}

void zswap_store_set_backing(struct zswap_store *s, struct backing *b)
{
	s->own = 0;
	/* Published before any entry names it: a loader that finds an entry
	 * in the tier finds the tier. */
	__atomic_store_n(&s->tiers[0], b, __ATOMIC_RELEASE);
}

void zswap_store_reset_max(struct zswap_store *s)
{
	atomic_store(&s->mem_used_max, store_mem_used(s));
}

void zswap_store_set_limit(struct zswap_store *s, uint64_t mem_limit, uint64_t accept_limit)
{
	__atomic_store_n(&s->cfg.accept_limit, accept_limit, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cfg.mem_limit, mem_limit, __ATOMIC_RELAXED);
	/* Judged afresh at the next store against the new limit. */
	atomic_store(&s->reached_full, false);
}

bool zswap_store_fork_tier(struct zswap_store *s, struct backing *b)
{
	for (unsigned int i = 0; i < ZE_TIERS; i++) {
		if (s->tiers[i])
			continue;
		s->tiers[i] = b;
		s->own = i;
		return true;
	}
	return false;
}

/* The file of a ZE_BACKED entry and its slot there; NULL for any other
 * entry, a lost one or an index with no file. */
static struct backing *store_tier_of(const struct zswap_store *s, const struct zswap_entry *e, uint64_t *slot)
{
	uint64_t f = zswap_entry_slot(e);

	if (zswap_entry_type(e) != ZE_BACKED || f == ZE_SLOT_LOST)
		return NULL;
	*slot = f & ZE_TIER_SLOT_MASK;
	return (f >> ZE_TIER_SHIFT) < ZE_TIERS ? s->tiers[f >> ZE_TIER_SHIFT] : NULL;
}

struct backing *zswap_store_backing(const struct zswap_store *s)
{
	return s->tiers[s->own];
}

void zswap_entry_mark_lost(struct zswap_entry *e)
{
	e->w = ZE_SLOT_LOST << ZE_SLOT_SHIFT | ZE_BACKED_BIT | ZE_SAME;
}

/* A written-back entry: read (and verify) it, free its slot. A lost one
 * fails (the tier ignores its slot: out of range). */
static int store_load_backed(struct zswap_store *s, struct zswap_entry *e, void *dst)
{
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e, &slot);
	int ret = b && dst ? backing_read(b, slot, dst) : -EIO;

	if (b)
		backing_free(b, slot);
	store_entry_clear(e);
	return ret;
}

uint64_t zswap_load_backed_run(struct zswap_store *s, struct zswap_entry *const *e, size_t n, void *dst)
{
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e[0], &slot);
	uint64_t bad = zswap_read_backed_run(s, e, n, dst);

	for (size_t k = 0; k < n; k++) {
		if (b)
			backing_free(b, slot + k);
		store_entry_clear(e[k]);
	}
	return bad;
}

uint64_t zswap_read_backed_run(struct zswap_store *s, struct zswap_entry *const *e, size_t n, void *dst)
{
	/* Consecutive slots are in one file (the index is above them). */
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e[0], &slot);
	uint64_t bad = b ? backing_read_run(b, slot, n, dst) : ~0ULL;

	return n < 64 ? bad & ((1ULL << n) - 1) : bad;
}

bool zswap_backed_keepable(const struct zswap_store *s, const struct zswap_entry *e)
{
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e, &slot);

	return b && backing_room_to_keep(b);
}

bool zswap_swap_full(const struct zswap_store *s)
{
	return s->tiers[s->own] && !backing_room_to_keep(s->tiers[s->own]);
}

bool zswap_backed_same(const struct zswap_store *s, const struct zswap_entry *e, const void *page)
{
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e, &slot);

	return b && backing_same(b, slot, page);
}

void zswap_kept_add(struct zswap_store *s, unsigned int n)
{
	atomic_fetch_add_explicit(&s->swap_cached, n, memory_order_relaxed);
}

void zswap_kept_release(struct zswap_store *s, struct zswap_entry *e)
{
	atomic_fetch_sub_explicit(&s->swap_cached, 1, memory_order_relaxed);
	zswap_invalidate(s, e);
}

void zswap_kept_reclaimed(struct zswap_store *s)
{
	atomic_fetch_sub_explicit(&s->swap_cached, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->swap_cached_reclaimed, 1, memory_order_relaxed);
}

int zswap_read_backed(struct zswap_store *s, const struct zswap_entry *e, void *dst)
{
	uint64_t slot = 0;
	struct backing *b = store_tier_of(s, e, &slot);

	return b ? backing_read(b, slot, dst) : -EIO;
}

int zswap_writeback_restore(struct zswap_store *s, const struct zswap_entry *e, void *buf)
{
	enum zswap_entry_type t = zswap_entry_type(e);
	struct store_ws *w;
	int ret = 0;

	if (!s->tiers[s->own] || (t != ZE_COMPRESSED && t != ZE_RAW) || !store_entry_ok(s, e))
		return -EINVAL;
	w = store_ws_get(s);
	if (store_restore(s, w, e, buf) != 0)
		ret = -EBADMSG;
	store_ws_put(w);
	return ret;
}

void zswap_writeback_commit(struct zswap_store *s, struct zswap_entry *e, int64_t slot)
{
	struct store_ws *w = store_ws_get(s);

	if (slot >= 0) {
		store_drop(s, w, e);	/* the pool's copy, and the stored gauge */
		e->w = ((uint64_t)s->own << ZE_TIER_SHIFT | (uint64_t)slot) << ZE_SLOT_SHIFT | ZE_BACKED_BIT | ZE_SAME;
		cnt_add(&w->c.written_back, 1);
	} else {
		cnt_add(&w->c.writeback_failed, 1);
	}
	store_ws_put(w);
}

int zswap_writeback_entry(struct zswap_store *s, struct zswap_entry *e, void *buf)
{
	int64_t slot;
	int ret = zswap_writeback_restore(s, e, buf);

	if (ret)
		return ret;
	int n = backing_write_batch(s->tiers[s->own], buf, 1, &slot);
	zswap_writeback_commit(s, e, n == 1 ? slot : -1);
	return n == 1 ? 0 : n;
}

int zswap_load_page(struct zswap_store *s, struct zswap_entry *e, void *dst)
{
	struct store_ws *w;
	int ret = 0;

	if (zswap_entry_type(e) == ZE_BACKED)
		return store_load_backed(s, e, dst);
	if (zswap_entry_type(e) == ZE_NONE || (zswap_entry_type(e) != ZE_SAME && !store_entry_ok(s, e)))
		return -EINVAL;
	if (!dst && !zswap_entry_is_zero(e))
		return -EINVAL;

	w = store_ws_get(s);
	if (zswap_entry_type(e) == ZE_SAME) {
		if (dst)
			store_fill(dst, zswap_entry_word(e));
	} else {
		ret = store_take_injected(s, ZSWAP_INJECT_DECOMPRESS) ? -EIO : store_restore(s, w, e, dst);
	}
	/* Exclusive load: the copy goes whether or not it could be restored; a
	 * corrupt object is of no use to anyone. */
	store_drop(s, w, e);
	if (ret)
		cnt_add(&w->c.decompress_fail, 1);
	else
		cnt_add(&w->c.zswpin, 1);
	store_ws_put(w);
	return ret;
}

void zswap_invalidate(struct zswap_store *s, struct zswap_entry *e)
{
	struct store_ws *w;

	if (zswap_entry_type(e) == ZE_BACKED) {
		uint64_t slot = 0;
		struct backing *b = store_tier_of(s, e, &slot);
		if (b)
			backing_free(b, slot);
		store_entry_clear(e);
		return;
	}
	if (zswap_entry_type(e) == ZE_NONE || (zswap_entry_type(e) != ZE_SAME && !store_entry_ok(s, e)))
		return;
	w = store_ws_get(s);
	store_drop(s, w, e);
	store_ws_put(w);
}

uint64_t zswap_store_poor_pages(struct zswap_store *s)
{
	int64_t n = 0;

	for (unsigned int i = 0; i < s->nr_ws; i++)
		n += atomic_load_explicit(&s->ws[i].c.poor, memory_order_relaxed);
	return n > 0 ? (uint64_t)n : 0;
}

/* Each workspace counts the stores and loads made through it: only the
 * sum means anything. */
static int64_t store_pool_held(struct zswap_store *s)
{
	int64_t held = 0;

	for (unsigned int i = 0; i < s->nr_ws; i++)
		held += atomic_load_explicit(&s->ws[i].c.stored, memory_order_relaxed);
	return held;
}

/* Slots in use in the store's tiers (kept ones included). */
static uint64_t store_tier_held(struct zswap_store *s)
{
	uint64_t held = 0;

	for (unsigned int i = 0; i < ZE_TIERS; i++)
		if (s->tiers[i])
			held += backing_in_use(s->tiers[i]);
	return held;
}

ZSWAP_STARTUP uint64_t zswap_store_held(struct zswap_store *s)
{
	int64_t held = store_pool_held(s) + (int64_t)store_tier_held(s);

	return held > 0 ? (uint64_t)held : 0;
}

bool zswap_store_empty(struct zswap_store *s)
{
	return !store_pool_held(s) && !store_tier_held(s);
}

void zswap_store_stats(struct zswap_store *s, struct zswap_stats *st)
{
	struct store_counters sum;
	int64_t *out = (int64_t *)&sum;
	const size_t nfields = sizeof(sum) / sizeof(int64_t);
	uint64_t used = store_mem_used(s), meta = store_meta_bytes(s), compacted = 0;

	memset(&sum, 0, sizeof(sum));
	for (unsigned int i = 0; i < s->nr_ws; i++) {
		_Atomic int64_t *in = (_Atomic int64_t *)&s->ws[i].c;
		for (size_t f = 0; f < nfields; f++)
			out[f] += atomic_load_explicit(&in[f], memory_order_relaxed);
	}
	/* A snapshot taken while others store and load can catch a page's +1
	 * before its -1 elsewhere, or the reverse: never report below zero. */
	for (size_t f = 0; f < nfields; f++)
		if (out[f] < 0)
			out[f] = 0;
	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++) {
		if (!s->pools[i])
			continue;
		compacted += zs_get_pages_compacted(s->pools[i]);
		store_pool_sync(s, i);
	}
	compacted += s->compacted_gone;
	pthread_mutex_unlock(&s->kinds_lock);
	store_update_max(s, used);

	st->stored_pages = (uint64_t)sum.stored;
	st->pool_total_size = used;	/* zswap's debugfs counts the same pages */
	st->same_filled_pages = (uint64_t)sum.same;
	st->stored_incompressible_pages = (uint64_t)sum.raw;
	st->reject_compress_poor = (uint64_t)sum.reject_compress_poor;
	st->reject_compress_fail = (uint64_t)sum.reject_compress_fail;
	st->reject_alloc_fail = (uint64_t)sum.reject_alloc_fail;
	st->pool_limit_hit = (uint64_t)sum.pool_limit_hit;
	st->decompress_fail = (uint64_t)sum.decompress_fail;

	st->zswpout = (uint64_t)sum.zswpout;
	st->zswpin = (uint64_t)sum.zswpin;

	st->orig_data_size = (uint64_t)sum.stored * ZS_PAGE_SIZE;
	st->compr_data_size = (uint64_t)sum.compr_bytes;
	st->mem_used_total = used;
	st->mem_limit = s->cfg.mem_limit;
	st->mem_used_max = atomic_load_explicit(&s->mem_used_max, memory_order_relaxed);
	st->same_pages = (uint64_t)sum.same;
	st->pages_compacted = compacted;
	st->huge_pages = (uint64_t)sum.raw;
	st->huge_pages_since = (uint64_t)sum.raw_since;
	st->pool_metadata_bytes = meta;
	st->written_back_pages = (uint64_t)sum.written_back;
	st->writeback_failed = (uint64_t)sum.writeback_failed;
	st->zswpwb = st->written_back_pages;
	int64_t cached = atomic_load_explicit(&s->swap_cached, memory_order_relaxed);
	st->swap_cached_pages = cached > 0 ? (uint64_t)cached : 0;
	st->swap_cached_reclaimed = atomic_load_explicit(&s->swap_cached_reclaimed, memory_order_relaxed);
	st->reject_reclaim_fail = (uint64_t)sum.reject_reclaim_fail;
	/* The file this process writes; reads from any (a fork child reads
	 * the files it inherited too, counted from its parent's figures). */
	st->bd_count = st->bd_reads = st->bd_writes = st->bd_read_fail = 0;
	st->backing_disk_bytes = st->backing_max_bytes = st->backing_free_bytes = 0;
	for (unsigned int i = 0; i < ZE_TIERS; i++) {
		struct backing_stats bs;
		if (!s->tiers[i])
			continue;
		backing_stats(s->tiers[i], &bs);
		st->bd_reads += bs.bd_reads;
		st->bd_read_fail += bs.bd_read_fail;
		if (i != s->own)
			continue;
		st->bd_count = bs.bd_count;
		st->bd_writes = bs.bd_writes;
		st->backing_disk_bytes = bs.disk_bytes;
		st->backing_max_bytes = bs.max_bytes;
		st->backing_free_bytes = bs.free_bytes;
	}
}

unsigned long zswap_store_compact(struct zswap_store *s)
{
	return zswap_store_compact_some(s, ULONG_MAX);
}

unsigned long zswap_store_compact_some(struct zswap_store *s, unsigned long max_pages)
{
	unsigned long freed = 0;

	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS && freed < max_pages; i++) {
		if (!s->pools[i])
			continue;
		freed += zs_compact_some(s->pools[i], max_pages - freed);
		store_pool_sync(s, i);
	}
	pthread_mutex_unlock(&s->kinds_lock);
	return freed;
}

void zswap_store_set_reserve_min(struct zswap_store *s, unsigned long pages)
{
	pthread_mutex_lock(&s->kinds_lock);
	s->reserve_min = pages;
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++)
		if (s->pools[i])
			zs_set_reserve_min(s->pools[i], pages);
	pthread_mutex_unlock(&s->kinds_lock);
}

void zswap_store_release_reserve(struct zswap_store *s)
{
	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++)
		if (s->pools[i])
			zs_release_reserve(s->pools[i]);
	pthread_mutex_unlock(&s->kinds_lock);
}

unsigned long zswap_store_freeable_pages(struct zswap_store *s)
{
	unsigned long n = 0;

	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++)
		if (s->pools[i])
			n += zs_get_freeable_pages(s->pools[i]);
	pthread_mutex_unlock(&s->kinds_lock);
	return n;
}

bool zswap_store_class_stat(struct zswap_store *s, unsigned int index, struct zs_class_stat *sum)
{
	bool have = false;

	pthread_mutex_lock(&s->kinds_lock);
	for (unsigned int i = 0; i < STORE_POOL_IDS; i++) {
		struct zs_class_stat st;

		if (!s->pools[i] || !zs_class_stat(s->pools[i], index, &st))
			continue;
		if (!have) {
			*sum = st;
			have = true;
			continue;
		}
		for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
			sum->inuse_ratio[c] += st.inuse_ratio[c];
		sum->obj_allocated += st.obj_allocated;
		sum->obj_used += st.obj_used;
		sum->pages_used += st.pages_used;
		sum->freeable += st.freeable;
	}
	pthread_mutex_unlock(&s->kinds_lock);
	return have;
}

struct zs_pool *zswap_store_pool(struct zswap_store *s, unsigned int index)
{
	return index < s->nr_pools ? s->pools[store_pool_id(atomic_load(&s->cur), index)] : NULL;
}

struct zs_pool *zswap_store_entry_pool(struct zswap_store *s, const struct zswap_entry *e)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	return (t == ZE_COMPRESSED || t == ZE_RAW) && store_entry_ok(s, e) ? s->pools[store_entry_id(e)] : NULL;
}

/* A compressor's pools and workspace states freed (kinds_lock held, and no
 * entry names it). The running totals drop what its pools held. */
static void store_kind_free(struct zswap_store *s, unsigned int kind)
{
	struct store_kind *k = &s->kinds[kind];

	for (unsigned int i = 0; i < s->nr_pools; i++) {
		unsigned int id = store_pool_id(kind, i);

		if (!s->pools[id])
			continue;
		s->compacted_gone += zs_get_pages_compacted(s->pools[id]);
		zs_destroy_pool(s->pools[id]);
		s->pools[id] = NULL;
		unsigned long pages = atomic_exchange(&s->pages_seen[id], 0);
		size_t meta = atomic_exchange(&s->meta_seen[id], 0);
		atomic_fetch_sub(&s->pages_total, (int64_t)pages);
		atomic_fetch_sub(&s->meta_total, (int64_t)meta);
	}
	if (k->mem)
		prim_free(k->mem, k->mem_len);
	k->mem = NULL;
	k->live = false;
}

/* Make compressor kind usable at level (kinds_lock held): a state in every
 * workspace (anew if the level differs: zstd's context grows with it) and
 * its pools. 0 or -ENOMEM, with nothing changed that was in use. */
static int store_kind_make(struct zswap_store *s, unsigned int kind, int level)
{
	struct store_kind *k = &s->kinds[kind];
	size_t off = offsetof(struct store_ws, comp) + kind * sizeof(struct comp_ws);

	if (!k->mem || k->level != level) {
		size_t len = comp_ws_size((enum zswap_comp)kind, level), mem_len = len * s->nr_ws;
		uint8_t *mem = prim_alloc(mem_len);

		if (!mem)
			return -ENOMEM;
		if (!store_ws_setup(s, off, (enum zswap_comp)kind, level, mem, len)) {
			if (k->mem)	/* back to the states in use */
				store_ws_setup(s, off, (enum zswap_comp)kind, k->level, k->mem, k->mem_len / s->nr_ws);
			prim_free(mem, mem_len);
			return -ENOMEM;
		}
		if (k->mem)
			prim_free(k->mem, k->mem_len);
		k->mem = mem;
		k->mem_len = mem_len;
		k->level = level;
	}
	if (k->live)
		return 0;
	for (unsigned int i = 0; i < s->nr_pools; i++) {
		unsigned int id = store_pool_id(kind, i);

		s->pools[id] = zs_create_pool(comp_name((enum zswap_comp)kind), s->cfg.order, s->cfg.lock);
		if (!s->pools[id]) {
			store_kind_free(s, kind);
			return -ENOMEM;
		}
		zs_set_reserve_min(s->pools[id], s->reserve_min);
		store_pool_sync(s, id);
	}
	k->live = true;
	return 0;
}

/* Compressors in use besides the current one (kinds_lock held). */
static unsigned int store_old_kinds(const struct zswap_store *s)
{
	unsigned int n = 0, cur = atomic_load(&s->cur);

	for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++)
		n += k != cur && s->kinds[k].live;
	return n;
}

int zswap_store_set_comp(struct zswap_store *s, enum zswap_comp comp, int level)
{
	int lvl = comp_effective_level(comp, level), ret;

	if (lvl < 0 || (unsigned int)comp >= ZSWAP_COMP_KINDS)
		return -EINVAL;
	if (comp_missing(comp))
		return -ENOPKG;	/* its library is not loaded (comp_missing says why) */
	pthread_mutex_lock(&s->kinds_lock);
	ret = store_kind_make(s, comp, lvl);
	if (!ret) {
		/* After its pools and states: a store that reads it finds both. */
		atomic_store_explicit(&s->cur, (unsigned int)comp, memory_order_release);
		atomic_store(&s->old_live, store_old_kinds(s));
	}
	pthread_mutex_unlock(&s->kinds_lock);
	if (!ret)
		zswap_store_reap(s);
	return ret;
}

bool zswap_store_reap_due(const struct zswap_store *s)
{
	return atomic_load_explicit(&s->old_live, memory_order_relaxed) != 0;
}

unsigned int zswap_store_reap(struct zswap_store *s)
{
	int64_t objs[ZSWAP_COMP_KINDS] = { 0 };
	unsigned int freed = 0;

	if (!atomic_load(&s->old_live))
		return 0;
	pthread_mutex_lock(&s->kinds_lock);
	unsigned int cur = atomic_load(&s->cur);
	/* The grace period and the count in one pass: a store that read a
	 * compressor before cur changed ends before its workspace's lock is
	 * free, and adds its object then. No object of an old compressor is
	 * made after, so a sum of 0 taken behind every lock is exact. */
	for (unsigned int i = 0; i < s->nr_ws; i++) {
		struct store_ws *w = &s->ws[i];

		pthread_mutex_lock(&w->lock);
		for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++)
			objs[k] += atomic_load_explicit(&w->c.objs[k], memory_order_relaxed);
		pthread_mutex_unlock(&w->lock);
	}
	for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++) {
		if (k == cur || !s->kinds[k].live || objs[k] != 0)
			continue;
		store_kind_free(s, k);
		atomic_fetch_add(&s->kinds_freed, 1);
		freed++;
	}
	atomic_store(&s->old_live, store_old_kinds(s));
	pthread_mutex_unlock(&s->kinds_lock);
	return freed;
}

unsigned int zswap_store_comp_stats(struct zswap_store *s, struct zswap_store_comp_stat out[ZSWAP_COMP_KINDS],
				    uint64_t *freed)
{
	int64_t objs[ZSWAP_COMP_KINDS] = { 0 };
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nr_ws; i++)
		for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++)
			objs[k] += atomic_load_explicit(&s->ws[i].c.objs[k], memory_order_relaxed);
	pthread_mutex_lock(&s->kinds_lock);
	unsigned int cur = atomic_load(&s->cur);
	for (unsigned int j = 0; j < ZSWAP_COMP_KINDS; j++) {
		/* The current one first, then the others in order. */
		unsigned int k = j == 0 ? cur : j - 1 < cur ? j - 1 : j;
		struct zswap_store_comp_stat *o = &out[n];

		if (!s->kinds[k].live)
			continue;
		o->comp = (enum zswap_comp)k;
		o->level = s->kinds[k].level;
		o->current = k == cur;
		o->stored_pages = objs[k] > 0 ? (uint64_t)objs[k] : 0;
		o->pool_total_size = 0;
		for (unsigned int i = 0; i < s->nr_pools; i++)
			o->pool_total_size += (uint64_t)zs_get_total_pages(s->pools[store_pool_id(k, i)]) * ZS_PAGE_SIZE;
		n++;
	}
	pthread_mutex_unlock(&s->kinds_lock);
	*freed = atomic_load(&s->kinds_freed);
	return n;
}

ZSWAP_STARTUP void zswap_store_fork_child(struct zswap_store *s)
{
	const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;	/* on the stack (layout.h) */

	prim_reset(&s->kinds_lock, &init, sizeof(init));	/* pthread_mutex_init's state */
}

unsigned int zswap_store_nr_pools(const struct zswap_store *s)
{
	return s->nr_pools;
}

void zswap_store_inject(struct zswap_store *s, enum zswap_inject kind, unsigned int n)
{
	atomic_fetch_add_explicit(&s->inject[kind], n, memory_order_relaxed);
}

static size_t store_round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

static unsigned int store_default_workspaces(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus < 1)
		cpus = 1;
	if (cpus > (STORE_MAX_WORKSPACES - 8) / 2)
		cpus = (STORE_MAX_WORKSPACES - 8) / 2;
	return 2 * (unsigned int)cpus + 8;
}

static bool store_config_ok(const struct zswap_store_config *cfg)
{
	return cfg && comp_ws_size(cfg->comp, cfg->level) && comp_ws_size(cfg->recomp, cfg->recomp_level) &&
	       cfg->order >= ZS_MIN_PAGE_ORDER && cfg->order <= ZS_MAX_PAGE_ORDER &&
	       (cfg->lock == ZS_LOCK_CLASS || cfg->lock == ZS_LOCK_POOL) &&
	       cfg->nr_pools <= STORE_MAX_POOLS && cfg->nr_workspaces <= STORE_MAX_WORKSPACES;
}

struct zswap_store *zswap_store_create(const struct zswap_store_config *cfg)
{
	struct zswap_store *s;
	unsigned int nr_ws;
	size_t recomp_len, per_ws, head, len;
	uint8_t *mem;

	if (!store_config_ok(cfg)) {
		errno = EINVAL;
		return NULL;
	}
	nr_ws = cfg->nr_workspaces ? cfg->nr_workspaces : store_default_workspaces();
	recomp_len = comp_ws_size(cfg->recomp, cfg->recomp_level);
	per_ws = recomp_len + COMP_BUF_SIZE;
	head = store_round64(sizeof(*s)) + (size_t)nr_ws * sizeof(struct store_ws);
	len = store_round64(head) + (size_t)nr_ws * per_ws;

	mem = prim_alloc(len);
	if (!mem)
		return NULL;
	s = (struct zswap_store *)mem;
	s->cfg = *cfg;
	s->cfg.level = comp_effective_level(cfg->comp, cfg->level);
	s->cfg.nr_workspaces = nr_ws;
	s->nr_pools = cfg->nr_pools ? cfg->nr_pools : 1;
	s->cfg.nr_pools = s->nr_pools;
	s->nr_ws = nr_ws;
	s->reserve_min = ZS_RESERVE_MIN_PAGES;
	s->block_len = len;
	s->recomp_len = recomp_len;
	s->ws = (struct store_ws *)(mem + store_round64(sizeof(*s)));

	s->recomp_mem = mem + store_round64(head);
	pthread_mutex_init(&s->kinds_lock, NULL);
	for (unsigned int i = 0; i < nr_ws; i++) {
		struct store_ws *w = &s->ws[i];

		pthread_mutex_init(&w->lock, NULL);
		w->buf = s->recomp_mem + (size_t)nr_ws * recomp_len + (size_t)i * COMP_BUF_SIZE;
	}
	if (store_kind_make(s, cfg->comp, s->cfg.level))
		goto fail;
	atomic_store(&s->cur, (unsigned int)cfg->comp);
	s->huge_size = zs_huge_class_size(s->pools[store_pool_id(cfg->comp, 0)]);
	if (s->huge_size < 2 || s->huge_size > ZS_PAGE_SIZE)
		s->huge_size = ZS_PAGE_SIZE;
	atomic_store(&s->mem_used_max, store_mem_used(s));
	return s;

fail:
	zswap_store_destroy(s);
	errno = ENOMEM;
	return NULL;
}

void zswap_store_destroy(struct zswap_store *s)
{
	if (!s)
		return;
	if (store_tls.s == s)
		store_tls.s = NULL;
	for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++)
		store_kind_free(s, k);
	for (unsigned int i = 0; i < s->nr_ws; i++)
		pthread_mutex_destroy(&s->ws[i].lock);
	pthread_mutex_destroy(&s->kinds_lock);
	prim_free(s, s->block_len);
}
