/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * region.c - the region table and the slot arrays.
 *
 * The table is an array of region pointers sorted by address (regions never
 * overlap), searched by binary search under a rwlock. Region descriptors come
 * from a free list in prim memory; the table array grows by doubling into a
 * new prim allocation. Nothing here ever touches program memory, so holding
 * the table lock can never wait on a page fault.
 */
#include "config.h"
#include "engine/region.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "base/layout.h"
#include "base/log.h"
#include "base/prim.h"

struct region {
	uintptr_t start, end;
	struct slot_array *arr;
	size_t first;
	uint32_t flags;
	uint64_t gen;		/* bumped each time the descriptor is reused */
	uint64_t moved_in;	/* the REMAP (region_remaps) that moved it here last, or 0 */
	struct region *next_free;
};

#define REGION_CHUNK 1024

static pthread_rwlock_t tbl_lock ZSWAP_STARTUP_DATA = PTHREAD_RWLOCK_INITIALIZER;
static struct region **tbl;
static size_t tbl_n, tbl_cap;
static struct region *region_free_list;
static uint64_t tbl_bytes;	/* sum of region sizes, for statistics */

/*
 * The UNMAP each REMAP is followed by. A moving mremap unmaps its old range
 * under mmap_lock, then queues REMAP, waits until it is read, and only then
 * queues UNMAP of exactly [from, from + len). Meanwhile another thread's
 * mremap may move its own mapping into that very range (the kernel found it
 * free) and have its REMAP read first: the late UNMAP must then spare the
 * regions that REMAP brought in, or their entries are dropped and the moved
 * buffer reads zeros (prog_growth realloc; docs/DESIGN.md, "Tried and
 * rejected"). Each REMAP leaves its old range here with its number; the UNMAP
 * of exactly that range takes it out and spares the regions moved in by later
 * REMAPs. A REMAP followed by no UNMAP (MREMAP_DONTUNMAP) leaves an entry
 * nothing takes: a later munmap of exactly that range then spares only regions
 * moved in since, of which there are none while the old range stays mapped.
 * Table lock held for writing; oldest entry overwritten when full.
 */
#define REGION_UNMAPS_DUE 16
static struct {
	uintptr_t start, end;
	uint64_t remap;		/* 0: free */
} unmaps_due[REGION_UNMAPS_DUE];
static uint64_t region_remaps;	/* REMAPs processed */

int region_init(void)
{
	tbl_cap = 1024;
	tbl = prim_alloc(tbl_cap * sizeof(*tbl));
	return tbl ? 0 : -ENOMEM;
}

ZSWAP_STARTUP void region_rdlock(void)
{
	pthread_rwlock_rdlock(&tbl_lock);
}

ZSWAP_STARTUP void region_unlock(void)
{
	pthread_rwlock_unlock(&tbl_lock);
}

ZSWAP_STARTUP void region_fork_child(void)
{
	/* The forking thread held it for reading, and a writer may have been
	 * queued on it: neither exists here. */
	const pthread_rwlock_t init = PTHREAD_RWLOCK_INITIALIZER;	/* on the stack (layout.h) */

	prim_reset(&tbl_lock, &init, sizeof(init));
}

static size_t region_pages(const struct region *r)
{
	return (r->end - r->start) >> ZS_PAGE_SHIFT;
}

/* --- slot arrays ------------------------------------------------------ */

struct slot_array *region_arr_alloc(size_t npages)
{
	size_t bytes = sizeof(struct slot_array) + npages * sizeof(struct slot);
	/* Reserved, not committed: the zeroed slots (RESIDENT, no entry) of a
	 * region whose pages are never evicted cost no memory. */
	struct slot_array *arr = prim_alloc(bytes);

	if (!arr)
		return NULL;
	atomic_init(&arr->refs, 1);
	arr->npages = npages;
	arr->bytes = bytes;
	return arr;
}

void region_arr_get(struct slot_array *arr)
{
	atomic_fetch_add_explicit(&arr->refs, 1, memory_order_relaxed);
}

