/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hist.h - lock-free latency histograms for the statistics dump.
 *
 * A histogram counts durations in nanoseconds in log2 buckets, each split
 * into HIST_SUB linear sub-buckets (so a percentile is known to within
 * 1/HIST_SUB of its power of two, 25% here), plus the exact maximum.
 * Recording is one relaxed atomic add and, rarely, a CAS for the maximum:
 * no lock, no allocation, safe on the fault path and from any thread.
 * Reading (hist_percentile) is approximate while recorders run, as every
 * counter in the dump is.
 */
#ifndef ZSWAP_HIST_H
#define ZSWAP_HIST_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define HIST_SUB_BITS	2
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_BUCKETS	(64u * HIST_SUB)

struct hist {
	_Atomic uint64_t max;
	_Atomic uint64_t bucket[HIST_BUCKETS];
};

/* The refault and eviction latencies (fault.c and evict.c record them). */
extern struct hist hist_refault;	/* a page from the pool: claim to installed */
extern struct hist hist_refault_tier;	/* a page from the second tier: the same */
extern struct hist hist_evict;		/* one eviction request, whole */

/* Monotonic nanoseconds (the vDSO: no system call, no lock). */
static inline uint64_t hist_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hist_record(struct hist *h, uint64_t ns);

/* Durations recorded (the sum of the buckets). */
uint64_t hist_count(const struct hist *h);

/* The value below which pct percent (0..100) of the recorded durations lie,
 * as the upper bound of its bucket (never above the maximum); 0 when empty. */
uint64_t hist_percentile(const struct hist *h, unsigned int pct);

/*
 * Phase timing of the fault path and the evictor's lock holds, for
 * measuring only: compiled in by `configure --enable-prof` (in a build
 * directory of its own; tests/checks/test_build_prof.sh keeps it compiling), absent
 * otherwise (prof_now() is a constant 0 and prof_add() nothing, so the
 * default build carries no cost). Per phase: count, total nanoseconds and
 * the time spent in calls of more than 100 us, and each phase per second;
 * written to stderr at exit (docs/DESIGN.md "Speed under the limit").
 */
enum prof_phase {
	PROF_DEFER,		/* fault_defer(): leaving a message to another handler */
	PROF_WRLOCK,		/* waiting for ev_lock's write side to read messages */
	PROF_READ,		/* read(2) of the messages */
	PROF_RDLOCK,		/* waiting for ev_lock's read side to serve */
	PROF_HOLD,		/* fault_throttle_wait(): held over the memory limit */
	PROF_HELP,		/* evict_help() while held */
	PROF_LOAD,		/* claim to loaded (decompressed) */
	PROF_INSTALL,		/* UFFDIO_COPY/ZEROPAGE of the refault, EAGAIN waits included */
	PROF_WAKE,		/* UFFDIO_WAKE after a refault */
	PROF_READAHEAD,		/* fault_readahead() */
	PROF_SERVE,		/* fault_serve(), whole */
	PROF_EV_HOLD,		/* the evictor's hold of ev_lock (read) for one range */
	PROF_MOVE,		/* one UFFDIO_MOVE call of the evictor */
	PROF_DECOMP,		/* zswap_load_page() of a refault alone (within PROF_LOAD) */
	PROF_EV_RDLOCK,		/* the evictor waiting for ev_lock's read side */
	PROF_EV_SCAN,		/* the evictor's PAGEMAP_SCAN before the lock */
	PROF_EV_COMPRESS,	/* the evictor compressing its own share of a batch */
	PROF_EV_HELPWAIT,	/* the evictor waiting for helpers' pages */
	PROF_EV_EMPTY,		/* MADV_DONTNEED of a stage (its REMOVE read by a handler) */
	PROF_RC_IDLE,		/* the reclaimer asleep between steps */
	PROF_NR
};

#if defined(ZSWAP_PROF) && ZSWAP_PROF
void prof_add_ns(enum prof_phase p, uint64_t ns);
static inline uint64_t prof_now(void)
{
	return hist_now();
}
static inline void prof_add(enum prof_phase p, uint64_t t0)
{
	prof_add_ns(p, hist_now() - t0);
}
#else
static inline uint64_t prof_now(void)
{
	return 0;
}
static inline void prof_add(enum prof_phase p, uint64_t t0)
{
	(void)p;
	(void)t0;
}
#endif

#endif
