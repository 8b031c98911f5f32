/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evict.c - batched, race-free eviction through staging areas.
 *
 * Per batch (at most EVICT_BATCH pages, gathered from one or several ranges):
 *   PAGEMAP_SCAN the range for present pages that are not the zero page
 *   (absent and already-evicted pages are skipped without touching them),
 *   before taking eng.ev_lock read (evict_range_sel says why that is
 *   safe); under it, claim each slot RESIDENT -> EVICTING; UFFDIO_MOVE each
 *   run of claimed pages into the staging area (one ioctl per run). The
 *   MOVE is issued on the engine's userfaultfd, so the kernel refuses it
 *   (EAGAIN) while an event is pending: a move that succeeds acted on the
 *   mapping the table describes (see engine.h).
 * Then, without the lock: compress each staged page into its slot's entry
 * (handlers holding a fault over the memory limit help: evict_help) and
 * publish it (EVICTING -> STORED); a slot an event dropped meanwhile has
 * its entry freed instead; a page the store refused is moved back. Finally the
 * staging area is emptied (MADV_DONTNEED) and threads that faulted on a page
 * in flight are woken.
 *
 * The staging areas are registered with the same userfaultfd in WP mode (a
 * MOVE needs its destination registered with the descriptor it is issued on;
 * WP mode only so a read of an empty staging page is an ordinary zero-page
 * fault). Emptying them raises a REMOVE event the handler reads and ignores;
 * the evictor therefore never holds eng.ev_lock while emptying.
 */
#include "config.h"
#include "engine/evict.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/hist.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "engine/policy.h"
#include "engine/region.h"
#include "engine/uffd.h"

#define EVICT_BATCH 512			/* pages per batch: 2 MiB of staging */
#define EVICT_COPY 64			/* pages of a batch read out at a time (evict_copy_out) */
#define EVICT_STAGES 4
#define EVICT_BUSY 64			/* runs of shared pages per batch given a second chance */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

struct evict_page {
	struct slot_array *arr;		/* referenced */
	size_t idx;
	uintptr_t addr;			/* where it was moved from */
	uint64_t gen;			/* eng.ev_gen at the move */
	enum { PG_STAGED, PG_STORED, PG_REFUSED, PG_VOID } fate;
	bool wake;			/* a thread faulted on it meanwhile */
};

struct evict_stage {
	pthread_mutex_t lock;
	uintptr_t base;			/* EVICT_BATCH pages, registered (WP) at the first batch */
	size_t n;			/* pages staged */
	size_t nbusy;			/* pages MOVE found shared (EBUSY) */
	bool busy_retry;		/* this batch is the second chance */
	struct { uintptr_t start, end; } busy[EVICT_BUSY];
	struct page_region vec[EVICT_BATCH];
	struct evict_page pages[EVICT_BATCH];
	/* EVICT_COPY staged pages from page win on, read out with one
	 * process_vm_readv (evict_copy_out), or NULL: compressed from here
	 * when copied says so. */
	void *copy;
	bool copied;
	size_t win;
	/* Compressing the batch (evict_finish, evict_help): [63:32] the
	 * batch's number, [31:16] the end of what is open to claims (the
	 * copy's window), [15:0] the next page to take. Within a batch,
	 * claims advance [15:0], and the evictor [31:16] window by window
	 * once every claim below it is done. */
	_Atomic uint64_t claim;
	_Atomic uint32_t helped;	/* pages of this batch handlers compressed */
	_Atomic bool full;		/* the pool refused a page: refuse the rest */
	uint32_t seq;
};

/* The batch that handlers holding a fault over the memory limit may help
 * compress (evict_help), or NULL. */
static struct evict_stage *_Atomic evict_open;

static struct evict_stage *evict_stages;
static _Atomic unsigned int evict_next_stage;

int evict_init(void)
{
	evict_stages = prim_alloc(EVICT_STAGES * sizeof(*evict_stages));
	if (!evict_stages)
		return -ENOMEM;
	for (int i = 0; i < EVICT_STAGES; i++) {
		struct evict_stage *st = &evict_stages[i];
		void *base = prim_alloc(EVICT_BATCH * ZS_PAGE_SIZE);
		if (!base)
			return -ENOMEM;
		st->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		st->base = (uintptr_t)base;
	}
	return 0;
}

/*
 * The staging areas are registered at the first batch, not at the start: a
 * process with nothing registered forks without a FORK message
 * (fork_prepare), and a shell that never evicts keeps every fork that
 * cheap. All of them at once, so that from then on none is library memory
 * left unregistered beside the program's. Under eng.evict_gate's read
 * side, which fork_prepare's check excludes. A failure (-EBUSY: a
 * restarted fork's child whose parent has not closed the FORK message's
 * descriptor yet) is tried again at the next batch.
 */
static pthread_mutex_t evict_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool evict_stages_on;

static bool evict_stages_ready(void)
{
	if (atomic_load_explicit(&evict_stages_on, memory_order_acquire))
		return true;
	pthread_mutex_lock(&evict_reg_lock);
	int rc = 0;
	for (int i = 0; i < EVICT_STAGES && !atomic_load(&evict_stages_on) && rc == 0; i++)
		rc = uf_register(eng.uffd, evict_stages[i].base, EVICT_BATCH * ZS_PAGE_SIZE, UF_REG_WP);
	if (rc == 0)
		atomic_store_explicit(&evict_stages_on, true, memory_order_release);
	pthread_mutex_unlock(&evict_reg_lock);
	if (rc < 0 && rc != -EBUSY) {
		static _Atomic int said;
		if (!atomic_exchange(&said, 1))
			zlog("cannot register the staging areas with userfaultfd (error %d): nothing is evicted", -rc);
	}
	return rc == 0;
}

static bool evict_foreign(uintptr_t start, uintptr_t end);

#define EVICT_REGISTER_WAIT_MS 2000

