/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - the aging and limit policy fault and evict consult (policy.h):
 * the per-page word and refault distance, page selection, the charge and
 * the throttle that holds faults at the limit. The reclaimer thread
 * (src/reclaim/reclaim.c) shares its state (policy_reclaim.h).
 *
 * The charge. memcg charges a cgroup's anonymous pages, the page cache and
 * shared memory it faults in, and zswap's pool to the cgroup; here the whole
 * process is the cgroup, and the pool is the library's own anonymous
 * memory, so one number covers them: the resident pages, read from
 * /proc/self/statm (anonymous, file-backed and shmem; the kernel's counter,
 * exact to its per-CPU batches). The file pages of the program's text and
 * read-only data are reclaimed as the kernel reclaims page cache
 * (src/reclaim/filemap.c). It is read by the
 * reclaimer every RECLAIM_POLL_MS, and after every eviction step; between
 * two readings the handlers add the pages they fill or load (pol.filled),
 * so the throttle on the fault path never makes a system call.
 *
 * The throttle. policy_throttle() runs in a handler thread before it fills
 * or loads pages. Above the limit it says "hold": the handler lets go of
 * eng.ev_lock and polls the userfaultfd together with pol.wait_fd (an
 * eventfd the reclaimer writes after each step), so events keep being read
 * while it waits. The program thread stays blocked in its fault all the
 * while: a program writing fresh memory at full speed is held like one
 * that refaults.
 */
#include "config.h"
#include "engine/policy.h"
#include "engine/policy_reclaim.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/compat.h"
#include "base/hist.h"
#include "base/prim.h"
#include "core/parse.h"
#include "core/zsmalloc.h"
#include "engine/engine.h"
#include "engine/pagecache.h"
#include "engine/region.h"

struct policy_state pol = { .statm_fd = -1, .status_fd = -1, .wait_fd = -1, .cold_lock = PTHREAD_MUTEX_INITIALIZER };

/* --- time and the per-page word ---------------------------------------- */

uint32_t policy_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint32_t)(t.tv_sec - pol.t0.tv_sec) & AUX_TIME_MASK;
}

uint32_t policy_evict_stamp(void)
{
	return (uint32_t)atomic_load_explicit(&eng.cnt.evicted_pages, memory_order_relaxed);
}

uint32_t policy_stored_age(uint32_t stored_aux)
{
	return ((policy_evict_stamp() & AUX_CLOCK_MASK) - (stored_aux >> 3)) & AUX_CLOCK_MASK;
}

uint32_t policy_aux_evicted(uint32_t resident_aux, uint32_t clock)
{
	uint32_t level = (resident_aux & AUX_RESIDENT) ? AUX_LEVEL(resident_aux) : 0;

	return (clock << 3) | (level << 1);
}

/* Samples of the eviction clock (policy_clock_sample). When the table is
 * full every other sample goes and the spacing doubles: the history always
 * reaches back to start-up, recent ages to the second for the first hour
 * and more coarsely after; a coarse sample only makes an age read longer,
 * never shorter. */
#define POLICY_CLOCK_SAMPLES	4096

static struct {
	uint32_t sec[POLICY_CLOCK_SAMPLES];	/* seconds since start-up */
	uint32_t clock[POLICY_CLOCK_SAMPLES];	/* policy_evict_stamp() then */
	unsigned int n;
	uint32_t spacing;			/* seconds between two samples kept */
} pclk;

/* Seconds since start-up, unmasked (policy_now wraps with the aux field). */
static uint32_t policy_secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint32_t)(t.tv_sec - pol.t0.tv_sec);
}

void policy_clock_sample(void)
{
	uint32_t now = policy_secs();

	if (!pclk.spacing)
		pclk.spacing = 1;
	if (pclk.n && now - pclk.sec[pclk.n - 1] < pclk.spacing)
		return;
	if (pclk.n == POLICY_CLOCK_SAMPLES) {
		for (unsigned int i = 0; i < POLICY_CLOCK_SAMPLES / 2; i++) {
			pclk.sec[i] = pclk.sec[2 * i];
			pclk.clock[i] = pclk.clock[2 * i];
		}
		pclk.n = POLICY_CLOCK_SAMPLES / 2;
		pclk.spacing *= 2;
	}
	pclk.sec[pclk.n] = now;
	pclk.clock[pclk.n] = policy_evict_stamp() & AUX_CLOCK_MASK;
	pclk.n++;
}

