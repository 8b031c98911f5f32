/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shrinker.h - writeback under memory pressure (ZSWAP_SHRINKER_ENABLED): the
 * pool's coldest pages go to the second tier while the system or the
 * process's memory cgroup is short of memory (see shrinker.c for how that
 * is told from user space).
 */
#ifndef ZSWAP_SHRINKER_H
#define ZSWAP_SHRINKER_H

#include <stddef.h>
#include <stdint.h>

/* After writeback_init: on when ZSWAP_SHRINKER_ENABLED and the tier is. */
void shrinker_init(void);

/* One look from the reclaimer's idle loop: under pressure, write back a
 * share of the pool. Returns the pages written back. */
size_t shrinker_tick(void);

#endif
