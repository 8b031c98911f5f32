/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progdata.c - the main program's data segment made anonymous memory
 * (see progdata.h).
 */
#include "config.h"
#include "engine/progdata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdtab.h"
#include "base/maps.h"
#include "core/parse.h"
#include "engine/engine.h"

/*
 * The copy makes every page of the segment the process's own memory, written
 * or not. Initialised data is rarely more than a few MiB; a segment much
 * larger is mostly tables read in place, which cost nothing as file pages.
 */
#define PROGDATA_MAX_BYTES (16UL << 20)

/* The one writable private file mapping of the segment, its data (the
 * read-only head, RELRO, is not writable); with two, or one that crosses
 * the segment's edge (an mprotect, a program's own mmap), nothing is done. */
struct progdata_walk {
	uintptr_t lo, hi;		/* the program's writable segment */
	uintptr_t start, end;		/* its data mapping */
	bool refuse;
};

static int progdata_vma(const struct maps_vma *v, void *arg)
{
	struct progdata_walk *w = arg;

	if (v->end <= w->lo || v->start >= w->hi || !v->file || !v->writable || v->shared)
		return 0;
	if (v->start < w->lo || v->end > w->hi || w->end) {
		w->refuse = true;
		return 1;
	}
	w->start = v->start;
	w->end = v->end;
	return 0;
}

/* The process runs one thread (the caller): /proc/self/task holds ".",
 * ".." and one entry per thread. Threads made by raw clone() count too. */
static bool progdata_one_thread(void)
{
	struct stat st;

	return syscall(SYS_newfstatat, AT_FDCWD, "/proc/self/task", &st, 0) == 0 && st.st_nlink == 3;
}

/* Memory locked by mlock() or mlockall(): a locked range stays as it is. */
static bool progdata_locked(void)
{
	char buf[4096];
	int fd = fdtab_open_ro("/proc/self/status", false);
	long n = fd < 0 ? -1 : syscall(SYS_read, fd, buf, sizeof(buf));

	fdtab_close_short(fd);
	return n <= 0 || parse_proc_kb(buf, (size_t)n, "VmLck:") != 0;	/* unreadable: assume so */
}

/*
 * A copy no sanitizer intercepts: a program built with AddressSanitizer
 * poisons the redzones between its globals, and its runtime's memcpy would
 * report the segment's copy as an overflow. Volatile words, which the
 * compiler cannot turn back into a call to memcpy.
 */
static void progdata_copy(uintptr_t to, uintptr_t from, size_t len)
{
	volatile uint64_t *d = (volatile uint64_t *)to;
	const volatile uint64_t *s = (const volatile uint64_t *)from;

	for (size_t i = 0; i < len / sizeof(uint64_t); i++)
		d[i] = s[i];
}

/*
 * [start, end) copied to a new anonymous mapping that then takes its
 * place. A failed mremap leaves the old mapping in place, except where the
 * kernel unmapped the target before failing to move (no memory): the copy
 * is then put back at its address, so nothing is lost either way.
 */
static int progdata_swap(uintptr_t start, uintptr_t end)
{
	size_t len = end - start;
	long p = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == -1)
		return -errno;
	progdata_copy((uintptr_t)p, start, len);
	long r = syscall(SYS_mremap, p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, start);
	if (r == (long)start)
		return 0;

	int err = errno;
	struct maps_vma v;

	if (maps_find(start, &v) < 0) {
		/* The target is gone: put the copy back where it was. */
		long q = syscall(SYS_mmap, start, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (q == (long)start)
			progdata_copy(start, (uintptr_t)p, len);
	}
	syscall(SYS_munmap, p, len);
	return -err;
}

long progdata_take(void)
{
	struct progdata_walk w = { 0 };

	if (!eng.opt.program_data || !engine_program_data(&w.lo, &w.hi))
		return 0;
	if (!progdata_one_thread() || progdata_locked())
		return 0;
	if (maps_for_each(progdata_vma, &w) < 0 || w.refuse || w.end - w.start < eng.opt.min_region ||
	    w.end - w.start > PROGDATA_MAX_BYTES)
		return 0;
	int rc = progdata_swap(w.start, w.end);
	if (rc < 0)
		return rc;
	engine_note_program_anon(w.start, w.end);
	return (long)(w.end - w.start);
}