bool policy_idle_min_age(uint32_t seconds, uint32_t *min_age)
{
	uint32_t now = policy_secs();

	/* A sample taken during second s was taken up to a second after s
	 * began: one second more keeps every page it counts old enough. */
	if ((uint64_t)seconds + 1 > now)
		return false;
	for (unsigned int i = pclk.n; i-- > 0;) {
		if (pclk.sec[i] > now - seconds - 1)
			continue;
		/* Pages stamped before the sample's clock left before it. */
		*min_age = ((policy_evict_stamp() & AUX_CLOCK_MASK) - pclk.clock[i] + 1) & AUX_CLOCK_MASK;
		return true;
	}
	return false;
}

/*
 * Refault feedback (fault_load, the slot LOADING): the kernel's workingset
 * test. The page left when the eviction clock read `then`; if fewer pages
 * have been evicted since than the yardstick (pol.workingset: half the
 * program's pages resident outside the pool, as the kernel's active list),
 * it would have stayed with a little more memory: it is part of the working
 * set, and comes back
 * protected for 4^(level+1) - 1 clock passes, the level rising with each
 * quick refault (15, 63, 255 passes). A late refault starts again at level
 * 0. Protection is a preference, not a pin: when a step finds nothing
 * unprotected, it takes protected pages too (reclaim_to).
 */
bool policy_refault(struct slot *s)
{
	bool quick = false;

	uint32_t a = atomic_load_explicit(&s->aux, memory_order_relaxed);
	uint32_t now_clock = policy_evict_stamp() & AUX_CLOCK_MASK;
	uint32_t dist = (now_clock - (a >> 3)) & AUX_CLOCK_MASK;
	uint64_t yardstick = atomic_load_explicit(&pol.workingset, memory_order_relaxed);
	uint32_t level = (a >> 1) & 3u, w = policy_aux_fresh(policy_now());

	if (pol.on && !(a & AUX_RESIDENT)) {
		/* The balance of pool and resident pages (reclaim_balance): a
		 * refault from the pool among the most recently evicted, which
		 * a little more resident memory would have kept, or one near
		 * the pool's edge, which a little more pool would have kept
		 * out of the tier. */
		uint64_t edge = atomic_load_explicit(&pol.pool_edge, memory_order_relaxed);
		uint64_t slice = edge / RECLAIM_BAL_SLICE;
		if (dist < slice / 2 && zswap_entry_type(&s->e) != ZE_BACKED)
			atomic_fetch_add_explicit(&pol.refault_young, 1, memory_order_relaxed);
		else if (slice && dist + slice / 2 >= edge && dist < edge + slice / 2)
			atomic_fetch_add_explicit(&pol.refault_edge, 1, memory_order_relaxed);
	}
	if (pol.on && !(a & AUX_RESIDENT) && dist < yardstick) {
		if (level < 3)
			level++;
		w |= (level << 10) | (((4u << (2 * level)) - 1) * AUX_PROT_ONE);
		atomic_fetch_add_explicit(&pol.activate, 1, memory_order_relaxed);
		quick = true;
	}
	atomic_store_explicit(&s->aux, w, memory_order_relaxed);
	return quick;
}

/*
 * The balance between mappings, as the kernel balances its anon and file
 * lists by what their refaults cost (lru_note_cost, get_scan_count). The
 * clock sees no reads: a mapping that is read all over (a runtime's old
 * generation, a hash table) looks idle, and nearly every page taken from
 * it comes back quickly, while another mapping's evictions stay out. So
 * each mapping keeps its recent stores and quick refaults (halved as they
 * add up), and one whose quick refaults per page stored (r) are above the
 * rest of the process's (R) gives the clock only (1 - r) / (1 - R) of the
 * pages it would take, POLICY_BAL_FLOOR at least; a share near the whole
 * (above POLICY_BAL_SLACK) is the whole, since every page left costs a
 * scan. Not in a cold-age pass, which goes by age. OpenJDK's HashMap
 * under 193M: its old generation came back at 0.92-0.94 a page stored
 * against 0.44-0.50 for the young one (docs/DESIGN.md, "Which pages").
 */