int evict_register_again(void)
{
	int mode = (eng.features & UFFD_FEATURE_WP_ASYNC) ? UF_REG_MISSING_WP : UF_REG_MISSING;
	uintptr_t cursor = 0, end = UINTPTR_MAX & ZS_PAGE_MASK;
	struct region_ref refs[32];
	size_t n;
	int waited = 0;

	atomic_store(&evict_stages_on, false);	/* registered on the parent's descriptor */
	while (cursor < end && (n = region_collect(0, end, &cursor, refs, 32)) > 0) {
		for (size_t k = 0; k < n; k++) {
			const struct region_ref *r = &refs[k];
			int rc = -EINVAL;
			if (!evict_foreign(r->start, r->end) && maps_range_anon_rw(r->start, r->end)) {
				/* A light fork's child may start before its
				 * parent's fork thread has closed the FORK
				 * message's descriptor: until then every mapping
				 * it inherited stays registered with that one
				 * (EBUSY). The close follows the read at once:
				 * wait for it, EVICT_REGISTER_WAIT_MS at most. */
				while ((rc = uf_register(eng.uffd, r->start, r->end - r->start, mode)) == -EBUSY &&
				       waited < EVICT_REGISTER_WAIT_MS) {
					struct timespec ts = { 0, 1000000 };
					nanosleep(&ts, NULL);
					waited++;
				}
			}
			if (rc < 0)
				region_forget(eng.store, r->start, r->end);
			region_arr_put(r->arr);
		}
	}
	return 0;
}

static struct evict_stage *evict_stage_get(void)
{
	for (int i = 0; i < EVICT_STAGES; i++)
		if (pthread_mutex_trylock(&evict_stages[i].lock) == 0)
			return &evict_stages[i];
	struct evict_stage *st = &evict_stages[atomic_fetch_add(&evict_next_stage, 1) % EVICT_STAGES];
	pthread_mutex_lock(&st->lock);
	return st;
}

static void evict_pause(void)
{
	struct timespec ts = { 0, 50000 };

	nanosleep(&ts, NULL);
}

/*
 * Memory adoption must never take, though /proc/self/maps shows it as
 * private anonymous read-write memory like the program's:
 *  - the library's own (prim): prim maps everything MAP_NORESERVE so that it
 *    does not merge with program mappings, but glibc maps its arenas
 *    MAP_NORESERVE too, and the kernel may merge one with a library mapping
 *    into one VMA;
 *  - the data and bss of the shared objects our code runs (engine.c);
 *  - in a library built with AddressSanitizer (test builds), the shadow
 *    memory, read on every access the library makes (x86-64 layout: low
 *    shadow, gap, high shadow).
 * Evicting any of it would make the evictor or a handler fault on memory it
 * needs to run, and wait on itself. A union of intervals: whether it meets
 * [start, end) only grows as end grows and as start falls.
 */
#if defined(__SANITIZE_ADDRESS__) && defined(__x86_64__)
#define EVICT_SHADOW_LO 0x00007fff8000UL
#define EVICT_SHADOW_HI 0x10007fff8000UL
static bool evict_meets_shadow(uintptr_t start, uintptr_t end)
{
	return start < EVICT_SHADOW_HI && end > EVICT_SHADOW_LO;
}
#else
static bool evict_meets_shadow(uintptr_t start, uintptr_t end)
{
	(void)start;
	(void)end;
	return false;
}
#endif

static bool evict_foreign(uintptr_t start, uintptr_t end)
{
	return prim_overlaps(start, end) || engine_is_object_data(start, end) || evict_meets_shadow(start, end);
}

/* The calling thread's own stack and thread control block (with its static
 * TLS: errno, the stack protector's canary): the evictor touches both while
 * it holds eng.ev_lock, when no fault of its own could be served. Threads
 * glibc creates have both in one mapping; the main thread's TCB is in a
 * small mapping of its own. */
static bool evict_is_own(uintptr_t start, uintptr_t end)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();

	return (sp >= start && sp < end) || (tp >= start && tp < end);
}

/* The largest page range [*lo, *hi) inside [vstart, vend) around cur that
 * holds nothing foreign (cur itself is not): two binary searches. */
static void evict_clip(uintptr_t cur, uintptr_t vstart, uintptr_t vend, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t good, bad;

	good = cur + ZS_PAGE_SIZE;
	bad = vend;
	if (!evict_foreign(cur, vend))
		good = vend;
	while (bad - good > ZS_PAGE_SIZE) {	/* !foreign(cur, good), foreign(cur, bad) */
		uintptr_t mid = good + (((bad - good) / 2) & ZS_PAGE_MASK);
		if (evict_foreign(cur, mid))
			bad = mid;
		else
			good = mid;
	}
	*hi = good;

	good = cur;
	bad = vstart;
	if (!evict_foreign(vstart, cur + ZS_PAGE_SIZE))
		good = vstart;
	while (good - bad > ZS_PAGE_SIZE) {	/* !foreign(good, cur + 1), foreign(bad, cur + 1) */
		uintptr_t mid = bad + (((good - bad) / 2) & ZS_PAGE_MASK);
		if (evict_foreign(mid, cur + ZS_PAGE_SIZE))
			bad = mid;
		else
			good = mid;
	}
	*lo = good;
}

static bool evict_foreign_page(uintptr_t p)
{
	return evict_foreign(p, p + ZS_PAGE_SIZE);
}

/* cur is foreign memory inside a VMA ending at vend: an address after it
 * where the foreign run ends (the first such one unless foreign and program
 * runs alternate within one probe step), or vend. */
