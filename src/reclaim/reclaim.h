/* SPDX-License-Identifier: GPL-2.0-or-later */
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
#include "core/ctlreq.h"
#include "zswap.h"

/* The store's pool limit from the options: ZSWAP_MAX_POOL_SIZE, else
 * ZSWAP_MAX_POOL_PERCENT of physical memory; the accept threshold. Start-up. */
void reclaim_store_config(const struct opt_values *v, struct zswap_store_config *cfg);

/* ZSWAP_MEMORY_LIMIT given as N% or auto: v->memory_limit from the memory
 * cgroup the process is in (src/reclaim/cgroup.c), before anything reads
 * it. Start-up; the reclaimer then follows the cgroup's limit. */
void reclaim_resolve_limit(struct opt_values *v);

/* Set up (start-up only, after the handlers run). Returns 1: the caller
 * starts reclaim_thread (it always runs: a limit may be set later), or
 * -errno. */
int reclaim_init(void);

/* The reclaimer thread's body (engine.c starts it on a library stack). */
void *reclaim_thread(void *arg);

/* In a followed fork child, before its handlers start: fresh descriptors
 * and clock for the child. Returns 1 (reclaim_thread is started in the
 * child), -errno on failure. */
int reclaim_fork_child(void);

/*
 * What zswapctl asks of a running process (src/observe/control.c), carried
 * out by the reclaimer between two of its steps, so that nothing it reads
 * (the limit, its watermarks, the cold age) changes under a step.
 */
enum reclaim_order_kind {
	RECLAIM_ORDER_SET,	/* options changed: nv, the ids in mask */
	RECLAIM_ORDER_RECLAIM,	/* store cold memory until the charge is down by bytes (memory.reclaim) */
	RECLAIM_ORDER_COMPACT,	/* compact the pool completely (zram's compact) */
	RECLAIM_ORDER_WRITEBACK,	/* write pool entries back to the tier now (zram's writeback) */
	RECLAIM_ORDER_RECOMPRESS,	/* compress pool entries again (zram's recompress) */
};

struct reclaim_order {
	enum reclaim_order_kind kind;
	struct opt_values nv;	/* SET: every option, the changed ones new */
	uint64_t mask;		/* SET: bit i set: option i changes */
	uint64_t bytes;		/* RECLAIM: how much */
	struct ctlreq_wb wb;	/* WRITEBACK: which */
	struct ctlreq_rc rc;	/* RECOMPRESS: which */
	/* The answer. */
	uint64_t pages;		/* RECLAIM: pages stored; COMPACT: pool pages freed; WRITEBACK: written */
	bool budget_spent;	/* WRITEBACK: the budget (ZSWAP_WRITEBACK_LIMIT) is spent */
	uint64_t pool_before, pool_after;	/* bytes: pool pages and metadata */
	uint64_t charge_before, charge_after;	/* bytes: the charge read */
	int err;		/* SET: -errno of an option that could not change */
	char why[160];		/* and why, in words */
};

/* Hand the order to the reclaimer and wait for it, at most timeout_ms; the
 * answer is copied back. 0; -ETIMEDOUT (it is still carried out); -ESRCH
 * (no reclaimer runs in this process). One order at a time. */
int reclaim_order(struct reclaim_order *o, int timeout_ms);

#endif