#define POLICY_BAL_WINDOW	4096	/* a mapping's stores before its counts are halved */
#define POLICY_BAL_ALL_WINDOW	16384	/* the process's */
#define POLICY_BAL_MIN		256	/* stores, in the mapping and in the rest, before rates are trusted */
#define POLICY_BAL_FLOOR	8	/* of POLICY_SHARE_ALL: the smallest share */
#define POLICY_BAL_SLACK	192	/* of POLICY_SHARE_ALL: shares above this are whole */

static void policy_bal_halve(_Atomic uint32_t *ev, _Atomic uint32_t *quick, uint32_t window)
{
	if (atomic_load_explicit(ev, memory_order_relaxed) < window)
		return;
	atomic_store_explicit(ev, atomic_load_explicit(ev, memory_order_relaxed) / 2, memory_order_relaxed);
	atomic_store_explicit(quick, atomic_load_explicit(quick, memory_order_relaxed) / 2, memory_order_relaxed);
}

void policy_note_stored(struct slot_array *arr)
{
	atomic_fetch_add_explicit(&arr->bal_ev, 1, memory_order_relaxed);
	policy_bal_halve(&arr->bal_ev, &arr->bal_quick, POLICY_BAL_WINDOW);
	atomic_fetch_add_explicit(&pol.bal_ev, 1, memory_order_relaxed);
	policy_bal_halve(&pol.bal_ev, &pol.bal_quick, POLICY_BAL_ALL_WINDOW);
}

void policy_note_quick(struct slot_array *arr)
{
	atomic_fetch_add_explicit(&arr->bal_quick, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pol.bal_quick, 1, memory_order_relaxed);
}

unsigned int policy_region_share(struct slot_array *arr)
{
	uint64_t ev = atomic_load_explicit(&arr->bal_ev, memory_order_relaxed);
	uint64_t q = atomic_load_explicit(&arr->bal_quick, memory_order_relaxed);
	uint64_t gev = atomic_load_explicit(&pol.bal_ev, memory_order_relaxed);
	uint64_t gq = atomic_load_explicit(&pol.bal_quick, memory_order_relaxed);

	if (pol.proactive)
		return POLICY_SHARE_ALL;
	/* The rest of the process: the totals less this mapping's (halved
	 * at other moments, hence the clamps). */
	if (q > ev)
		q = ev;
	uint64_t oev = gev > ev ? gev - ev : 0, oq = gq > q ? gq - q : 0;
	if (oq > oev)
		oq = oev;
	if (ev < POLICY_BAL_MIN || oev < POLICY_BAL_MIN || q * oev <= oq * ev)
		return POLICY_SHARE_ALL;	/* too few, or r <= R */
	uint64_t share = POLICY_SHARE_ALL * (ev - q) * oev / (ev * (oev - oq));
	if (share > POLICY_BAL_SLACK)
		return POLICY_SHARE_ALL;
	return share < POLICY_BAL_FLOOR ? POLICY_BAL_FLOOR : (unsigned int)share;
}

bool policy_region_take(struct slot_array *arr, unsigned int share)
{
	if (share >= POLICY_SHARE_ALL)
		return true;
	arr->bal_credit += share;
	if (arr->bal_credit < POLICY_SHARE_ALL)
		return false;
	arr->bal_credit -= POLICY_SHARE_ALL;
	return true;
}

/*
 * The clock's question. written: the page was written since the last
 * cold-age pass (evict_stage_pages reads the bit in those passes alone;
 * always false without UFFD_FEATURE_WP_ASYNC): not idle, its age starts
 * again. A page protected by refault feedback uses up a pass and counts
 * in the scan budget (without that, random access over a heap larger than
 * the limit scans more pages per page stolen: docs/DESIGN.md, "Tried and
 * rejected"; tests/engine/test_eng_reclaim_thrash.sh bounds it).
 */