void region_arr_put(struct slot_array *arr)
{
	if (!arr)
		return;
	long old = atomic_fetch_sub_explicit(&arr->refs, 1, memory_order_acq_rel);
	ZS_CHECK(old > 0);
	if (old == 1)
		prim_free(arr, arr->bytes);
}

/* --- descriptors and the sorted array (write lock held) ---------------- */

static struct region *region_new(uintptr_t start, uintptr_t end, uint32_t flags)
{
	struct region *r = region_free_list;

	if (!r) {
		struct region *chunk = prim_alloc(REGION_CHUNK * sizeof(*chunk));
		if (!chunk)
			return NULL;
		for (size_t i = 0; i < REGION_CHUNK; i++) {
			chunk[i].next_free = r;
			r = &chunk[i];
		}
	}
	region_free_list = r->next_free;
	uint64_t gen = r->gen + 1;
	memset(r, 0, sizeof(*r));
	r->gen = gen;
	r->start = start;
	r->end = end;
	/* REGION_LIBC outlives REGION_ADOPTED (cleared at registration): the
	 * statistics dump names the C library's memory by it. */
	r->flags = (flags & REGION_ADOPTED) ? flags | REGION_LIBC : flags;
	return r;
}

static void region_free(struct region *r)
{
	region_arr_put(r->arr);
	r->arr = NULL;
	r->gen++;
	r->next_free = region_free_list;
	region_free_list = r;
}

