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
extern struct hist hist_refault;	/* a stored page: claim to installed */
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

#endif
