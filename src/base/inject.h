/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inject.h - the test hooks' counters (ZSWAP_INJECT_*_FAIL): how many more
 * operations of a kind are made to fail. One atomic word each; taking one
 * is lock-free, so a hook may sit on the fault path.
 */
#ifndef ZSWAP_INJECT_H
#define ZSWAP_INJECT_H

#include <stdatomic.h>

/* Take one failure from *left: its count before the take (which failure of
 * the series this is), or 0 when none is left. */
static inline unsigned int inject_take(_Atomic unsigned int *left)
{
	unsigned int n = atomic_load_explicit(left, memory_order_relaxed);

	while (n && !atomic_compare_exchange_weak_explicit(left, &n, n - 1, memory_order_relaxed,
							   memory_order_relaxed))
		;
	return n;
}

/* ZSWAP_INJECT_CRASH: crash here as a wild pointer would (SIGSEGV), for
 * the crash report's tests (tests/engine/test_eng_stats_crash.sh). */
static inline void inject_segv(void)
{
	volatile int *volatile nowhere = 0;

	*nowhere = 1;
}

#endif
