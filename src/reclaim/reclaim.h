/*
 * reclaim.h - the reclaimer thread, modelled on kswapd: it reads the charge
 * and, above the high watermark, evicts pages until the charge is below the
 * low one; with ZSWAP_COLD_AGE it also stores pages untouched that long.
 * Which pages, and when faults wait for it: src/engine/policy.h.
 */
#ifndef ZSWAP_RECLAIM_H
#define ZSWAP_RECLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/policy.h"
#include "core/store.h"
#include "core/options.h"
#include "zswap.h"

/* The store's pool limit from the options: ZSWAP_MAX_POOL_SIZE, else
 * ZSWAP_MAX_POOL_PERCENT of physical memory; the accept threshold. Start-up. */
void reclaim_store_config(const struct opt_values *v, struct zswap_store_config *cfg);

/* Set up (start-up only, after the handlers run). Returns 1 if the caller
 * must start reclaim_thread (a limit or a cold age is set), 0 if not, or
 * -errno. */
int reclaim_init(void);

/* The reclaimer thread's body (engine.c starts it on a library stack). */
void *reclaim_thread(void *arg);

/* In a followed fork child, before its handlers start: fresh descriptors
 * and clock for the child. Returns 1 if reclaim_thread must be started in
 * the child, 0 if no limit or cold age is set, -errno on failure. */
int reclaim_fork_child(void);

#endif
