/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readahead.h - the readahead window of refaults (ZSWAP_READAHEAD).
 *
 * Modelled on the kernel's VMA-based swap readahead (mm/swap_state.c,
 * swap_vma_readahead and __swapin_nr_pages): a refault may bring the stored
 * pages that follow it in with it, and how many is decided per access stream
 * from how the previous window was used. A window grows (about doubling) each
 * time the stream's next fault lands just past it, shrinks to half when the
 * stream catches up with a window that was evicted again before use, and a
 * stream that faults anywhere else starts with no readahead at all, so random
 * access reads nothing ahead.
 *
 * Streams are kept for the whole process (a small table the handler threads
 * share), found by the slot array and the slot index of the fault. No
 * allocation, and no lock a program thread can hold (a mutex only handler
 * threads take, around a table scan): the functions below are
 * called on the fault path of handler threads only.
 *
 * Hits and misses (engine counters readahead_hits, readahead_misses) are
 * judged when the stream faults again: the pages of a window count as hits
 * when the stream's next fault lands at (or RA_SLACK pages past) the
 * window's end, i.e. the reader went through them without a fault; as
 * misses when the stream is dropped without coming back to the window's end
 * (its reader went elsewhere), or, page by page, when the stream faults
 * inside its own window (those pages were evicted again before use).
 * User space has no accessed bits: a page read ahead and used by some
 * other thread, or much later, is not seen as a hit.
 */
#ifndef ZSWAP_READAHEAD_H
#define ZSWAP_READAHEAD_H

#include <stddef.h>

/*
 * A refault at slot idx of the slot array key: how many of the pages after
 * idx to read ahead now, from 0 to max (ZSWAP_READAHEAD). Counts the hits
 * and misses this fault settles. The caller then loads at most that many
 * (stopping at the first page that is not stored) and reports the number
 * with ra_done(). Handler threads only.
 */
size_t ra_window(const void *key, size_t idx, size_t max);

/* The pages actually read ahead after the refault ra_window() was asked
 * about (loaded and installed): the window the stream's next fault judges. */
void ra_done(const void *key, size_t idx, size_t loaded);

#endif
