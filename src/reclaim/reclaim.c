/*
 * reclaim.c - the reclaimer thread, the memory limit's throttle, and the
 * cold-page policy (see reclaim.h for the model).
 *
 * The charge. memcg charges a cgroup's anonymous pages and zswap's pool to
 * the cgroup; here the whole process is the cgroup, and the pool is the
 * library's own anonymous memory, so one number covers both: RssAnon, read
 * from /proc/self/statm (resident minus file-backed and shmem pages; the
 * kernel's counter, exact to its per-CPU batches). It is read by the
 * reclaimer (a pread of one line, ~2 us) every RECLAIM_POLL_MS, and after
 * every eviction step; between two readings the handlers add the pages they
 * fill or load (rc.filled), so the throttle on the fault path never makes a
 * system call. Memory the engine does not manage (the main stack, thread
 * stacks, the program's own bss, small mappings glibc makes for itself) is
 * charged but never reclaimed: a program whose unmanaged memory alone is
 * over the limit runs over it (memory_events_max counts those faults).
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
 * of charge is ~1.8 MiB of it at lz4's ratio. While faults keep being held,
 * high and low_bg sit lower by a boost (reclaim_boost) that calm undoes.
 *
 * The throttle. reclaim_throttle() runs in a handler thread before it fills
 * or loads pages. Above the limit it says "hold": the handler lets go of
 * eng.ev_lock and polls the userfaultfd together with rc.wait_fd (an
 * eventfd the reclaimer writes after each step), so events keep being read
 * while it waits (the reclaimer's eviction itself waits for its staging
 * area's REMOVE event to be read). The program thread stays blocked in its
 * fault all the while: a program writing fresh memory at full speed is held
 * like one that refaults. When a step stores nothing even taking protected
 * pages (everything resident is unmanaged or stored, or the pool is full)
 * the reclaimer marks itself stuck and faults go through until it makes
 * progress again.
 *
 * The cost of protection is bounded (docs/DESIGN.md, "Known bad case"): a
 * step that has looked at RECLAIM_SCAN_RATIO resident pages per page it
 * wants takes protected pages too.
 *
 * Written bits (reclaim.h, evict_stage_pages): a page written since the
 * hand last passed is CLOCK's referenced page, kept for this pass and
 * protected for RECLAIM_WRITTEN_PASSES more (docs/DESIGN.md, "Which pages").
 *
 * Cold pages: see reclaim.h and docs/DESIGN.md, "## Reclaim".
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

#include "engine/engine.h"
#include "engine/evict.h"
#include "base/fdtab.h"
#include "reclaim/growth.h"
#include "base/hist.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "core/zsmalloc.h"

#define RECLAIM_POLL_MS		10	/* charge read this often under a limit */
/* Pages per eviction step, then the charge is read again and held faults
 * are told (reclaim_progress): one staging batch (evict.c's EVICT_BATCH).
 * With 2048, a step took ~30 ms under load and a held fault waited for all
 * of it (docs/DESIGN.md, "Speed under the limit"). */
#ifndef RECLAIM_STEP_MAX
#define RECLAIM_STEP_MAX	512
#endif
#ifndef RECLAIM_STEP_MIN
#define RECLAIM_STEP_MIN	128
#endif
#define RECLAIM_TARGETS		1024	/* mappings one rotation walks */
#define RECLAIM_MAX_PASSES	2	/* rotations one step may take before it gives up */
/* A step looks at most this many resident pages per page it wants before it
 * takes protected pages too (the kernel's scan priority, bounded): without
 * it, a working set larger than memory, every page of it protected by its
 * quick refaults, made every step sweep two whole rotations (docs/DESIGN.md,
 * "Known bad case"). */
#define RECLAIM_SCAN_RATIO	16
#define RECLAIM_PAUSE_MAX_MS	100	/* longest back-off */
/* The hold line sits a margin m below the limit; background reclaim runs
 * below it (RECLAIM_BG_WAKE, below). m is limit/96, but at least what the
 * charge rises above the hold line while faults are being held (a batch in
 * the pool before its staging area is emptied, pages filled between two
 * readings: 2.3-2.9 MiB measured at 320 MiB) unless the limit is small
 * (then limit/64) (docs/DESIGN.md, "The charge and the limit"). */
#ifndef RECLAIM_MARGIN_DIV
#define RECLAIM_MARGIN_DIV	96
#endif
#ifndef RECLAIM_MARGIN_MIN
#define RECLAIM_MARGIN_MIN	(3ull << 20)
#endif
/* Background reclaim wakes RECLAIM_BG_WAKE sixteenths of the band below
 * the hold line and stops RECLAIM_BG_STOP sixteenths below it; a held step
 * of growth takes the charge down to the whole band. Session 9 narrowed it
 * from 8..16 to 1..2 (~1.2 % fewer refaults, the charge higher); session 13
 * widened it to 4..8 on a machine where page-table work is dear: steps of
 * ~400 pages instead of ~130 took 14-15 % off hot/cold's wall time for
 * 0.1 % more refaults there and 0.6 % more under uniform access, whose wall
 * time moved 1-4 % (docs/DESIGN.md "The charge and the limit"). */
#ifndef RECLAIM_BG_WAKE
#define RECLAIM_BG_WAKE		4
#endif
#ifndef RECLAIM_BG_STOP
#define RECLAIM_BG_STOP		8
#endif
/* Watermark boost (reclaim_boost): on (1) or off (0), its step and its
 * largest value as fractions of the band. */
#ifndef RECLAIM_BOOST
#define RECLAIM_BOOST		1
#endif
#ifndef RECLAIM_BOOST_STEP
#define RECLAIM_BOOST_STEP	16
#endif
#ifndef RECLAIM_BOOST_MAX
#define RECLAIM_BOOST_MAX	2
#endif
/* What each calm look gives back: 1/RECLAIM_BOOST_DECAY of the boost. */
#ifndef RECLAIM_BOOST_DECAY
#define RECLAIM_BOOST_DECAY	8
#endif
/* Compaction before eviction (reclaim_compact): on (1) or off (0), and the
 * fewest pages it must be able to free. */
