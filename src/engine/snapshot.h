/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.h - every counter at once, as zswap_stats() and the dump give
 * them, and zswapctl reset.
 */
#ifndef ZSWAP_SNAPSHOT_H
#define ZSWAP_SNAPSHOT_H

#include <stddef.h>

#include "zswap.h"

/* zswap_stats(): every counter, consistent with the mappings the program
 * has (the event lock's read side). 0, or -1 with errno. */
int snapshot_stats(struct zswap_stats *st, size_t size);

/* zswapctl reset: the counters since start read 0 from now on (gauges do
 * not change), and mem_used_max is the pool's size now. 0 or -errno. */
int snapshot_reset(void);

#endif
