/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * growth.c - memory the C library grows for itself, registered as it grows
 * so that first touches of it fault and are held under ZSWAP_MEMORY_LIMIT
 * (see growth.h for the model, docs/DESIGN.md "## Reclaim" for figures).
 *
 * What glibc's chunk header (the size word just below the pointer malloc
 * returns) tells: bit 1 (IS_MMAPPED), the chunk is a mapping of its own,
 * which starts prev_size bytes below the chunk; bit 2 (NON_MAIN_ARENA), the
 * chunk lies in a heap of another thread's arena, a 64 MiB aligned range
 * whose first bytes are glibc's heap_info { ar_ptr, prev, size,
 * mprotect_size }: the first mprotect_size bytes are read-write; neither
 * bit, the chunk is in the brk heap, which ends where __curbrk says.
 * Each of these is compared with what was registered last (brk_seen, a
 * small table of heaps), and only growth takes the slow path: insert a
 * region (adopted: the C library's memory) and register it, the way an
 * interposed mmap does (calls_mapped), with evict_register_new.
 *
 * The forwarding. Which malloc serves the program is decided by symbol
 * lookup: with libzswap preloaded, ours (src/shim/alloc.c, which calls
 * growth_malloc, growth_calloc and growth_realloc) comes first, and it must
 * pass each call to the one that would have served it (the next
 * definition: glibc's, or an allocator the program links, such as
 * jemalloc: pointers from one must never reach the other's free). The next
 * one is found at the first call, in the loaded objects' symbol tables
 * (growth_next; not dlsym, which takes the loader lock and may allocate).
 * Only when it is glibc's are chunks looked at: another allocator's memory
 * is found by reclaim's sweeps, as before.
 *
 * Never on library threads (their stacks are library memory): a handler or
 * the reclaimer does not allocate after start-up, and if some glibc call of
 * theirs did, registering from there could wait on locks they hold.
 */
#include "config.h"
#include "reclaim/growth.h"

#include <elf.h>
#include <link.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/elfsym.h"
#include "base/layout.h"
#include "engine/engine.h"
#include "engine/calls.h"
#include "engine/evict.h"
#include "base/log.h"
#include "base/prim.h"
#include "engine/policy.h"
#include "engine/region.h"

/* glibc's exported entry points behind malloc, calloc and realloc, and its
 * cached program break (all GLIBC_2.2.5). */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__curbrk;

/* This object's dynamic section (the linker's): libzswap's own entry in the
 * link map is the one whose l_ld it is. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

/* glibc's chunk header on 64-bit (malloc/malloc.c). */
#define GROWTH_IS_MMAPPED	2u
#define GROWTH_NON_MAIN_ARENA	4u
#define GROWTH_SIZE_BITS	7u
#define GROWTH_HEAP_MAX		(64UL << 20)	/* HEAP_MAX_SIZE: 2 x DEFAULT_MMAP_THRESHOLD_MAX */
#define GROWTH_HEAPS		64		/* heaps of other arenas remembered */

struct growth_heap_info {	/* glibc's heap_info, its first fields */
	void *ar_ptr;
	void *prev;
	size_t size;
	size_t mprotect_size;
};

enum { GROWTH_UNRESOLVED, GROWTH_GLIBC, GROWTH_OTHER };

/* The allocator forwarded to, and how much of glibc's growth is accounted. */
static struct {
	_Atomic int mode;
	_Atomic int resolving;
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);

	_Atomic bool active;		/* a limit is set, glibc's malloc serves */
	long pid;			/* the process that started it (not a fork child's copy) */
	size_t big;			/* growth this large is registered, smaller is held */
	_Atomic uintptr_t brk_seen;	/* the brk heap is accounted for up to here */
	struct {
		_Atomic uintptr_t base;
		_Atomic size_t seen;	/* accounted for up to base + seen */
	} heaps[GROWTH_HEAPS];
} growth_st ZSWAP_STARTUP_DATA;	/* its mode is set in every process */

static uintptr_t growth_page_up(uintptr_t a)
{
	return (a + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
}

/* Not on a library thread (they run on library stacks), and only in the
 * process that started following growth, with the engine running there. */
static bool growth_here(void)
{
	return !prim_is_own((uintptr_t)__builtin_frame_address(0)) && syscall(SYS_getpid) == growth_st.pid &&
	       engine_running();
}

/* --- small growth: held at the allocation --------------------------------- */

/*
 * npages of fresh memory the program is about to touch: ask the memory
 * limit's throttle as a handler does before it fills pages. Over the limit
 * the allocating thread waits here, after glibc let go of its arena lock
 * and before it has the pointer, until the reclaimer has made room (or has
 * found nothing left to take: policy_throttle then lets it go, counted in
 * memory_events_max); the pages are then counted in the charge's estimate
 * until the next reading. The charge is RssAnon: the touches themselves
 * need not fault.
 */
static void growth_hold(size_t npages)
{
	if (!npages || !growth_here())
		return;
	while (policy_throttle(npages)) {
		struct pollfd p = { .fd = policy_wait_fd(), .events = POLLIN };
		if (poll(&p, 1, 5) > 0 && (p.revents & POLLIN))
			policy_wait_done();
	}
}

/* --- large growth: registered ---------------------------------------------- */

/* True if a registered region covers all of [lo, hi). */
static bool growth_covered(uintptr_t lo, uintptr_t hi)
{
	struct region_ref ref;

	while (lo < hi) {
		if (!region_lookup(lo, &ref, false) || !ref.arr)
			return false;
		lo = ref.end;
	}
	return true;
}

/*
 * Insert regions for the parts of [lo, hi) no region covers and register
 * every unregistered managed region there, as calls_mapped does for a new
 * mapping, so that the program's first touches fault and are held there.
 * evict_register checks with the kernel and with the library's own ranges
 * first (a stale or foreign range is forgotten, not registered).
 */
static void growth_register(uintptr_t lo, uintptr_t hi)
{
	sigset_t old;

	lo &= ZS_PAGE_MASK;
	hi = growth_page_up(hi);
	if (lo >= hi || !growth_here() || atomic_load(&eng.lock_future))
		return;
	engine_sigblock(&old);
	/* Under the event lock, as calls_mapped: an UNMAP event of what was
	 * mapped here before is processed before the table is looked at. */
	pthread_rwlock_rdlock(&eng.ev_lock);
	if (!growth_covered(lo, hi) && region_insert(lo, hi, REGION_ADOPTED) == 0) {
		for (uintptr_t cur = lo; cur < hi;) {
			struct region_ref ref;
			if (!region_lookup(cur, &ref, false)) {
				cur = ref.end;
				continue;
			}
			if (!ref.arr && !(ref.flags & REGION_UNMANAGEABLE))
				evict_register_new(cur);
			if (ref.end <= cur)
				break;
			cur = ref.end;
		}
	}
	pthread_rwlock_unlock(&eng.ev_lock);
	engine_sigrestore(&old);
}

/*
 * [lo, hi) is new: registered when it is large (a mapping of its own, or
 * a large step: one more VMA is worth it), else held. Small steps are not
 * registered: glibc touches the new part (the top chunk's header) before
 * we see it, the kernel then gives it an anon_vma of its own, and once
 * registered it could never merge with its neighbours: one VMA per 132 KiB
 * step of the heap, thousands of regions for a large heap, each one more
 * mapping for reclaim's sweep to walk (docs/DESIGN.md, "Tried and
 * rejected").
 */
static void growth_new(uintptr_t lo, uintptr_t hi)
{
	if (hi - lo >= growth_st.big)
		growth_register(lo, hi);
	else
		growth_hold((hi - lo) >> ZS_PAGE_SHIFT);
}

/* The brk heap's end moved to brk: what it grew by is new (once: for the
 * thread that moves brk_seen), or follow a shrink. */
static void growth_brk(uintptr_t brk)
{
	uintptr_t seen = atomic_load_explicit(&growth_st.brk_seen, memory_order_relaxed);
	uintptr_t end = growth_page_up(brk);

	if (end == seen || !atomic_compare_exchange_strong(&growth_st.brk_seen, &seen, end))
		return;
	if (end > seen && seen)
		growth_new(seen, end);
}

/* A chunk in a heap of another arena: what that heap's read-write part grew
 * by is new. The header is checked for sense first (a GLIBC_TUNABLES hugetlb
 * setting changes the heap size, and then this is not a heap_info):
 * nonsense is ignored. */
static void growth_heap(uintptr_t chunk)
{
	uintptr_t base = chunk & ~(GROWTH_HEAP_MAX - 1);
	const struct growth_heap_info *h = (const struct growth_heap_info *)base;
	size_t rw = h->mprotect_size;
	unsigned int i = (unsigned int)(base / GROWTH_HEAP_MAX) % GROWTH_HEAPS;
	uintptr_t was = atomic_load_explicit(&growth_st.heaps[i].base, memory_order_relaxed);
	size_t seen = atomic_load_explicit(&growth_st.heaps[i].seen, memory_order_relaxed);

	if (was == base && seen == rw)
		return;
	if (rw > GROWTH_HEAP_MAX || (rw & (ZS_PAGE_SIZE - 1)) || h->size > rw || chunk >= base + rw)
		return;
	/* A heap not in the table (new, or its slot taken by another) counts
	 * from its start: at worst its pages are counted twice, briefly. */
	uintptr_t from = (was == base && seen < rw) ? base + seen : base;
	atomic_store(&growth_st.heaps[i].base, base);
	atomic_store(&growth_st.heaps[i].seen, rw);
	if (was != base || seen < rw)
		growth_new(from, base + rw);
}

/* After glibc's malloc, calloc or realloc returned p: the fast path. */
ZSWAP_STARTUP static inline void growth_after(void *p)
{
	if (!p || !atomic_load_explicit(&growth_st.active, memory_order_relaxed))
		return;
	uintptr_t chunk = (uintptr_t)p - 2 * sizeof(size_t);
	size_t head = ((const size_t *)p)[-1];

	if (head & GROWTH_IS_MMAPPED) {
		size_t off = ((const size_t *)p)[-2];
		growth_new(chunk - off, chunk + (head & ~(size_t)GROWTH_SIZE_BITS));
	} else if (head & GROWTH_NON_MAIN_ARENA) {
		growth_heap(chunk);
	} else if (growth_page_up((uintptr_t)__curbrk) !=
		   atomic_load_explicit(&growth_st.brk_seen, memory_order_relaxed)) {
		growth_brk((uintptr_t)__curbrk);
	}
}

/* --- the allocator the interposed entry points forward to ---------------- */

/*
 * Which definition of name the dynamic linker would have bound the
 * program to without us: the first one after libzswap in the link map
 * (the order of the global scope: the executable, the preloaded objects,
 * then their dependencies breadth first), found by elfsym (no dlsym: this
 * runs on the program's first allocation). NULL if no object after us
 * defines it.
 */
ZSWAP_STARTUP static void *growth_next_in(const char *name, const struct link_map **where)
{
	const struct link_map *l = elfsym_objects(), *self = NULL;

	/* Ourselves: the object whose dynamic section is this one's. */
	for (const struct link_map *m = l; m; m = m->l_next) {
		if (m->l_ld == _DYNAMIC) {
			self = m;
			break;
		}
	}
	for (const struct link_map *m = self ? self->l_next : l; m; m = m->l_next) {
		if (m == self)
			continue;
		void *f = elfsym_find(m, name);
		if (f) {
			if (where)
				*where = m;
			return f;
		}
	}
	return NULL;
}

ZSWAP_STARTUP static void *growth_next(const char *name)
{
	return growth_next_in(name, NULL);
}

void *growth_next_def(const char *name)
{
	return growth_next(name);
}

/* Find the malloc that would serve the program without us (at the first
 * call; a thread calling meanwhile waits: the lookup neither allocates
 * nor locks, and takes microseconds). */
ZSWAP_STARTUP static void growth_resolve(void)
{
	if (atomic_exchange(&growth_st.resolving, 1)) {
		while (atomic_load(&growth_st.mode) == GROWTH_UNRESOLVED)
			sched_yield();
		return;
	}
	/* glibc's malloc only if the object that defines it is the C library
	 * (gnu_get_libc_version is glibc's alone): mimalloc also defines
	 * __libc_malloc and friends as its own, and ours would bind to them,
	 * so comparing addresses with __libc_malloc cannot tell. Its blocks
	 * have no glibc chunk header for growth_after to read. */
	const struct link_map *where = NULL;
	void *m = growth_next_in("malloc", &where), *c = growth_next("calloc"), *r = growth_next("realloc");
	bool glibc = m && where && elfsym_find(where, "gnu_get_libc_version") && m == (void *)__libc_malloc &&
		     c == (void *)__libc_calloc && r == (void *)__libc_realloc;
	if (m && c && r && !glibc) {
		growth_st.malloc = (void *(*)(size_t))m;
		growth_st.calloc = (void *(*)(size_t, size_t))c;
		growth_st.realloc = (void *(*)(void *, size_t))r;
		atomic_store(&growth_st.mode, GROWTH_OTHER);
	} else {
		atomic_store(&growth_st.mode, GROWTH_GLIBC);
	}
}

static inline int growth_mode(void)
{
	int m = atomic_load_explicit(&growth_st.mode, memory_order_acquire);

	if (__builtin_expect(m == GROWTH_UNRESOLVED, 0)) {
		growth_resolve();
		m = atomic_load_explicit(&growth_st.mode, memory_order_acquire);
	}
	return m;
}

ZSWAP_STARTUP void *growth_malloc(size_t n)
{
	if (growth_mode() == GROWTH_OTHER)
		return growth_st.malloc(n);
	void *p = __libc_malloc(n);
	growth_after(p);
	return p;
}

ZSWAP_STARTUP void *growth_calloc(size_t n, size_t size)
{
	if (growth_mode() == GROWTH_OTHER)
		return growth_st.calloc(n, size);
	void *p = __libc_calloc(n, size);
	growth_after(p);
	return p;
}

ZSWAP_STARTUP void *growth_realloc(void *old, size_t n)
{
	if (growth_mode() == GROWTH_OTHER)
		return growth_st.realloc(old, n);
	void *p = __libc_realloc(old, n);
	growth_after(p);
	return p;
}

/* --- start ---------------------------------------------------------------- */

void growth_start(void)
{
	/* A fork child starts afresh: its own pid; the parent's brk_seen and
	 * heap table describe the same (copied) address space. */
	growth_st.pid = syscall(SYS_getpid);
	if (!policy_limit_set() || growth_mode() != GROWTH_GLIBC)
		return;
	/* Registered from this size on: ZSWAP_MIN_REGION, as the program's own
	 * mmaps, but never more than limit/64: reclaim_init() keeps the room
	 * between the limit's hold line and its low watermark at three such
	 * steps at least, and a held step larger than that room could never
	 * be let through. */
	growth_st.big = eng.opt.min_region;
	if (growth_st.big > eng.opt.memory_limit / 64)
		growth_st.big = eng.opt.memory_limit / 64;
	if (growth_st.big < ZS_PAGE_SIZE)
		growth_st.big = ZS_PAGE_SIZE;
	uintptr_t seen = atomic_load(&growth_st.brk_seen);
	if (!seen)
		atomic_compare_exchange_strong(&growth_st.brk_seen, &seen, growth_page_up((uintptr_t)syscall(SYS_brk, 0)));
	atomic_store(&growth_st.active, true);
	if (eng.opt.verbose)
		zlog("growth: following glibc's malloc (registered from %zu KiB, held below)", growth_st.big >> 10);
}
