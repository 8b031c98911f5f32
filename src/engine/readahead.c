/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readahead.c - the adaptive readahead window of refaults (see readahead.h).
 *
 * The kernel keeps one window per VMA (vma->swap_readahead_info: the last
 * fault address, the window, the hits since) and sizes the next window from
 * the hits: pages = hits + 2 rounded up to a power of two (at least 4), never
 * below half the previous window, 1 when there were no hits and the fault is
 * not next to the previous one (__swapin_nr_pages). It counts a hit when a
 * fault finds a page readahead put in the swap cache (a minor fault).
 *
 * Here a page read ahead is installed in the page table at once, so using it
 * takes no fault at all and cannot be seen; instead the stream's next fault
 * tells: just past the window means every page of it was walked through. So a
 * window is judged at the next fault of its stream, and streams are recognised
 * by where they fault: at the end of their last window (or a few pages past
 * it: a strided reader), or, with no window yet, on the page right after their
 * last fault. A few streams (RA_STREAMS) for the whole process, replaced least
 * recently used, so threads reading different ranges (or one thread reading
 * two) keep their windows; a random fault matches none and takes a fresh
 * stream with no readahead. The table is shared by the handler threads rather
 * than kept per handler: a program thread that moves to another CPU has its
 * next fault served by another handler (one is pinned to each CPU), and
 * per-handler streams then started again from nothing (a sequential reader
 * took several times the faults its windows allowed: docs/DESIGN.md, "Tried
 * and rejected"). It is guarded by a mutex that only handler threads take,
 * held for a table scan (no system call, no program memory), so no program
 * thread can ever hold it while it faults. A mutex rather than a spin lock: a
 * handler preempted while holding it (the program thread it just woke shares
 * its CPU) would have the other handler spin for a time slice.
 *
 * Window sizes, in pages read ahead after the faulting page (the kernel's
 * "pages" minus one): 0 for a new stream, 1 once the stream faults on the
 * next page, then 3, 7, 15, 31, 63 as whole windows are used, capped by
 * ZSWAP_READAHEAD; halved when the stream faults inside its own window
 * (pages read ahead were evicted again before the reader reached them: the
 * window outruns the memory it has).
 *
 * The first window waits for a longer run of single faults on consecutive
 * pages while most pages read ahead lately went unused (the process's
 * judged windows, hits against misses, halved as they add up): a program
 * reading objects of two or three pages at random addresses (a key-value
 * store's values) faults on consecutive pages for each object and never
 * reads on, so one-page windows from its second fault are nearly all
 * wasted (redis: docs/DESIGN.md, "Tried and rejected"). A sequential
 * reader, whose windows are used, starts at its second fault.
 */
#include "config.h"
#include "engine/readahead.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "engine/engine.h"

#define RA_STREAMS 16		/* streams remembered */
#define RA_SLACK 2		/* pages past a window's end that still continue it */
#define RA_RUN_WASTEFUL 4	/* faults a run takes before its first window when readahead is mostly wasted */
#define RA_DECAY 256		/* judged pages after which the history is halved */

struct ra_stream {
	const void *key;	/* the slot array; NULL: unused */
	size_t last;		/* slot index of the stream's last refault */
	size_t end;		/* one past the last page read ahead then */
	size_t win;		/* pages read ahead then: end - last - 1 */
	unsigned int run;	/* faults on consecutive pages with no window yet */
	uint64_t stamp;		/* last use, for replacement */
};

static struct ra_stream ra_streams[RA_STREAMS];
static uint64_t ra_clock;
static uint64_t ra_hist_hits, ra_hist_misses;	/* judged pages lately (under ra_lock) */
static pthread_mutex_t ra_lock = PTHREAD_MUTEX_INITIALIZER;

/* The stream of the fault this handler thread is serving, and its stamp
 * then (another handler may take the stream over before ra_done()).
 * Handler threads run on library-owned stacks, where their static TLS
 * lives too. */
static __thread struct ra_stream *ra_cur;
static __thread uint64_t ra_cur_stamp;

static void ra_lock_take(void)
{
	pthread_mutex_lock(&ra_lock);
}

static void ra_lock_drop(void)
{
	pthread_mutex_unlock(&ra_lock);
}

/* Pages of judged windows: used (hits) and not (misses), in the counters
 * and in the history ra_run_to_start() reads. */
static void ra_judged(size_t hits, size_t misses)
{
	if (hits)
		atomic_fetch_add_explicit(&eng.cnt.readahead_hits, hits, memory_order_relaxed);
	if (misses)
		atomic_fetch_add_explicit(&eng.cnt.readahead_misses, misses, memory_order_relaxed);
	ra_hist_hits += hits;
	ra_hist_misses += misses;
	if (ra_hist_hits + ra_hist_misses > RA_DECAY) {
		ra_hist_hits /= 2;
		ra_hist_misses /= 2;
	}
}

/* Faults a run of consecutive pages takes before its first window. */
static unsigned int ra_run_to_start(void)
{
	return ra_hist_misses > 3 * ra_hist_hits ? RA_RUN_WASTEFUL : 1;
}

/* The next window after a whole window of win pages was used: the kernel's
 * hits + 2, rounded up to a power of two of at least 4, less the faulting
 * page. */
static size_t ra_grow(size_t win)
{
	size_t pages = 4;

	while (pages < win + 2)
		pages <<= 1;
	return pages - 1;
}

/* The stream this fault continues, if any. */
static struct ra_stream *ra_find(const void *key, size_t idx)
{
	for (int i = 0; i < RA_STREAMS; i++) {
		struct ra_stream *s = &ra_streams[i];

		if (s->key != key || idx <= s->last)
			continue;
		if (s->win ? idx <= s->end + RA_SLACK : idx == s->last + 1)
			return s;
	}
	return NULL;
}

/* A stream slot for a new stream: a free one, else the least recently used,
 * whose unjudged window is then a miss (its reader never came back). */
static struct ra_stream *ra_take(void)
{
	struct ra_stream *v = &ra_streams[0];

	for (int i = 0; i < RA_STREAMS; i++) {
		if (!ra_streams[i].key)
			return &ra_streams[i];
		if (ra_streams[i].stamp < v->stamp)
			v = &ra_streams[i];
	}
	ra_judged(0, v->win);
	return v;
}

size_t ra_window(const void *key, size_t idx, size_t max)
{
	struct ra_stream *s;
	size_t want;

	ra_cur = NULL;
	if (!max || !key)
		return 0;
	ra_lock_take();
	s = ra_find(key, idx);
	if (!s) {
		s = ra_take();
		s->key = key;
		s->run = 0;
		want = 0;
	} else if (s->win && idx < s->end) {
		/* Inside its own window: the pages before idx were used, idx
		 * and the rest were evicted again before the reader got there. */
		ra_judged(idx - s->last - 1, s->end - idx);
		want = s->win / 2;
	} else if (s->win) {
		/* Just past its window: the reader went through all of it. */
		ra_judged(s->win, 0);
		want = ra_grow(s->win);
	} else if (++s->run >= ra_run_to_start()) {
		/* The page after its last fault: sequential, start small. */
		want = 1;
	} else {
		want = 0;
	}
	s->last = idx;
	s->end = idx + 1;
	s->win = 0;
	s->stamp = ++ra_clock;
	ra_cur = s;
	ra_cur_stamp = s->stamp;
	ra_lock_drop();
	return want < max ? want : max;
}

void ra_done(const void *key, size_t idx, size_t loaded)
{
	struct ra_stream *s = ra_cur;

	ra_cur = NULL;
	if (!s)
		return;
	ra_lock_take();
	if (s->stamp == ra_cur_stamp && s->key == key && s->last == idx) {
		s->win = loaded;
		s->end = idx + 1 + loaded;
	}
	ra_lock_drop();
}
