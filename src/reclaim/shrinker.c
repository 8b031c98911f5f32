/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * shrinker.c - zswap's shrinker in user space (ZSWAP_SHRINKER_ENABLED): while
 * memory is short around the process, the pool's coldest pages go to the
 * second tier, so that the pool gives memory back before the kernel has to
 * take it from the program.
 *
 * The kernel calls zswap's shrinker from reclaim: whenever the system or the
 * memory cgroup reclaims, the pool is shrunk too. A process cannot see the
 * kernel's reclaim, only its traces: memory pressure stall information (PSI,
 * "some avg10": the share of the last 10 s in which some task stalled on
 * memory), the system's in /proc/pressure/memory and, under cgroup v2, the
 * process's memory cgroup's in memory.pressure; and the memory cgroup's
 * usage against its limit (v1 memory.usage_in_bytes / memory.limit_in_bytes,
 * v2 memory.current / memory.max), where reclaim starts before any task
 * stalls. Pressure is either of: some avg10 at SHRINK_PSI or above, or the
 * cgroup's usage within 1/SHRINK_HEADROOM of its limit.
 *
 * Under pressure, each look (the reclaimer's idle loop: once a second without
 * a limit, at most every SHRINK_PERIOD_NS under one)
 * writes back an eighth of the pool (at least SHRINK_MIN pages), incompressible
 * pages first, and the rest by CLOCK with zswap's second chance (a page that
 * came back soon after its last writeback is passed over once): the
 * writeback module's own order.
 *
 * The files are opened for each reading (a few a second at most) and closed
 * again: no descriptor is kept for them.
 */
#include "config.h"
#include "reclaim/shrinker.h"

#include <string.h>
#include <time.h>

#include "base/fdtab.h"
#include "base/log.h"
#include "core/store.h"
#include "engine/engine.h"
#include "engine/writeback.h"
#include "reclaim/cgroup.h"

#define SHRINK_PSI	10	/* some avg10 from 0.10 % on (hundredths of a percent) */
#define SHRINK_HEADROOM	16	/* the cgroup's usage within 1/16 of its limit */
#define SHRINK_SHARE	8	/* an eighth of the pool a tick */
#define SHRINK_MIN	64	/* pages */
#define SHRINK_MAX	4096	/* pages a tick */
#define SHRINK_PERIOD_NS 250000000ull	/* a look at most this often (the idle loop
					 * turns every 10 ms under a limit) */

static struct {
	bool on;
	char usage[256], limit[256], psi[256];	/* the cgroup's files; "" if none */
	bool said;
	uint64_t last_ns;			/* the last look (CLOCK_MONOTONIC_COARSE) */
} sh;

/* "some avg10=X.YZ ..." of a PSI file, in hundredths of a percent; 0 if
 * it cannot be read. */
static uint64_t shrinker_psi(const char *path)
{
	char buf[256];

	if (fdtab_read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, "some avg10=", 11) != 0)
		return 0;
	const char *p = buf + 11;
	uint64_t whole = 0, frac = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		whole = whole * 10 + (uint64_t)(*p - '0');
	if (*p == '.') {
		p++;
		for (int d = 0; d < 2; d++, p++)
			frac = frac * 10 + (*p >= '0' && *p <= '9' ? (uint64_t)(*p - '0') : 0);
	}
	return whole * 100 + frac;
}

/* The memory cgroup's files (cgroup.c): v1's memory group, else v2's. */
static void shrinker_find_cgroup(void)
{
	char v2[200], v1[200];

	sh.usage[0] = sh.limit[0] = sh.psi[0] = '\0';
	cgroup_dirs(v2, v1, sizeof(v2));
	if (v1[0]) {
		log_snprintf(sh.usage, sizeof(sh.usage), "%s/memory.usage_in_bytes", v1);
		log_snprintf(sh.limit, sizeof(sh.limit), "%s/memory.limit_in_bytes", v1);
	} else if (v2[0]) {
		log_snprintf(sh.usage, sizeof(sh.usage), "%s/memory.current", v2);
		log_snprintf(sh.limit, sizeof(sh.limit), "%s/memory.max", v2);
		log_snprintf(sh.psi, sizeof(sh.psi), "%s/memory.pressure", v2);
	}
}

void shrinker_init(void)
{
	sh.on = eng.opt.shrinker_enabled && writeback_on();
	if (!sh.on)
		return;
	shrinker_find_cgroup();
	if (eng.opt.verbose)
		zlog("shrinker: writes back under memory pressure (PSI some avg10 from %u.%02u %%%s%s)",
		     SHRINK_PSI / 100, SHRINK_PSI % 100, sh.limit[0] ? ", or the memory cgroup near its limit: " : "",
		     sh.limit);
}

/* Memory pressure now, and why (for the verbose line). */
static bool shrinker_pressure(const char **why)
{
	char a[64], b[64];

	if (shrinker_psi("/proc/pressure/memory") >= SHRINK_PSI) {
		*why = "the system's PSI";
		return true;
	}
	if (sh.psi[0] && shrinker_psi(sh.psi) >= SHRINK_PSI) {
		*why = "the memory cgroup's PSI";
		return true;
	}
	if (sh.limit[0] && fdtab_read_file(sh.limit, b, sizeof(b)) > 0 && fdtab_read_file(sh.usage, a, sizeof(a)) > 0) {
		uint64_t lim = cgroup_u64(b), use = cgroup_u64(a);
		/* v1 says "no limit" with a huge number, v2 with "max". */
		if (lim < (1ULL << 60) && use != UINT64_MAX && use >= lim - lim / SHRINK_HEADROOM) {
			*why = "the memory cgroup near its limit";
			return true;
		}
	}
	return false;
}

size_t shrinker_tick(void)
{
	const char *why = "";
	struct zswap_stats st;

	struct timespec ts;

	if (!sh.on || !writeback_on())
		return 0;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - sh.last_ns < SHRINK_PERIOD_NS)
		return 0;
	sh.last_ns = now;
	memset(&st, 0, sizeof(st));
	zswap_store_stats(eng.store, &st);
	uint64_t pool_pages = st.stored_pages > st.same_filled_pages ? st.stored_pages - st.same_filled_pages : 0;
	if (!pool_pages || !shrinker_pressure(&why))
		return 0;
	size_t want = (size_t)(pool_pages / SHRINK_SHARE);
	if (want < SHRINK_MIN)
		want = SHRINK_MIN;
	if (want > SHRINK_MAX)
		want = SHRINK_MAX;
	size_t got = writeback_run(want);
	if (got && !sh.said && eng.opt.verbose) {
		sh.said = true;
		zlog("shrinker: memory pressure (%s): %zu pages written back", why, got);
	}
	return got;
}
