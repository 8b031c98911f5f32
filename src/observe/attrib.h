/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attrib.h - which code's memory is cold: the dump's attribution section.
 *
 * The interposed mmap notes the call site of every mapping it sees that is
 * large enough to be managed (ZSWAP_MIN_REGION): the return address of the
 * mmap call, kept in a fixed table by address range (no malloc; a few
 * atomics and a spinlock with signals blocked). When a dump is made, the
 * regions the engine manages are walked, each is matched with its call site,
 * counted (resident, evicted, compressed bytes, refaults) and the most
 * evicted are listed. Call sites are named (function+offset, object file) on
 * the statistics thread only, holding no library lock: the function is the
 * symbol of the object file whose extent (value and size) holds the
 * address, read from the file; when none does (a stripped object's
 * unexported code) the object's name and the link-time address in it
 * ("libfoo.so+0x1234"), never the nearest symbol below; libunwind names
 * code in no readable file. Without libunwind the function is
 * "unavailable".
 * Mappings the C library made for itself (its heap and arenas, adopted from
 * /proc/self/maps) have no call site and are named as what they are.
 */
#ifndef ZSWAP_ATTRIB_H
#define ZSWAP_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Start-up: the site table and the dump's scratch buffers, from prim. */
int attrib_init(void);

/* The interposed calls (src/shim/interpose.c): a mapping made by the code at
 * caller, one unmapped, one moved. Cheap; safe from any program thread. */
void attrib_mapped(uintptr_t addr, size_t len, void *caller);
void attrib_unmapped(uintptr_t addr, size_t len);
void attrib_remapped(uintptr_t old, size_t old_len, uintptr_t new_addr, size_t new_len);

/* One managed region, as the dump lists it. */
struct attrib_row {
	uintptr_t start, end;
	uintptr_t site;			/* return address of the mmap call; 0 if unknown */
	uint64_t resident_bytes;	/* pages present now (mincore) */
	uint64_t evicted_bytes;		/* pages held in the store now */
	uint64_t compressed_bytes;	/* their size in the pool */
	uint64_t refaults;		/* pages loaded back, since the region was registered */
	uint64_t evictions;		/* pages stored, since then */
	char kind[24];			/* "mmap", "heap", "malloc arena", "libc mapping" */
	char func[96];			/* "function+0x1a", "unavailable" or "-" */
	char object[160];		/* the object file of the call site, or "-" */
};

/* Fill rows[0..max) with the regions that have the most evicted bytes, in
 * that order, call sites named; *total gets the number of managed regions.
 * Statistics thread only (uses shared scratch buffers). Returns the count. */
size_t attrib_collect(struct attrib_row *rows, size_t max, size_t *total);

/* Name a code address: function+offset (libunwind) and object file. Also
 * used by crash reports (src/observe/crash.c); async-signal-safe when maps_buf is
 * given (no shared state). */
void attrib_name(uintptr_t pc, char *func, size_t func_len, char *object, size_t object_len,
		 char *maps_buf, size_t maps_cap);

/* The mapping holding addr, from /proc/self/maps read into buf: true and
 * [*start, *end) when found. Async-signal-safe. */
bool attrib_mapping_of(uintptr_t addr, char *buf, size_t cap, uintptr_t *start, uintptr_t *end);

#endif
