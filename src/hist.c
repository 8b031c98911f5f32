/*
 * hist.c - log2 latency histograms (see hist.h).
 */
#include "config.h"
#include "hist.h"

struct hist hist_refault;
struct hist hist_evict;

/* Bucket of v: the power of two (highest set bit) times HIST_SUB, plus the
 * HIST_SUB_BITS bits below it. Values below HIST_SUB have their own buckets. */
static unsigned int hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned int)v;
	unsigned int log2 = 63u - (unsigned int)__builtin_clzll(v);
	unsigned int sub = (unsigned int)(v >> (log2 - HIST_SUB_BITS)) & (HIST_SUB - 1);
	return (log2 - HIST_SUB_BITS + 1) * HIST_SUB + sub;
}

/* The largest value that falls in bucket i. */
static uint64_t hist_upper(unsigned int i)
{
	if (i < HIST_SUB)
		return i;
	unsigned int log2 = i / HIST_SUB + HIST_SUB_BITS - 1, sub = i % HIST_SUB;
	if (log2 >= 63)
		return UINT64_MAX;
	uint64_t base = 1ULL << log2, step = base >> HIST_SUB_BITS;
	return base + step * (sub + 1) - 1;
}

void hist_record(struct hist *h, uint64_t ns)
{
	unsigned int i = hist_index(ns);
	uint64_t m = atomic_load_explicit(&h->max, memory_order_relaxed);

	atomic_fetch_add_explicit(&h->bucket[i < HIST_BUCKETS ? i : HIST_BUCKETS - 1], 1,
				  memory_order_relaxed);
	while (ns > m && !atomic_compare_exchange_weak_explicit(&h->max, &m, ns, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

uint64_t hist_count(const struct hist *h)
{
	uint64_t total = 0;

	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		total += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
	return total;
}

uint64_t hist_percentile(const struct hist *h, unsigned int pct)
{
	uint64_t total = hist_count(h), seen = 0, max = atomic_load_explicit(&h->max, memory_order_relaxed);

	if (!total)
		return 0;
	/* The rank of the percentile, rounded up: p50 of 3 values is the 2nd. */
	uint64_t rank = (total * pct + 99) / 100;
	if (rank == 0)
		rank = 1;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
		if (seen >= rank) {
			uint64_t up = hist_upper(i);
			return up < max ? up : max;
		}
	}
	return max;
}
