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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/maps.h"
#include "core/zsmalloc.h"
#include "engine/engine.h"

#define FILEMAP_VEC	64	/* runs of file pages a scan returns at once */

static int filemap_vma(const struct maps_vma *v, void *arg)
{
	size_t *pages = arg;
	struct page_region vec[FILEMAP_VEC];

	if (!v->file_ro_private || v->special)
		return 0;
	for (uintptr_t cur = v->start; cur < v->end;) {
		struct pm_scan_arg a = {
			.size = sizeof(a),
			.start = cur,
			.end = v->end,
			.vec = (uintptr_t)vec,
			.vec_len = FILEMAP_VEC,
			.category_mask = PAGE_IS_PRESENT | PAGE_IS_FILE,
			.return_mask = PAGE_IS_PRESENT | PAGE_IS_FILE,
		};
		long nr = syscall(SYS_ioctl, eng.pagemap_fd, PAGEMAP_SCAN, &a);
		if (nr < 0)
			return errno == ENOMEM ? 0 : -1;	/* gone meanwhile, or no PAGEMAP_SCAN */
		for (long i = 0; i < nr; i++) {
			size_t len = (size_t)(vec[i].end - vec[i].start);
			if (syscall(SYS_madvise, (void *)(uintptr_t)vec[i].start, len, MADV_PAGEOUT) == 0)
				*pages += len >> ZS_PAGE_SHIFT;
		}
		if (a.walk_end <= cur)
			break;
		cur = (uintptr_t)a.walk_end;
	}
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
