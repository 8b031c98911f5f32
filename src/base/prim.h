/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prim.h - everything libzswap asks of the operating system for its OWN memory.
 *
 * Contract (in the manner of mimalloc's prim.h):
 *  - Every byte libzswap uses after start-up comes from here, never from malloc:
 *    the program's malloc arenas are evictable, and a fault handler that touched
 *    them could wait on itself.
 *  - Every range handed out is recorded as library-owned, so the engine never
 *    registers, scans or evicts it (prim_is_own()).
 *  - No function here calls malloc, stdio or takes a lock the program can hold;
 *    all are async-signal-safe except where noted.
 */
#ifndef ZSWAP_PRIM_H
#define ZSWAP_PRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ZS_PAGE_SHIFT 12
#define ZS_PAGE_SIZE  (1UL << ZS_PAGE_SHIFT)
#define ZS_PAGE_MASK  (~(ZS_PAGE_SIZE - 1))

/* Map len bytes (rounded up to pages) of zeroed private anonymous read-write
 * memory, recorded as library-owned: a small structure, or a large range of
 * address space of which only what is touched is backed (MAP_NORESERVE: see
 * prim.c for why). Returns NULL on failure (errno set). */
void *prim_alloc(size_t len);

/* Unmap a range obtained from prim_alloc(), whole. */
void prim_free(void *addr, size_t len);

/* Memory for a secret (the second tier's key), len rounded up to pages of
 * its own: library-owned like prim_alloc's, left out of core dumps
 * (MADV_DONTDUMP) and locked in RAM (mlock) so that it never reaches swap.
 * A lock refused (RLIMIT_MEMLOCK without CAP_IPC_LOCK) does not fail the
 * call: the page is then only kept out of dumps, silently. The lock is
 * taken again where the process loses it (prim_relock_secrets).
 * prim_free_secret wipes the memory before unmapping it. */
void *prim_alloc_secret(size_t len);
void prim_free_secret(void *addr, size_t len);

/* Lock the secrets again: the program's munlockall unlocks every page of
 * the process, and a fork child inherits no lock. */
void prim_relock_secrets(void);

/* Give the pages of [addr, addr+len) back to the OS (MADV_DONTNEED): the
 * process RSS falls, the range stays mapped and reads back as zeros. */
int prim_decommit(void *addr, size_t len);

/* Call fn for each range prim_alloc() handed out and not freed, [start,
 * end). Lock-free; a range taken or freed meanwhile may be seen or not. */
void prim_for_each(void (*fn)(uintptr_t start, uintptr_t end, void *arg), void *arg);

/* True if addr lies in a range prim_alloc() handed out. Lock-free. */
bool prim_is_own(uintptr_t addr);

/* True if [start, end) overlaps any library-owned range. Lock-free. */
bool prim_overlaps(uintptr_t start, uintptr_t end);

/* In a forked child: forget a lock a thread of the parent may have held. */
void prim_fork_child(void);

/* In a forked child: n bytes at p set to init's (a lock to its initial
 * state), unless they already are, as a lock no thread held at fork is.
 * A write copies the page in every child, which for a child that execs at
 * once is a fault for nothing (src/base/layout.h). */
static inline void prim_reset(void *p, const void *init, size_t n)
{
	if (memcmp(p, init, n) != 0)
		memcpy(p, init, n);
}

/* Number of library-owned ranges and their total size (for statistics). */
size_t prim_own_bytes(void);

#endif
