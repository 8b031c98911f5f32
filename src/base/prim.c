/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prim.c - library-owned memory straight from mmap(2).
 *
 * The set of library-owned ranges is an append-mostly array in a static buffer:
 * readers (the engine deciding what not to manage) scan it without a lock, so a
 * slot is published by storing its end after its start, and freed by zeroing
 * the end first. Ranges are few (pool reservations, handle tables, region
 * metadata), so a linear scan is cheap.
 *
 * Every range is mapped MAP_NORESERVE. The kernel merges adjacent anonymous
 * mappings whose flags are equal into one VMA: a library mapping merged with
 * a program mapping once made the engine adopt that VMA from /proc/self/maps
 * and evict the fault handler's own stack (it then waited on itself). Program
 * mappings rarely carry VM_NORESERVE, so ours merge with each other (few
 * VMAs) but not with theirs; and since a program's MAP_NORESERVE mapping may
 * still merge with ours, the engine never adopts a VMA that overlaps any
 * library range (prim_overlaps). Guard pages would also stop the merge but
 * cost two VMAs per range (docs/DESIGN.md, "Tried and rejected"), and naming
 * the VMAs (PR_SET_VMA_ANON_NAME) needs CONFIG_ANON_VMA_NAME, which this
 * kernel lacks.
 *
 * Ranges come from one address-space arena reserved at the first call
 * (PROT_NONE, MAP_NORESERVE: no memory, no commit charge), carved first-fit
 * and handed back as PROT_NONE again. Mapping with a NULL hint would put
 * library memory in whatever hole the program just left: a program that
 * unmaps a range and maps it again with MAP_FIXED_NOREPLACE (or trusts a
 * hint to be honoured) would then fail, or worse, map over our memory with
 * MAP_FIXED (prog_vmarace growmove saw EEXIST when a region's slot array
 * landed in the hole its mremap had left). Requests larger than a quarter of
 * the arena, or made once it is full or could not be reserved, are mapped
 * anywhere as before.
 */
#include "config.h"
#include "base/prim.h"

#include <errno.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/layout.h"

#define PRIM_MAX_RANGES 4096

struct prim_range {
	_Atomic uintptr_t start;
	_Atomic uintptr_t end;		/* 0: slot free */
};

static struct prim_range prim_ranges[PRIM_MAX_RANGES];
static _Atomic size_t prim_nr_ranges;	/* high-water mark of used slots */
static _Atomic size_t prim_bytes;

