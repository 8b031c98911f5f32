/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.c - the counters' snapshot behind zswap_stats() and the dump
 * (snapshot.h), and zswapctl reset's base that it subtracts.
 */
#include "config.h"
#include "engine/snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/policy.h"
#include "engine/region.h"

/*
 * The counters since start (the RESET rows of engine/counters.def; not the
 * gauges: what is stored, the pool's size, the limit) as zswapctl reset left them: what they were then is
 * subtracted from what they are. The engine's own counters keep counting
 * (the reclaimer's thrash window and the throttle read deltas of them).
 */
static const size_t snapshot_counters[] = {
#define COUNTER(name, sect, src, api, reset, help) \
	COUNTER_RESET_##reset(COUNTER_ITEM, COUNTER_SKIP)(offsetof(struct zswap_stats, name))
#include "engine/counters.def"
#undef COUNTER
};
#define SNAPSHOT_NCOUNTERS (sizeof(snapshot_counters) / sizeof(snapshot_counters[0]))

static struct {
	pthread_mutex_t lock;
	uint64_t at[SNAPSHOT_NCOUNTERS];	/* each counter's value at the last reset */
} snapshot_base = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t *snapshot_field(struct zswap_stats *st, size_t off)
{
	return (uint64_t *)((char *)st + off);
}

static void snapshot_raw(struct zswap_stats *full);

int snapshot_reset(void)
{
	struct zswap_stats full;

	if (!eng.store)
		return -ENOSYS;
	memset(&full, 0, sizeof(full));
	snapshot_raw(&full);
	pthread_mutex_lock(&snapshot_base.lock);
	for (size_t i = 0; i < SNAPSHOT_NCOUNTERS; i++)
		snapshot_base.at[i] = *snapshot_field(&full, snapshot_counters[i]);
	pthread_mutex_unlock(&snapshot_base.lock);
	zswap_store_reset_max(eng.store);
	return 0;
}

int snapshot_stats(struct zswap_stats *st, size_t size)
{
	struct zswap_stats full;

	if (!st || size < sizeof(st->size)) {
		errno = EINVAL;
		return -1;
	}
	if (!eng.store) {
		errno = ENOSYS;
		return -1;
	}
	memset(&full, 0, sizeof(full));
	snapshot_raw(&full);
	pthread_mutex_lock(&snapshot_base.lock);
	for (size_t i = 0; i < SNAPSHOT_NCOUNTERS; i++) {
		uint64_t *f = snapshot_field(&full, snapshot_counters[i]);
		*f = *f >= snapshot_base.at[i] ? *f - snapshot_base.at[i] : 0;
	}
	pthread_mutex_unlock(&snapshot_base.lock);
	full.size = size < sizeof(full) ? size : sizeof(full);
	memcpy(st, &full, full.size);
	return 0;
}

/* Every counter as it is, no reset applied. */
static void snapshot_raw(struct zswap_stats *st)
{
	struct zswap_stats full;

	memset(&full, 0, sizeof(full));
	/* munmap returns once its UNMAP event was read, perhaps before it was
	 * processed: the read side orders this snapshot after that processing. */
	bool running = engine_running();
	sigset_t old;
	if (running) {
		engine_sigblock(&old);
		pthread_rwlock_rdlock(&eng.ev_lock);
	}
	zswap_store_stats(eng.store, &full);
	region_counts(&full.regions, &full.managed_bytes);
	/* The public plain counters (source CNT); the other sources fill in
	 * theirs above and below. */
#define COUNTER(name, sect, src, api, reset, help) \
	COUNTER_SRC_##src(COUNTER_API_##api(full.name = atomic_load(&eng.cnt.name);, ), )
#include "engine/counters.def"
#undef COUNTER
	full.fault_threads = eng.fault_threads;
	/* zram's mem_limit is the limit the user set, 0 for none; the bound
	 * ZSWAP_MAX_POOL_PERCENT gives the store otherwise is zswap's
	 * max_pool_percent, not zram's. */
	full.mem_limit = __atomic_load_n(&eng.opt.max_pool_size, __ATOMIC_RELAXED);
	policy_stats(&full);
	if (running) {
		pthread_rwlock_unlock(&eng.ev_lock);
		engine_sigrestore(&old);
	}
	*st = full;
}
