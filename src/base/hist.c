/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hist.c - log2 latency histograms (see hist.h).
 */
#include "config.h"
#include "base/hist.h"

#if defined(ZSWAP_PROF) && ZSWAP_PROF
#include "base/log.h"
/* Tools that compile hist.c alone (bench_stats_hist) have no zlog. */
#pragma weak zlog
#endif

struct hist hist_refault;
struct hist hist_refault_tier;
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

#if defined(ZSWAP_PROF) && ZSWAP_PROF
#define PROF_SECS 24	/* per-second totals: the phases of a benchmark apart */
static _Atomic uint64_t prof_n[PROF_NR], prof_ns[PROF_NR], prof_long_ns[PROF_NR], prof_long_n[PROF_NR];
static _Atomic uint64_t prof_sec_ns[PROF_SECS][PROF_NR], prof_t0;
static const char *const prof_names[PROF_NR] = {
	"defer", "wrlock", "read", "rdlock", "hold", "help", "load", "install", "wake",
	"readahead", "serve", "ev_hold", "move", "decomp", "ev_rdlock", "ev_scan",
	"ev_compress", "ev_helpwait", "ev_empty", "rc_idle",
};

void prof_add_ns(enum prof_phase p, uint64_t ns)
{
	uint64_t now = hist_now(), t0 = atomic_load_explicit(&prof_t0, memory_order_relaxed);

	if (!t0 && atomic_compare_exchange_strong(&prof_t0, &t0, now))
		t0 = now;
	uint64_t sec = (now - t0) / 1000000000u;
	atomic_fetch_add_explicit(&prof_sec_ns[sec < PROF_SECS ? sec : PROF_SECS - 1][p], ns, memory_order_relaxed);
	atomic_fetch_add_explicit(&prof_n[p], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&prof_ns[p], ns, memory_order_relaxed);
	if (ns > 100000) {
		atomic_fetch_add_explicit(&prof_long_n[p], 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&prof_long_ns[p], ns, memory_order_relaxed);
	}
}

/* An instrumented build only: the figures at exit, one line per phase,
 * then one line per second since the first record (ms per phase). */
__attribute__((destructor)) static void prof_dump(void)
{
	if (!zlog)
		return;
	for (int p = 0; p < PROF_NR; p++) {
		uint64_t n = atomic_load(&prof_n[p]), ns = atomic_load(&prof_ns[p]);
		zlog("prof %-10s n %9llu total_ms %7llu mean_ns %7llu over_100us n %7llu ms %7llu", prof_names[p],
		     (unsigned long long)n, (unsigned long long)(ns / 1000000),
		     (unsigned long long)(n ? ns / n : 0), (unsigned long long)atomic_load(&prof_long_n[p]),
		     (unsigned long long)(atomic_load(&prof_long_ns[p]) / 1000000));
	}
	for (int sec = 0; sec < PROF_SECS; sec++) {
		unsigned long long v[PROF_NR];
		for (int p = 0; p < PROF_NR; p++)
			v[p] = (unsigned long long)(atomic_load(&prof_sec_ns[sec][p]) / 1000000);
		if (!v[PROF_SERVE] && !v[PROF_EV_HOLD])
			continue;
		zlog("prof_s %2d defer %4llu wrlock %4llu rdlock %4llu hold %4llu help %4llu load %4llu install %4llu"
		     " wake %4llu ra %4llu serve %4llu ev_hold %4llu move %4llu", sec, v[PROF_DEFER], v[PROF_WRLOCK],
		     v[PROF_RDLOCK], v[PROF_HOLD], v[PROF_HELP], v[PROF_LOAD], v[PROF_INSTALL], v[PROF_WAKE],
		     v[PROF_READAHEAD], v[PROF_SERVE], v[PROF_EV_HOLD], v[PROF_MOVE]);
		zlog("prof_e %2d ev_rdlock %4llu ev_scan %4llu ev_hold %4llu ev_compress %4llu ev_helpwait %4llu"
		     " ev_empty %4llu rc_idle %4llu", sec, v[PROF_EV_RDLOCK], v[PROF_EV_SCAN], v[PROF_EV_HOLD],
		     v[PROF_EV_COMPRESS], v[PROF_EV_HELPWAIT], v[PROF_EV_EMPTY], v[PROF_RC_IDLE]);
	}
}
#endif
