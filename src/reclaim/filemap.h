/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filemap.h - the program's file pages under the limit. A memory cgroup
 * charges the page cache its processes fault in, and its reclaim takes
 * clean page cache back as readily as anonymous memory; the charge here
 * counts the file pages the process maps (src/engine/policy.c), so the
 * reclaimer gives back the ones it can: the present file pages of private
 * mappings without write permission (program text, read-only data).
 */
#ifndef ZSWAP_FILEMAP_H
#define ZSWAP_FILEMAP_H

#include <stddef.h>

/* Page out every present file page of the private read-only file mappings
 * (MADV_PAGEOUT: reclaimed from the page cache where the kernel allows it,
 * read from the file again on the next touch). Copied-on-write pages in
 * them are anonymous and never lost. Returns the pages advised; 0 without
 * PAGEMAP_SCAN (6.7), which alone tells a file page from a copied one. The
 * reclaimer's. */
size_t filemap_drop(void);

#endif