bool policy_select(struct slot *s, uint32_t state, bool written)
{
	uint32_t a = atomic_load_explicit(&s->aux, memory_order_relaxed);

	if (state & SLOT_COLD)
		return true;	/* MADV_COLD: first in line */
	if (!(a & AUX_RESIDENT)) {
		/* Came in without reclaim's hooks (read ahead, or first touched
		 * before its region was registered): unprotected, age unknown.
		 * A cold-age pass starts its clock now. */
		if (!pol.proactive)
			return true;
		atomic_compare_exchange_strong_explicit(&s->aux, &a, policy_aux_fresh(pol.now_s),
							memory_order_relaxed, memory_order_relaxed);
		return false;
	}
	if (written && pol.proactive) {
		atomic_compare_exchange_strong_explicit(&s->aux, &a, (a & ~(AUX_TIME_MASK << 12)) | (pol.now_s << 12),
							memory_order_relaxed, memory_order_relaxed);
		atomic_fetch_add_explicit(&pol.pgactivate, 1, memory_order_relaxed);
		return false;
	}
	if (!pol.proactive)
		pol.looked++;
	if (a & AUX_PROT_MASK) {
		/* A protected page survives this pass (one fewer left). */
		atomic_compare_exchange_strong_explicit(&s->aux, &a, a - AUX_PROT_ONE, memory_order_relaxed,
							memory_order_relaxed);
		/* Past the step's scan budget: protection is a preference. */
		if (!pol.force && (pol.proactive || pol.looked <= pol.budget))
			return false;
	}
	if (pol.proactive) {
		uint32_t t = AUX_TIME(a);
		/* A time ahead of the clock: not a resident word yet (a page
		 * read ahead keeps its stored word): young. */
		if (t > pol.now_s || pol.now_s - t < pol.cold_age)
			return false;
	}
	return true;
}

/* --- the charge --------------------------------------------------------- */

/*
 * The charge is what memcg would charge the process: its anonymous pages and
 * the pool's (RssAnon holds both), plus its page tables (VmPTE; memcg charges
 * them), less the library's own bookkeeping: the slot arrays (16 bytes a
 * managed page; the kernel's zswap_entry and xarray, which memcg does not
 * charge) and zsmalloc's metadata (handle tables, zspage descriptors: slab in
 * the kernel, not charged either, and not in zram's mem_used_total). The
 * kernel side of the benchmark is held to exactly that (docs/DESIGN.md, "The
 * charge and the limit"). So VmHWM may pass the limit by the bookkeeping less
 * the page tables (and by the file pages, as it always could).
 */
#define RECLAIM_ACCOUNT_MS	100
#define RECLAIM_PAGECACHE_EVERY 10

/* Resident bytes of the slot arrays (mincore: an array's pages are touched
 * only where its region's pages were managed). An array two regions share
 * (a split region) is counted once if they are near in the table. */
struct policy_slot_walk {
	const struct slot_array *seen[8];
	unsigned int nseen;
	uint64_t bytes;
};

static void reclaim_slot_region(const struct region_ref *r, void *arg)
{
	static unsigned char vec[4096];
	struct policy_slot_walk *w = arg;
	const struct slot_array *arr = r->arr;

	for (unsigned int i = 0; i < 8; i++)
		if (w->seen[i] == arr)
			return;
	w->seen[w->nseen++ % 8] = arr;
	for (size_t off = 0; off < arr->bytes; off += sizeof(vec) << ZS_PAGE_SHIFT) {
		size_t len = arr->bytes - off;
		if (len > sizeof(vec) << ZS_PAGE_SHIFT)
			len = sizeof(vec) << ZS_PAGE_SHIFT;
		if (syscall(SYS_mincore, (char *)arr + off, len, vec) != 0)
			break;
		for (size_t i = 0; i < (len + ZS_PAGE_SIZE - 1) >> ZS_PAGE_SHIFT; i++)
			w->bytes += (vec[i] & 1) ? ZS_PAGE_SIZE : 0;
	}
}

static uint64_t reclaim_slot_bytes(void)
{
	struct policy_slot_walk w = { { 0 }, 0, 0 };

	region_for_each(reclaim_slot_region, &w);
	return w.bytes;
}

/* The library's own resident memory: every range prim_alloc handed out
 * (bookkeeping, buffers, the tier's metadata, the pool's zspages) but the
 * staging areas, whose pages are the program's on their way to the store
 * (registered with userfaultfd: PAGE_IS_WPALLOWED), read as PAGEMAP_SCAN's
 * runs of present pages (a reserved range costs its page-table walk, not a
 * byte a page as mincore's vector would). */
struct policy_own_walk {
	uint64_t bytes;
	bool failed;
};

static void policy_own_run(uintptr_t start, uintptr_t end, void *arg)
{
	((struct policy_own_walk *)arg)->bytes += end - start;
}

static void policy_own_range(uintptr_t start, uintptr_t end, void *arg)
{
	struct policy_own_walk *w = arg;

	/* ENOMEM: the range was freed meanwhile. */
	if (!w->failed && engine_page_runs(start, end, PAGE_IS_PRESENT | PAGE_IS_WPALLOWED, PAGE_IS_WPALLOWED,
					   policy_own_run, w) != 0)
		w->failed = errno != ENOMEM;
}