#ifndef RECLAIM_COMPACT
#define RECLAIM_COMPACT		1
#endif
#define RECLAIM_COMPACT_MIN	64
#define RECLAIM_COMPACT_ROUND	256	/* pages freed under one hold of ev_lock */
/* A page found written (its referenced bit) is passed over and keeps at
 * least this many passes of protection: a step that sweeps the whole clock
 * twice in a millisecond (every page fresh, in a fill) must not take a hot
 * page on its second look. 0 for plain second chance; 1, 2, 3 measured:
 * docs/DESIGN.md "Which pages". */
#ifndef RECLAIM_WRITTEN_PASSES
#define RECLAIM_WRITTEN_PASSES 2
#endif
/* Written pages a step passes over have a budget of their own, this many
 * per page it wants (8 ms of scanning for a step of 512): within
 * RECLAIM_SCAN_RATIO's, the budget took hot pages whenever most pages were
 * fresh (a fill: all written once). A written page's bit is cleared as the
 * hand passes, so a rotation ends them anyway; this bounds a step's scan on a
 * large limit. */
#define RECLAIM_WRITTEN_RATIO	256
/* A refault is quick (the page comes back protected) when fewer pages were
 * evicted since it left than 1/RECLAIM_WORKINGSET_DIV of the program's pages
 * resident outside the pool: the kernel compares the distance with its
 * active anon list (mm/workingset.c), which its balance keeps at about half
 * the anon LRU below 1 GiB. 0 compares with the whole charge, the pool
 * included (sessions 3-6): under hot/cold access half the cold refaults then
 * passed as quick, their protection filled the clock, and steps past their
 * scan budget took hot pages instead (docs/DESIGN.md "Which pages",
 * session 7). */
#ifndef RECLAIM_WORKINGSET_DIV
#define RECLAIM_WORKINGSET_DIV 2
#endif
/* Refault feedback on (1) or off (0: a plain CLOCK in address order), for
 * the comparison in docs/DESIGN.md. */
#ifndef RECLAIM_REFAULT_FEEDBACK
#define RECLAIM_REFAULT_FEEDBACK 1
#endif

/* The resident word: [31:12] second it came in, [11:10] level, [9:1]
 * protection, [0] 1. The stored word: [31:3] eviction clock, [2:1] level,
 * [0] 0. A resident page whose word is still a stored one came in without
 * reclaim's hooks (read ahead): unprotected, age unknown. */
#define AUX_RESIDENT	1u
#define AUX_PROT_MASK	0x3feu
#define AUX_PROT_ONE	2u
#define AUX_LEVEL(a)	(((a) >> 10) & 3u)
#define AUX_TIME(a)	((a) >> 12)
#define AUX_TIME_MASK	0xfffffu
#define AUX_CLOCK_MASK	0x1fffffffu

static struct {
	uint64_t limit, hold, high, low_bg, low;	/* bytes; 0 limit = none */
	uint64_t band;			/* hold - low */
	/* Watermark boost (reclaim_boost): how much lower than high and low_bg
	 * background reclaim wakes and stops while faults keep being held, and
	 * allocstall when last looked at. The reclaimer's alone; wake (high -
	 * boost) is what handlers compare with. */
	uint64_t boost, boost_stalls;
	_Atomic uint64_t wake;
	unsigned int cold_age;		/* seconds; 0 = no proactive reclaim */
	_Atomic bool on;		/* the thread runs */
	long pid;			/* in this process (not in a forked child) */
	int statm_fd;
	int status_fd;			/* /proc/self/status, for VmPTE */
	int wait_fd;
	/* What memcg charges and RssAnon does not say apart (reclaim_read_charge):
	 * the page tables less the library's bookkeeping, in bytes; refreshed
	 * by the reclaimer (reclaim_account_refresh). */
	_Atomic int64_t adjust;
	struct timespec adjust_at;
	long adjust_every_ms;
	struct timespec t0;

	_Atomic uint64_t charge;	/* bytes, at the last reading */
	_Atomic uint64_t workingset;	/* pages: refault distances below this are quick */
	_Atomic uint64_t filled;	/* pages handlers zero-filled since */
	_Atomic uint64_t refaults_seen;	/* eng.cnt.refaults at that reading */
	_Atomic int stuck;
	int stuck_why;			/* RECLAIM_STUCK_*: the reclaimer's, for reclaim_say_stuck */
	struct timespec stuck_since;	/* over the limit and stuck since (0: not) */
	_Atomic int waiters;		/* a handler holds a fault */
	/* Memory pressure (reclaim_held): handlers holding a fault now, since
	 * when at least one has, and the total of such time (ns). */
	_Atomic int held_now;
	_Atomic uint64_t some_start, some_total;
	_Atomic int deep;		/* one held needs more room than background reclaim leaves */
	_Atomic uint32_t kick;		/* futex word: bumped to wake the thread */
	_Atomic int sleeping;

	_Atomic uint64_t pgscan, pgsteal, pgsteal_proactive, activate, allocstall, events_max, backoff;
	_Atomic uint64_t pgactivate;	/* written pages given a second chance */
	_Atomic uint64_t thrash_windows;	/* reclaim_watch_thrash */
	struct timespec thrash_t0;	/* the window under way: its start, and the counters then */
	uint64_t thrash_quick0, thrash_refaults0;

	/* The clock: the reclaimer thread's alone. */
	bool proactive;			/* the current sweep is a cold-age one */
	bool force;			/* the current sweep takes protected pages too */
	unsigned int pause_ms;		/* back-off, doubled while nothing can be taken */
	uint32_t now_s;			/* its clock, for reclaim_select */
	size_t looked, budget;		/* this step: resident pages looked at, and how many before forcing */
	size_t wlooked, wbudget;	/* written pages passed over, and how many it may pass */
	uintptr_t hand;
	size_t ntargets, next;
	struct { uintptr_t start, end; } *targets;

	/* MADV_COLD's ranges, for the clock to visit first (reclaim_cold_hint):
	 * written by program threads in the interposed madvise, taken by the
	 * reclaimer at the start of a sweep. The lock guards only the copy. */
	pthread_mutex_t cold_lock;
	size_t ncold;
	struct { uintptr_t start, end; } cold[RECLAIM_COLD_HINTS];
} rc = { .statm_fd = -1, .status_fd = -1, .wait_fd = -1, .cold_lock = PTHREAD_MUTEX_INITIALIZER };

/* --- time and the per-page word ---------------------------------------- */