static size_t prim_round(size_t len)
{
	return (len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
}

/* Raw syscalls: the program may interpose mmap/munmap (so may we), and the
 * library's own memory must never pass through those wrappers. */
static void *prim_sys_mmap(void *addr, size_t len, int prot, int flags)
{
	long r = syscall(SYS_mmap, addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return NULL;
	}
	return (void *)r;
}

/* ---- the arena ------------------------------------------------------------ */

#define PRIM_ARENA_SIZE		(64ULL << 30)
#define PRIM_ARENA_EXTENTS	4096

struct prim_extent {
	uintptr_t start, end;
};

/* Free extents of the arena, sorted by address, under a spinlock: the calls
 * are rare (start-up, new regions, events) and never on the fault path, and a
 * pthread mutex could be left held by a thread that did not survive fork
 * (prim_fork_child resets the lock). */
static struct {
	_Atomic bool lock;
	_Atomic int state;		/* 0 untried, 1 ready, -1 unavailable */
	uintptr_t base, end;
	size_t nfree;
	struct prim_extent free[PRIM_ARENA_EXTENTS];
} prim_arena;

static void prim_arena_lock(void)
{
	while (atomic_exchange_explicit(&prim_arena.lock, true, memory_order_acquire))
		;
}

static void prim_arena_unlock(void)
{
	atomic_store_explicit(&prim_arena.lock, false, memory_order_release);
}

/* Called with the lock held. */
static bool prim_arena_ready(void)
{
	if (prim_arena.state == 0) {
		void *p = prim_sys_mmap(NULL, PRIM_ARENA_SIZE, PROT_NONE, 0);
		if (p) {
			prim_arena.base = (uintptr_t)p;
			prim_arena.end = prim_arena.base + PRIM_ARENA_SIZE;
			prim_arena.free[0] = (struct prim_extent){ prim_arena.base, prim_arena.end };
			prim_arena.nfree = 1;
		}
		/* Published last: lock-free readers (prim_is_own) test it first. */
		atomic_store_explicit(&prim_arena.state, p ? 1 : -1, memory_order_release);
	}
	return prim_arena.state > 0;
}

/* Carve len bytes (first fit), or 0. */
static uintptr_t prim_arena_take(size_t len)
{
	uintptr_t got = 0;

	if (len > PRIM_ARENA_SIZE / 4)
		return 0;
	prim_arena_lock();
	if (prim_arena_ready()) {
		for (size_t i = 0; i < prim_arena.nfree; i++) {
			struct prim_extent *e = &prim_arena.free[i];
			if (e->end - e->start < len)
				continue;
			got = e->start;
			e->start += len;
			if (e->start == e->end) {
				memmove(e, e + 1, (prim_arena.nfree - i - 1) * sizeof(*e));
				prim_arena.nfree--;
			}
			break;
		}
	}
	prim_arena_unlock();
	return got;
}

/* Give [start, start+len) back, merged with its neighbours. Returns false if
 * the table of extents is full (the range then stays reserved, unused). */
static bool prim_arena_give(uintptr_t start, size_t len)
{
	uintptr_t end = start + len;
	bool ok = true;
	size_t i;

	prim_arena_lock();
	for (i = 0; i < prim_arena.nfree && prim_arena.free[i].start < start; i++)
		;
	bool join_prev = i > 0 && prim_arena.free[i - 1].end == start;
	bool join_next = i < prim_arena.nfree && prim_arena.free[i].start == end;
	if (join_prev && join_next) {
		prim_arena.free[i - 1].end = prim_arena.free[i].end;
		memmove(&prim_arena.free[i], &prim_arena.free[i + 1],
			(prim_arena.nfree - i - 1) * sizeof(prim_arena.free[0]));
		prim_arena.nfree--;
	} else if (join_prev) {
		prim_arena.free[i - 1].end = end;
	} else if (join_next) {
		prim_arena.free[i].start = start;
	} else if (prim_arena.nfree < PRIM_ARENA_EXTENTS) {
		memmove(&prim_arena.free[i + 1], &prim_arena.free[i],
			(prim_arena.nfree - i) * sizeof(prim_arena.free[0]));
		prim_arena.free[i] = (struct prim_extent){ start, end };
		prim_arena.nfree++;
	} else {
		ok = false;
	}
	prim_arena_unlock();
	return ok;
}

static bool prim_in_arena(uintptr_t addr)
{
	return atomic_load(&prim_arena.state) > 0 && addr >= prim_arena.base && addr < prim_arena.end;
}

/* Read-write memory for len bytes: from the arena when it can, else anywhere. */
static void *prim_mmap(size_t len)
{
	uintptr_t at = prim_arena_take(len);

	if (at) {
		void *p = prim_sys_mmap((void *)at, len, PROT_READ | PROT_WRITE, MAP_FIXED);
		if (p)
			return p;
		prim_arena_give(at, len);
	}
	return prim_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, 0);
}

static void prim_munmap(void *addr, size_t len)
{
	/* Back to PROT_NONE: the memory is released and the address space stays
	 * ours, so the program can never be handed it. */
	if (prim_in_arena((uintptr_t)addr) &&
	    prim_sys_mmap(addr, len, PROT_NONE, MAP_FIXED) == addr) {
		prim_arena_give((uintptr_t)addr, len);
		return;
	}
	syscall(SYS_munmap, addr, len);
}

ZSWAP_STARTUP void prim_fork_child(void)
{
	/* Written only when held: a write copies the page (prim_reset). */
	if (atomic_load_explicit(&prim_arena.lock, memory_order_relaxed))
		atomic_store_explicit(&prim_arena.lock, false, memory_order_relaxed);
	prim_relock_secrets();	/* a lock is not inherited */
}

static void prim_track(void *addr, size_t len)
{
	size_t n = atomic_load(&prim_nr_ranges);

	for (size_t i = 0; i < n && i < PRIM_MAX_RANGES; i++) {
		uintptr_t zero = 0;
		/* Claim a freed slot: start first, then publish end. */
		if (atomic_load(&prim_ranges[i].end) == 0 &&
		    atomic_compare_exchange_strong(&prim_ranges[i].start, &zero, (uintptr_t)addr)) {
			atomic_store(&prim_ranges[i].end, (uintptr_t)addr + len);
			goto out;
		}
	}
	n = atomic_fetch_add(&prim_nr_ranges, 1);
	if (n < PRIM_MAX_RANGES) {
		atomic_store(&prim_ranges[n].start, (uintptr_t)addr);
		atomic_store(&prim_ranges[n].end, (uintptr_t)addr + len);
	}
	/* Past PRIM_MAX_RANGES the range is simply not recorded; callers allocate
	 * few, large ranges, so this is a bug caught by tests, not a runtime path. */
out:
	atomic_fetch_add(&prim_bytes, len);
}

void prim_for_each(void (*fn)(uintptr_t start, uintptr_t end, void *arg), void *arg)
{
	size_t n = atomic_load(&prim_nr_ranges);

	for (size_t i = 0; i < n && i < PRIM_MAX_RANGES; i++) {
		uintptr_t start = atomic_load(&prim_ranges[i].start), end = atomic_load(&prim_ranges[i].end);
		if (start && end > start)
			fn(start, end, arg);
	}
}