/* What the charge leaves out as the library's: its own resident memory less
 * the pool's zspage pages (charged under v2, as cgroup v2 charges zswap's
 * pool). Without PAGEMAP_SCAN (before 6.7), the slot arrays and zsmalloc's
 * metadata alone. */
static uint64_t reclaim_book_bytes(void)
{
	struct policy_own_walk w = { 0, false };

	if (eng.pagemap_fd >= 0)
		prim_for_each(policy_own_range, &w);
	if (eng.pagemap_fd < 0 || w.failed)
		return reclaim_slot_bytes() + zswap_store_meta_bytes(eng.store);
	uint64_t pool = policy_pool_page_bytes();
	return w.bytes > pool ? w.bytes - pool : 0;
}

/* VmPTE in bytes from /proc/self/status (0 if unreadable), and RssShmem
 * into pol.shmem. */
static uint64_t reclaim_pte_bytes(void)
{
	char buf[4096];
	long n = pol.status_fd < 0 ? -1 : syscall(SYS_pread64, pol.status_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	atomic_store_explicit(&pol.shmem, parse_proc_kb(buf, (size_t)n, "RssShmem:"), memory_order_relaxed);
	return parse_proc_kb(buf, (size_t)n, "VmPTE:");
}

/* Every RECLAIM_ACCOUNT_MS, or a hundred times as long as the last look
 * took (a mincore per slot array: thousands of regions must not make it
 * more than ~1 % of the reclaimer's time). */
static void reclaim_account_refresh(void)
{
	struct timespec now, done;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (pol.adjust_at.tv_sec && policy_ns_between(&pol.adjust_at, &now) / 1000000 < pol.adjust_every_ms)
		return;
	pol.adjust_at = now;
	/* The file mappings made where no call is interposed (the dynamic
	 * loader's), every RECLAIM_PAGECACHE_EVERY looks. */
	if (pol.limit && pol.pagecache_looks++ % RECLAIM_PAGECACHE_EVERY == 0)
		pagecache_sync();
	uint64_t book = reclaim_book_bytes();
	atomic_store_explicit(&eng.cnt.bookkeeping_bytes, book, memory_order_relaxed);
	atomic_store_explicit(&pol.adjust, (int64_t)reclaim_pte_bytes() - (int64_t)book, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, &done);
	long took_us = (long)(policy_ns_between(&now, &done) / 1000);
	pol.adjust_every_ms = took_us / 10 > RECLAIM_ACCOUNT_MS ? took_us / 10 : RECLAIM_ACCOUNT_MS;
}

/* The pool's zspage pages in bytes (its metadata is in the bookkeeping
 * above). */
uint64_t policy_pool_page_bytes(void)
{
	return zswap_store_pool_pages(eng.store) << ZS_PAGE_SHIFT;
}

/* A member of a group: its share of the group's charge is the reading,
 * less the pages it shares copy-on-write with other members (counted once,
 * each sharer's proportional part), in place of the last reading and the
 * pages filled since. */
void policy_peak(_Atomic uint64_t *peak, uint64_t v)
{
	uint64_t p = atomic_load_explicit(peak, memory_order_relaxed);

	while (v > p && !atomic_compare_exchange_weak_explicit(peak, &p, v, memory_order_relaxed,
							       memory_order_relaxed))
		;
}

static void policy_group_publish(uint64_t rss)
{
	_Atomic uint64_t *mine = pol.grp_mine, *total = pol.grp_total, *peak = pol.grp_peak;
	uint64_t shared = atomic_load_explicit(&pol.grp_shared, memory_order_relaxed);

	if (!mine || !total)
		return;
	uint64_t pub = rss > shared ? rss - shared : 0;
	uint64_t old = atomic_exchange_explicit(mine, pub, memory_order_relaxed);
	uint64_t now = atomic_fetch_add_explicit(total, pub - old, memory_order_relaxed) + (pub - old);	/* modulo 2^64 */
	if (peak && now < (UINT64_C(1) << 62))	/* a sum passing below zero for a moment is no peak */
		policy_peak(peak, now);
}

/* The charge in bytes: the resident pages from /proc/self/statm ("size
 * resident shared ..." in pages; shared = file-backed + shmem, kept in
 * pol.file) with memcg's adjustment above (and, under the v1 charge model,
 * less the pool's pages), or the last value if unreadable. */
uint64_t policy_read_charge(void)
{
	char buf[128];
	uint64_t f[3] = { 0, 0, 0 };

	/* Pages filled from here on are in both the reading and pol.filled:
	 * counted twice until the next reading rather than not at all. */
	atomic_store_explicit(&pol.filled, 0, memory_order_relaxed);
	atomic_store_explicit(&pol.refaults_seen, atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed),
			      memory_order_relaxed);
	long n = syscall(SYS_pread64, pol.statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return atomic_load(&pol.charge);
	parse_statm(buf, (size_t)n, f, 3);
	reclaim_account_refresh();
	/* The file pages the page cache held before the program mapped them
	 * are charged to others, as memcg charges a page to the group that
	 * read it in (pagecache.h). */
	uint64_t file = (f[2] < f[1] ? f[2] : f[1]) << ZS_PAGE_SHIFT, others = pagecache_others();
	/* statm's shared is file and shared memory pages together; what is
	 * left to others comes out of the file pages alone (it counts pages
	 * cached when a mapping was first seen, resident or not since). */
	uint64_t shmem = atomic_load_explicit(&pol.shmem, memory_order_relaxed);
	if (shmem > file)
		shmem = file;
	if (others > file - shmem)
		others = file - shmem;
	uint64_t rss = (f[1] << ZS_PAGE_SHIFT) - others;
	atomic_store_explicit(&pol.file, file - others, memory_order_relaxed);
	int64_t adj = atomic_load_explicit(&pol.adjust, memory_order_relaxed);
	if (eng.opt.pool_uncharged)
		adj -= (int64_t)policy_pool_page_bytes();
	rss = adj >= 0 ? rss + (uint64_t)adj : rss > (uint64_t)-adj ? rss - (uint64_t)-adj : 0;
	atomic_store_explicit(&pol.charge, rss, memory_order_relaxed);
	policy_peak(&pol.peak, rss);
	policy_group_publish(rss);
	return rss;
}

static void reclaim_kick(void)
{
	if (atomic_load_explicit(&pol.sleeping, memory_order_relaxed)) {
		_Atomic uint32_t *w = policy_kick_word();
		atomic_fetch_add(w, 1);
		syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
}

/* Tell handlers holding faults to look again. */
void policy_progress(void)
{
	if (atomic_exchange(&pol.waiters, 0)) {
		uint64_t two = 2;	/* one read each for up to two waiting handlers */
		(void)!write(pol.wait_fd, &two, sizeof(two));
	}
}

bool policy_limit_set(void)
{
	return pol.limit != 0;
}

bool policy_reads_written(void)
{
	return pol.proactive;
}

void policy_held(bool start)
{
	if (start) {
		if (atomic_fetch_add(&pol.held_now, 1) == 0)
			atomic_store(&pol.some_start, hist_now());
	} else if (atomic_fetch_sub(&pol.held_now, 1) == 1) {
		/* A hold starting meanwhile may have moved some_start on: that
		 * stretch is lost, not counted twice. */
		uint64_t t0 = atomic_load(&pol.some_start), t1 = hist_now();
		if (t1 > t0)
			atomic_fetch_add(&pol.some_total, t1 - t0);
	}
}

/* The charge now, with npages more: the last reading plus the pages in
 * since (zero fills, and loads, readahead's included, counted as whole
 * pages though the pool gives some back). */
static uint64_t policy_estimate(size_t npages)
{
	_Atomic uint64_t *total = pol.grp_total;

	if (total) {
		/* The group's: every member's fills are in it as they come. */
		uint64_t loads = atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed) -
				 atomic_load_explicit(&pol.refaults_seen, memory_order_relaxed);
		return atomic_load_explicit(total, memory_order_relaxed) + ((npages + loads) << ZS_PAGE_SHIFT);
	}
	uint64_t filled = atomic_load_explicit(&pol.filled, memory_order_relaxed) + npages +
			  atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed) -
			  atomic_load_explicit(&pol.refaults_seen, memory_order_relaxed);

	return atomic_load_explicit(&pol.charge, memory_order_relaxed) + (filled << ZS_PAGE_SHIFT);
}

