/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * counters.h - the table of counters (engine/counters.def) and what every
 * use of it needs: the selectors that keep a row or drop it by a column, and
 * the checks that tie the table to struct zswap_stats at build time.
 *
 * A use defines COUNTER(name, section, source, api, reset, meaning),
 * includes "engine/counters.def" and undefines COUNTER. The selectors pick
 * by a column's value: COUNTER_API_##api(for PUBLIC, for DUMP),
 * COUNTER_RESET_##reset(for RESET, for KEEP), COUNTER_SRC_##source(for CNT,
 * for the others). Each argument may hold commas inside parentheses only;
 * a list of some rows picks COUNTER_ITEM (the item and a comma) or
 * COUNTER_SKIP (nothing) and applies it to the item.
 *
 * Header only (macros, an enum and static assertions): the lister of the
 * man page check compiles it too (tests/unit/test_counters_list.c).
 */
#ifndef ZSWAP_ENGINE_COUNTERS_H
#define ZSWAP_ENGINE_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "zswap.h"

#define COUNTER_API_PUBLIC(pub, dump)		pub
#define COUNTER_API_DUMP(pub, dump)		dump
#define COUNTER_RESET_RESET(reset, keep)	reset
#define COUNTER_RESET_KEEP(reset, keep)		keep
#define COUNTER_SRC_CNT(cnt, other)		cnt
#define COUNTER_SRC_STORE(cnt, other)		other
#define COUNTER_SRC_TIER(cnt, other)		other
#define COUNTER_SRC_REGION(cnt, other)		other
#define COUNTER_SRC_POLICY(cnt, other)		other
#define COUNTER_SRC_ENGINE(cnt, other)		other
#define COUNTER_ITEM(x)				x,
#define COUNTER_SKIP(x)

/* One id per row: a name twice in the table does not compile. */
enum counter_id {
#define COUNTER(name, sect, src, api, reset, help) COUNTER_ID_##name,
#include "engine/counters.def"
#undef COUNTER
	COUNTER__COUNT
};

/* Every PUBLIC row names a uint64_t field of struct zswap_stats (offsetof
 * does not compile otherwise); a DUMP row is a plain engine counter and a
 * RESET row a public one. */
#define COUNTER(name, sect, src, api, reset, help)					\
	COUNTER_API_##api(_Static_assert(sizeof(((struct zswap_stats *)0)->name) == sizeof(uint64_t) && \
					 offsetof(struct zswap_stats, name) >= sizeof(uint64_t), \
					 #name ": a uint64_t of struct zswap_stats");,		\
			  _Static_assert(COUNTER_SRC_##src(1, 0), #name ": a DUMP row counts in struct engine_counters (CNT)"); \
			  _Static_assert(COUNTER_RESET_##reset(0, 1), #name ": zswapctl reset zeroes public counters only");)
#include "engine/counters.def"
#undef COUNTER

/* And every field of struct zswap_stats but size has a row: the fields are
 * all uint64_t, the rows name distinct ones, and there are as many. */
#define COUNTER(name, sect, src, api, reset, help) COUNTER_API_##api(+ 1, )
_Static_assert(sizeof(struct zswap_stats) == sizeof(uint64_t) * (1
#include "engine/counters.def"
	       ), "a field of struct zswap_stats has no row in engine/counters.def");
#undef COUNTER

#endif