static uintptr_t evict_foreign_end(uintptr_t cur, uintptr_t vend)
{
	uintptr_t lo = cur, hi, step = ZS_PAGE_SIZE;

	for (;;) {	/* gallop: lo is foreign */
		hi = lo + step;
		if (hi >= vend || hi < lo) {
			hi = vend;
			break;
		}
		if (!evict_foreign_page(hi))
			break;
		lo = hi;
		step <<= 1;
	}
	while (hi - lo > ZS_PAGE_SIZE) {	/* foreign(lo); hi == vend or !foreign(hi) */
		uintptr_t mid = lo + (((hi - lo) / 2) & ZS_PAGE_MASK);
		if (evict_foreign_page(mid))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/*
 * Memory the kernel keeps in adjacent mappings of its own (a runtime that
 * commits its heap piece by piece with mprotect, or names its pieces) is one
 * mapping to the program, as the kernel's reclaim sees it: a piece below
 * ZSWAP_MIN_REGION is managed when the run of adjacent private anonymous
 * writable mappings it belongs to reaches that size. At most
 * min_region/page-size lookups, and only for a piece reclaim found in such
 * a run (reclaim_collect_vma).
 */
static bool evict_run_reaches(const struct maps_vma *v)
{
	uint64_t len = v->end - v->start, need = eng.opt.min_region;
	struct maps_vma n;
	uintptr_t at = v->end;

	while (len < need && maps_find(at, &n) == 0 && n.start == at && n.anon_rw_private) {
		len += n.end - n.start;
		at = n.end;
	}
	at = v->start;
	while (len < need && at > ZS_PAGE_SIZE && maps_find(at - 1, &n) == 0 && n.end == at && n.anon_rw_private) {
		len += n.end - n.start;
		at = n.start;
	}
	return len >= need;
}

/*
 * Why MADV_PAGEOUT or MADV_COLD left memory alone: the engine counters
 * advice_skip_* (engine/counters.def), in pages, so that a program whose
 * advice does nothing (Python's mmap.mmap is MAP_SHARED) can see why.
 */
enum evict_skip {
	EVICT_SKIP_SHARED, EVICT_SKIP_FILE, EVICT_SKIP_READONLY, EVICT_SKIP_SMALL,
	EVICT_SKIP_EXCLUDED, EVICT_SKIP_UNREGISTERED, EVICT_SKIP_UNMAPPED,
};

static void evict_skip_add(enum evict_skip why, uintptr_t start, uintptr_t end)
{
	_Atomic uint64_t *const cnt[] = {
		[EVICT_SKIP_SHARED] = &eng.cnt.advice_skip_shared,
		[EVICT_SKIP_FILE] = &eng.cnt.advice_skip_file,
		[EVICT_SKIP_READONLY] = &eng.cnt.advice_skip_readonly,
		[EVICT_SKIP_SMALL] = &eng.cnt.advice_skip_small,
		[EVICT_SKIP_EXCLUDED] = &eng.cnt.advice_skip_excluded,
		[EVICT_SKIP_UNREGISTERED] = &eng.cnt.advice_skip_unregistered,
		[EVICT_SKIP_UNMAPPED] = &eng.cnt.advice_skip_unmapped,
	};

	if (end > start)
		atomic_fetch_add_explicit(cnt[why], (end - start) >> ZS_PAGE_SHIFT, memory_order_relaxed);
}

/* A mapping the library does not manage, by the first reason that holds. */
static enum evict_skip evict_skip_kind(const struct maps_vma *v)
{
	if (v->shared)
		return EVICT_SKIP_SHARED;
	if (v->file)
		return EVICT_SKIP_FILE;
	if (!v->writable)
		return EVICT_SKIP_READONLY;
	return EVICT_SKIP_EXCLUDED;	/* a stack, [vvar]...: not the program's heap memory */
}

/* No region covers cur: adopt the mapping there if it is one we may manage,
 * without the foreign memory the kernel may have merged into it.
 * Returns true if a region was inserted (look again), else sets *skip_to
 * and *why. */
static bool evict_adopt(uintptr_t cur, uintptr_t *skip_to, enum evict_skip *why)
{
	struct maps_vma v;
	uintptr_t lo, hi;

	*why = EVICT_SKIP_EXCLUDED;
	if (atomic_load(&eng.lock_future)) {
		*skip_to = UINTPTR_MAX;
		return false;
	}
	if (maps_find(cur, &v) < 0) {
		*skip_to = v.end;
		*why = EVICT_SKIP_UNMAPPED;
		return false;
	}
	*skip_to = v.end;
	if (!v.anon_rw_private) {
		*why = evict_skip_kind(&v);
		return false;
	}
	if (evict_foreign_page(cur)) {
		*skip_to = evict_foreign_end(cur, v.end);
		return false;
	}
	evict_clip(cur, v.start, v.end, &lo, &hi);
	engine_program_clip(cur, &lo, &hi);
	if (evict_is_own(lo, hi) || (hi - lo < eng.opt.min_region && !evict_run_reaches(&v))) {
		if (!evict_is_own(lo, hi))
			*why = EVICT_SKIP_SMALL;
		*skip_to = hi;
		return false;
	}
	return region_insert(lo, hi, REGION_ADOPTED) == 0;
}

void evict_count_skipped(uintptr_t start, uintptr_t end)
{
	uintptr_t cur = start;

	while (cur < end) {
		struct region_ref ref;
		struct maps_vma v;
		uintptr_t next;
		enum evict_skip why;

		if (region_lookup(cur, &ref, false)) {
			next = ref.end;
			if (ref.flags & REGION_UNMANAGEABLE)
				why = EVICT_SKIP_EXCLUDED;
			else if (!(ref.flags & REGION_REGISTERED))
				why = EVICT_SKIP_UNREGISTERED;
			else {
				cur = next < end ? next : end;
				continue;
			}
		} else if (maps_find(cur, &v) < 0) {
			next = v.end < ref.end ? v.end : ref.end;
			why = EVICT_SKIP_UNMAPPED;
		} else {
			next = v.end < ref.end ? v.end : ref.end;
			why = v.anon_rw_private ? EVICT_SKIP_UNREGISTERED : evict_skip_kind(&v);
		}
		if (next <= cur || next > end)
			next = end;
		evict_skip_add(why, cur, next);
		cur = next;
	}
}

/* Register a region with userfaultfd and give it a slot array. Returns true
 * if the caller should look the region up again. */
static bool evict_register(const struct region_ref *ref)
{
	size_t len = ref->end - ref->start;
	int rc;

	/* The table may be stale (a raw munmap/mmap the interposer never saw,
	 * and the library may since have mapped memory of its own there):
	 * check with the kernel and with prim before registering. */
	if (evict_foreign(ref->start, ref->end) || !maps_range_anon_rw(ref->start, ref->end)) {
		region_forget_unregistered(ref->start, ref->end);
		return true;
	}
	/* WP too when the kernel resolves WP faults itself: the written bit
	 * reclaim's scan reads and clears (evict_stage_pages). */
	rc = uf_register(eng.uffd, ref->start, len,
			 (eng.features & UFFD_FEATURE_WP_ASYNC) ? UF_REG_MISSING_WP : UF_REG_MISSING);
	if (rc == -EBUSY) {
		/* The program has its own userfaultfd there: leave the region
		 * alone now, and try again at the next eviction (the program
		 * may have unregistered it by then). */
		return false;
	}
	if (rc < 0) {
		static _Atomic int said;
		if (!atomic_exchange(&said, 1))
			zlog("cannot register %p-%p with userfaultfd (error %d): left unmanaged",
			     (void *)ref->start, (void *)ref->end, -rc);
		region_set_unmanageable(ref->start, ref->end, false, 0);
		return false;
	}
	struct slot_array *arr = region_arr_alloc(len >> ZS_PAGE_SHIFT);
	if (!arr)
		return false;
	if (!region_set_registered(ref, arr))
		region_arr_put(arr);
	return true;
}

/* Read n pagemap entries from addr on (n <= 64). Returns how many were read. */
static size_t evict_pagemap(uintptr_t addr, uint64_t *pm, size_t n)
{
	long r = syscall(SYS_pread64, eng.pagemap_fd, pm, n * sizeof(*pm),
			 (off_t)((addr >> ZS_PAGE_SHIFT) * sizeof(*pm)));

	return r > 0 ? (size_t)r / sizeof(*pm) : 0;
}

#define PM_HAS_PAGE(e) (((e) >> 62) != 0)	/* bit 63 present, bit 62 swapped */

/*
 * The kernel's UFFDIO_MOVE can move pages and still answer an error: in
 * 6.18, once one step of its loop returns EAGAIN the error is not cleared,
 * the next step moves pages without counting them, and the call ends with
 * EAGAIN, EEXIST or ENOENT and 0 bytes (seen here under load: pages gone
 * from the program, their slots RESIDENT, read back as zeros; the staging
 * slots left full, every later move into them EEXIST). So after every short
 * or failed move of n pages from src to dst, the page table says what
 * happened: a page that is now in staging and no longer at its source was
 * moved. Returns how many, from the first on.
 */
static size_t evict_moved_anyway(uintptr_t dst, uintptr_t src, size_t n)
{
	uint64_t d[64], s[64];
	size_t found = 0;

	while (found < n) {
		size_t want = n - found < 64 ? n - found : 64;
		size_t nd = evict_pagemap(dst + (found << ZS_PAGE_SHIFT), d, want);
		size_t ns = evict_pagemap(src + (found << ZS_PAGE_SHIFT), s, want);
		for (size_t i = 0; i < nd && i < ns; i++) {
			if (!PM_HAS_PAGE(d[i]) || PM_HAS_PAGE(s[i]))
				return found;
			found++;
		}
		if (nd < want || ns < want)
			break;
	}
	return found;
}

static void evict_unclaim(struct slot *s, uintptr_t addr)
{
	uint32_t old = atomic_load(&s->state);

	/* A kept tier slot stays with the page (region.h, KEPT). */
	while (!atomic_compare_exchange_weak(&s->state, &old, SLOT_RESIDENT | (old & SLOT_KEPT)))
		;

	/* The page never left (it is present) and no event is processed while
	 * we hold ev_lock: only EVICTING is possible. WAITER is, though: a fault
	 * message that outlived its fault (its thread woken by a neighbour's
	 * fill, DESIGN.md) can reach a handler while the page is claimed. No
	 * thread sleeps on a present page, but wake the address all the same,
	 * as evict_finish would: a wake with no sleeper costs one ioctl. */
	ZS_CHECK((old & (SLOT_STATE | SLOT_DROPPED)) == SLOT_EVICTING);
	if (old & SLOT_WAITER)
		uf_wake(eng.uffd, addr, ZS_PAGE_SIZE);
}

/* Move n claimed pages starting at addr (slot idx) into the stage. Pages that
 * cannot move are unclaimed and counted as skipped. Returns -EAGAIN when an
 * event is pending (the pages not moved are unclaimed), else 0. */
static int evict_move_run(struct evict_stage *st, const struct region_ref *ref,
			  uintptr_t addr, size_t idx, size_t n, uint64_t gen)
{
	size_t done = 0;
	bool single = false;

	while (done < n) {
		size_t len = single ? 1 : n - done;
		uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
		long r = uf_move(eng.uffd, st->base + (st->n << ZS_PAGE_SHIFT),
				 addr + (done << ZS_PAGE_SHIFT), len << ZS_PAGE_SHIFT, UF_DONTWAKE);
		prof_add(PROF_MOVE, p0);
		size_t k = r > 0 ? (size_t)r >> ZS_PAGE_SHIFT : 0;
		if (k < len) {
			size_t extra = evict_moved_anyway(st->base + ((st->n + k) << ZS_PAGE_SHIFT),
							  addr + ((done + k) << ZS_PAGE_SHIFT), len - k);
			if (extra) {
				static _Atomic int said;
				if (eng.opt.verbose && !atomic_exchange(&said, 1))
					zlog("UFFDIO_MOVE moved %zu page(s) it did not count (answer %ld): counted anyway"
					     " (a kernel bug, worked around)", extra, r);
				k += extra;
			}
		}
		if (k) {
			for (size_t i = 0; i < k; i++) {
				struct evict_page *pg = &st->pages[st->n++];
				pg->arr = ref->arr;
				region_arr_get(ref->arr);
				pg->idx = idx + done + i;
				pg->addr = addr + ((done + i) << ZS_PAGE_SHIFT);
				pg->gen = gen;
				pg->fate = PG_STAGED;
				pg->wake = false;
			}
			done += k;
			continue;
		}
		if (r == -EAGAIN) {
			for (size_t i = done; i < n; i++)
				evict_unclaim(&ref->arr->slots[idx + i], addr + (i << ZS_PAGE_SHIFT));
			return -EAGAIN;
		}
		if (r == -EINVAL && !single && n - done > 1) {
			/* The run crosses a mapping boundary (mprotect split it):
			 * go page by page. */
			single = true;
			continue;
		}
		/* EBUSY: shared (with a child, or still marked so after the
		 * child left: a page is exclusive again only once written) or
		 * pinned: try once more after breaking the sharing. ENOENT: gone
		 * meanwhile; EINVAL: not movable (locked, protected). Leave it. */
		uintptr_t at = addr + (done << ZS_PAGE_SHIFT);
		if (r == -EBUSY && !st->busy_retry && st->nbusy && st->busy[st->nbusy - 1].end == at) {
			st->busy[st->nbusy - 1].end = at + ZS_PAGE_SIZE;
			evict_unclaim(&ref->arr->slots[idx + done], at);
			done++;
			continue;
		}
		if (r == -EBUSY && !st->busy_retry && st->nbusy < EVICT_BUSY) {
			st->busy[st->nbusy].start = at;
			st->busy[st->nbusy++].end = at + ZS_PAGE_SIZE;
			evict_unclaim(&ref->arr->slots[idx + done], at);
			done++;
			continue;
		}
		if (r == -EEXIST) {
			static _Atomic int said;
			if (!atomic_exchange(&said, 1))
				zlog("staging area not empty at %p: skipping", (void *)st->base);
		}
		evict_unclaim(&ref->arr->slots[idx + done], at);
		atomic_fetch_add_explicit(&eng.cnt.evict_skipped_pages, 1, memory_order_relaxed);
		done++;
	}
	return 0;
}

/* A PAGEMAP_SCAN of [cur, end) into st->vec: present pages that are not the
 * zero page, with the written bits (evict_stage_pages) in a cold-age pass: the
 * number of vector entries, whether they carry PAGE_IS_WRITTEN, and where
 * the scan stopped. */
struct evict_scan {
	uintptr_t cur, end, walked;
	long nr;
	bool written;
};

static void evict_scan(struct evict_stage *st, struct evict_scan *sc, uintptr_t cur, uintptr_t end, bool sel)
{
	bool written = sel && policy_reads_written() && (eng.features & UFFD_FEATURE_WP_ASYNC);
	struct pm_scan_arg a = {
		.size = sizeof(a),
		.flags = written ? PM_SCAN_WP_MATCHING : 0,
		.start = cur,
		.end = end,
		.vec = (uintptr_t)st->vec,
		.vec_len = EVICT_BATCH,
		.category_mask = PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
		.category_inverted = PAGE_IS_PFNZERO,
		.return_mask = PAGE_IS_PRESENT | (written ? PAGE_IS_WRITTEN : 0),
	};
	long nr = ioctl(eng.pagemap_fd, PAGEMAP_SCAN, &a);

	if (nr < 0 && written) {
		/* Not expected (the kernel offered WP_ASYNC): scan without
		 * the bits rather than not at all. */
		written = false;
		a.flags = 0;
		a.return_mask = PAGE_IS_PRESENT;
		nr = ioctl(eng.pagemap_fd, PAGEMAP_SCAN, &a);
	}
	if (nr < 0) {
		/* No PAGEMAP_SCAN: try every page; MOVE skips the holes. */
		st->vec[0].start = cur;
		st->vec[0].end = end;
		nr = 1;
		a.walk_end = end;
	}
	sc->cur = cur;
	sc->end = end;
	sc->walked = a.walk_end > cur ? a.walk_end : end;
	sc->nr = nr;
	sc->written = written;
}

#define EVICT_SHARE_GROUP 16	/* pages: policy_region_take's unit */

/* Whether reclaim takes page idx of arr, which the clock chose, given the
 * mapping's share: decided once per group. */
static bool evict_share_take(struct slot_array *arr, unsigned int share, size_t idx, size_t *group, bool *take)
{
	if (share >= POLICY_SHARE_ALL)
		return true;
	if (idx / EVICT_SHARE_GROUP != *group) {
		*group = idx / EVICT_SHARE_GROUP;
		*take = policy_region_take(arr, share);
	}
	if (!*take)
		atomic_fetch_add_explicit(&eng.cnt.pgskip_share, 1, memory_order_relaxed);
	return *take;
}

/* Claim and move the present pages a scan of one registered region found
 * (sc, in st->vec; in reclaim mode, sel, only those policy_select() takes;
 * *scanned counts the present pages looked at).
 *
 * Written bits (policy.h): with UFFD_FEATURE_WP_ASYNC the regions are
 * registered MISSING|WP, and a cold-age pass's scan asks PM_SCAN_WP_MATCHING:
 * the one call reports which pages were written since the last pass
 * (PAGE_IS_WRITTEN: no uffd-wp bit) and write-protects every page it
 * reports, so the next write to each clears the bit again (the kernel
 * resolves that fault; we never see it). What it reports is all walked here
 * (the range is at most what the vector holds, one page a region at worst),
 * except after an event stops the walk (EAGAIN): the rest lost its bit
 * unread, and is scanned again as unwritten. A page moved out (UFFDIO_MOVE
 * builds a fresh writable pte) or
 * installed by UFFDIO_COPY reads as written: a refault is a reference. */
static int evict_stage_pages(struct evict_stage *st, const struct region_ref *ref,
			     const struct evict_scan *sc, uintptr_t *walked, bool sel, size_t *scanned)
{
	uint64_t gen = atomic_load(&eng.ev_gen);
	bool written = sc->written;
	long nr = sc->nr;
	/* A mapping given less than its whole share (policy_region_share)
	 * gives it in aligned groups of pages: one page in four taken alone
	 * would make every MOVE a one-page one. */
	unsigned int share = sel ? policy_region_share(ref->arr) : POLICY_SHARE_ALL;
	size_t group = SIZE_MAX;
	bool group_take = true;

	*walked = sc->walked;
	for (long v = 0; v < nr; v++) {
		if (sel)
			*scanned += (st->vec[v].end - st->vec[v].start) >> ZS_PAGE_SHIFT;
		uintptr_t p = st->vec[v].start, vend = st->vec[v].end;
		bool w = written && (st->vec[v].categories & PAGE_IS_WRITTEN);
		while (p < vend) {
			/* Claim a run of RESIDENT slots (COLD or not; never ZAP: a
			 * REMOVE's zap may still be due, region.h); in reclaim
			 * mode, those policy_select takes. */
			size_t idx = ref->first + ((p - ref->start) >> ZS_PAGE_SHIFT), n = 0;
			while (p + (n << ZS_PAGE_SHIFT) < vend) {
				struct slot *s = &ref->arr->slots[idx + n];
				uint32_t old = atomic_load(&s->state);
				if ((old & ~(SLOT_COLD | SLOT_KEPT)) != SLOT_RESIDENT ||
				    (sel && (!policy_select(s, old, w) ||
					     !evict_share_take(ref->arr, share, idx + n, &group, &group_take))) ||
				    !atomic_compare_exchange_strong(&s->state, &old, SLOT_EVICTING | (old & SLOT_KEPT))) {
					/* Past half the tier's cap, a page reclaim keeps
					 * gives its kept slot back, as the kernel frees
					 * the swap cache of pages it activates when swap
					 * is filling (vm_swap_full). */
					if (sel && (old & SLOT_KEPT) && zswap_swap_full(eng.store))
						region_release_kept(eng.store, s);
					break;
				}
				n++;
			}
			if (n) {
				if (evict_move_run(st, ref, p, idx, n, gen) == -EAGAIN) {
					*walked = p;
					return -EAGAIN;
				}
				p += n << ZS_PAGE_SHIFT;
			} else {
				/* In flight or stored while present: not ours to take
				 * now (or, for reclaim, not chosen this time). */
				if (!sel)
					atomic_fetch_add_explicit(&eng.cnt.evict_skipped_pages, 1, memory_order_relaxed);
				p += ZS_PAGE_SIZE;
			}
		}
	}
	return 0;
}

static bool evict_page_addr(const struct evict_page *pg, uintptr_t *addr)
{
	if (atomic_load(&eng.ev_gen) == pg->gen) {
		*addr = pg->addr;
		return true;
	}
	return region_addr_of(pg->arr, pg->idx, addr);
}

/* The store refused a page: move it back where it belongs now. */
static void evict_put_back(struct evict_stage *st, size_t k)
{
	struct evict_page *pg = &st->pages[k];
	struct slot *s = &pg->arr->slots[pg->idx];

	pthread_rwlock_rdlock(&eng.ev_lock);
	for (;;) {
		uintptr_t to;
		if ((atomic_load(&s->state) & SLOT_DROPPED) || !evict_page_addr(pg, &to))
			break;	/* unmapped meanwhile: nothing to put back */
		/* Without waking: WAITERs are woken by evict_finish once the
		 * slot is RESIDENT again. */
		long r = uf_move(eng.uffd, to, st->base + (k << ZS_PAGE_SHIFT), ZS_PAGE_SIZE, UF_DONTWAKE);
		if (r < 0 && evict_moved_anyway(to, st->base + (k << ZS_PAGE_SHIFT), 1))
			r = ZS_PAGE_SIZE;	/* it went back all the same (see evict_moved_anyway) */
		if (r == -EAGAIN) {
			pthread_rwlock_unlock(&eng.ev_lock);
			evict_pause();
			pthread_rwlock_rdlock(&eng.ev_lock);
			continue;
		}
		if (r < 0)
			zlog("could not put a page back at %p (error %ld): its data is lost",
			     (void *)to, -r);
		break;
	}
	pthread_rwlock_unlock(&eng.ev_lock);
	atomic_fetch_add_explicit(&eng.cnt.evict_skipped_pages, 1, memory_order_relaxed);
}

/* Take the next staged page of the batch to compress, or -1 when every one
 * is taken. */
static long evict_claim(struct evict_stage *st)
{
	uint64_t w = atomic_load_explicit(&st->claim, memory_order_acquire);

	for (;;) {
		if ((w & 0xffff) >= ((w >> 16) & 0xffff))
			return -1;
		if (atomic_compare_exchange_weak_explicit(&st->claim, &w, w + 1, memory_order_acq_rel,
							  memory_order_acquire))
			return (long)(w & 0xffff);
	}
}

/* Compress staged page k into its slot's entry. The slot is EVICTING (the
 * evictor's); its fate is read once every page of the batch is done. */
static void evict_compress(struct evict_stage *st, size_t k)
{
	struct evict_page *pg = &st->pages[k];
	struct slot *s = &pg->arr->slots[pg->idx];
	void *page = st->copied ? (char *)st->copy + ((k - st->win) << ZS_PAGE_SHIFT)
				: (void *)(st->base + (k << ZS_PAGE_SHIFT));
	int r = 0;

	uint32_t state = atomic_load(&s->state);

	if (state & SLOT_DROPPED) {
		pg->fate = PG_VOID;	/* unmapped or zapped meanwhile */
		return;
	}
	if (state & SLOT_KEPT) {
		/* Read back from the tier and its slot kept: unchanged, the
		 * page goes back to that slot, with nothing compressed or
		 * written (the entry already names it). */
		if (zswap_backed_same(eng.store, &s->e, page)) {
			zswap_kept_reclaimed(eng.store);
			pg->fate = PG_STORED;
			return;
		}
		atomic_fetch_and(&s->state, ~SLOT_KEPT);
		zswap_kept_release(eng.store, &s->e);
	}
	if (!atomic_load_explicit(&st->full, memory_order_relaxed) &&
	    (r = zswap_store_page_evict(eng.store, page, &s->e)) == 0)
		pg->fate = PG_STORED;
	else {
		/* Pool full (the rest of the batch would be refused too, after
		 * compressing each: don't), out of memory, or a page that does
		 * not compress with ZSWAP_WRITEBACK=0 (it stays resident). */
		if (r == -ENOSPC)
			atomic_store_explicit(&st->full, true, memory_order_relaxed);
		pg->fate = PG_REFUSED;
	}
}

/*
 * Direct reclaim's share (reclaim.h): a handler holding a fault over the
 * memory limit compresses pages of the batch the evictor has staged, instead
 * of sleeping until the evictor is done. Compression is most of an
 * eviction's cost, the evictor is one thread, and the CPU of a held fault
 * would otherwise idle. The stage read here may have moved on to its next
 * batch meanwhile: evict_claim then finds every page of the old one taken
 * (or the new one's claim word, whose pages are staged and whose evictor
 * waits for every claim to be done, as for its own), so a late helper takes
 * nothing it may not. Takes no lock the evictor holds while it waits.
 */
size_t evict_help(void)
{
	struct evict_stage *st = atomic_load_explicit(&evict_open, memory_order_acquire);
	size_t done = 0;
	long k;

	if (!st)
		return 0;
	while ((k = evict_claim(st)) >= 0) {
		evict_compress(st, (size_t)k);
		done++;
		atomic_fetch_add_explicit(&st->helped, 1, memory_order_release);
	}
	return done;
}

/*
 * Read staged pages out, EVICT_COPY from page from on in one
 * process_vm_readv, into the stage's copy; returns how many the copy holds
 * (0: compress them where they are staged, all of them). A staged page's
 * pte is new (the MOVE built it), and on a guest whose page tables the host
 * shadows the first touch through it traps to the host, several times what
 * the kernel's copy through its own mapping costs (the first read of a
 * staged page was the bulk of compressing it: docs/DESIGN.md, "Eviction").
 * The copy is the stage's from then on (the staging pages stay as they are,
 * to be put back or emptied); its pages stay populated, so the kernel's
 * writes into it take no fault, until the reclaimer goes quiet
 * (evict_release_copies). A window of a batch, not the whole: a copy of
 * the 2 MiB batch stayed resident in every process that ever evicted, 2
 * MiB of each tree member's charge. Where the call is refused (a seccomp
 * filter, a kernel without it) the pages are read where they are staged.
 */
static size_t evict_copy_out(struct evict_stage *st, size_t from)
{
	static _Atomic bool refused;
	size_t n = st->n - from < EVICT_COPY ? st->n - from : EVICT_COPY;

	st->copied = false;
	if (!n || atomic_load_explicit(&refused, memory_order_relaxed))
		return 0;
	if (!st->copy) {
		st->copy = prim_alloc(EVICT_COPY * ZS_PAGE_SIZE);
		if (!st->copy)
			return 0;
	}
	struct iovec local = { st->copy, n << ZS_PAGE_SHIFT };
	struct iovec remote = { (void *)(st->base + (from << ZS_PAGE_SHIFT)), n << ZS_PAGE_SHIFT };
	long got = syscall(SYS_process_vm_readv, syscall(SYS_getpid), &local, 1UL, &remote, 1UL, 0UL);

	if (got == (long)(n << ZS_PAGE_SHIFT)) {
		st->copied = true;
		st->win = from;
		atomic_fetch_add_explicit(&eng.cnt.evict_copied_pages, n, memory_order_relaxed);
		return n;
	}
	if (got < 0 && errno != EFAULT && errno != ENOMEM)
		atomic_store_explicit(&refused, true, memory_order_relaxed);
	return 0;
}

/* Compress and publish what the stage holds, then empty it and wake waiters.
 * Returns the pages stored. */
static size_t evict_finish(struct evict_stage *st)
{
	uint64_t stored = 0;
	uint32_t stamp = policy_evict_stamp();
	struct evict_stage *none = NULL;
	size_t mine = 0;
	long c;

	/* Open the batch for compression: this thread and, while it is the
	 * open one, handlers holding faults (evict_help) take pages from it,
	 * up to the end of the window the copy holds ([31:16] of the claim
	 * word). No helper is active on this stage now (the last batch waited
	 * for all of its own), so the counters start afresh. */
	size_t upto = evict_copy_out(st, 0);
	if (!upto)
		upto = st->n;
	st->seq++;
	atomic_store_explicit(&st->full, false, memory_order_relaxed);
	atomic_store_explicit(&st->helped, 0, memory_order_relaxed);
	atomic_store_explicit(&st->claim, ((uint64_t)st->seq << 32) | ((uint64_t)upto << 16), memory_order_release);
	bool open = atomic_compare_exchange_strong(&evict_open, &none, st);
	uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
	for (;;) {
		while ((c = evict_claim(st)) >= 0) {
			evict_compress(st, (size_t)c);
			mine++;
		}
		/* Helpers finish the page each took (a few microseconds); a
		 * late one may have taken pages even when this batch was not
		 * the open one. Then the next window: every page below upto
		 * is taken, so no claim moves the word meanwhile. */
		uint64_t p1 = prof_now();
		while (mine + atomic_load_explicit(&st->helped, memory_order_acquire) < upto)
			sched_yield();
		prof_add(PROF_EV_HELPWAIT, p1);
		if (upto == st->n)
			break;
		size_t got = evict_copy_out(st, upto);
		upto = got ? upto + got : st->n;
		atomic_store_explicit(&st->claim, ((uint64_t)st->seq << 32) | ((uint64_t)upto << 16) |
					      (atomic_load_explicit(&st->claim, memory_order_relaxed) & 0xffff),
				      memory_order_release);
	}
	prof_add(PROF_EV_COMPRESS, p0);
	if (open)
		atomic_store(&evict_open, NULL);
	for (size_t k = 0; k < st->n; k++) {
		struct evict_page *pg = &st->pages[k];
		struct slot *s = &pg->arr->slots[pg->idx];
		uint32_t old;

		if (pg->fate == PG_STORED) {
			/* The eviction clock, for the refault distance (reclaim.h). */
			atomic_store_explicit(&s->aux,
					      policy_aux_evicted(atomic_load_explicit(&s->aux, memory_order_relaxed),
								  stamp + (uint32_t)stored),
					      memory_order_relaxed);
			/* Publish, unless an event dropped the page meanwhile. */
			old = atomic_load(&s->state);
			while (!atomic_compare_exchange_weak(&s->state, &old,
							     (old & SLOT_DROPPED) ? SLOT_RESIDENT : SLOT_STORED))
				;
			if (old & SLOT_DROPPED)
				zswap_invalidate(eng.store, &s->e);
			else {
				stored++;
				atomic_fetch_add_explicit(&pg->arr->evicted, 1, memory_order_relaxed);
				policy_note_stored(pg->arr);
			}
		} else {
			if (pg->fate == PG_REFUSED)
				evict_put_back(st, k);
			old = atomic_exchange(&s->state, SLOT_RESIDENT);
			if (old & SLOT_KEPT)	/* dropped meanwhile: the slot goes too */
				zswap_kept_release(eng.store, &s->e);
		}
		pg->wake = old & SLOT_WAITER;
	}
	atomic_fetch_add_explicit(&eng.cnt.evicted_pages, stored, memory_order_relaxed);

	/* Empty the stage (raises a REMOVE event: never under ev_lock). */
	p0 = prof_now();
	syscall(SYS_madvise, st->base, st->n << ZS_PAGE_SHIFT, MADV_DONTNEED);
	prof_add(PROF_EV_EMPTY, p0);

	for (size_t k = 0; k < st->n; k++) {
		struct evict_page *pg = &st->pages[k];
		uintptr_t at;
		if (pg->wake && evict_page_addr(pg, &at))
			uf_wake(eng.uffd, at, ZS_PAGE_SIZE);
		region_arr_put(pg->arr);
	}
	st->n = 0;
	return stored;
}

/* Where a batch's range in the region ref ends: at the region's end, end,
 * or what the stage has room for. */
static uintptr_t evict_batch_end(const struct evict_stage *st, const struct region_ref *ref, uintptr_t cur,
				 uintptr_t end)
{
	uintptr_t bend = ref->end < end ? ref->end : end;

	if (bend - cur > ((EVICT_BATCH - st->n) << ZS_PAGE_SHIFT))
		bend = cur + ((EVICT_BATCH - st->n) << ZS_PAGE_SHIFT);
	return bend;
}

/* Evict [start, end): every present page, or with sel only those reclaim
 * takes, until want pages are stored (a batch may overshoot by one stage).
 * Returns the pages stored; *stop is where it stopped. */
static size_t evict_range_sel(uintptr_t start, uintptr_t end, bool sel, size_t want,
			      uintptr_t *stop, size_t *scanned)
{
	struct evict_stage *st;
	uintptr_t cur = start;
	size_t stored = 0;

	pthread_rwlock_rdlock(&eng.evict_gate);
	st = evict_stage_get();
	st->busy_retry = false;
	if (!evict_stages_ready())
		cur = end;	/* nothing moved; *stop says the range was passed */
	while (cur < end) {
		struct region_ref ref;
		uintptr_t next = cur;
		int rc = 0;

		st->nbusy = 0;

		/*
		 * The scan before the lock. PAGEMAP_SCAN (with the written bits:
		 * tens of microseconds a call) under ev_lock's read side holds up every handler
		 * reading a message, whose write side waits behind it. What it
		 * reports is a hint even under the lock: the program writes, the
		 * kernel zaps (MADV_DONTNEED, whose REMOVE takes the write side
		 * only when read) and pages are refilled while we hold it. What
		 * makes a move safe is unchanged and all under the lock: the
		 * region is looked up there, a slot is claimed RESIDENT ->
		 * EVICTING there (no ZAP: a REMOVE's zap may be due), the MOVE is
		 * refused (EAGAIN) while any event is unread, fails on a hole
		 * (ENOENT: the slot is unclaimed, the page skipped) and
		 * evict_finish checks ev_gen and DROPPED. A page present at the
		 * scan and zapped since (its REMOVE read meanwhile) is skipped so;
		 * one refilled since is moved with what it holds now, as under
		 * the lock; one filled since waits for the next pass. The result is
		 * used only for the same region and range, with eng.ev_gen unmoved
		 * (no UNMAP/REMAP processed in between: the table still describes
		 * the addresses scanned); else the range is scanned again under
		 * the lock. The scan's own side effect, write-protecting what it
		 * reports, needs no lock (the kernel orders it against faults and
		 * moves); a result thrown away lost those written bits, as an
		 * EAGAIN's rest does (evict_stage_pages). Another evictor's
		 * (evict_range) stale hints meet our claims: the CAS decides.
		 */
		struct evict_scan pre = { .nr = -1 };
		struct region_ref pref;
		uint64_t pgen = atomic_load(&eng.ev_gen);
		uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
		if (region_lookup(cur, &pref, false) && pref.arr &&
		    !(pref.flags & REGION_UNMANAGEABLE))
			evict_scan(st, &pre, cur, evict_batch_end(st, &pref, cur, end), sel);
		prof_add(PROF_EV_SCAN, p0);

		p0 = prof_now();
		pthread_rwlock_rdlock(&eng.ev_lock);
		prof_add(PROF_EV_RDLOCK, p0);
		p0 = prof_now();
		if (!region_lookup(cur, &ref, true)) {
			uintptr_t skip_to;
			enum evict_skip why;
			if (!evict_adopt(cur, &skip_to, &why)) {
				next = skip_to < ref.end ? skip_to : ref.end;
				if (!sel)
					evict_skip_add(why, cur, next < end ? next : end);
			}
		} else if (ref.flags & REGION_UNMANAGEABLE) {
			next = ref.end;
			if (!sel)
				evict_skip_add(EVICT_SKIP_EXCLUDED, cur, next < end ? next : end);
		} else if (!ref.arr) {
			if (!evict_register(&ref)) {
				next = ref.end;
				if (!sel)
					evict_skip_add(EVICT_SKIP_EXCLUDED, cur, next < end ? next : end);
			}
		} else {
			uintptr_t bend = evict_batch_end(st, &ref, cur, end);
			if (pre.nr < 0 || pre.end != bend || atomic_load(&eng.ev_gen) != pgen ||
			    pref.id != ref.id || pref.gen != ref.gen || pref.start != ref.start ||
			    pref.arr != ref.arr)
				evict_scan(st, &pre, cur, bend, sel);
			rc = evict_stage_pages(st, &ref, &pre, &next, sel, scanned);
		}
		prof_add(PROF_EV_HOLD, p0);
		pthread_rwlock_unlock(&eng.ev_lock);
		region_arr_put(ref.arr);
		/* A batch gathers what several ranges give (reclaim takes a
		 * few pages of each: a clock over scattered residents) and is
		 * compressed and emptied once nearly full: one MADV_DONTNEED,
		 * one REMOVE event for the handlers, per batch. */
		if (st->n && (rc == -EAGAIN || st->nbusy || stored + st->n >= want ||
			      st->n > EVICT_BATCH - EVICT_BATCH / 4 || next >= end))
			stored += evict_finish(st);
		if (rc == -EAGAIN)
			evict_pause();
		if (st->nbusy) {
			/* Make the shared pages exclusive the way a write would, but
			 * without touching their contents (a concurrent writer's data
			 * is never at risk), then take the batch once more. */
			/* A page may have gone since the scan (the program's
			 * MADV_DONTNEED or munmap): populating it then faults,
			 * and this thread waits for a handler like any other.
			 * No fault may be held at the limit meanwhile: the
			 * reclaimer making room may be this very thread
			 * (policy_throttle). */
			atomic_fetch_add(&eng.evict_touching, 1);
			for (size_t i = 0; i < st->nbusy; i++)
				syscall(SYS_madvise, st->busy[i].start, st->busy[i].end - st->busy[i].start,
					MADV_POPULATE_WRITE);
			atomic_fetch_sub(&eng.evict_touching, 1);
			st->busy_retry = true;
			continue;
		}
		st->busy_retry = false;
		cur = next > end ? end : next;
		if (stored >= want)
			break;
	}
	if (st->n)
		stored += evict_finish(st);
	pthread_mutex_unlock(&st->lock);
	pthread_rwlock_unlock(&eng.evict_gate);
	*stop = cur;
	return stored;
}

void evict_release_copies(void)
{
	for (int i = 0; evict_stages && i < EVICT_STAGES; i++) {
		struct evict_stage *st = &evict_stages[i];
		if (st->copy && pthread_mutex_trylock(&st->lock) == 0) {
			prim_decommit(st->copy, EVICT_COPY * ZS_PAGE_SIZE);
			pthread_mutex_unlock(&st->lock);
		}
	}
}

void evict_range(uintptr_t start, uintptr_t end)
{
	uintptr_t stop;
	size_t scanned = 0;

	uint64_t t0 = hist_now();	/* statistics (src/base/hist.h) */
	atomic_fetch_add(&eng.cnt.evict_calls, 1);
	evict_range_sel(start, end, false, SIZE_MAX, &stop, &scanned);
	hist_record(&hist_evict, hist_now() - t0);
}

size_t evict_reclaim(uintptr_t start, uintptr_t end, size_t want, uintptr_t *stop, size_t *scanned)
{
	return evict_range_sel(start, end, true, want, stop, scanned);
}

void evict_register_new(uintptr_t addr)
{
	struct region_ref ref;

	/* Caller holds eng.ev_lock (read): the region is the one just inserted,
	 * unless an event removed it meanwhile. */
	if (region_lookup(addr, &ref, false) && !ref.arr && !(ref.flags & REGION_UNMANAGEABLE))
		evict_register(&ref);
}