/* Pages a handler fills count in the group's charge at once: the other
 * members' throttles see them before this member's next reading. */
static void policy_group_fill(size_t npages)
{
	_Atomic uint64_t *mine = pol.grp_mine, *total = pol.grp_total;

	if (!mine || !total || !npages)
		return;
	atomic_fetch_add_explicit(mine, (uint64_t)npages << ZS_PAGE_SHIFT, memory_order_relaxed);
	atomic_fetch_add_explicit(total, (uint64_t)npages << ZS_PAGE_SHIFT, memory_order_relaxed);
}

bool policy_room(size_t npages)
{
	return !pol.limit || !pol.on || policy_estimate(npages) <= atomic_load_explicit(&pol.wake, memory_order_relaxed);
}

bool policy_throttle(size_t npages)
{
	if (!pol.limit || !pol.on)
		return false;
	uint64_t est = policy_estimate(npages);

	if (est > atomic_load_explicit(&pol.wake, memory_order_relaxed))
		reclaim_kick();
	if (est > pol.hold) {
		/* A forked child that kept its pages has no reclaimer: nobody
		 * would ever make room. Its faults are not held. Nor while the
		 * evictor populates shared pages: the fault may be its own
		 * (evict.c), and held it would wait for itself. */
		if (syscall(SYS_getpid) != pol.pid || atomic_load_explicit(&eng.evict_touching, memory_order_relaxed))
			return false;
		if (!atomic_load_explicit(&pol.stuck, memory_order_relaxed)) {
			atomic_store(&pol.waiters, 1);
			/* More than background reclaim leaves room for (a step
			 * of malloc's growth): ask for the whole band. */
			if ((npages << ZS_PAGE_SHIFT) > (pol.hold - pol.low_bg) / 2)
				atomic_store(&pol.deep, 1);
			atomic_fetch_add_explicit(&pol.allocstall, 1, memory_order_relaxed);
			reclaim_kick();
			return true;
		}
		atomic_fetch_add_explicit(&pol.events_max, 1, memory_order_relaxed);
		if (pol.grp_events_max)
			atomic_fetch_add_explicit(pol.grp_events_max, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&pol.filled, npages, memory_order_relaxed);
	policy_group_fill(npages);
	return false;
}

uint64_t policy_faults(void)
{
	return atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed) +
	       atomic_load_explicit(&eng.cnt.zero_fill_pages, memory_order_relaxed) +
	       atomic_load_explicit(&pol.allocstall, memory_order_relaxed);
}

