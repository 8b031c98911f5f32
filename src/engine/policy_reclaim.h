/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy_reclaim.h - the state the aging and limit policy (policy.c) and the
 * reclaimer thread (src/reclaim/reclaim.c) share, and their tunables. Only
 * those two include it; everything else goes through policy.h.
 */
#ifndef ZSWAP_POLICY_RECLAIM_H
#define ZSWAP_POLICY_RECLAIM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "engine/region.h"

/* MADV_COLD ranges waiting for the clock (policy_cold_hint). */
#define RECLAIM_COLD_HINTS 16

#define RECLAIM_POLL_MS		10	/* charge read this often under a limit */
/* ... and, once nothing changed for RECLAIM_QUIET_MS (no fault, the charge
 * within RECLAIM_QUIET_BYTES of the last reading), twice as seldom at each
 * quiet turn up to this: every wake-up of an idle process's reclaimer costs tens
 * of microseconds where wake-ups are dear, and a tree of idle members pays
 * it once per member. A fault over the wake line kicks the reclaimer at
 * once whatever the period, as does a busy member of its group that leaves
 * it the room to make (group.c), and the group's heartbeat stays younger
 * than its staleness bound. */
#define RECLAIM_POLL_IDLE_MS	320
#define RECLAIM_QUIET_MS	1000	/* calm this long at RECLAIM_POLL_MS first */
#define RECLAIM_QUIET_BYTES	(64u << 10)
/* Pages per eviction step, then the charge is read again and held faults
 * are told (policy_progress): one staging batch (evict.c's EVICT_BATCH). A
 * larger step makes a held fault wait for all of it (docs/DESIGN.md,
 * "Speed under the limit"). */
#define RECLAIM_STEP_MAX	512
#define RECLAIM_STEP_MIN	128
/* Mappings one rotation walks: a 4 GiB V8 heap is 16384 pieces of 256 KiB
 * (prim memory, touched only as far as used). */
#define RECLAIM_TARGETS		16384
#define RECLAIM_MAPS_TTL_NS	100000000ull	/* the mappings to adopt, reread at most every 100 ms */
/* The file pages of text and read-only data (src/reclaim/filemap.c) are
 * paged out under the limit once they are 1/RECLAIM_FILE_DIV of it, at most
 * every RECLAIM_FILE_EVERY_NS: the pages the program still runs are read
 * back from the file within that time, what it ran once (start-up, a
 * runtime's snapshot and tables) stays out until the next drop. */
#define RECLAIM_FILE_DIV	64
#define RECLAIM_FILE_EVERY_NS	1000000000ull
#define RECLAIM_MAX_PASSES	2	/* rotations one step may take before it gives up */
/* A step looks at most this many resident pages per page it wants before it
 * takes protected pages too (the kernel's scan priority, bounded): without
 * it, a working set larger than memory, every page of it protected by its
 * quick refaults, makes every step sweep two whole rotations (docs/DESIGN.md,
 * "Known bad case"). */
#define RECLAIM_SCAN_RATIO	16
#define RECLAIM_PAUSE_MAX_MS	100	/* longest back-off */
/* The hold line sits a margin m below the limit; background reclaim runs
 * below it (RECLAIM_BG_WAKE, below). m is limit/96, but at least what the
 * charge rises above the hold line while faults are being held (a batch in
 * the pool before its staging area is emptied, pages filled between two
 * readings) unless the limit is small (then limit/64) (docs/DESIGN.md, "The
 * charge and the limit"). */
#define RECLAIM_MARGIN_DIV	96
#define RECLAIM_MARGIN_MIN	(3ull << 20)
/* Background reclaim wakes RECLAIM_BG_WAKE sixteenths of the band below
 * the hold line and stops RECLAIM_BG_STOP sixteenths below it; a held step
 * of growth takes the charge down to the whole band. Wider steps cost a few
 * more refaults and save page-table work where it is dear (docs/DESIGN.md
 * "The charge and the limit"). */
