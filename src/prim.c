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
 * cost two VMAs per range (seen: 1,110 mappings for 256 regions), and naming
 * the VMAs (PR_SET_VMA_ANON_NAME) needs CONFIG_ANON_VMA_NAME, which this
 * kernel lacks.
 */
#include "config.h"
#include "prim.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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
static void *prim_mmap(size_t len)
{
	long r = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return NULL;
	}
	return (void *)r;
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

void *prim_reserve(size_t len)
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
	syscall(SYS_munmap, addr, len);
}

int prim_decommit(void *addr, size_t len)
{
	long r = syscall(SYS_madvise, addr, prim_round(len), MADV_DONTNEED);

	return r < 0 ? -errno : 0;
}

bool prim_is_own(uintptr_t addr)
{
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