uint32_t reclaim_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint32_t)(t.tv_sec - rc.t0.tv_sec) & AUX_TIME_MASK;
}

uint32_t reclaim_evict_stamp(void)
{
	return (uint32_t)atomic_load_explicit(&eng.cnt.evicted_pages, memory_order_relaxed);
}

uint32_t reclaim_aux_evicted(uint32_t resident_aux, uint32_t clock)
{
	uint32_t level = (resident_aux & AUX_RESIDENT) ? AUX_LEVEL(resident_aux) : 0;

	return (clock << 3) | (level << 1);
}

/*
 * Refault feedback (fault_load, the slot LOADING): the kernel's workingset
 * test. The page left when the eviction clock read `then`; if fewer pages
 * have been evicted since than the yardstick (rc.workingset: half the
 * program's pages resident outside the pool, as the kernel's active list),
 * it would have stayed with a little more memory: it is part of the working
 * set, and comes back
 * protected for 4^(level+1) - 1 clock passes, the level rising with each
 * quick refault (15, 63, 255 passes). A late refault starts again at level
 * 0. Protection is a preference, not a pin: when a step finds nothing
 * unprotected, it takes protected pages too (reclaim_to).
 */
void reclaim_refault(struct slot *s)
{
	uint32_t a = atomic_load_explicit(&s->aux, memory_order_relaxed);
	uint32_t now_clock = reclaim_evict_stamp() & AUX_CLOCK_MASK;
	uint32_t dist = (now_clock - (a >> 3)) & AUX_CLOCK_MASK;
	uint64_t yardstick = atomic_load_explicit(&rc.workingset, memory_order_relaxed);
	uint32_t level = (a >> 1) & 3u, w = reclaim_aux_fresh(reclaim_now());

	if (RECLAIM_REFAULT_FEEDBACK && rc.on && !(a & AUX_RESIDENT) && dist < yardstick) {
		if (level < 3)
			level++;
		w |= (level << 10) | (((4u << (2 * level)) - 1) * AUX_PROT_ONE);
		atomic_fetch_add_explicit(&rc.activate, 1, memory_order_relaxed);
	}
	atomic_store_explicit(&s->aux, w, memory_order_relaxed);
}

/*
 * The clock's question. written: the page was written since the last scan
 * (evict_stage_pages; always false without UFFD_FEATURE_WP_ASYNC), CLOCK's
 * referenced bit: it is passed over (pgactivate) with at least
 * RECLAIM_WRITTEN_PASSES passes of protection, while the step is within its
 * budget of written pages; past it, it is judged as if unwritten. A page
 * refault feedback protects for longer uses up a pass and counts in the scan
 * budget as an unwritten one does (without that, random access over a heap
 * larger than the limit scanned 11.3 pages per page stolen against 7.8:
 * tests/test_eng_reclaim_thrash.sh allows 12), but is kept. A cold-age pass
 * counts a write as an access: the page's age starts again.
 */
bool reclaim_select(struct slot *s, uint32_t state, bool written, bool follows)
{
	uint32_t a = atomic_load_explicit(&s->aux, memory_order_relaxed);

	if (state & SLOT_COLD)
		return true;	/* MADV_COLD: first in line */
	if (!(a & AUX_RESIDENT)) {
		/* Came in without reclaim's hooks (read ahead, or first touched
		 * before its region was registered): unprotected, age unknown.
		 * A cold-age pass starts its clock now. */
		if (!rc.proactive)
			return true;
		atomic_compare_exchange_strong_explicit(&s->aux, &a, reclaim_aux_fresh(rc.now_s),
							memory_order_relaxed, memory_order_relaxed);
		return false;
	}
	if (written && rc.proactive) {
		atomic_compare_exchange_strong_explicit(&s->aux, &a, (a & ~(AUX_TIME_MASK << 12)) | (rc.now_s << 12),
							memory_order_relaxed, memory_order_relaxed);
		atomic_fetch_add_explicit(&rc.pgactivate, 1, memory_order_relaxed);
		return false;
	}
	if (written && !rc.force && ++rc.wlooked <= rc.wbudget) {
		uint32_t prot = a & AUX_PROT_MASK;
		if (prot > RECLAIM_WRITTEN_PASSES * AUX_PROT_ONE) {
			/* Protected by refault feedback as well: this look is
			 * one of its passes, and counts in the scan budget as
			 * before (written pages are kept past it all the same). */
			rc.looked++;
			prot -= AUX_PROT_ONE;
		} else {
			prot = RECLAIM_WRITTEN_PASSES * AUX_PROT_ONE;
		}
		atomic_compare_exchange_strong_explicit(&s->aux, &a, (a & ~AUX_PROT_MASK) | prot,
							memory_order_relaxed, memory_order_relaxed);
		atomic_fetch_add_explicit(&rc.pgactivate, 1, memory_order_relaxed);
		return false;
	}
	if (!rc.proactive)
		rc.looked++;
	if (a & AUX_PROT_MASK) {
		/* A protected page survives this pass (one fewer left). */
		atomic_compare_exchange_strong_explicit(&s->aux, &a, a - AUX_PROT_ONE, memory_order_relaxed,
							memory_order_relaxed);
		/* Past the step's scan budget: protection is a preference.
		 * Following a taken page, unwritten: it goes with it (one
		 * MOVE for the run, reclaim.h). */
		if (!rc.force && (rc.proactive || rc.looked <= rc.budget) &&
		    (rc.proactive || !follows))
			return false;
	}
	if (rc.proactive) {
		uint32_t t = AUX_TIME(a);
		/* A time ahead of the clock: not a resident word yet (a page
		 * read ahead keeps its stored word): young. */
		if (t > rc.now_s || rc.now_s - t < rc.cold_age)
			return false;
	}
	return true;
}

/* --- the charge --------------------------------------------------------- */

/*
 * The charge is what memcg would charge the process: its anonymous pages
 * and the pool's (RssAnon holds both), plus its page tables (VmPTE; memcg
 * charges them, ~1.6 MiB at 512 MiB managed), less the library's own
 * bookkeeping: the slot arrays (16 bytes a managed page; the kernel's
 * zswap_entry and xarray, which memcg does not charge) and zsmalloc's
 * metadata (handle tables, zspage descriptors: slab in the kernel, not
 * charged either, and not in zram's mem_used_total). The kernel side of the
 * benchmark is held to exactly that; until session 11 the bookkeeping was
 * charged here and the page tables not, ~2 MiB less room for the working
 * set at 320 MiB (docs/DESIGN.md, "The charge and the limit"). So VmHWM
 * may pass the limit by the bookkeeping less the page tables (and by the
 * file pages, as it always could).
 */