#define RECLAIM_BG_WAKE		4
#define RECLAIM_BG_STOP		8
/* Watermark boost (reclaim_boost): its step and its largest value as
 * fractions of the band, and what each calm look gives back
 * (1/RECLAIM_BOOST_DECAY of the boost). */
#define RECLAIM_BOOST_STEP	16
#define RECLAIM_BOOST_MAX	2
#define RECLAIM_BOOST_DECAY	8
/* Compaction before eviction (reclaim_compact): the fewest pages it must
 * be able to free, and how many it frees under one hold of ev_lock. At rest
 * (reclaim_compact_idle), what it must be able to free: a share of the
 * pool, 1/RECLAIM_COMPACT_IDLE_DIV (docs/DESIGN.md, "Compaction"). */
#define RECLAIM_COMPACT_MIN	64
#define RECLAIM_COMPACT_ROUND	256
#define RECLAIM_COMPACT_IDLE_DIV	16
/* A refault is quick (the page comes back protected) when fewer pages were
 * evicted since it left than 1/RECLAIM_WORKINGSET_DIV of the program's pages
 * resident outside the pool: the kernel compares the distance with its
 * active anon list (mm/workingset.c), which its balance keeps at about half
 * the anon LRU below 1 GiB. Compared with the whole charge, the pool
 * included, half the cold refaults of a hot/cold program pass as quick and
 * their protection fills the clock (docs/DESIGN.md "Which pages"). */
#define RECLAIM_WORKINGSET_DIV 2

/* The pool's edge (reclaim_balance) is weighed with two slices of refault
 * distances: the youngest 1/(2 RECLAIM_BAL_SLICE) of the edge, and
 * 1/RECLAIM_BAL_SLICE of it around the edge. */
#define RECLAIM_BAL_SLICE	4

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

struct policy_state {
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
	int status_fd;			/* /proc/self/status, for VmPTE and RssShmem */
	_Atomic uint64_t shmem;		/* bytes: RssShmem at the last look (reclaim_account_refresh) */
	int wait_fd;
	/* What memcg charges and RssAnon does not say apart (policy_read_charge):
	 * the page tables less the library's bookkeeping, in bytes; refreshed
	 * by the reclaimer (reclaim_account_refresh). */
	_Atomic int64_t adjust;
	struct timespec adjust_at;
	long adjust_every_ms;
	unsigned int pagecache_looks;	/* reclaim_account_refresh's, for pagecache_sync */
	struct timespec t0;

	_Atomic uint64_t charge;	/* bytes, at the last reading */
	_Atomic uint64_t peak;		/* bytes: the highest reading (memory.peak) */
	/* The group this process is a member of (src/reclaim/group.c), NULL
	 * outside one: the group's charge and this member's share of it, in
	 * the shared file. The throttle compares the group's charge; the fault
	 * path adds the pages it fills to both, and policy_read_charge puts
	 * the reading (less the pages shared copy-on-write with other members,
	 * grp_shared) in place of this member's share. */
	_Atomic uint64_t *grp_total, *grp_mine, *grp_events_max, *grp_peak;
	_Atomic uint64_t grp_shared;
	_Atomic uint64_t file;		/* bytes of it file-backed or shmem (statm's shared) */
	uint64_t file_drop_ns;		/* hist_now() at the last filemap_drop, 0: none yet */
	_Atomic uint64_t workingset;	/* pages: refault distances below this are quick */
	_Atomic uint64_t filled;	/* pages handlers zero-filled since */
	_Atomic uint64_t refaults_seen;	/* eng.cnt.refaults at that reading */
	_Atomic int stuck;
	int stuck_why;			/* RECLAIM_STUCK_*: the reclaimer's, for reclaim_say_stuck */
	struct timespec stuck_since;	/* over the limit and stuck since (0: not) */
	_Atomic int waiters;		/* a handler holds a fault */
	/* Memory pressure (policy_held): handlers holding a fault now, since
	 * when at least one has, and the total of such time (ns). */
	_Atomic int held_now;
	_Atomic uint64_t some_start, some_total;
	_Atomic int deep;		/* one held needs more room than background reclaim leaves */
	_Atomic uint32_t kick;		/* futex word: bumped to wake the thread */
	/* The word the thread sleeps on: kick, or in a group its slot's, which
	 * other members bump to wake it (group.c); so the futex calls on it
	 * are shared, not FUTEX_*_PRIVATE. NULL: kick. */
	_Atomic uint32_t *kick_word;
	_Atomic int sleeping;