int policy_wait_fd(void)
{
	return pol.wait_fd;
}

void policy_wait_done(void)
{
	uint64_t v;

	(void)!read(pol.wait_fd, &v, sizeof(v));
}


void policy_cold_hint(uintptr_t start, uintptr_t end)
{
	if ((!pol.limit && !pol.cold_age) || end <= start)
		return;
	pthread_mutex_lock(&pol.cold_lock);
	if (pol.ncold < RECLAIM_COLD_HINTS) {
		pol.cold[pol.ncold].start = start;
		pol.cold[pol.ncold++].end = end;
	}
	pthread_mutex_unlock(&pol.cold_lock);
}

void policy_stats(struct zswap_stats *st)
{
	st->memory_max = pol.limit;
	st->memory_current = pol.on ? atomic_load(&pol.charge) : 0;
	st->memory_peak = pol.on ? atomic_load(&pol.peak) : 0;
	st->pgscan = atomic_load(&pol.pgscan);
	st->pgsteal = atomic_load(&pol.pgsteal);
	st->pgsteal_proactive = atomic_load(&pol.pgsteal_proactive);
	st->workingset_activate = atomic_load(&pol.activate);
	st->allocstall = atomic_load(&pol.allocstall);
	st->watermark_boost = pol.limit ? pol.high - atomic_load(&pol.wake) : 0;
	st->memory_events_max = atomic_load(&pol.events_max);
	st->reclaim_backoff = atomic_load(&pol.backoff);
	st->pgactivate = atomic_load(&pol.pgactivate);
	uint64_t some = atomic_load(&pol.some_total), t0 = atomic_load(&pol.some_start), t1 = hist_now();
	if (atomic_load(&pol.held_now) > 0 && t1 > t0)
		some += t1 - t0;	/* the stretch under way */
	st->memory_pressure_some_us = some / 1000;
	st->thrashing_windows = atomic_load(&pol.thrash_windows);
	st->file_mapped = pol.on ? atomic_load_explicit(&pol.file, memory_order_relaxed) : 0;
}

