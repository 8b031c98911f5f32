/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * maps.h - reading /proc/self/maps without malloc or stdio: the library's
 * one parser of it.
 *
 * Used when eviction is asked for memory no interposed mmap saw (glibc's heap
 * and arenas, large malloc chunks): the mapping is adopted if it is private
 * anonymous read-write memory the library does not own. The file is read with
 * read(2) into a library buffer under a mutex; callers block signals.
 */
#ifndef ZSWAP_MAPS_H
#define ZSWAP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps_vma {
	uintptr_t start, end;
	uint64_t offset;	/* of the file mapped at start (0 for none) */
	bool anon_rw_private;	/* rw-p, no file, not a stack or special mapping */
	bool heap;		/* [heap] */
	bool special;		/* [vvar], [vdso], [vsyscall]...: not the program's memory */
	bool file_ro_private;	/* r-xp, r--p, ---p of a file: text and read-only data */
	bool shared;		/* MAP_SHARED (rw-s, r--s...): anonymous or a file */
	bool file;		/* backed by a file (its device or inode not zero) */
	bool writable;
	const char *path;	/* the line's path ("" for none), path_len bytes, not */
	size_t path_len;	/* NUL-terminated: valid during the callback only */
};

int maps_init(void);

/* Find the mapping containing addr. 0, or -ENOENT when addr is not mapped
 * (vma->end is then the start of the next mapping), or -errno. */
int maps_find(uintptr_t addr, struct maps_vma *vma);

/* Call fn for every mapping in address order until it returns non-zero
 * (which is returned; 0 after the last one, -errno if the file cannot be
 * read). fn must not call back into maps_*. */
int maps_for_each(int (*fn)(const struct maps_vma *vma, void *arg), void *arg);

/* True if [start, end) is entirely covered by private anonymous rw mappings. */
bool maps_range_anon_rw(uintptr_t start, uintptr_t end);

/* Read a /proc file line by line into buf (cap bytes, a library buffer the
 * caller owns): line() gets each line NUL-terminated in place, and stops the
 * read by returning non-zero, which is returned. 0 at the end, -errno if the
 * file cannot be read. Lines longer than the buffer are dropped. */
int maps_read_lines(const char *path, char *buf, size_t cap, int (*line)(char *l, void *arg), void *arg);

/* Lock-free, for a caller with its own buffer (a crash report, the dump's
 * attribution): the whole of /proc/self/maps read into buf (NUL-terminated;
 * cut at cap - 1). Returns the length, 0 if unreadable. */
size_t maps_read(char *buf, size_t cap);

/* Call fn for every mapping of a text maps_read() filled, as
 * maps_for_each does. */
int maps_scan(const char *text, int (*fn)(const struct maps_vma *vma, void *arg), void *arg);

/* In a forked child: the lock afresh (its holder may have stayed in the parent). */
void maps_fork_child(void);

#endif