	_Atomic uint64_t pgscan, pgsteal, pgsteal_proactive, activate, allocstall, events_max, backoff;
	_Atomic uint64_t pgactivate;	/* written pages given a second chance */
	/* The balance between mappings (policy_region_share): the process's
	 * recent stores and quick refaults, halved as they add up. */
	_Atomic uint32_t bal_ev, bal_quick;
	/* The pool's edge (reclaim_balance): the age, in evictions, past
	 * which its entries go to the tier; the refaults that move it
	 * (policy_refault): from the pool within the youngest slice of ages,
	 * and from either within the slice around the edge; their values at
	 * the last decision, and the eviction clock at the last pass over the
	 * pool for old entries. */
	_Atomic uint64_t pool_edge;
	_Atomic uint64_t refault_young, refault_edge;
	uint64_t bal_young0, bal_edge0, bal_all0, bal_pass_clock;
	_Atomic uint64_t thrash_windows;	/* reclaim_watch_thrash */
	struct timespec thrash_t0;	/* the window under way: its start, and the counters then */
	uint64_t thrash_quick0, thrash_refaults0;

	/* The clock: the reclaimer thread's alone. */
	bool proactive;			/* the current sweep is a cold-age one */
	bool force;			/* the current sweep takes protected pages too */
	unsigned int pause_ms;		/* back-off, doubled while nothing can be taken */
	uint32_t now_s;			/* its clock, for policy_select */
	size_t looked, budget;		/* this step: resident pages looked at, and how many before forcing */
	uintptr_t hand;
	size_t ntargets, next;
	struct { uintptr_t start, end; } *targets;
	/* What /proc/self/maps offered for adoption at its last reading, and
	 * when (hist_now): reread at most every RECLAIM_MAPS_TTL_NS. */
	size_t nadopt;
	struct { uintptr_t start, end; } *adopt;
	uint64_t adopt_ns;

	/* MADV_COLD's ranges, for the clock to visit first (policy_cold_hint):
	 * written by program threads in the interposed madvise, taken by the
	 * reclaimer at the start of a sweep. The lock guards only the copy. */
	pthread_mutex_t cold_lock;
	size_t ncold;
	struct { uintptr_t start, end; } cold[RECLAIM_COLD_HINTS];
};

extern struct policy_state pol;

static inline _Atomic uint32_t *policy_kick_word(void)
{
	_Atomic uint32_t *w = pol.kick_word;

	return w ? w : &pol.kick;
}

/* Nanoseconds from a to b. */
static inline int64_t policy_ns_between(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000000000 + (b->tv_nsec - a->tv_nsec);
}

/* The charge read again (/proc/self/statm, memcg's adjustment): bytes. */
uint64_t policy_read_charge(void);

/* Pages filled, loaded and held so far: whether the program moved since a
 * last look (a quiet reclaimer, a busy member of a group). */
uint64_t policy_faults(void);
/* The pool's zspage pages, in bytes. */
uint64_t policy_pool_page_bytes(void);
/* Raise *peak to v if v is higher (memory.peak: the charge's, a group's). */
void policy_peak(_Atomic uint64_t *peak, uint64_t v);

/* Tell handlers holding faults to look again. */
void policy_progress(void);

#endif
