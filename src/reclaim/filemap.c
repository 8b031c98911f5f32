/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filemap.c - the file pages of the program's text and read-only data
 * given back under the limit (filemap.h).
 *
 * Only pages PAGEMAP_SCAN reports as file pages (PAGE_IS_FILE) are asked
 * for, and with MADV_PAGEOUT, which reclaims a clean file page (mapped again
 * from the file on the next touch, unchanged) and never drops a page the
 * file does not hold: a private mapping without write permission may hold
 * anonymous pages, copied on write before it was made read-only (the
 * dynamic loader's RELRO), or copied between the scan and the advice (a
 * program, or ld.so for an object with text relocations, may make the
 * mapping writable and write it meanwhile). MADV_DONTNEED would lose those;
 * MADV_PAGEOUT swaps them out or, with no swap, leaves them. It skips files
 * the process may not write unless it is their owner or privileged (the
 * kernel's rule for file pageout; their pages are not charged either:
 * src/engine/pagecache.h) and pages other processes map too: those the
 * process read in first stay charged, and anonymous memory makes the room.
 * The mappings come from one reading of /proc/self/maps, under
 * eng.evict_gate's read side as reclaim's own reading (fork's prepare
 * handler takes its write side, so maps_lock is never held across a fork).
 */
#include "config.h"
#include "reclaim/filemap.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/maps.h"
#include "core/zsmalloc.h"
#include "engine/engine.h"

/* Each run of file pages asked back: the pages it gave counted. */
static void filemap_run(uintptr_t start, uintptr_t end, void *arg)
{
	size_t *pages = arg;

	if (syscall(SYS_madvise, (void *)start, end - start, MADV_PAGEOUT) == 0)
		*pages += (end - start) >> ZS_PAGE_SHIFT;
}

static int filemap_vma(const struct maps_vma *v, void *arg)
{
	if (!v->file_ro_private || v->special)
		return 0;
	/* ENOMEM: gone meanwhile; another error: no PAGEMAP_SCAN. */
	if (engine_page_runs(v->start, v->end, PAGE_IS_PRESENT | PAGE_IS_FILE, 0, filemap_run, arg) != 0)
		return errno == ENOMEM ? 0 : -1;
	return 0;
}

size_t filemap_drop(void)
{
	size_t pages = 0;

	pthread_rwlock_rdlock(&eng.evict_gate);
	maps_for_each(filemap_vma, &pages);
	pthread_rwlock_unlock(&eng.evict_gate);
	return pages;
}