#ifndef RECLAIM_ACCOUNT_MEMCG
#define RECLAIM_ACCOUNT_MEMCG	1
#endif
#define RECLAIM_ACCOUNT_MS	100

/* Why reclaim is stuck (reclaim_say_stuck). */
enum { RECLAIM_STUCK_NOTHING, RECLAIM_STUCK_POOL, RECLAIM_STUCK_POOL_FULL };

/* Resident bytes of the slot arrays (mincore: an array's pages are touched
 * only where its region's pages were managed). An array two regions share
 * (a split region) is counted once if they are near in the table. */
static uint64_t reclaim_slot_bytes(void)
{
	static unsigned char vec[4096];
	const struct slot_array *seen[8] = { 0 };
	struct region_ref refs[32];
	uintptr_t cursor = 0;
	uint64_t bytes = 0;
	unsigned int nseen = 0;

	while (cursor < UINTPTR_MAX) {
		size_t n = region_collect(0, UINTPTR_MAX, &cursor, refs, 32);
		if (!n)
			break;
		for (size_t k = 0; k < n; k++) {
			const struct slot_array *arr = refs[k].arr;
			bool dup = false;
			for (unsigned int i = 0; i < 8 && !dup; i++)
				dup = seen[i] == arr;
			if (!dup) {
				seen[nseen++ % 8] = arr;
				for (size_t off = 0; off < arr->bytes; off += sizeof(vec) << ZS_PAGE_SHIFT) {
					size_t len = arr->bytes - off;
					if (len > sizeof(vec) << ZS_PAGE_SHIFT)
						len = sizeof(vec) << ZS_PAGE_SHIFT;
					if (syscall(SYS_mincore, (char *)arr + off, len, vec) != 0)
						break;
					for (size_t i = 0; i < (len + ZS_PAGE_SIZE - 1) >> ZS_PAGE_SHIFT; i++)
						bytes += (vec[i] & 1) ? ZS_PAGE_SIZE : 0;
				}
			}
			region_arr_put(refs[k].arr);
		}
	}
	return bytes;
}

