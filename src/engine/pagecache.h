/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagecache.h - the file pages the charge leaves to others.
 *
 * A memory cgroup charges a page of the page cache to the group that read
 * it in, once: a program that maps a binary, a library or a data file
 * already in the page cache (read by another process, or by an earlier run)
 * is charged nothing for those pages, and pays only for the ones it reads
 * in itself. The charge (policy_read_charge) follows that rule: the pages
 * of each file mapping that were in the page cache when the mapping was
 * first seen (mincore) are left out of the process's file pages. A file
 * the process may neither write nor own hides its page cache from mincore
 * (the kernel's rule, as for file pageout): its pages are counted as
 * others' (system binaries and libraries, shared with every process of the
 * machine); the process cannot page them out either. Shared memory
 * (anonymous, SysV, memfd) and deleted files stay charged to every process
 * that maps them: which one wrote a page first is not known.
 *
 * Mappings are seen when the program maps them (calls_mapped, under a
 * limit) and, for those made where no call is interposed (the dynamic
 * loader's, at start and at dlopen), at the reclaimer's next look at
 * /proc/self/maps (pagecache_sync); the pages read in before that look
 * count as others'.
 */
#ifndef ZSWAP_PAGECACHE_H
#define ZSWAP_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

/* A file mapping [addr, addr + len) of fd made by the program. */
void pagecache_mapped(uintptr_t addr, size_t len, int fd);
/* [addr, addr + len) unmapped (or replaced): its records go. */
void pagecache_unmapped(uintptr_t addr, size_t len);
/* The reclaimer: record the file mappings not seen yet, drop the gone. */
void pagecache_sync(void);
/* Bytes of the file mappings' pages counted as others'. */
uint64_t pagecache_others(void);
/* In a forked child: the lock afresh. */
void pagecache_fork_child(void);

#endif