static void prim_untrack(void *addr, size_t len)
{
	size_t n = atomic_load(&prim_nr_ranges);

	for (size_t i = 0; i < n && i < PRIM_MAX_RANGES; i++) {
		if (atomic_load(&prim_ranges[i].start) == (uintptr_t)addr &&
		    atomic_load(&prim_ranges[i].end) != 0) {
			atomic_store(&prim_ranges[i].end, 0);
			atomic_store(&prim_ranges[i].start, 0);
			atomic_fetch_sub(&prim_bytes, len);
			return;
		}
	}
}

void *prim_alloc(size_t len)
{
	void *p;

	len = prim_round(len);
	p = prim_mmap(len);
	if (p)
		prim_track(p, len);
	return p;
}

void prim_free(void *addr, size_t len)
{
	if (!addr)
		return;
	len = prim_round(len);
	prim_untrack(addr, len);
	prim_munmap(addr, len);
}

/* ---- secrets ---------------------------------------------------------------- */

/* One tier's key per process, a few in the tests: a slot is claimed by its
 * start, its length published after it, both cleared when freed. */
#define PRIM_SECRETS 8

static struct {
	_Atomic uintptr_t start;
	_Atomic size_t len;
} prim_secrets[PRIM_SECRETS];

static void prim_lock_secret(uintptr_t start, size_t len)
{
	/* A refusal (RLIMIT_MEMLOCK) leaves the page unlocked: it is still out
	 * of core dumps, and the tier works the same. */
	syscall(SYS_mlock, start, len);
}

void *prim_alloc_secret(size_t len)
{
	len = prim_round(len);
	void *p = prim_alloc(len);
	if (!p)
		return NULL;
	syscall(SYS_madvise, p, len, MADV_DONTDUMP);
	prim_lock_secret((uintptr_t)p, len);
	for (int i = 0; i < PRIM_SECRETS; i++) {
		uintptr_t none = 0;
		if (atomic_compare_exchange_strong(&prim_secrets[i].start, &none, (uintptr_t)p)) {
			atomic_store(&prim_secrets[i].len, len);
			break;
		}
	}
	return p;
}

void prim_free_secret(void *addr, size_t len)
{
	if (!addr)
		return;
	len = prim_round(len);
	for (int i = 0; i < PRIM_SECRETS; i++) {
		if (atomic_load(&prim_secrets[i].start) == (uintptr_t)addr) {
			atomic_store(&prim_secrets[i].len, 0);
			atomic_store(&prim_secrets[i].start, 0);
			break;
		}
	}
	/* Wiped before the page goes back: the kernel hands freed pages out
	 * again without clearing them until then. The barrier, as in
	 * explicit_bzero, keeps the compiler from dropping a store to memory
	 * it sees unmapped next. */
	memset(addr, 0, len);
	__asm__ __volatile__("" : : "r"(addr) : "memory");
	prim_free(addr, len);
}

ZSWAP_STARTUP void prim_relock_secrets(void)
{
	for (int i = 0; i < PRIM_SECRETS; i++) {
		uintptr_t start = atomic_load(&prim_secrets[i].start);
		size_t len = atomic_load(&prim_secrets[i].len);
		if (start && len)
			prim_lock_secret(start, len);
	}
}

int prim_decommit(void *addr, size_t len)
{
	long r = syscall(SYS_madvise, addr, prim_round(len), MADV_DONTNEED);

	return r < 0 ? -errno : 0;
}

bool prim_is_own(uintptr_t addr)
{
	if (prim_in_arena(addr))
		return true;
	size_t n = atomic_load(&prim_nr_ranges);

	for (size_t i = 0; i < n && i < PRIM_MAX_RANGES; i++) {
		uintptr_t end = atomic_load(&prim_ranges[i].end);
		if (end && addr < end && addr >= atomic_load(&prim_ranges[i].start))
			return true;
	}
	return false;
}

bool prim_overlaps(uintptr_t start, uintptr_t end)
{
	/* The arena is ours whole, its unused PROT_NONE parts included (never
	 * to be locked, adopted or scanned for the program). */
	if (atomic_load(&prim_arena.state) > 0 && start < prim_arena.end && end > prim_arena.base)
		return true;
	size_t n = atomic_load(&prim_nr_ranges);

	for (size_t i = 0; i < n && i < PRIM_MAX_RANGES; i++) {
		uintptr_t e = atomic_load(&prim_ranges[i].end);
		if (e && start < e && end > atomic_load(&prim_ranges[i].start))
			return true;
	}
	return false;
}

size_t prim_own_bytes(void)
{
	return atomic_load(&prim_bytes);
}