/* VmPTE in bytes from /proc/self/status, 0 if unreadable. */
static uint64_t reclaim_pte_bytes(void)
{
	char buf[2048];
	long n = rc.status_fd < 0 ? -1 : syscall(SYS_pread64, rc.status_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = NULL;
	uint64_t kb = 0;
	for (long i = 0; i + 7 <= n && !p; i++)
		if (memcmp(buf + i, "\nVmPTE:", 7) == 0)
			p = buf + i + 7;
	if (!p)
		return 0;
	for (; *p == ' ' || *p == '\t'; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		kb = kb * 10 + (uint64_t)(*p - '0');
	return kb << 10;
}

/* Nanoseconds from a to b. */
static int64_t reclaim_ns_between(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec);
}

/* Every RECLAIM_ACCOUNT_MS, or a hundred times as long as the last look
 * took (a mincore per slot array: thousands of regions must not make it
 * more than ~1 % of the reclaimer's time). */
static void reclaim_account_refresh(void)
{
	struct timespec now, done;

	if (!RECLAIM_ACCOUNT_MEMCG)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (rc.adjust_at.tv_sec && reclaim_ns_between(&rc.adjust_at, &now) / 1000000 < rc.adjust_every_ms)
		return;
	rc.adjust_at = now;
	uint64_t book = reclaim_slot_bytes();
	for (unsigned int i = 0; i < zswap_store_nr_pools(eng.store); i++)
		book += zs_get_metadata_bytes(zswap_store_pool(eng.store, i));
	atomic_store_explicit(&rc.adjust, (int64_t)reclaim_pte_bytes() - (int64_t)book, memory_order_relaxed);
	clock_gettime(CLOCK_MONOTONIC, &done);
	long took_us = (long)(reclaim_ns_between(&now, &done) / 1000);
	rc.adjust_every_ms = took_us / 10 > RECLAIM_ACCOUNT_MS ? took_us / 10 : RECLAIM_ACCOUNT_MS;
}

/* The charge in bytes: RssAnon from /proc/self/statm ("size resident
 * shared ..." in pages; shared = file-backed + shmem) with memcg's
 * adjustment above, or the last value if unreadable. */
static uint64_t reclaim_read_charge(void)
{
	char buf[128];
	uint64_t f[3] = { 0, 0, 0 };
	int k = 0;

	/* Pages filled from here on are in both the reading and rc.filled:
	 * counted twice until the next reading rather than not at all. */
	atomic_store_explicit(&rc.filled, 0, memory_order_relaxed);
	atomic_store_explicit(&rc.refaults_seen, atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed),
			      memory_order_relaxed);
	long n = syscall(SYS_pread64, rc.statm_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return atomic_load(&rc.charge);
	for (long i = 0; i < n && k < 3; i++) {
		if (buf[i] >= '0' && buf[i] <= '9')
			f[k] = f[k] * 10 + (uint64_t)(buf[i] - '0');
		else if (buf[i] == ' ')
			k++;
	}
	uint64_t anon = f[1] > f[2] ? (f[1] - f[2]) << ZS_PAGE_SHIFT : 0;
	reclaim_account_refresh();
	int64_t adj = atomic_load_explicit(&rc.adjust, memory_order_relaxed);
	anon = adj >= 0 ? anon + (uint64_t)adj : anon > (uint64_t)-adj ? anon - (uint64_t)-adj : 0;
	atomic_store_explicit(&rc.charge, anon, memory_order_relaxed);
	return anon;
}

static void reclaim_kick(void)
{
	if (atomic_load_explicit(&rc.sleeping, memory_order_relaxed)) {
		atomic_fetch_add(&rc.kick, 1);
		syscall(SYS_futex, &rc.kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

/* Tell handlers holding faults to look again. */
static void reclaim_progress(void)
{
	if (atomic_exchange(&rc.waiters, 0)) {
		uint64_t two = 2;	/* one read each for up to two waiting handlers */
		(void)!write(rc.wait_fd, &two, sizeof(two));
	}
}

bool reclaim_limit_set(void)
{
	return rc.limit != 0;
}

void reclaim_held(bool start)
{
	if (start) {
		if (atomic_fetch_add(&rc.held_now, 1) == 0)
			atomic_store(&rc.some_start, hist_now());
	} else if (atomic_fetch_sub(&rc.held_now, 1) == 1) {
		/* A hold starting meanwhile may have moved some_start on: that
		 * stretch is lost, not counted twice. */
		uint64_t t0 = atomic_load(&rc.some_start), t1 = hist_now();
		if (t1 > t0)
			atomic_fetch_add(&rc.some_total, t1 - t0);
	}
}

bool reclaim_throttle(size_t npages)
{
	if (!rc.limit || !rc.on)
		return false;
	/* Pages in since the reading: zero fills, and loads (readahead's
	 * included) counted as whole pages though the pool gives some back. */
	uint64_t filled = atomic_load_explicit(&rc.filled, memory_order_relaxed) + npages +
			  atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed) -
			  atomic_load_explicit(&rc.refaults_seen, memory_order_relaxed);
	uint64_t est = atomic_load_explicit(&rc.charge, memory_order_relaxed) + (filled << ZS_PAGE_SHIFT);

	if (est > atomic_load_explicit(&rc.wake, memory_order_relaxed))
		reclaim_kick();
	if (est > rc.hold) {
		/* A forked child that kept its pages has no reclaimer: nobody
		 * would ever make room. Its faults are not held. Nor while the
		 * evictor populates shared pages: the fault may be its own
		 * (evict.c), and held it would wait for itself. */
		if (syscall(SYS_getpid) != rc.pid || atomic_load_explicit(&eng.evict_touching, memory_order_relaxed))
			return false;
		if (!atomic_load_explicit(&rc.stuck, memory_order_relaxed)) {
			atomic_store(&rc.waiters, 1);
			/* More than background reclaim leaves room for (a step
			 * of malloc's growth): ask for the whole band. */
			if ((npages << ZS_PAGE_SHIFT) > (rc.hold - rc.low_bg) / 2)
				atomic_store(&rc.deep, 1);
			atomic_fetch_add_explicit(&rc.allocstall, 1, memory_order_relaxed);
			reclaim_kick();
			return true;
		}
		atomic_fetch_add_explicit(&rc.events_max, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&rc.filled, npages, memory_order_relaxed);
	return false;
}

int reclaim_wait_fd(void)
{
	return rc.wait_fd;
}

void reclaim_wait_done(void)
{
	uint64_t v;

	(void)!read(rc.wait_fd, &v, sizeof(v));
}

/* --- the clock ---------------------------------------------------------- */

struct reclaim_walk {
	uintptr_t prev_end;
	bool prev_anon;
};

/*
 * A mapping reclaim may adopt: private anonymous read-write memory (the
 * heap included) that does not start right after an inaccessible or file
 * mapping. glibc's thread stacks sit just above their guard page; a
 * thread's stack and TCB are touched by library code running on that
 * thread while it holds library locks (an interposed mmap, an eviction), and
 * a fault there then could never be served. Explicit MADV_PAGEOUT still
 * reaches them; reclaim leaves them (and glibc arenas that follow another
 * arena's reserved tail, and bss that follows a data segment) alone.
 */
static int reclaim_collect_vma(const struct maps_vma *v, void *arg)
{
	struct reclaim_walk *w = arg;
	bool after_other = v->start == w->prev_end && !w->prev_anon;

	w->prev_end = v->end;
	w->prev_anon = v->anon_rw_private;
	if (v->special || !v->anon_rw_private || (after_other && !v->heap) ||
	    rc.ntargets == RECLAIM_TARGETS)
		return 0;
	rc.targets[rc.ntargets].start = v->start;
	rc.targets[rc.ntargets++].end = v->end;
	return 0;
}

/* The mappings of one rotation: what reclaim may adopt, plus every
 * registered region (merged where they overlap), in address order. */
static void reclaim_build_targets(void)
{
	struct reclaim_walk w = { 0, true };
	struct region_ref refs[32];
	uintptr_t cursor = 0;

	rc.ntargets = 0;
	/* Under the gate: fork's prepare handler takes it for writing, so
	 * maps_lock is never held across fork (the child would inherit it). */
	pthread_rwlock_rdlock(&eng.evict_gate);
	maps_for_each(reclaim_collect_vma, &w);
	pthread_rwlock_unlock(&eng.evict_gate);
	while (cursor < UINTPTR_MAX) {
		size_t n = region_collect(0, UINTPTR_MAX, &cursor, refs, 32);
		for (size_t k = 0; k < n; k++) {
			if (rc.ntargets < RECLAIM_TARGETS) {
				rc.targets[rc.ntargets].start = refs[k].start;
				rc.targets[rc.ntargets++].end = refs[k].end;
			}
			region_arr_put(refs[k].arr);
		}
		if (!n)
			break;
	}
	/* Insertion sort (at most RECLAIM_TARGETS), then merge overlaps. */
	for (size_t i = 1; i < rc.ntargets; i++) {
		uintptr_t s = rc.targets[i].start, e = rc.targets[i].end;
		size_t j = i;
		for (; j > 0 && rc.targets[j - 1].start > s; j--)
			rc.targets[j] = rc.targets[j - 1];
		rc.targets[j].start = s;
		rc.targets[j].end = e;
	}
	size_t m = 0;
	for (size_t i = 0; i < rc.ntargets; i++) {
		if (m && rc.targets[i].start < rc.targets[m - 1].end) {
			if (rc.targets[i].end > rc.targets[m - 1].end)
				rc.targets[m - 1].end = rc.targets[i].end;
		} else {
			rc.targets[m++] = rc.targets[i];
		}
	}
	rc.ntargets = m;
	rc.next = 0;
	rc.hand = m ? rc.targets[0].start : 0;
}

void reclaim_cold_hint(uintptr_t start, uintptr_t end)
{
	if ((!rc.limit && !rc.cold_age) || end <= start)
		return;
	pthread_mutex_lock(&rc.cold_lock);
	if (rc.ncold < RECLAIM_COLD_HINTS) {
		rc.cold[rc.ncold].start = start;
		rc.cold[rc.ncold++].end = end;
	}
	pthread_mutex_unlock(&rc.cold_lock);
}

/* The advised ranges first, oldest first: their cold pages are the first
 * victims (reclaim_select), the rest of each range is judged as the hand
 * would judge it. A range not finished waits for the next sweep. */
static size_t reclaim_sweep_cold(size_t want, size_t *scanned)
{
	size_t got = 0;

	while (got < want) {
		uintptr_t start, end, stop;
		pthread_mutex_lock(&rc.cold_lock);
		if (!rc.ncold) {
			pthread_mutex_unlock(&rc.cold_lock);
			break;
		}
		start = rc.cold[0].start;
		end = rc.cold[0].end;
		pthread_mutex_unlock(&rc.cold_lock);
		got += evict_reclaim(start, end, want - got, &stop, scanned);
		pthread_mutex_lock(&rc.cold_lock);
		/* Still the first (only this thread removes ranges): finished
		 * (or no step made: a range gone), or what is left of it. */
		if (stop >= end || stop <= start) {
			memmove(&rc.cold[0], &rc.cold[1], (rc.ncold - 1) * sizeof(rc.cold[0]));
			rc.ncold--;
		} else {
			rc.cold[0].start = stop;
		}
		pthread_mutex_unlock(&rc.cold_lock);
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
		if (rc.next >= rc.ntargets) {
			if ((*rotations)++ >= max_rotations)
				break;
			reclaim_build_targets();
			if (!rc.ntargets)
				break;
			continue;
		}
		uintptr_t start = rc.targets[rc.next].start, end = rc.targets[rc.next].end, stop;
		if (rc.hand < start)
			rc.hand = start;
		got += evict_reclaim(rc.hand, end, want - got, &stop, &scanned);
		rc.hand = stop;
		if (stop >= end)
			rc.next++;
	}
	atomic_fetch_add_explicit(&rc.pgscan, scanned, memory_order_relaxed);
	atomic_fetch_add_explicit(&rc.pgsteal, got, memory_order_relaxed);
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
	uint32_t k = atomic_load(&rc.kick);

	atomic_store(&rc.sleeping, 1);
	syscall(SYS_futex, &rc.kick, FUTEX_WAIT_PRIVATE, k, &ts, NULL, 0);
	atomic_store(&rc.sleeping, 0);
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

	if (RECLAIM_WORKINGSET_DIV)
		pages = (charge > pool ? (charge - pool) >> ZS_PAGE_SHIFT : 0) / RECLAIM_WORKINGSET_DIV;
	atomic_store_explicit(&rc.workingset, pages, memory_order_relaxed);
}

/* Pack the pool before evicting more: pages the pool holds in partly used
 * zspages come back without a refault (the kernel's zsmalloc shrinker is
 * not memcg-aware, so a cgroup's reclaim never compacts). Only when at
 * least RECLAIM_COMPACT_MIN pages, or 1/256 of the pool, would be freed.
 * In rounds of at most RECLAIM_COMPACT_ROUND pages under ev_lock's read
 * side, as an eviction: fork_prepare takes the write side, so no fork
 * copies the pool with a class lock held or a zspage half moved (mapcount
 * -1), which the child would wait on forever; and a handler that needs the
 * write side to read its next message waits for one round, not for the
 * whole pool. True if it freed something. */
static bool reclaim_compact(uint64_t pool)
{
	if (!RECLAIM_COMPACT)
		return false;
	unsigned long min = (unsigned long)(pool >> (ZS_PAGE_SHIFT + 8)), freed = 0, got;
	if (min < RECLAIM_COMPACT_MIN)
		min = RECLAIM_COMPACT_MIN;
	if (zswap_store_freeable_pages(eng.store) < min)
		return false;
	do {
		pthread_rwlock_rdlock(&eng.ev_lock);
		got = zswap_store_compact_some(eng.store, RECLAIM_COMPACT_ROUND);
		pthread_rwlock_unlock(&eng.ev_lock);
		freed += got;
	} while (got >= RECLAIM_COMPACT_ROUND);
	return freed > 0;
}

static void reclaim_backoff(void)
{
	atomic_fetch_add(&rc.backoff, 1);
	reclaim_sleep_ms(rc.pause_ms);
	if (rc.pause_ms < RECLAIM_PAUSE_MAX_MS)
		rc.pause_ms *= 2;
}

static void reclaim_to(uint64_t target)
{
	for (;;) {
		uint64_t c = reclaim_read_charge();
		reclaim_progress();
		if (c <= target)
			break;
		/* The pool alone (it only shrinks as pages come back) leaves
		 * less than an eighth of the limit for everything else: evicting
		 * the few pages still resident would only make every access
		 * refault. Back off and let faults through: the limit cannot
		 * hold for this working set (memory_events_max says so). */
		uint64_t pool = reclaim_pool_bytes();
		reclaim_set_workingset(c, pool);
		if (pool > rc.limit - rc.limit / 8 || !zswap_store_accepting(eng.store)) {
			rc.stuck_why = pool > rc.limit - rc.limit / 8 ? RECLAIM_STUCK_POOL : RECLAIM_STUCK_POOL_FULL;
			atomic_store(&rc.stuck, 1);
			reclaim_progress();
			reclaim_backoff();
			return;
		}
		if (reclaim_compact(pool))
			continue;
		size_t want = (size_t)(((c - target) >> ZS_PAGE_SHIFT) * 2);
		if (want < RECLAIM_STEP_MIN)
			want = RECLAIM_STEP_MIN;
		if (want > RECLAIM_STEP_MAX)
			want = RECLAIM_STEP_MAX;
		uint64_t refaults0 = atomic_load(&eng.cnt.refaults);
		unsigned int rot;
		rc.proactive = false;
		rc.looked = rc.wlooked = 0;
		rc.budget = want * RECLAIM_SCAN_RATIO;
		rc.wbudget = want * RECLAIM_WRITTEN_RATIO;
		size_t got = reclaim_sweep(want, RECLAIM_MAX_PASSES, &rot);
		if (!got) {
			/* Everything left is protected: the working set is
			 * larger than the limit allows, take it anyway. */
			rc.force = true;
			got = reclaim_sweep(want, 1, &rot);
			rc.force = false;
		}
		if (!got) {
			/* Nothing left to take (all unmanaged, protected or
			 * stored already): let held faults through. */
			rc.stuck_why = RECLAIM_STUCK_NOTHING;
			atomic_store(&rc.stuck, 1);
			reclaim_progress();
			reclaim_backoff();
			return;
		}
		atomic_store(&rc.stuck, 0);
		rc.pause_ms = 1;
		uint64_t refaults = atomic_load(&eng.cnt.refaults) - refaults0;
		if (refaults > 2 * got + 64) {
			atomic_fetch_add(&rc.backoff, 1);
			reclaim_progress();
			reclaim_sleep_ms(1);
		}
	}
}

/* A cold-age pass: one rotation storing every unprotected page that has
 * not come in for cold_age seconds. */
static void reclaim_proactive(void)
{
	unsigned int rot;

	rc.proactive = true;
	rc.now_s = reclaim_now();
	reclaim_build_targets();
	size_t got = reclaim_sweep(SIZE_MAX, 1, &rot);
	rc.proactive = false;
	atomic_fetch_add(&rc.pgsteal_proactive, got);
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
	uint64_t stalls = atomic_load_explicit(&rc.allocstall, memory_order_relaxed);

	if (!RECLAIM_BOOST)
		return 0;
	if (stalls != rc.boost_stalls) {
		rc.boost_stalls = stalls;
		rc.boost += rc.band / RECLAIM_BOOST_STEP;
		if (rc.boost > rc.band / RECLAIM_BOOST_MAX)
			rc.boost = rc.band / RECLAIM_BOOST_MAX;
	} else {
		/* 1/RECLAIM_BOOST_DECAY back, all of it once under a page. */
		rc.boost = rc.boost > ZS_PAGE_SIZE ? rc.boost - rc.boost / RECLAIM_BOOST_DECAY : 0;
	}
	atomic_store_explicit(&rc.wake, rc.high - rc.boost, memory_order_relaxed);
	return rc.boost;
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

	if (said || !rc.limit)
		return;
	if (!atomic_load(&rc.stuck) || charge <= rc.limit) {
		rc.stuck_since.tv_sec = 0;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (!rc.stuck_since.tv_sec) {
		rc.stuck_since = now;
		return;
	}
	if (reclaim_ns_between(&rc.stuck_since, &now) / 1000000 < RECLAIM_STUCK_SAY_MS)
		return;
	said = true;
	static const char *const why[] = {
		[RECLAIM_STUCK_NOTHING] = "nothing is left to compress beside the pool (what is resident is memory"
					  " libzswap does not manage: stacks, small or shared mappings)",
		[RECLAIM_STUCK_POOL] = "the compressed data alone does not fit in it",
		[RECLAIM_STUCK_POOL_FULL] = "the pool is full (ZSWAP_MAX_POOL_PERCENT or ZSWAP_MAX_POOL_SIZE)",
	};
	uint64_t mib = 1 << 20;
	zlog("ZSWAP_MEMORY_LIMIT (%llu MiB) cannot hold: %s, so the program runs over the limit"
	     " (%llu MiB now, the pool %llu MiB)", (unsigned long long)(rc.limit / mib), why[rc.stuck_why],
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

	if (!rc.limit)
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	uint64_t quick = atomic_load_explicit(&rc.activate, memory_order_relaxed);
	uint64_t refaults = atomic_load_explicit(&eng.cnt.refaults, memory_order_relaxed);
	uint64_t ns = rc.thrash_t0.tv_sec ? reclaim_ns_between(&rc.thrash_t0, &now) : 0;
	if (rc.thrash_t0.tv_sec && ns < RECLAIM_THRASH_WINDOW_S * 1000000000ull)
		return;
	uint64_t dq = quick - rc.thrash_quick0, dr = refaults - rc.thrash_refaults0;
	rc.thrash_t0 = now;	/* the next window (or the first: ns 0) starts */
	rc.thrash_quick0 = quick;
	rc.thrash_refaults0 = refaults;
	if (!ns || dq * 1000000000ull < (uint64_t)RECLAIM_THRASH_RATE * ns || dq * 4 < dr)
		return;
	atomic_fetch_add_explicit(&rc.thrash_windows, 1, memory_order_relaxed);
	if (said)
		return;
	said = true;
	uint64_t secs = ns / 1000000000ull;
	zlog("the program is thrashing under ZSWAP_MEMORY_LIMIT (%llu MiB): %llu refaults a second over the"
	     " last %llu s, %llu %% of them pages evicted only moments before: its working set does not fit,"
	     " and a somewhat larger limit would spare most of them",
	     (unsigned long long)(rc.limit >> 20), (unsigned long long)(dr / secs), (unsigned long long)secs,
	     (unsigned long long)(dr ? dq * 100 / dr : 0));
}

void *reclaim_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "zswap-reclaim", 0, 0, 0);
	engine_gate_wait();
	/* Only a running reclaimer may hold faults (if the thread could not
	 * start, nothing would ever make room). */
	rc.on = true;
	/* The engine is declared running just after this thread starts. */
	while (!engine_running()) {
		if (atomic_load(&eng.state) == ENGINE_OFF)
			return NULL;
		reclaim_sleep_ms(1);
	}
	growth_start();	/* glibc's malloc followed as it grows (src/reclaim/growth.c) */
	/* A pass every quarter of the age: a page is stored between one and
	 * one and a quarter ages after its last fault. */
	unsigned int period = rc.cold_age >= 4 ? rc.cold_age / 4 : 1;
	/* No page can be idle for the cold age before that much time went by. */
	uint32_t last_pass = reclaim_now() + rc.cold_age - period;
	for (;;) {
		uint64_t c = reclaim_read_charge();
		reclaim_progress();
		reclaim_say_stuck(c);
		reclaim_watch_thrash();
		if (rc.limit && atomic_exchange(&rc.deep, 0) && c > rc.low) {
			reclaim_to(rc.low);
			continue;
		}
		if (rc.limit && c > rc.high - reclaim_boost()) {
			reclaim_to(rc.low_bg - rc.boost);
			continue;
		}
		if (rc.limit && atomic_load(&rc.stuck) && c <= rc.limit)
			atomic_store(&rc.stuck, 0);
		if (rc.cold_age && (int32_t)(reclaim_now() - last_pass) >= (int32_t)period) {
			reclaim_set_workingset(c, reclaim_pool_bytes());
			reclaim_proactive();
			last_pass = reclaim_now();
			continue;
		}
		uint64_t p0 = prof_now();	/* an instrumented build only (hist.h) */
		reclaim_idle(rc.limit ? RECLAIM_POLL_MS : 1000);
		prof_add(PROF_RC_IDLE, p0);
	}
	return NULL;
}

/* --- start-up ----------------------------------------------------------- */

static uint64_t reclaim_physmem(void)
{
	struct sysinfo si;

	if (syscall(SYS_sysinfo, &si) != 0)
		return 0;
	return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

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
 * (VmPTE), and, only under a limit, the eventfd held faults wait on. */
static int reclaim_open_fds(void)
{
	rc.statm_fd = fdtab_open_ro("/proc/self/statm", true);
	rc.status_fd = fdtab_open_ro("/proc/self/status", true);
	if (rc.limit)
		rc.wait_fd = fdtab_keep((int)syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE));
	return rc.statm_fd < 0 || (rc.limit && rc.wait_fd < 0) ? -ENOMEM : 0;
}

int reclaim_init(void)
{
	rc.limit = eng.opt.memory_limit;
	rc.cold_age = eng.opt.cold_age;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &rc.t0);
	if (!rc.limit && !rc.cold_age)
		return 0;
	/* The hold line: m below the limit, m = limit/96 but at least
	 * min(RECLAIM_MARGIN_MIN, limit/64): below 192 MiB limit/64, as
	 * before (a 3 MiB margin under 64 MiB cost perl's hash ~15% more
	 * refaults: 609-673k -> 715-745k). */
	uint64_t m = rc.limit / RECLAIM_MARGIN_DIV, floor = rc.limit / 64;
	if (floor > RECLAIM_MARGIN_MIN)
		floor = RECLAIM_MARGIN_MIN;
	if (m < floor)
		m = floor;
	/* The band from the hold line down to the low watermark: m, but
	 * growth.c holds steps of malloc's growth below min(ZSWAP_MIN_REGION,
	 * limit/64) at the throttle, and the band must take three of them or
	 * one could wait forever. */
	uint64_t step = eng.opt.min_region < rc.limit / 64 ? eng.opt.min_region : rc.limit / 64;
	uint64_t band = m < 3 * step ? 3 * step : m;
	if (m + band > rc.limit / 4)
		m = band = rc.limit / 8;
	rc.hold = rc.limit - m;
	rc.high = rc.hold - band * RECLAIM_BG_WAKE / 16;
	rc.low_bg = rc.hold - band * RECLAIM_BG_STOP / 16;
	rc.low = rc.hold - band;
	rc.band = band;
	atomic_store(&rc.wake, rc.high);
	rc.pause_ms = 1;
	rc.targets = prim_alloc(RECLAIM_TARGETS * sizeof(*rc.targets));
	if (!rc.targets || reclaim_open_fds() < 0)
		return -ENOMEM;
	reclaim_set_workingset(reclaim_read_charge(), reclaim_pool_bytes());
	rc.pid = syscall(SYS_getpid);
	if (eng.opt.verbose)
		zlog("reclaim: memory limit %llu MiB (reclaim from %llu to %llu MiB), cold age %u s",
		     (unsigned long long)(rc.limit >> 20), (unsigned long long)(rc.high >> 20),
		     (unsigned long long)(rc.low >> 20), rc.cold_age);
	return 1;
}

int reclaim_fork_child(void)
{
	if (!rc.limit && !rc.cold_age)
		return 0;
	/* Until the child's own reclaimer runs, hold no fault. Everything
	 * else is the parent's copy: its /proc/self/statm was opened as the
	 * parent's ("self" resolves at open), its eventfd is shared with the
	 * parent, and its clock may have been mid-rotation at fork. */
	rc.on = false;
	fdtab_close(rc.statm_fd);
	fdtab_close(rc.status_fd);
	fdtab_close(rc.wait_fd);
	rc.adjust_at.tv_sec = 0;	/* the child's own, at its first reading */
	if (reclaim_open_fds() < 0)
		return -ENOMEM;
	atomic_store(&rc.stuck, 0);
	atomic_store(&rc.waiters, 0);
	atomic_store(&rc.held_now, 0);	/* the parent's handlers stayed there */
	atomic_store(&rc.deep, 0);
	atomic_store(&rc.sleeping, 0);
	rc.proactive = rc.force = false;
	rc.looked = rc.wlooked = 0;
	rc.ntargets = rc.next = 0;
	rc.hand = 0;
	/* The lock may have been held by a thread that stayed in the parent. */
	rc.cold_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	rc.ncold = 0;
	rc.pause_ms = 1;
	rc.boost = 0;
	rc.boost_stalls = atomic_load(&rc.allocstall);
	atomic_store(&rc.wake, rc.high);
	reclaim_set_workingset(reclaim_read_charge(), reclaim_pool_bytes());
	rc.pid = syscall(SYS_getpid);
	return 1;
}

void reclaim_stats(struct zswap_stats *st)
{
	st->memory_max = rc.limit;
	st->memory_current = rc.on ? atomic_load(&rc.charge) : 0;
	st->pgscan = atomic_load(&rc.pgscan);
	st->pgsteal = atomic_load(&rc.pgsteal);
	st->pgsteal_proactive = atomic_load(&rc.pgsteal_proactive);
	st->workingset_activate = atomic_load(&rc.activate);
	st->allocstall = atomic_load(&rc.allocstall);
	st->watermark_boost = rc.limit ? rc.high - atomic_load(&rc.wake) : 0;
	st->memory_events_max = atomic_load(&rc.events_max);
	st->reclaim_backoff = atomic_load(&rc.backoff);
	st->pgactivate = atomic_load(&rc.pgactivate);
	uint64_t some = atomic_load(&rc.some_total), t0 = atomic_load(&rc.some_start), t1 = hist_now();
	if (atomic_load(&rc.held_now) > 0 && t1 > t0)
		some += t1 - t0;	/* the stretch under way */
	st->memory_pressure_some_us = some / 1000;
	st->thrashing_windows = atomic_load(&rc.thrash_windows);
}
