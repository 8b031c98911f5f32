/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reclaim.c - the reclaimer thread (kswapd's part): the clock sweep under
 * the limit and for the cold age (see src/engine/policy.h for which pages,
 * and src/engine/policy.c for the charge and the throttle that holds faults
 * while it works).
 *
 * Memory the engine does not manage (the main stack, thread stacks, the
 * program's own bss, small mappings glibc makes for itself) is charged but
 * never reclaimed: a program whose unmanaged memory alone is over the limit
 * runs over it (memory_events_max counts those faults).
 *
 * Watermarks (kswapd's): faults are held above hold = limit - m, m =
 * limit/96 but at least min(3 MiB, limit/64) (the estimate between two
 * readings is rough, and eviction itself briefly holds a batch twice: in
 * staging and in the pool; m covers that, so the peak stays under the limit
 * at 320 MiB). Background reclaim wakes above high = hold - band/4 and
 * stops below low_bg = hold - band/2 (0.8 and 1.7 MiB under the hold line
 * at 320 MiB), band = m but at least three of growth.c's held steps. A held
 * request larger than half of that room (a step of malloc's growth: faults
 * fill at most 16 pages) makes it go down to low = hold - band. Keeping the
 * charge near the limit is what keeps the working set resident: every MiB
 * of charge holds more than a MiB of it at the pool's compression ratio
 * (docs/DESIGN.md, "The charge and the limit"). While faults keep being held,
 * high and low_bg sit lower by a boost (reclaim_boost) that calm undoes.
 *
 * When a step stores nothing even taking protected pages (everything
 * resident is unmanaged or stored, or the pool is full) the reclaimer marks
 * itself stuck and held faults go through until it makes progress again.
 *
 * The cost of protection is bounded (docs/DESIGN.md, "Known bad case"): a
 * step that has looked at RECLAIM_SCAN_RATIO resident pages per page it
 * wants takes protected pages too.
 *
 * Written bits (src/engine/policy.h, evict_stage_pages): in a cold-age pass,
 * a page written since the last one is not idle (docs/DESIGN.md, "Which
 * pages"); the limit's clock goes by refaults alone.
 *
 * Cold pages: see src/engine/policy.h and docs/DESIGN.md.
 */
#include "config.h"
#include "reclaim/reclaim.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "base/layout.h"
#include "engine/engine.h"
#include "engine/policy_reclaim.h"
#include "engine/evict.h"
#include "engine/fork.h"
#include "engine/writeback.h"
#include "base/fdtab.h"
#include "reclaim/cgroup.h"
#include "reclaim/filemap.h"
#include "reclaim/group.h"
#include "reclaim/growth.h"
#include "reclaim/shrinker.h"
#include "base/hist.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "core/zsmalloc.h"

/* Why reclaim is stuck (reclaim_say_stuck). */
enum { RECLAIM_STUCK_NOTHING, RECLAIM_STUCK_POOL, RECLAIM_STUCK_POOL_FULL, RECLAIM_STUCK_CHILD, RECLAIM_STUCK_SHARED };

/* --- the clock ---------------------------------------------------------- */

struct reclaim_walk {
	uintptr_t prev_end;
	bool prev_anon;
	uintptr_t run_start, run_end;	/* adjacent adoptable mappings */
};

/* A run of adjacent adoptable mappings ends: one target if it is large
 * enough to manage (evict_adopt decides each piece the same way). */
static void reclaim_run_end(struct reclaim_walk *w)
{
	if (w->run_end - w->run_start >= eng.opt.min_region && pol.nadopt < RECLAIM_TARGETS) {
		pol.adopt[pol.nadopt].start = w->run_start;
		pol.adopt[pol.nadopt++].end = w->run_end;
	}
	w->run_start = w->run_end = 0;
}

/*
 * A mapping reclaim may adopt: private anonymous read-write memory (the
 * heap included) that does not start right after an inaccessible or file
 * mapping. glibc's thread stacks sit just above their guard page; a
 * thread's stack and TCB are touched by library code running on that
 * thread while it holds library locks (an interposed mmap, an eviction), and
 * a fault there then could never be served. Explicit MADV_PAGEOUT still
 * reaches them; reclaim leaves them (and glibc arenas that follow another
 * arena's reserved tail, and bss that follows a data segment) alone. The
 * main program's data made anonymous at start (src/engine/progdata.h) is
 * taken, a run of its own; the bss behind it, where the C library's
 * copy-relocated variables live (stdout, environ), is left as it was.
 */
static int reclaim_collect_vma(const struct maps_vma *v, void *arg)
{
	struct reclaim_walk *w = arg;
	bool after_other = v->start == w->prev_end && !w->prev_anon;
	uintptr_t lo = v->start, hi = v->end;

	w->prev_end = v->end;
	w->prev_anon = v->anon_rw_private;
	if (v->anon_rw_private && engine_program_clip(v->start, &lo, &hi)) {
		reclaim_run_end(w);
		w->run_start = lo;
		w->run_end = hi;
		reclaim_run_end(w);
		w->prev_anon = false;	/* its bss follows a data segment, as before */
		return 0;
	}
	if (v->special || !v->anon_rw_private || (after_other && !v->heap)) {
		reclaim_run_end(w);
		return 0;
	}
	if (w->run_end != v->start)
		reclaim_run_end(w);
	if (!w->run_end)
		w->run_start = v->start;
	w->run_end = v->end;
	return 0;
}

/*
 * The mappings of one rotation: what reclaim may adopt, plus every
 * registered region (merged where they overlap), in address order.
 *
 * The first part comes from /proc/self/maps, whose reading costs in
 * proportion to the process's mappings: reread only when RECLAIM_MAPS_TTL_NS
 * have passed. Where the working set does not fit, a rotation can take
 * less than a millisecond, and rereading at each one made the file's
 * formatting and parsing most of the reclaimer's time (V8's hundreds of
 * heap mappings under a limit; CPython's regrtest parent). A stale entry is
 * harmless: adoption and registration ask the kernel about the range
 * itself first (evict_adopt, evict_register); a new mapping waits at most
 * the TTL to be seen.
 */
static void reclaim_build_targets(void)
{
	struct region_ref refs[32];
	uintptr_t cursor = 0;
	uint64_t now = hist_now();

	if (!pol.adopt_ns || now - pol.adopt_ns >= RECLAIM_MAPS_TTL_NS) {
		struct reclaim_walk w = { 0, true, 0, 0 };
		pol.nadopt = 0;
		/* Under the gate: fork's prepare handler takes it for writing,
		 * so maps_lock is never held across fork (the child would
		 * inherit it). */
		pthread_rwlock_rdlock(&eng.evict_gate);
		maps_for_each(reclaim_collect_vma, &w);
		pthread_rwlock_unlock(&eng.evict_gate);
		reclaim_run_end(&w);
		pol.adopt_ns = now;
	}
	memcpy(pol.targets, pol.adopt, pol.nadopt * sizeof(*pol.targets));
	pol.ntargets = pol.nadopt;
	while (cursor < UINTPTR_MAX) {
		size_t n = region_collect(0, UINTPTR_MAX, &cursor, refs, 32);
		for (size_t k = 0; k < n; k++) {
			if (pol.ntargets < RECLAIM_TARGETS) {
				pol.targets[pol.ntargets].start = refs[k].start;
				pol.targets[pol.ntargets++].end = refs[k].end;
			}
			region_arr_put(refs[k].arr);
		}
		if (!n)
			break;
	}
	/* Insertion sort (at most RECLAIM_TARGETS), then merge overlaps. */
	for (size_t i = 1; i < pol.ntargets; i++) {
		uintptr_t s = pol.targets[i].start, e = pol.targets[i].end;
		size_t j = i;
		for (; j > 0 && pol.targets[j - 1].start > s; j--)
			pol.targets[j] = pol.targets[j - 1];
		pol.targets[j].start = s;
		pol.targets[j].end = e;
	}
	size_t m = 0;
	for (size_t i = 0; i < pol.ntargets; i++) {
		if (m && pol.targets[i].start < pol.targets[m - 1].end) {
			if (pol.targets[i].end > pol.targets[m - 1].end)
				pol.targets[m - 1].end = pol.targets[i].end;
		} else {
			pol.targets[m++] = pol.targets[i];
		}
	}
	pol.ntargets = m;
	pol.next = 0;
	pol.hand = m ? pol.targets[0].start : 0;
}

/* The advised ranges first, oldest first: their cold pages are the first
 * victims (policy_select), the rest of each range is judged as the hand
 * would judge it. A range not finished waits for the next sweep. */
static size_t reclaim_sweep_cold(size_t want, size_t *scanned)
{
	size_t got = 0;

	while (got < want) {
		uintptr_t start, end, stop;
		pthread_mutex_lock(&pol.cold_lock);
		if (!pol.ncold) {
			pthread_mutex_unlock(&pol.cold_lock);
			break;
		}
		start = pol.cold[0].start;
		end = pol.cold[0].end;
		pthread_mutex_unlock(&pol.cold_lock);
		got += evict_reclaim(start, end, want - got, &stop, scanned);
		pthread_mutex_lock(&pol.cold_lock);
		/* Still the first (only this thread removes ranges): finished
		 * (or no step made: a range gone), or what is left of it. */
		if (stop >= end || stop <= start) {
			memmove(&pol.cold[0], &pol.cold[1], (pol.ncold - 1) * sizeof(pol.cold[0]));
			pol.ncold--;
		} else {
			pol.cold[0].start = stop;
		}
		pthread_mutex_unlock(&pol.cold_lock);
	}
	return got;
}

/*
 * Move the clock hand on until want pages are stored, or max_rotations
 * rotations have gone by (a rotation that ends rebuilds the target list).
 * Returns the pages stored; *rotations counts the rotations completed.
 */
static size_t reclaim_sweep(size_t want, unsigned int max_rotations, unsigned int *rotations)
{
	size_t got = 0, scanned = 0;

	*rotations = 0;
	got = reclaim_sweep_cold(want, &scanned);
	while (got < want) {
		if (pol.next >= pol.ntargets) {
			if ((*rotations)++ >= max_rotations)
				break;
			reclaim_build_targets();
			if (!pol.ntargets)
				break;
			continue;
		}
		uintptr_t start = pol.targets[pol.next].start, end = pol.targets[pol.next].end, stop;
		if (pol.hand < start)
			pol.hand = start;
		got += evict_reclaim(pol.hand, end, want - got, &stop, &scanned);
		pol.hand = stop;
		if (stop >= end)
			pol.next++;
	}
	atomic_fetch_add_explicit(&pol.pgscan, scanned, memory_order_relaxed);
	atomic_fetch_add_explicit(&pol.pgsteal, got, memory_order_relaxed);
	return got;
}

static void reclaim_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait for a kick or ms milliseconds. */
static void reclaim_idle(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	_Atomic uint32_t *w = policy_kick_word();
	uint32_t k = atomic_load(w);

	atomic_store(&pol.sleeping, 1);
	syscall(SYS_futex, w, FUTEX_WAIT, k, &ts, NULL, 0);
	atomic_store(&pol.sleeping, 0);
}

/*
 * Bring the charge below target (the limit's low watermark). Steps of a few
 * hundred to RECLAIM_STEP_MAX pages: each stores pages and then reads the
 * charge again (a stored page gives back only what it does not take in the
 * pool, about half a page for text). Backs off, counted, when the pool
 * refuses everything, or when refaults outpace what it stores (the working
 * set does not fit: evicting faster only burns CPU; the faults stay held
 * meanwhile, so the limit still holds).
 */
/* What the pool costs now: zsmalloc pages plus metadata. */
static uint64_t reclaim_pool_bytes(void)
{
	struct zswap_stats st;

	memset(&st, 0, sizeof(st));
	zswap_store_stats(eng.store, &st);
	return st.mem_used_total + st.pool_metadata_bytes;
}

/* The refault distance's yardstick (RECLAIM_WORKINGSET_DIV), from a charge
 * reading and the pool's cost: set at start-up, at every step of reclaim and
 * before every cold-age pass (without a limit, no step ever runs). */
static void reclaim_set_workingset(uint64_t charge, uint64_t pool)
{
	uint64_t pages = charge >> ZS_PAGE_SHIFT;

	if (eng.opt.pool_uncharged)
		pool = 0;	/* the charge holds no pool */
	if (RECLAIM_WORKINGSET_DIV)
		pages = (charge > pool ? (charge - pool) >> ZS_PAGE_SHIFT : 0) / RECLAIM_WORKINGSET_DIV;
	atomic_store_explicit(&pol.workingset, pages, memory_order_relaxed);
}

/*
 * ZSWAP_INJECT_POOL_HOLD: an order of zswapctl's that changes the pools
 * (o: a change of compressor, a compaction) waits inside the mapping gate
 * until a fault is served, ten seconds at most (said in o->why and the
 * log when none was): a test shows that refaults go on meanwhile. Orders
 * only, never the reclaimer's own steps, so a test knows which one waits.
 */
static void reclaim_pool_hold(struct reclaim_order *o, const char *what)
{
	if (!o || !inject_take(&eng.inject_pool_hold))
		return;
	uint64_t faults = atomic_load(&eng.cnt.faults);
	zlog("ZSWAP_INJECT_POOL_HOLD: %s waits for a fault", what);
	for (int i = 0; i < 10000; i++) {
		if (atomic_load(&eng.cnt.faults) != faults)
			return;
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	log_snprintf(o->why, sizeof(o->why), "no fault was served in ten seconds while %s waited", what);
	zlog("ZSWAP_INJECT_POOL_HOLD: %s", o->why);
}

/* Pack the pool before evicting more: pages the pool holds in partly used
 * zspages come back without a refault (the kernel's zsmalloc shrinker is
 * not memcg-aware, so a cgroup's reclaim never compacts). Only when at
 * least RECLAIM_COMPACT_MIN pages, or 1/256 of the pool, would be freed.
 * In rounds of at most RECLAIM_COMPACT_ROUND pages inside the mapping gate
 * (fork.h), as a change of compressor: a fork's prepare closes it and waits
 * for the round, so no fork copies the pool with a class lock held or a
 * zspage half moved (mapcount -1), which the child would wait on forever.
 * Not under ev_lock: a round frees emptied zspages (a madvise and its TLB
 * flush each, tens of microseconds to over a hundred in a guest), and a
 * handler takes ev_lock's write side to read each fault, so every refault
 * would wait for the round. o: the order of zswapctl compact, else NULL.
 * True if it freed something. */
static uint64_t reclaim_compact_rounds(struct reclaim_order *o)
{
	uint64_t freed = 0, got;

	do {
		fork_gate_enter();
		reclaim_pool_hold(o, "compaction");
		o = NULL;
		got = zswap_store_compact_some(eng.store, RECLAIM_COMPACT_ROUND);
		fork_gate_exit();
		freed += got;
	} while (got >= RECLAIM_COMPACT_ROUND);
	return freed;
}

static bool reclaim_compact_over(unsigned long min)
{
	if (min < RECLAIM_COMPACT_MIN)
		min = RECLAIM_COMPACT_MIN;
	if (zswap_store_freeable_pages(eng.store) < min)
		return false;
	return reclaim_compact_rounds(NULL) > 0;
}

static bool reclaim_compact(uint64_t pool)
{
	return reclaim_compact_over((unsigned long)(pool >> (ZS_PAGE_SHIFT + 8)));
}

/* Compaction at rest. zsmalloc's shrinker compacts whenever the kernel is
 * short of memory; without a limit nothing here says so, and under one
 * reclaim_compact runs only once the charge is high. Yet every exclusive
 * load leaves a hole in its zspage (MADV_PAGEOUT or the cold age, then the
 * program touching part of what went out), and holes nobody fills would
 * stay until the pool empties. So once a second, when the reclaimer has
 * nothing else to do, it compacts if 1/RECLAIM_COMPACT_IDLE_DIV of the
 * pool, and RECLAIM_COMPACT_MIN pages, could be freed: a smaller share is
 * not worth emptying the pool's reserve of committed zspages for
 * (zsmalloc.c: up to 1/64 of the pool, faulted in again as it refills). */
static void reclaim_compact_idle(void)
{
	static uint32_t last;
	uint32_t now = policy_now();

	if (now == last)
		return;
	last = now;
	reclaim_compact_over((unsigned long)(reclaim_pool_bytes() >> ZS_PAGE_SHIFT) / RECLAIM_COMPACT_IDLE_DIV);
}

/*
 * With the second tier the pool keeps at most half the limit (above
 * RECLAIM_WB_HIGH of it, pages are written back down to that half), so that
 * the resident working set keeps the other half: a page in the pool costs
 * microseconds to fault back, one on disk tens, one resident nothing. Also
 * when the pool reached its own limit (ZSWAP_MAX_POOL_*): writeback makes
 * room instead of stores being refused. Written back in steps, the pool's
 * emptied zspages then compacted. True if it wrote something back.
 */
#define RECLAIM_WB_SHARE	2	/* the pool's share of the limit: 1/2 */
#define RECLAIM_WB_HIGH		16	/* writeback starts 1/16 of the limit above it */
#define RECLAIM_WB_POOR		32	/* poorly compressed pages the pool holds: 1/32 of the limit */

/*
 * The balance of the pool against resident pages (the charged pool only),
 * kept at the pool's edge: the age, in evictions, past which its entries go
 * to the tier. Memory moved from the pool to resident pages keeps the most
 * recently evicted pages in; moved the other way, it keeps the entries
 * around the edge out of the tier. Refaults say which is worth more
 * (policy_refault counts them): those from the pool younger than an eighth
 * of the edge (the kernel's workingset refaults: a little more resident
 * memory would have kept them) against those within an eighth of the edge
 * either side, these weighed by what a page of pool holds (1 / the
 * compression ratio) and by RECLAIM_BAL_TIER_COST, what a tier refault costs
 * more than a pool refault, in pool refaults (a read and an unsealing
 * against a round trip and an eviction). A decision, once
 * RECLAIM_BAL_WINDOW such refaults or RECLAIM_BAL_WINDOW_ALL refaults came,
 * moves the edge 1/RECLAIM_BAL_SHRINK younger while the young ones are worth
 * more, else 1/RECLAIM_BAL_GROW older: a wrong shrink costs tier refaults,
 * a wrong growth pool refaults, and with no young refaults the pool keeps
 * what it holds. Only entries past the edge go (writeback_run_old), as
 * mm/zswap.c's shrinker writes back the oldest entries as reclaim ages the
 * LRUs, its count lessened by the pages swapped in from disk. The half
 * share (reclaim_writeback) still bounds the pool (docs/DESIGN.md, "The
 * second tier").
 */
#define RECLAIM_BAL_WINDOW	64
#define RECLAIM_BAL_WINDOW_ALL	1024
#define RECLAIM_BAL_TIER_COST	4
#define RECLAIM_BAL_SHRINK	32
#define RECLAIM_BAL_GROW	8
#define RECLAIM_BAL_MIN_EDGE	1024	/* pages of evictions */

static void reclaim_balance(void)
{
	uint64_t young = atomic_load_explicit(&pol.refault_young, memory_order_relaxed);
	uint64_t edge_hits = atomic_load_explicit(&pol.refault_edge, memory_order_relaxed);
	uint64_t dy = young - pol.bal_young0, de = edge_hits - pol.bal_edge0;
	uint64_t edge = atomic_load_explicit(&pol.pool_edge, memory_order_relaxed);
	struct zswap_stats st;

	if (!edge) {
		/* To start with, the resident pages' span. */
		edge = atomic_load_explicit(&pol.workingset, memory_order_relaxed) * RECLAIM_WORKINGSET_DIV;
		atomic_store_explicit(&pol.pool_edge, edge > RECLAIM_BAL_MIN_EDGE ? edge : RECLAIM_BAL_MIN_EDGE,
				      memory_order_relaxed);
		return;
	}
	uint64_t all = atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed);
	if (dy + de < RECLAIM_BAL_WINDOW && all - pol.bal_all0 < RECLAIM_BAL_WINDOW_ALL)
		return;
	pol.bal_young0 = young;
	pol.bal_edge0 = edge_hits;
	pol.bal_all0 = all;
	memset(&st, 0, sizeof(st));
	zswap_store_stats(eng.store, &st);
	/* young x ratio against cost x edge hits, the ratio compressed / original. */
	if (2 * dy * st.compr_data_size > RECLAIM_BAL_TIER_COST * de * st.orig_data_size)
		edge -= edge / RECLAIM_BAL_SHRINK;
	else
		edge += edge / RECLAIM_BAL_GROW;
	if (edge < RECLAIM_BAL_MIN_EDGE)
		edge = RECLAIM_BAL_MIN_EDGE;
	if (edge > AUX_CLOCK_MASK / 2)
		edge = AUX_CLOCK_MASK / 2;
	atomic_store_explicit(&pol.pool_edge, edge, memory_order_relaxed);
}

/* Entries past the pool's edge go to the tier, looked for once the clock
 * moved an eighth of the edge since the last look. True if some went. */
static bool reclaim_writeback_old(void)
{
	uint64_t edge = atomic_load_explicit(&pol.pool_edge, memory_order_relaxed);
	uint64_t clock = atomic_load_explicit(&eng.cnt.evicted_pages, memory_order_relaxed);

	if (eng.opt.pool_uncharged || !edge || clock - pol.bal_pass_clock < edge / 8)
		return false;
	size_t got = writeback_run_old(RECLAIM_STEP_MAX, (uint32_t)edge);
	if (got < RECLAIM_STEP_MAX)
		pol.bal_pass_clock = clock;	/* none older left: wait for the clock */
	if (got)
		reclaim_compact(reclaim_pool_bytes());
	return got > 0;
}

static bool reclaim_writeback(uint64_t pool)
{
	uint64_t keep = pol.limit / RECLAIM_WB_SHARE;
	bool full = !zswap_store_accepting(eng.store);
	/* A page held as-is saves nothing in the pool, one compressed to 3
	 * KiB or more little: beyond a write buffer's worth, such pages go to
	 * the tier whatever the pool's size, and leave the memory to pages
	 * the program uses (redis with random values: docs/DESIGN.md, "The
	 * second tier"). */
	uint64_t poor = zswap_store_poor_pages(eng.store) << ZS_PAGE_SHIFT;
	uint64_t poor_keep = pol.limit / RECLAIM_WB_POOR;
	/* Under the v1 charge model the pool is not in the limit: only its
	 * own limit sends pages out (zswap's writeback in a v1 cgroup). */
	bool pool_over = full || (!eng.opt.pool_uncharged && pool > keep + pol.limit / RECLAIM_WB_HIGH);

	/* Under v1 the pool costs the limit nothing: it keeps them, as the
	 * kernel's zswap in a v1 cgroup does. */
	size_t want, got;

	if (!pool_over && (eng.opt.pool_uncharged || poor <= poor_keep + pol.limit / RECLAIM_WB_HIGH))
		return false;
	if (!pool_over) {
		/* Only the poorly compressed pages are over their share. */
		want = (size_t)((poor - poor_keep) >> ZS_PAGE_SHIFT);
		if (want > RECLAIM_STEP_MAX)
			want = RECLAIM_STEP_MAX;
		got = writeback_run_poor(want);
	} else {
		struct zswap_stats st;
		memset(&st, 0, sizeof(st));
		zswap_store_stats(eng.store, &st);
		uint64_t per = st.stored_pages > st.same_filled_pages
				       ? st.compr_data_size / (st.stored_pages - st.same_filled_pages) : ZS_PAGE_SIZE;
		uint64_t over = pool > keep ? pool - keep : pol.limit / RECLAIM_WB_HIGH;
		want = (size_t)(over / (per ? per : ZS_PAGE_SIZE));
		if (want < RECLAIM_STEP_MIN)
			want = RECLAIM_STEP_MIN;
		if (want > RECLAIM_STEP_MAX)
			want = RECLAIM_STEP_MAX;
		got = writeback_run(want);
		if (!got && full)
			zswap_store_reclaim_failed(eng.store);	/* stores stay refused */
	}
	if (got)
		reclaim_compact(reclaim_pool_bytes());
	return got > 0;
}

static void reclaim_backoff(void)
{
	atomic_fetch_add(&pol.backoff, 1);
	reclaim_sleep_ms(pol.pause_ms);
	if (pol.pause_ms < RECLAIM_PAUSE_MAX_MS)
		pol.pause_ms *= 2;
}

/* One step of want pages by the clock, its scan budgets set; when every
 * page it finds is protected (the working set is larger than the limit
 * allows) it takes them anyway. Returns the pages stored. */
static size_t reclaim_step(size_t want)
{
	unsigned int rot;

	if (eng.opt.inject_crash == 2)
		inject_segv();
	pol.proactive = false;
	pol.looked = 0;
	pol.budget = want * RECLAIM_SCAN_RATIO;
	size_t got = reclaim_sweep(want, RECLAIM_MAX_PASSES, &rot);
	if (!got) {
		pol.force = true;
		got = reclaim_sweep(want, 1, &rot);
		pol.force = false;
	}
	group_stored(got);
	return got;
}

/* The file pages' turn (RECLAIM_FILE_DIV, RECLAIM_FILE_EVERY_NS): the
 * kernel's reclaim takes clean page cache before it swaps. */
static bool reclaim_file_due(void)
{
	uint64_t now = hist_now();

	if (atomic_load_explicit(&pol.file, memory_order_relaxed) < pol.limit / RECLAIM_FILE_DIV)
		return false;
	if (pol.file_drop_ns && now - pol.file_drop_ns < RECLAIM_FILE_EVERY_NS)
		return false;
	pol.file_drop_ns = now;
	return true;
}

/* The charge the limit is held to: the group's (memory.current of the
 * whole tree, src/reclaim/group.c) for a member of one, else own. */
static uint64_t reclaim_seen(uint64_t own)
{
	_Atomic uint64_t *total = pol.grp_total;

	return total ? atomic_load_explicit(total, memory_order_relaxed) : own;
}

static void reclaim_to(uint64_t target)
{
	for (;;) {
		uint64_t c = policy_read_charge(), seen = reclaim_seen(c);
		policy_progress();
		if (seen <= target)
			break;
		if (reclaim_file_due() && filemap_drop())
			continue;
		/* The pool alone (it only shrinks as pages come back) leaves
		 * less than an eighth of the limit for everything else: evicting
		 * the few pages still resident would only make every access
		 * refault. Back off and let faults through: the limit cannot
		 * hold for this working set (memory_events_max says so). */
		uint64_t pool = reclaim_pool_bytes();
		reclaim_set_workingset(c, pool);
		reclaim_balance();
		if (writeback_on() && (reclaim_writeback_old() || reclaim_writeback(pool)))
			continue;
		bool pool_big = !eng.opt.pool_uncharged && pool > pol.limit - pol.limit / 8;
		/* The same for the file pages and shared memory it maps alone,
		 * which nothing here compresses (file pages go back only at
		 * reclaim_file_due's pace): a process of a tree sharing a
		 * segment (a database's buffer cache) is charged for every
		 * shared page it touched, and evicting its private pages to
		 * make up for them would only make each of their accesses
		 * refault, without end. */
		bool shared_big = atomic_load_explicit(&pol.file, memory_order_relaxed) > pol.limit - pol.limit / 8;
		if (pool_big || shared_big || !zswap_store_accepting(eng.store)) {
			pol.stuck_why = pool_big ? RECLAIM_STUCK_POOL
				      : shared_big ? RECLAIM_STUCK_SHARED : RECLAIM_STUCK_POOL_FULL;
			atomic_store(&pol.stuck, 1);
			policy_progress();
			reclaim_backoff();
			return;
		}
		if (reclaim_compact(pool))
			continue;
		size_t want = (size_t)(((seen - target) >> ZS_PAGE_SHIFT) * 2);
		if (want < RECLAIM_STEP_MIN)
			want = RECLAIM_STEP_MIN;
		if (want > RECLAIM_STEP_MAX)
			want = RECLAIM_STEP_MAX;
		uint64_t refaults0 = atomic_load(&eng.cnt.refaults);
		size_t got = reclaim_step(want);
		if (!got && writeback_on() && writeback_run(want)) {
			/* Nothing resident left to take: the pool makes room. */
			reclaim_compact(reclaim_pool_bytes());
			continue;
		}
		if (!got) {
			/* Nothing left to take (all unmanaged, protected or
			 * stored already): let held faults through. */
			pol.stuck_why = RECLAIM_STUCK_NOTHING;
			atomic_store(&pol.stuck, 1);
			policy_progress();
			reclaim_backoff();
			return;
		}
		atomic_store(&pol.stuck, 0);
		pol.pause_ms = 1;
		uint64_t refaults = atomic_load(&eng.cnt.refaults) - refaults0;
		if (refaults > 2 * got + 64) {
			atomic_fetch_add(&pol.backoff, 1);
			policy_progress();
			reclaim_sleep_ms(1);
		}
	}
}

/* A cold-age pass: one rotation storing every unprotected page that has
 * not come in for cold_age seconds. */
static void reclaim_proactive(void)
{
	unsigned int rot;

	pol.proactive = true;
	pol.now_s = policy_now();
	reclaim_build_targets();
	size_t got = reclaim_sweep(SIZE_MAX, 1, &rot);
	pol.proactive = false;
	atomic_fetch_add(&pol.pgsteal_proactive, got);
}

/*
 * Watermark boost (the kernel boosts kswapd's watermarks after an
 * allocation had to wait): faults held since the last look mean background
 * reclaim started too late for the rate pages come in (its step's pages
 * leave the charge only when the step ends); wake and stop lower, by
 * band/RECLAIM_BOOST_STEP more each time, up to band/RECLAIM_BOOST_MAX.
 * A look with none held gives back an eighth (the loop looks after each
 * step and at least every RECLAIM_POLL_MS: gone within a few hundred
 * milliseconds of calm). The charge's mean drops by the boost only while
 * faults are being held. Returns the boost.
 */
static uint64_t reclaim_boost(void)
{
	uint64_t stalls = atomic_load_explicit(&pol.allocstall, memory_order_relaxed);

	if (stalls != pol.boost_stalls) {
		pol.boost_stalls = stalls;
		pol.boost += pol.band / RECLAIM_BOOST_STEP;
		if (pol.boost > pol.band / RECLAIM_BOOST_MAX)
			pol.boost = pol.band / RECLAIM_BOOST_MAX;
	} else {
		/* 1/RECLAIM_BOOST_DECAY back, all of it once under a page. */
		pol.boost = pol.boost > ZS_PAGE_SIZE ? pol.boost - pol.boost / RECLAIM_BOOST_DECAY : 0;
	}
	atomic_store_explicit(&pol.wake, pol.high - pol.boost, memory_order_relaxed);
	return pol.boost;
}

/*
 * Say once, on stderr, that the limit cannot hold, and why, when the
 * charge has stayed over it with reclaim stuck for RECLAIM_STUCK_SAY_MS:
 * the program runs on over it (memory_events_max counts the faults let
 * through), which a user who set the limit must hear about. A moment of
 * it (a step finding nothing while everything is in flight) says nothing.
 */
#define RECLAIM_STUCK_SAY_MS	1000

static void reclaim_say_stuck(uint64_t charge)
{
	static bool said;
	struct timespec now;

	if (said || !pol.limit)
		return;
	if (!atomic_load(&pol.stuck) || charge <= pol.limit) {
		pol.stuck_since.tv_sec = 0;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (!pol.stuck_since.tv_sec) {
		pol.stuck_since = now;
		return;
	}
	if (policy_ns_between(&pol.stuck_since, &now) / 1000000 < RECLAIM_STUCK_SAY_MS)
		return;
	said = true;
	static const char *const why[] = {
		[RECLAIM_STUCK_NOTHING] = "nothing is left to compress beside the pool (what is resident is memory"
					  " libzswap does not manage: stacks, small or shared mappings)",
		[RECLAIM_STUCK_POOL] = "the compressed data alone does not fit in it",
		[RECLAIM_STUCK_POOL_FULL] = "the pool is full (ZSWAP_MAX_POOL_PERCENT or ZSWAP_MAX_POOL_SIZE)",
		[RECLAIM_STUCK_CHILD] = "this fork child writes nothing to the second tier (the parent's file, which it"
					" only reads), and what it read back from there does not fit in the pool",
		[RECLAIM_STUCK_SHARED] = "the file pages and shared memory charged to it (never compressed)"
					 " leave less than an eighth of it for the rest",
	};
	/* Whatever the sweep found, a child's real reason is that it cannot
	 * write back (unless what it maps leaves no room anyway). */
	if (writeback_child() && pol.stuck_why != RECLAIM_STUCK_SHARED)
		pol.stuck_why = RECLAIM_STUCK_CHILD;
	uint64_t mib = 1 << 20;
	zlog("ZSWAP_MEMORY_LIMIT (%llu MiB) cannot hold: %s, so the program runs over the limit"
	     " (%llu MiB now, the pool %llu MiB)", (unsigned long long)(pol.limit / mib), why[pol.stuck_why],
	     (unsigned long long)(charge / mib), (unsigned long long)(reclaim_pool_bytes() / mib));
}

/*
 * Thrashing, in the kernel's sense: refaults of pages that were part of the
 * working set (workingset_activate: evicted only moments before), the
 * refaults PSI counts as memory stalls. A window of RECLAIM_THRASH_WINDOW_S
 * with RECLAIM_THRASH_RATE of them a second, a quarter or more of all its
 * refaults, is one where the program spent much of its time (tens of
 * microseconds a refault) waiting for pages a little more memory would
 * have kept. thrashing_windows counts such windows, and the first is said
 * on stderr, once, with what would help: a user who set the limit must hear
 * that it costs the program its speed. Refaults that come late (a scan
 * through more data than the limit holds, a working set several times the
 * limit: each page evicted long before it comes back) are not counted: a
 * somewhat larger limit would barely spare them, and a program built to run
 * so, as the demo is, need not hear about it.
 */
#define RECLAIM_THRASH_WINDOW_S	10
#define RECLAIM_THRASH_RATE	1000

static void reclaim_watch_thrash(void)
{
	static bool said;
	struct timespec now;

	if (!pol.limit)
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	uint64_t quick = atomic_load_explicit(&pol.activate, memory_order_relaxed);
	uint64_t refaults = atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed);
	uint64_t ns = pol.thrash_t0.tv_sec ? policy_ns_between(&pol.thrash_t0, &now) : 0;
	if (pol.thrash_t0.tv_sec && ns < RECLAIM_THRASH_WINDOW_S * 1000000000ull)
		return;
	uint64_t dq = quick - pol.thrash_quick0, dr = refaults - pol.thrash_refaults0;
	pol.thrash_t0 = now;	/* the next window (or the first: ns 0) starts */
	pol.thrash_quick0 = quick;
	pol.thrash_refaults0 = refaults;
	if (!ns || dq * 1000000000ull < (uint64_t)RECLAIM_THRASH_RATE * ns || dq * 4 < dr)
		return;
	atomic_fetch_add_explicit(&pol.thrash_windows, 1, memory_order_relaxed);
	if (said)
		return;
	said = true;
	uint64_t secs = ns / 1000000000ull;
	zlog("the program is thrashing under ZSWAP_MEMORY_LIMIT (%llu MiB): %llu refaults a second over the"
	     " last %llu s, %llu %% of them pages evicted only moments before: its working set does not fit,"
	     " and a somewhat larger limit would spare most of them",
	     (unsigned long long)(pol.limit >> 20), (unsigned long long)(dr / secs), (unsigned long long)secs,
	     (unsigned long long)(dr ? dq * 100 / dr : 0));
}

/* The eventfd held faults wait on, made when a limit first needs it (a
 * program without one sees one descriptor fewer of ours). */
static bool reclaim_wait_fd(void)
{
	if (pol.wait_fd < 0)
		pol.wait_fd = fdtab_keep((int)syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE));
	return pol.wait_fd >= 0;
}

/* --- the limit and the memory cgroup ----------------------------------- */

static uint64_t reclaim_physmem(void)
{
	struct sysinfo si;

	if (syscall(SYS_sysinfo, &si) != 0)
		return 0;
	return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

/*
 * The watermarks of a limit (0: none). At start-up, and on the reclaimer
 * thread for a change (zswapctl set, a memory cgroup's new limit): handlers
 * read pol.limit first and the watermarks after it, so a new limit is
 * published last and a removed one first.
 */
static void reclaim_set_limit(uint64_t limit)
{
	/* Under a limit the pool's reserve of emptied zspages is charged:
	 * 1/64 of the pool, no floor (a floor of 1 MiB a process was 4 MiB of
	 * a Pool of four workers' 48M: 8.6 against 7.3-8.2 s with
	 * forkserver). */
	zswap_store_set_reserve_min(eng.store, limit ? 0 : ZS_RESERVE_MIN_PAGES);
	if (!limit) {
		__atomic_store_n(&pol.limit, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&eng.opt.memory_limit, 0, __ATOMIC_RELAXED);
		atomic_store(&pol.stuck, 0);
		policy_progress();	/* held faults go: nothing holds them now */
		return;
	}
	/* The hold line: m below the limit, m = limit/96 but at least
	 * min(RECLAIM_MARGIN_MIN, limit/64): below 192 MiB limit/64 (a 3 MiB
	 * margin under a small limit costs perl's hash refaults: docs/DESIGN.md,
	 * "Tried and rejected"). */
	uint64_t m = limit / RECLAIM_MARGIN_DIV, floor = limit / 64;
	if (floor > RECLAIM_MARGIN_MIN)
		floor = RECLAIM_MARGIN_MIN;
	if (m < floor)
		m = floor;
	/* The band from the hold line down to the low watermark: m, but
	 * growth.c holds steps of malloc's growth below min(ZSWAP_MIN_REGION,
	 * limit/64) at the throttle, and the band must take three of them or
	 * one could wait forever. */
	uint64_t step = eng.opt.min_region < limit / 64 ? eng.opt.min_region : limit / 64;
	uint64_t band = m < 3 * step ? 3 * step : m;
	if (m + band > limit / 4)
		m = band = limit / 8;
	if (!reclaim_wait_fd()) {
		zlog("ZSWAP_MEMORY_LIMIT: no eventfd (errno %d): the limit is not enforced", errno);
		return;
	}
	bool lower = pol.limit && limit < pol.limit;
	if (lower)
		__atomic_store_n(&pol.limit, limit, __ATOMIC_RELEASE);
	pol.hold = limit - m;
	pol.high = pol.hold - band * RECLAIM_BG_WAKE / 16;
	pol.low_bg = pol.hold - band * RECLAIM_BG_STOP / 16;
	pol.low = pol.hold - band;
	pol.band = band;
	pol.boost = 0;
	atomic_store(&pol.wake, pol.high);
	__atomic_store_n(&pol.limit, limit, __ATOMIC_RELEASE);
	__atomic_store_n(&eng.opt.memory_limit, limit, __ATOMIC_RELAXED);
	atomic_store(&pol.stuck, 0);
	policy_progress();	/* a higher limit lets held faults go */
}

/* ZSWAP_MEMORY_LIMIT given as N% or auto: the limit now, from the memory
 * cgroup's (0 outside a limited one: none for auto, physical memory's
 * share for N%). */
static uint64_t reclaim_cgroup_limit(unsigned int rel)
{
	uint64_t phys = reclaim_physmem(), cg = cgroup_memory_limit(phys), v;

	if (rel == OPT_LIMIT_AUTO)
		v = cg / 8 * 7;	/* 1/8 for what the group charges and reclaim cannot take */
	else if (cg)
		v = cg / 100 * rel + cg % 100 * rel / 100;
	else
		v = phys / 100 * rel;
	return v & ZS_PAGE_MASK;
}

#define RECLAIM_CGROUP_NS 1000000000ull	/* the cgroup's limit read again this often */

/* Follow the memory cgroup's limit (ZSWAP_MEMORY_LIMIT=auto or N%). */
static void reclaim_follow_cgroup(void)
{
	static uint64_t last_ns;
	unsigned int rel = __atomic_load_n(&eng.opt.memory_limit_rel, __ATOMIC_RELAXED);
	uint64_t t = hist_now();

	if (!rel || t - last_ns < RECLAIM_CGROUP_NS)
		return;
	last_ns = t;
	uint64_t want = reclaim_cgroup_limit(rel);
	if (want == pol.limit)
		return;
	if (eng.opt.verbose) {
		char given[8];
		log_snprintf(given, sizeof(given), rel == OPT_LIMIT_AUTO ? "auto" : "%u%%", rel);
		zlog("ZSWAP_MEMORY_LIMIT=%s: the memory cgroup's limit changed, %llu MiB now%s", given,
		     (unsigned long long)(want >> 20), want ? "" : " (none)");
	}
	reclaim_set_limit(want);
	group_set_max(want);	/* a group's memory.max follows its first member's cgroup */
	if (want)
		growth_start();
}

/* --- orders from zswapctl (reclaim_order) --------------------------------- */

static struct {
	pthread_mutex_t lock;	/* the statistics thread and the reclaimer */
	uint32_t posted;	/* orders handed over */
	_Atomic uint32_t done;	/* carried out: the futex word the asker waits on */
	struct reclaim_order cur;
} ro = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct reclaim_order ro_work;	/* the reclaimer's copy of the order under way */

/* Wake the reclaimer whether or not it sleeps yet (an order is looked for
 * before it sleeps; the futex word changed since it read it). */
static void reclaim_wake(void)
{
	_Atomic uint32_t *w = policy_kick_word();
	atomic_fetch_add(w, 1);
	syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Wait until ro.done reaches seq or the deadline (CLOCK_MONOTONIC) passes. */
static bool reclaim_order_wait(uint32_t seq, const struct timespec *dl)
{
	for (;;) {
		uint32_t d = atomic_load(&ro.done);
		if ((int32_t)(d - seq) >= 0)
			return true;
		struct timespec now, left;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = dl->tv_sec - now.tv_sec;
		left.tv_nsec = dl->tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0)
			return false;
		syscall(SYS_futex, &ro.done, FUTEX_WAIT_PRIVATE, d, &left, NULL, 0);
	}
}

int reclaim_order(struct reclaim_order *o, int timeout_ms)
{
	struct timespec dl;

	if (!pol.on || syscall(SYS_getpid) != pol.pid)
		return -ESRCH;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	/* One that timed out may still be under way: it finishes first. */
	if (!reclaim_order_wait(ro.posted, &dl))
		return -ETIMEDOUT;
	pthread_mutex_lock(&ro.lock);
	ro.cur = *o;
	uint32_t me = ++ro.posted;
	pthread_mutex_unlock(&ro.lock);
	reclaim_wake();
	if (!reclaim_order_wait(me, &dl))
		return -ETIMEDOUT;
	pthread_mutex_lock(&ro.lock);
	*o = ro.cur;
	pthread_mutex_unlock(&ro.lock);
	return 0;
}

/* memory.reclaim: store up to pages pages by the clock, as a step under
 * the limit would (protected pages too once the unprotected are gone).
 * Returns the pages stored. */
static uint64_t reclaim_pages(uint64_t pages)
{
	uint64_t done = 0;

	while (done < pages) {
		size_t want = pages - done > RECLAIM_STEP_MAX ? RECLAIM_STEP_MAX : (size_t)(pages - done);
		size_t got = reclaim_step(want);
		if (!got)
			break;	/* nothing left to store */
		done += got;
	}
	return done;
}

/* memory.reclaim counts what the charge gave back: the pool grows by what
 * it stores, so the pages stored are more than the charge freed. Storing
 * goes on, in rounds for what is still missing, until the charge has gone
 * down by bytes from before or nothing more is resident. Returns the pages
 * stored. */
#define RECLAIM_CHARGE_ROUNDS 16

static uint64_t reclaim_charge(uint64_t bytes, uint64_t before)
{
	uint64_t done = 0;

	for (int round = 0; round < RECLAIM_CHARGE_ROUNDS; round++) {
		uint64_t now = policy_read_charge();
		uint64_t freed = before > now ? before - now : 0;
		if (freed >= bytes)
			break;
		uint64_t got = reclaim_pages((bytes - freed + ZS_PAGE_SIZE - 1) >> ZS_PAGE_SHIFT);
		if (!got)
			break;
		done += got;
	}
	return done;
}

/* ZSWAP_RECOMP_IDLE_AGE: at rest, every quarter of the age, the entries
 * stored that long are recompressed (each once until its page changes, so
 * a pass over those already tried only reads their entries). */
static void reclaim_recompress_idle(void)
{
	static uint32_t last;
	unsigned int age = eng.opt.recomp_idle_age, period = age >= 4 ? age / 4 : 1;
	const struct ctlreq_rc rc = { .idle = true, .idle_s = age };

	if (!age || (int32_t)(policy_now() - last) < (int32_t)period)
		return;
	last = policy_now();
	writeback_recompress(&rc);
}

/* The pool's limits (ZSWAP_MAX_POOL_*, the accept threshold) from eng.opt. */
static void reclaim_pool_limits(void)
{
	struct zswap_store_config cfg;

	opt_store_config(&eng.opt, &cfg);
	reclaim_store_config(&eng.opt, &cfg);
	zswap_store_set_limit(eng.store, cfg.mem_limit, cfg.accept_limit);
}

/*
 * The pools and workspaces of a compressor used before, freed once no page
 * is left in them (zswap_store_reap). Inside the mapping gate, as a change
 * of compressor (below): the reaper takes every workspace's lock in turn,
 * and a fork must not copy one held.
 */
static void reclaim_reap_pools(void)
{
	if (!zswap_store_reap_due(eng.store))
		return;
	fork_gate_enter();
	zswap_store_reap(eng.store);
	fork_gate_exit();
}

/*
 * ZSWAP_COMPRESSOR at run time: the store makes the new compressor's pools
 * and workspaces, then sends new pages there. Inside the mapping gate
 * (fork.h), so a fork copies the store either before the change or after
 * it, never half made: fork's prepare closes the gate and waits for the
 * change to end, and a change asked for while a fork is prepared or frozen
 * waits for the freeze to end and is applied whole then. Not under
 * eng.ev_lock: making the pools takes milliseconds (zs_create_pool, a
 * mapping per pool and workspace), and a handler must take ev_lock's write
 * side to read each fault, so the read side held that long would hold
 * every refault with it. False (o->err, o->why) when nothing changed.
 */
static bool reclaim_set_comp(struct reclaim_order *o)
{
	fork_gate_enter();
	reclaim_pool_hold(o, "the change of compressor");
	int rc = zswap_store_set_comp(eng.store, o->nv.comp, o->nv.comp_level);
	fork_gate_exit();
	if (!rc)
		return true;
	o->err = rc;
	const char *missing = rc == -ENOPKG ? comp_missing(o->nv.comp) : NULL;
	log_snprintf(o->why, sizeof(o->why), "%s could not be set up (%s); still %s", comp_name(o->nv.comp),
		     missing ? missing : rc == -ENOMEM ? "no memory" : "unknown compressor", comp_name(eng.opt.comp));
	return false;
}

/* One option of a SET order (control.c lets only OPT_F_RUNTIME ones
 * through). Most are a field other threads read as it is; the limit, the
 * cold age, the pool's limits and writeback have state of their own to
 * follow. */
static void reclaim_apply(enum opt_id id, struct reclaim_order *o)
{
	struct opt_values *v = &eng.opt;

	if (!(opt_table[id].flags & OPT_F_RUNTIME)) {
		o->err = -EINVAL;
		log_snprintf(o->why, sizeof(o->why), "%s cannot change in a running process", opt_table[id].name);
		return;
	}
	if (id == OPT_COMPRESSOR && !reclaim_set_comp(o))
		return;
	opt_copy(id, &o->nv, v);
	v->from[id] = OPT_FROM_SET;
	switch (id) {
	case OPT_MEMORY_LIMIT:
		reclaim_set_limit(v->memory_limit_rel ? reclaim_cgroup_limit(v->memory_limit_rel) : v->memory_limit);
		group_set_max(pol.limit);	/* a member's: memory.max for the whole group */
		if (pol.limit)
			growth_start();	/* malloc's growth held at the new limit */
		if (!writeback_follow() && v->writeback != OPT_WB_OFF && pol.limit)
			log_snprintf(o->why, sizeof(o->why), "the second tier could not be opened (see the log)");
		break;
	case OPT_COLD_AGE:
		__atomic_store_n(&pol.cold_age, v->cold_age, __ATOMIC_RELAXED);
		break;
	case OPT_MAX_POOL_SIZE:
	case OPT_MAX_POOL_PERCENT:
	case OPT_ACCEPT_THRESHOLD_PERCENT:
		reclaim_pool_limits();
		break;
	case OPT_WRITEBACK_LIMIT:
		writeback_budget_reset();	/* as writing zram's writeback_limit */
		break;
	case OPT_WRITEBACK:
		if (!writeback_follow() && v->writeback == OPT_WB_ON) {
			o->err = -EIO;
			log_snprintf(o->why, sizeof(o->why), "the second tier could not be opened (see the log)");
		}
		break;
	default:
		break;
	}
}

static void reclaim_take_order(void)
{
	pthread_mutex_lock(&ro.lock);
	if (ro.posted == atomic_load(&ro.done)) {
		pthread_mutex_unlock(&ro.lock);
		return;
	}
	ro_work = ro.cur;
	pthread_mutex_unlock(&ro.lock);

	struct reclaim_order *o = &ro_work;
	o->pool_before = reclaim_pool_bytes();
	o->charge_before = policy_read_charge();
	o->err = 0;
	o->why[0] = '\0';
	switch (o->kind) {
	case RECLAIM_ORDER_SET:
		for (int i = 0; i < OPT__COUNT; i++)
			if (o->mask & (1ull << i))
				reclaim_apply((enum opt_id)i, o);
		break;
	case RECLAIM_ORDER_RECLAIM:
		o->pages = reclaim_charge(o->bytes, o->charge_before);
		break;
	case RECLAIM_ORDER_COMPACT:
		reclaim_reap_pools();	/* an old compressor's empty pools too */
		o->pages = reclaim_compact_rounds(o);	/* zram's compact: all it can */
		break;
	case RECLAIM_ORDER_WRITEBACK:
		o->err = writeback_demand(&o->wb, &o->pages);
		o->budget_spent = writeback_budget_spent();
		break;
	case RECLAIM_ORDER_RECOMPRESS:
		o->pages = writeback_recompress(&o->rc);
		break;
	}
	o->pool_after = reclaim_pool_bytes();
	o->charge_after = policy_read_charge();
	policy_progress();

	pthread_mutex_lock(&ro.lock);
	ro.cur = *o;
	atomic_fetch_add(&ro.done, 1);
	pthread_mutex_unlock(&ro.lock);
	syscall(SYS_futex, &ro.done, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* The period of the next look under a limit (RECLAIM_POLL_IDLE_MS): short
 * while anything moves, doubling while the process is quiet. */
static unsigned int reclaim_poll_ms(uint64_t own, uint64_t seen)
{
	static uint64_t last_own, last_faults;
	static unsigned int ms = RECLAIM_POLL_MS, quiet_ms;
	uint64_t faults = policy_faults();
	uint64_t moved = own > last_own ? own - last_own : last_own - own;
	bool quiet = faults == last_faults && moved < RECLAIM_QUIET_BYTES && seen <= atomic_load(&pol.wake) &&
		     !atomic_load(&pol.stuck) && !pol.boost;

	last_own = own;
	last_faults = faults;
	/* A second of calm first at the short period: what the program did
	 * last (and the reclaimer's own last steps) is read at once. */
	quiet_ms = quiet ? quiet_ms + ms : 0;
	if (quiet_ms < RECLAIM_QUIET_MS)
		ms = RECLAIM_POLL_MS;
	else
		ms = ms * 2 < RECLAIM_POLL_IDLE_MS ? ms * 2 : RECLAIM_POLL_IDLE_MS;
	return ms;
}

/*
 * What only a working evictor needs goes back once the process has gone
 * quiet (no eviction, fill, load or hold for RECLAIM_QUIET_MS): the stages'
 * copies (evict_copy_out) and the pool's reserve of emptied zspages. Kept,
 * they were 1.7-3.2 MiB of every idle member's charge in a tree under one
 * limit, memory the kernel's reclaim would not hold; a batch after the
 * release faults the copy in again. Its own clock, not reclaim_poll_ms's
 * calm: that one also waits for the charge (the group's too) to settle,
 * which an idle member of a group over its limit never sees.
 */
static void reclaim_release_quiet(void)
{
	static uint64_t last_work, since_ns;
	static bool released;
	uint64_t now = hist_now();
	uint64_t work = atomic_load_explicit(&eng.cnt.evicted_pages, memory_order_relaxed) + policy_faults();

	if (work != last_work || !since_ns) {
		last_work = work;
		since_ns = now;
		released = false;
		return;
	}
	if (released || now - since_ns < RECLAIM_QUIET_MS * 1000000ull)
		return;
	released = true;
	evict_release_copies();
	zswap_store_release_reserve(eng.store);
}

void *reclaim_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "zswap-reclaim", 0, 0, 0);
	engine_gate_wait();
	/* Only a running reclaimer may hold faults (if the thread could not
	 * start, nothing would ever make room). */
	pol.on = true;
	/* The engine is declared running just after this thread starts. */
	while (!engine_running()) {
		if (atomic_load(&eng.state) == ENGINE_OFF)
			return NULL;
		reclaim_sleep_ms(1);
	}
	growth_start();	/* glibc's malloc followed as it grows (src/reclaim/growth.c) */
	/* No page can be idle for the cold age before that much time went by. */
	uint32_t last_pass = policy_now(), started = last_pass;
	for (;;) {
		policy_clock_sample();	/* idle ages in seconds (policy_idle_min_age) */
		reclaim_take_order();
		reclaim_follow_cgroup();
		/* A pass every quarter of the age: a page is stored between one
		 * and one and a quarter ages after its last fault. */
		unsigned int age = pol.cold_age, period = age >= 4 ? age / 4 : 1;
		reclaim_release_quiet();
		uint64_t own = policy_read_charge(), glimit = group_tick();
		if (glimit && glimit != pol.limit)
			reclaim_set_limit(glimit);	/* the group's memory.max changed */
		uint64_t c = reclaim_seen(own);
		policy_progress();
		reclaim_say_stuck(c);
		reclaim_watch_thrash();
		/* In a group, a busy member leaves the room to be made, for a
		 * bounded time, to members holding colder memory (group.c). */
		if (pol.limit && atomic_load(&pol.deep) && c > pol.low) {
			if (group_defer(c - pol.low)) {
				reclaim_sleep_ms(2);
				continue;
			}
			atomic_store(&pol.deep, 0);
			group_event_high();
			reclaim_to(pol.low);
			continue;
		}
		atomic_store(&pol.deep, 0);
		/* Asked by a busy member of the group (its fault is held): the
		 * whole band, from this member's colder pages. */
		if (pol.limit && group_asked() && c > pol.low) {
			group_event_high();
			reclaim_to(pol.low);
			continue;
		}
		if (pol.limit && c > pol.high - reclaim_boost()) {
			if (group_defer(c - (pol.low_bg - pol.boost))) {
				reclaim_sleep_ms(2);
				continue;
			}
			group_event_high();
			reclaim_to(pol.low_bg - pol.boost);
			continue;
		}
		if (pol.limit && atomic_load(&pol.stuck) && c <= pol.limit)
			atomic_store(&pol.stuck, 0);
		if (age && (int32_t)(policy_now() - last_pass) >= (int32_t)period &&
		    (int32_t)(policy_now() - started) >= (int32_t)age) {
			reclaim_set_workingset(c, reclaim_pool_bytes());
			reclaim_proactive();
			last_pass = policy_now();
			continue;
		}
		if (writeback_on() && !zswap_store_accepting(eng.store) && reclaim_writeback(reclaim_pool_bytes()))
			continue;	/* the pool reached ZSWAP_MAX_POOL_*: room made on disk */
		/* ZSWAP_SHRINKER_ENABLED: memory pressure around us. What went
		 * to the tier leaves holes; under pressure zsmalloc's own
		 * shrinker compacts, so this does too, at once. */
		if (shrinker_tick())
			reclaim_compact(reclaim_pool_bytes());
		writeback_trim();
		reclaim_reap_pools();
		reclaim_recompress_idle();
		reclaim_compact_idle();
		uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
		reclaim_idle(pol.limit ? reclaim_poll_ms(own, c) : 1000);
		prof_add(PROF_RC_IDLE, p0);
	}
	return NULL;
}

/* --- start-up ----------------------------------------------------------- */

void reclaim_store_config(const struct opt_values *v, struct zswap_store_config *cfg)
{
	if (!cfg->mem_limit)
		cfg->mem_limit = reclaim_physmem() / 100 * v->max_pool_percent;
	/* zswap's accept_threshold_percent; 0% means "only once empty", which
	 * must not read as the store's 0 = no hysteresis. */
	cfg->accept_limit = cfg->mem_limit / 100 * v->accept_threshold_percent;
	if (!cfg->accept_limit && cfg->mem_limit)
		cfg->accept_limit = 1;
}

/* The reclaimer's descriptors, kept for good (a /proc file opened anew at
 * every reading would take the lowest free number for a moment, from a
 * thread the program does not know about, under a program that counts on
 * getting that number itself): /proc/self/statm (the charge) and status
 * (VmPTE). */
static int reclaim_open_fds(void)
{
	pol.statm_fd = fdtab_open_ro("/proc/self/statm", true);
	pol.status_fd = fdtab_open_ro("/proc/self/status", true);
	return pol.statm_fd < 0 ? -ENOMEM : 0;
}


ZSWAP_STARTUP void reclaim_resolve_limit(struct opt_values *v)
{
	if (v->memory_limit_rel)
		v->memory_limit = reclaim_cgroup_limit(v->memory_limit_rel);
}

int reclaim_init(void)
{
	clock_gettime(CLOCK_MONOTONIC_COARSE, &pol.t0);
	pol.wait_fd = -1;
	shrinker_init();
	pol.cold_age = eng.opt.cold_age;
	/* The reclaimer always runs: zswapctl may set a limit or ask for
	 * reclaim at any time, and the pool is compacted without a limit. */
	pol.pause_ms = 1;
	pol.targets = prim_alloc(RECLAIM_TARGETS * sizeof(*pol.targets));
	pol.adopt = prim_alloc(RECLAIM_TARGETS * sizeof(*pol.adopt));
	if (!pol.targets || !pol.adopt || reclaim_open_fds() < 0)
		return -ENOMEM;
	uint64_t glimit = group_tick();	/* the group joined at start-up (group_init) */
	reclaim_set_limit(glimit ? glimit : eng.opt.memory_limit);
	reclaim_set_workingset(policy_read_charge(), reclaim_pool_bytes());
	pol.pid = syscall(SYS_getpid);
	policy_clock_sample();	/* start-up: the clock at 0 s */
	if (eng.opt.verbose && pol.limit)
		zlog("reclaim: memory limit %llu MiB (reclaim from %llu to %llu MiB), cold age %u s",
		     (unsigned long long)(pol.limit >> 20), (unsigned long long)(pol.high >> 20),
		     (unsigned long long)(pol.low >> 20), pol.cold_age);
	else if (eng.opt.verbose)
		zlog("reclaim: no memory limit, cold age %u s", pol.cold_age);
	return 1;
}

int reclaim_fork_child(void)
{
	/* Until the child's own reclaimer runs, hold no fault. Everything
	 * else is the parent's copy: its /proc/self/statm was opened as the
	 * parent's ("self" resolves at open), its eventfd is shared with the
	 * parent, and its clock may have been mid-rotation at fork. */
	pol.on = false;
	group_fork_child();	/* a slot of its own in the group it inherited */
	fdtab_close(pol.statm_fd);
	fdtab_close(pol.status_fd);
	fdtab_close(pol.wait_fd);
	pol.wait_fd = -1;
	pol.adjust_at.tv_sec = 0;	/* the child's own, at its first reading */
	if (reclaim_open_fds() < 0 || (pol.limit && !reclaim_wait_fd()))
		return -ENOMEM;
	atomic_store(&pol.stuck, 0);
	atomic_store(&pol.waiters, 0);
	atomic_store(&pol.held_now, 0);	/* the parent's handlers stayed there */
	atomic_store(&pol.deep, 0);
	atomic_store(&pol.sleeping, 0);
	pol.proactive = pol.force = false;
	pol.looked = 0;
	pol.ntargets = pol.next = 0;
	pol.hand = 0;
	/* The lock may have been held by a thread that stayed in the parent. */
	pol.cold_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	pol.ncold = 0;
	pol.pause_ms = 1;
	pol.boost = 0;
	pol.boost_stalls = atomic_load(&pol.allocstall);
	atomic_store(&pol.wake, pol.high);
	reclaim_set_workingset(policy_read_charge(), reclaim_pool_bytes());
	/* The statistics thread may have held the lock in the parent. */
	ro.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	ro.posted = 0;
	atomic_store(&ro.done, 0);
	pol.pid = syscall(SYS_getpid);
	return 1;
}