/* Index of the first region whose end is above addr (tbl_n if none). */
static size_t tbl_search(uintptr_t addr)
{
	size_t lo = 0, hi = tbl_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tbl[mid]->end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int tbl_insert_at(size_t pos, struct region *r)
{
	if (tbl_n == tbl_cap) {
		size_t ncap = tbl_cap * 2;
		struct region **n = prim_alloc(ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memcpy(n, tbl, tbl_n * sizeof(*n));
		prim_free(tbl, tbl_cap * sizeof(*tbl));
		tbl = n;
		tbl_cap = ncap;
	}
	memmove(&tbl[pos + 1], &tbl[pos], (tbl_n - pos) * sizeof(*tbl));
	tbl[pos] = r;
	tbl_n++;
	tbl_bytes += r->end - r->start;
	return 0;
}

static void tbl_remove_at(size_t pos)
{
	struct region *r = tbl[pos];

	tbl_bytes -= r->end - r->start;
	memmove(&tbl[pos], &tbl[pos + 1], (tbl_n - pos - 1) * sizeof(*tbl));
	tbl_n--;
	region_free(r);
}

/* Split tbl[pos] at addr (strictly inside it); the upper part goes to pos+1
 * and shares the slot array. */
static int tbl_split(size_t pos, uintptr_t addr)
{
	struct region *r = tbl[pos];
	struct region *u = region_new(addr, r->end, r->flags);

	if (!u)
		return -ENOMEM;
	if (r->arr) {
		u->arr = r->arr;
		region_arr_get(u->arr);
		u->first = r->first + ((addr - r->start) >> ZS_PAGE_SHIFT);
	}
	u->moved_in = r->moved_in;
	tbl_bytes -= r->end - addr;
	r->end = addr;
	if (tbl_insert_at(pos + 1, u) < 0) {
		tbl_bytes += u->end - addr;
		r->end = u->end;
		region_free(u);
		return -ENOMEM;
	}
	return 0;
}

/* Make region boundaries fall at start and end (when inside a region). */
static void tbl_split_bounds(uintptr_t start, uintptr_t end)
{
	size_t i = tbl_search(start);

	if (i < tbl_n && tbl[i]->start < start && tbl[i]->end > start)
		tbl_split(i, start);
	i = tbl_search(end);
	if (i < tbl_n && tbl[i]->start < end && tbl[i]->end > end)
		tbl_split(i, end);
}

/* Take [start, end) out of the table. Regions are split at the bounds first,
 * so only whole regions are removed. With only_unreg, registered regions are
 * kept. Returns true if any region overlapped. */
static bool tbl_cut(uintptr_t start, uintptr_t end, bool only_unreg, bool only_unmanageable)
{
	bool any = false;
	size_t i = tbl_search(start);

	if (i >= tbl_n || tbl[i]->start >= end)
		return false;
	tbl_split_bounds(start, end);
	i = tbl_search(start);
	while (i < tbl_n && tbl[i]->start < end) {
		struct region *r = tbl[i];
		any = true;
		/* A region still straddling a bound is one whose split failed
		 * (no memory): keep it rather than drop what lies outside. */
		if (r->start < start || r->end > end ||
		    (only_unreg && (r->flags & REGION_REGISTERED)) ||
		    (only_unmanageable && (r->flags & (REGION_UNMANAGEABLE | REGION_KEEPOUT)) != REGION_UNMANAGEABLE)) {
			i++;
			continue;
		}
		tbl_remove_at(i);
	}
	return any;
}

static void region_fill_ref(const struct region *r, struct region_ref *ref, bool arr_ref)
{
	ref->start = r->start;
	ref->end = r->end;
	ref->arr = r->arr;
	ref->first = r->first;
	ref->flags = r->flags;
	ref->id = (void *)r;
	ref->gen = r->gen;
	if (arr_ref && r->arr)
		region_arr_get(r->arr);
}

/* --- the interface ---------------------------------------------------- */

bool region_lookup_locked(uintptr_t addr, struct region_ref *ref, bool arr_ref)
{
	size_t i = tbl_search(addr);

	if (i < tbl_n && tbl[i]->start <= addr) {
		region_fill_ref(tbl[i], ref, arr_ref);
		return true;
	}
	memset(ref, 0, sizeof(*ref));
	ref->end = i < tbl_n ? tbl[i]->start : UINTPTR_MAX;
	return false;
}

bool region_lookup(uintptr_t addr, struct region_ref *ref, bool arr_ref)
{
	bool found;

	pthread_rwlock_rdlock(&tbl_lock);
	found = region_lookup_locked(addr, ref, arr_ref);
	pthread_rwlock_unlock(&tbl_lock);
	return found;
}

int region_insert(uintptr_t start, uintptr_t end, uint32_t flags)
{
	int rc = 0;

	pthread_rwlock_wrlock(&tbl_lock);
	size_t i = tbl_search(start);
	uintptr_t cur = start;
	while (cur < end) {
		if (i < tbl_n && tbl[i]->start <= cur) {
			cur = tbl[i]->end;
			i++;
			continue;
		}
		uintptr_t gap_end = (i < tbl_n && tbl[i]->start < end) ? tbl[i]->start : end;
		struct region *r = region_new(cur, gap_end, flags);
		if (!r || tbl_insert_at(i, r) < 0) {
			if (r)
				region_free(r);
			rc = -ENOMEM;
			break;
		}
		i++;
		cur = gap_end;
	}
	pthread_rwlock_unlock(&tbl_lock);
	return rc;
}

bool region_forget_unregistered(uintptr_t start, uintptr_t end)
{
	bool any;

	pthread_rwlock_wrlock(&tbl_lock);
	any = tbl_cut(start, end, true, false);
	pthread_rwlock_unlock(&tbl_lock);
	return any;
}

void region_forget_unmanageable(uintptr_t start, uintptr_t end)
{
	pthread_rwlock_wrlock(&tbl_lock);
	tbl_cut(start, end, false, true);
	pthread_rwlock_unlock(&tbl_lock);
}

/* Drop one slot: its entry is freed, a resident slot becomes RESIDENT | mark
 * (COLD cleared), an in-flight one is marked DROPPED for its owner. */
static void region_drop_slot_mark(struct zswap_store *store, struct slot *s, uint32_t mark)
{
	uint32_t old = atomic_load(&s->state);

	for (;;) {
		uint32_t st = old & SLOT_STATE;
		if (st == SLOT_RESIDENT) {
			/* A kept slot goes with the page: copied before the
			 * claim, as a stored entry is. */
			struct zswap_entry e = s->e;
			if (old == (SLOT_RESIDENT | mark))
				return;
			if (atomic_compare_exchange_weak(&s->state, &old, SLOT_RESIDENT | mark)) {
				if (old & SLOT_KEPT)
					zswap_kept_release(store, &e);
				return;
			}
		} else if (st == SLOT_STORED) {
			/* Only the thread that moves a slot out of STORED may use
			 * its entry: copy it, then claim. The page is not present:
			 * the zap has nothing to take, no ZAP needed. */
			struct zswap_entry e = s->e;
			if (atomic_compare_exchange_weak(&s->state, &old, SLOT_RESIDENT)) {
				zswap_invalidate(store, &e);
				return;
			}
		} else {
			/* In flight: its owner sees DROPPED and discards. (An
			 * evictor moved the page out before the event was read, so
			 * the zap has nothing to take; a handler fills a page only
			 * under eng.ev_lock read, never between event and zap of a
			 * page it claimed before.) */
			if ((old & SLOT_DROPPED) ||
			    atomic_compare_exchange_weak(&s->state, &old, old | SLOT_DROPPED))
				return;
		}
	}
}

void region_drop_slot(struct zswap_store *store, struct slot *s)
{
	region_drop_slot_mark(store, s, 0);
}

bool region_release_kept(struct zswap_store *store, struct slot *s)
{
	uint32_t old = atomic_load(&s->state);

	while ((old & (SLOT_STATE | SLOT_KEPT)) == (SLOT_RESIDENT | SLOT_KEPT)) {
		struct zswap_entry e = s->e;
		if (atomic_compare_exchange_weak(&s->state, &old, old & ~SLOT_KEPT)) {
			zswap_kept_release(store, &e);
			return true;
		}
	}
	return false;
}


/* fn on the slot of every page of [start, end) in every registered region
 * (the table's lock held, either side). */
static void tbl_each_slot(uintptr_t start, uintptr_t end, void (*fn)(struct slot *s, void *arg), void *arg)
{
	for (size_t i = tbl_search(start); i < tbl_n && tbl[i]->start < end; i++) {
		struct region *r = tbl[i];
		if (!r->arr)
			continue;
		uintptr_t a = r->start > start ? r->start : start;
		uintptr_t b = r->end < end ? r->end : end;
		size_t idx = r->first + ((a - r->start) >> ZS_PAGE_SHIFT);
		for (uintptr_t p = a; p < b; p += ZS_PAGE_SIZE, idx++)
			fn(&r->arr->slots[idx], arg);
	}
}

struct tbl_drop_arg {
	struct zswap_store *store;
	uint32_t mark;
};

static void tbl_drop_one(struct slot *s, void *arg)
{
	const struct tbl_drop_arg *d = arg;

	region_drop_slot_mark(d->store, s, d->mark);
}

/* Drop the slots of [start, end) in every registered region (lock held). */
static void tbl_drop_slots(struct zswap_store *store, uintptr_t start, uintptr_t end, uint32_t mark)
{
	struct tbl_drop_arg d = { store, mark };

	tbl_each_slot(start, end, tbl_drop_one, &d);
}

static void tbl_release_kept_one(struct slot *s, void *arg)
{
	region_release_kept(arg, s);
}

void region_release_kept_range(struct zswap_store *store, uintptr_t start, uintptr_t end)
{
	pthread_rwlock_rdlock(&tbl_lock);
	tbl_each_slot(start, end, tbl_release_kept_one, store);
	pthread_rwlock_unlock(&tbl_lock);
}

/* The REMAP whose UNMAP [start, end) is, taken out of unmaps_due, or 0. */
static uint64_t region_unmap_due_take(uintptr_t start, uintptr_t end)
{
	for (size_t i = 0; i < REGION_UNMAPS_DUE; i++) {
		if (unmaps_due[i].remap && unmaps_due[i].start == start && unmaps_due[i].end == end) {
			uint64_t remap = unmaps_due[i].remap;
			unmaps_due[i].remap = 0;
			return remap;
		}
	}
	return 0;
}

void region_drop_range(struct zswap_store *store, uintptr_t start, uintptr_t end, bool unmap)
{
	pthread_rwlock_wrlock(&tbl_lock);
	uint64_t remap = unmap ? region_unmap_due_take(start, end) : 0;
	if (!remap) {
		tbl_drop_slots(store, start, end, unmap ? 0 : SLOT_ZAP);
		if (unmap)
			tbl_cut(start, end, false, false);
	} else {
		/* A moving mremap's UNMAP (unmaps_due): what it unmapped was
		 * moved out by its REMAP; what a later REMAP moved in stays. */
		for (size_t i = tbl_search(start); i < tbl_n && tbl[i]->start < end;) {
			struct region *r = tbl[i];
			if (r->moved_in > remap) {
				i++;
				continue;
			}
			uintptr_t a = r->start > start ? r->start : start;
			uintptr_t b = r->end < end ? r->end : end;
			tbl_drop_slots(store, a, b, 0);
			tbl_cut(a, b, false, false);
			i = tbl_search(b);
		}
	}
	pthread_rwlock_unlock(&tbl_lock);
}

void region_forget(struct zswap_store *store, uintptr_t start, uintptr_t end)
{
	pthread_rwlock_wrlock(&tbl_lock);
	tbl_drop_slots(store, start, end, 0);
	tbl_cut(start, end, false, false);
	pthread_rwlock_unlock(&tbl_lock);
}

static void tbl_clear_zap_one(struct slot *s, void *arg)
{
	uint32_t old = atomic_load(&s->state);

	(void)arg;
	while ((old & SLOT_ZAP) && !atomic_compare_exchange_weak(&s->state, &old, old & ~SLOT_ZAP))
		;
}

void region_clear_zap(uintptr_t start, uintptr_t end)
{
	pthread_rwlock_rdlock(&tbl_lock);
	tbl_each_slot(start, end, tbl_clear_zap_one, NULL);
	pthread_rwlock_unlock(&tbl_lock);
}

void region_relocate(struct zswap_store *store, uintptr_t from, size_t len, uintptr_t to)
{
	struct region *moved[64];
	uintptr_t cur = from, end = from + len;

	pthread_rwlock_wrlock(&tbl_lock);
	uint64_t remap = ++region_remaps;
	/* Its UNMAP of [from, end) follows (unmaps_due): the oldest entry
	 * goes if the table is full (that UNMAP then spares nothing). */
	size_t slot = 0;
	for (size_t i = 0; i < REGION_UNMAPS_DUE; i++) {
		if (!unmaps_due[i].remap) {
			slot = i;
			break;
		}
		if (unmaps_due[i].remap < unmaps_due[slot].remap)
			slot = i;
	}
	unmaps_due[slot].start = from;
	unmaps_due[slot].end = end;
	unmaps_due[slot].remap = remap;
	/* Whatever the table still had at the destination was replaced. */
	tbl_drop_slots(store, to, to + len, 0);
	tbl_cut(to, to + len, false, false);
	tbl_split_bounds(from, end);
	/* Move whole regions, a bounded batch at a time (no allocation). */
	while (cur < end) {
		size_t n = 0, i = tbl_search(cur);
		while (i < tbl_n && tbl[i]->start < end && n < 64) {
			struct region *r = tbl[i];
			if (r->start < from || r->end > end) {
				cur = r->end;	/* a failed split: leave it */
				i++;
				continue;
			}
			tbl_bytes -= r->end - r->start;
			memmove(&tbl[i], &tbl[i + 1], (tbl_n - i - 1) * sizeof(*tbl));
			tbl_n--;
			moved[n++] = r;
			cur = r->end;
		}
		if (!n)
			break;
		for (size_t k = 0; k < n; k++) {
			struct region *r = moved[k];
			r->start = r->start - from + to;
			r->end = r->end - from + to;
			r->moved_in = remap;
			if (tbl_insert_at(tbl_search(r->start), r) < 0)
				region_free(r);	/* out of memory: unmanaged, faults zero-fill */
		}
	}
	pthread_rwlock_unlock(&tbl_lock);
}

bool region_set_registered(const struct region_ref *ref, struct slot_array *arr)
{
	bool ok = false;

	pthread_rwlock_wrlock(&tbl_lock);
	size_t i = tbl_search(ref->start);
	if (i < tbl_n) {
		struct region *r = tbl[i];
		if ((void *)r == ref->id && r->gen == ref->gen && r->start == ref->start &&
		    r->end == ref->end && !r->arr) {
			r->arr = arr;
			r->first = 0;
			r->flags |= REGION_REGISTERED;
			r->flags &= ~REGION_ADOPTED;
			ok = true;
		}
	}
	pthread_rwlock_unlock(&tbl_lock);
	return ok;
}

void region_set_unmanageable(uintptr_t start, uintptr_t end, bool cover_gaps, uint32_t extra)
{
	pthread_rwlock_wrlock(&tbl_lock);
	tbl_split_bounds(start, end);
	for (size_t i = tbl_search(start); i < tbl_n && tbl[i]->start < end; i++) {
		struct region *r = tbl[i];
		r->flags = (r->flags & ~REGION_REGISTERED) | REGION_UNMANAGEABLE | extra;
		region_arr_put(r->arr);
		r->arr = NULL;
	}
	pthread_rwlock_unlock(&tbl_lock);
	if (cover_gaps)
		region_insert(start, end, REGION_UNMANAGEABLE | extra);
}

bool region_addr_of(const struct slot_array *arr, size_t idx, uintptr_t *addr)
{
	bool found = false;

	pthread_rwlock_rdlock(&tbl_lock);
	for (size_t i = 0; i < tbl_n; i++) {
		struct region *r = tbl[i];
		if (r->arr == arr && idx >= r->first && idx < r->first + region_pages(r)) {
			*addr = r->start + ((idx - r->first) << ZS_PAGE_SHIFT);
			found = true;
			break;
		}
	}
	pthread_rwlock_unlock(&tbl_lock);
	return found;
}

/* Up to max regions from *cursor on, all of them or only those with a slot
 * array (registered), each with a reference on its array. */
static size_t region_collect_some(uintptr_t start, uintptr_t end, uintptr_t *cursor,
				  struct region_ref *out, size_t max, bool all)
{
	size_t n = 0;

	pthread_rwlock_rdlock(&tbl_lock);
	uintptr_t from = *cursor > start ? *cursor : start;
	for (size_t i = tbl_search(from); i < tbl_n && tbl[i]->start < end && n < max; i++) {
		*cursor = tbl[i]->end;
		if (all || tbl[i]->arr)
			region_fill_ref(tbl[i], &out[n++], true);
	}
	if (n < max)
		*cursor = end;
	pthread_rwlock_unlock(&tbl_lock);
	return n;
}

size_t region_collect(uintptr_t start, uintptr_t end, uintptr_t *cursor,
		      struct region_ref *out, size_t max)
{
	return region_collect_some(start, end, cursor, out, max, false);
}

size_t region_collect_all(uintptr_t start, uintptr_t end, uintptr_t *cursor,
			  struct region_ref *out, size_t max)
{
	return region_collect_some(start, end, cursor, out, max, true);
}

void region_counts(uint64_t *regions, uint64_t *bytes)
{
	pthread_rwlock_rdlock(&tbl_lock);
	*regions = tbl_n;
	*bytes = tbl_bytes;
	pthread_rwlock_unlock(&tbl_lock);
}

void region_for_each(void (*fn)(const struct region_ref *r, void *arg), void *arg)
{
	struct region_ref refs[32];
	uintptr_t cursor = 0;

	while (cursor < UINTPTR_MAX) {
		size_t n = region_collect(0, UINTPTR_MAX, &cursor, refs, 32);
		if (!n)
			break;
		for (size_t k = 0; k < n; k++) {
			fn(&refs[k], arg);
			region_arr_put(refs[k].arr);
		}
	}
}
