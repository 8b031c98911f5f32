/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c - the statistics dump and the thread that writes it (see stats.h).
 *
 * Everything here runs on the statistics thread (or, for the dump at exit,
 * in the exiting thread) and never on the fault path: it may take the
 * engine's read locks (snapshot_stats() does, briefly), walk the regions and
 * name call sites. The dump is built in one growing library buffer under
 * stats_lock and written with write(2). The signal handler does one
 * eventfd write and nothing else.
 *
 * The socket (sock.c): PID.sock in the first private directory of
 * $XDG_RUNTIME_DIR/libzswap, /run/user/UID/libzswap, /run/libzswap (root)
 * and /tmp/libzswap-UID, or a /tmp/libzswap-UID.XXXXXX of the user's own
 * (mode 0700, not a link) when another user made /tmp/libzswap-UID first;
 * zswapctl looks in /tmp/libzswap-UID and every /tmp/libzswap-UID.* that
 * passes those checks. The directory is checked and used through one
 * descriptor, and a peer of another user is refused (SO_PEERCRED). A
 * client writes one request line, "text", "json" or "counters" (name value
 * lines, for zswapctl watch), within 2 s in all, and takes the answer
 * within 5 s in all, or is dropped: the thread that serves it also writes
 * the dumps the signal asks for. The socket is removed at exit; those of
 * processes that are gone (killed, _exit) are removed by the next process
 * that starts with the same directory, and zswapctl list skips them
 * meanwhile.
 */
#include "config.h"
#include "observe/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/layout.h"
#include "observe/attrib.h"
#include "observe/control.h"
#include "observe/coredump.h"
#include "observe/crash.h"
#include "observe/emit.h"
#include "observe/sock.h"
#include "engine/counters.h"
#include "engine/engine.h"
#include "engine/snapshot.h"
#include "reclaim/group.h"
#include "base/fdtab.h"
#include "base/hist.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/prim.h"
#include "base/sigchain.h"
#include "core/zsmalloc.h"
#include "zswap.h"

#define STATS_BUF_INIT	(256 * 1024)
#define STATS_ROWS_MAX	1000		/* ZSWAP_STATS_TOP's maximum */

enum stats_reason { STATS_SIGNAL, STATS_INTERVAL, STATS_EXIT, STATS_REQUEST };
static const char *const stats_reason_name[] = { "signal", "interval", "exit", "zswapctl" };

enum stats_fmt { STATS_TEXT, STATS_JSON, STATS_COUNTERS };

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emit_buf stats_out;
static struct attrib_row *stats_rows;		/* ZSWAP_STATS_TOP rows, prim */
static int stats_efd = -1;			/* the signal handler's wake-up */
static long stats_pid;				/* the process this state belongs to */
static uint64_t stats_t0;			/* start-up, monotonic ns */
static uint64_t stats_seq;			/* dumps written */
static char stats_comm[32];
static _Atomic bool stats_ready ZSWAP_STARTUP_DATA;
/* Dumps asked for by the signal, and how many of those a written dump
 * answered (stats_answer_signals): a request is never lost, even when the
 * program ends before the thread gets to it. */
static _Atomic uint64_t stats_asked ZSWAP_STARTUP_DATA;
static bool stats_early ZSWAP_STARTUP_DATA;	/* the signal taken before a deferred start */
static bool stats_inherited ZSWAP_STARTUP_DATA;	/* a dormant fork child's: the parent's state until it starts */
static _Atomic uint64_t stats_answered ZSWAP_STARTUP_DATA;		/* written under stats_lock */

/* ---- the counters, by section (engine/counters.def) --------------------- */

enum stats_sect { S_ZSWAP, S_VMSTAT, S_MMSTAT, S_BDSTAT, S_TIER, S_ENGINE, S_RECLAIM };

/* Without a pointer, so that the loader relocates nothing in it: a table of
 * pointers is a page every process the library is loaded into copies at
 * exec (src/base/layout.h). */
#define STATS_NAME_MAX	32

struct stats_field {
	uint8_t sect;			/* enum stats_sect */
	bool own;			/* the engine's counter (a DUMP row), at off in eng.cnt */
	uint32_t off;			/* else in struct zswap_stats (a PUBLIC row) */
	char name[STATS_NAME_MAX];
};

#define COUNTER(name, sect, src, api, reset, help) \
	_Static_assert(sizeof(#name) <= STATS_NAME_MAX, #name ": a longer name than STATS_NAME_MAX");
#include "engine/counters.def"
#undef COUNTER

/* Every row of the table, in its order (mm_stat's in zram's column order). */
static const struct stats_field stats_fields[] = {
#define COUNTER(name, sect, src, api, reset, help) \
	{ S_##sect, COUNTER_API_##api(false, true), \
	  COUNTER_API_##api(offsetof(struct zswap_stats, name), offsetof(struct engine_counters, name)), #name },
#include "engine/counters.def"
#undef COUNTER
};
#define STATS_NFIELDS (sizeof(stats_fields) / sizeof(stats_fields[0]))

static uint64_t stats_get(const struct zswap_stats *st, const struct stats_field *f)
{
	uint64_t v;

	if (f->own)
		return atomic_load((const _Atomic uint64_t *)((const char *)&eng.cnt + f->off));
	memcpy(&v, (const char *)st + f->off, sizeof(v));
	return v;
}

/* ---- the sections -------------------------------------------------------- */

static const char *const stats_sect_title[] = {
	[S_ZSWAP] = "zswap (as /sys/kernel/debug/zswap)",
	[S_VMSTAT] = "vmstat",
	[S_MMSTAT] = "mm_stat (zram's columns)",
	[S_BDSTAT] = "bd_stat (zram's columns: the second tier, in pages)",
	[S_TIER] = "tier (the second tier, libzswap's own counters)",
	[S_ENGINE] = "engine (libzswap's own counters)",
	[S_RECLAIM] = "reclaim (memcg's names)",
};
static const char *const stats_sect_key[] = {
	[S_ZSWAP] = "zswap", [S_VMSTAT] = "vmstat", [S_MMSTAT] = "mm_stat", [S_BDSTAT] = "bd_stat",
	[S_TIER] = "tier", [S_ENGINE] = "engine", [S_RECLAIM] = "reclaim",
};

/* The test-only knobs (ZSWAP_INJECT_*) clutter an operator's dump: shown
 * in the full one, or when set (a process failing on purpose says so). */
static bool stats_config_shown(int i, const char *val, bool full)
{
	static const char inject[] = "ZSWAP_INJECT_";

	return full || strncmp(opt_table[i].name, inject, sizeof(inject) - 1) != 0 ||
	       strcmp(val, opt_table[i].def) != 0;
}

static void stats_config(struct emitter *e, bool full)
{
	char val[OPT_STRING_MAX + 16];

	emit_section_begin(e, "config", "configuration");
	for (int i = 0; i < OPT__COUNT; i++) {
		opt_format((enum opt_id)i, &eng.opt, val, sizeof(val));
		if (stats_config_shown(i, val, full))
			emit_kv_str(e, opt_table[i].name, val);
	}
	control_emit(e);	/* what zswapctl set changed since start-up */
	emit_section_end(e);
}

static void stats_counters(struct emitter *e, const struct zswap_stats *st, enum stats_sect sect)
{
	emit_section_begin(e, stats_sect_key[sect], stats_sect_title[sect]);
	for (size_t i = 0; i < STATS_NFIELDS; i++)
		if (stats_fields[i].sect == sect)
			emit_kv_u64(e, stats_fields[i].name, stats_get(st, &stats_fields[i]));
	emit_section_end(e);
}

/* zram's /sys/block/zramN/mm_stat and bd_stat: one line of columns in text. */
static void stats_columns(struct emitter *e, const struct zswap_stats *st, enum stats_sect sect)
{
	emit_section_begin(e, stats_sect_key[sect], stats_sect_title[sect]);
	emit_text(e, "#");
	for (size_t i = 0; i < STATS_NFIELDS; i++)
		if (stats_fields[i].sect == sect)
			emit_text(e, " %s", stats_fields[i].name);
	emit_text(e, "\n");
	for (size_t i = 0; i < STATS_NFIELDS; i++) {
		const struct stats_field *f = &stats_fields[i];
		if (f->sect != sect)
			continue;
		emit_json_u64(e, f->name, stats_get(st, f));
		emit_text(e, "%8llu ", (unsigned long long)stats_get(st, f));
	}
	emit_text(e, "\n");
	emit_section_end(e);
}

/* zsmalloc's classes table, the kernel's columns (as `zswapctl classes`),
 * summed over the store's pools (they share one geometry). */
static const struct emit_col stats_class_cols[] = {
	{ "class", 5 }, { "size", 5 },
	{ "10%", 9 }, { "20%", 9 }, { "30%", 9 }, { "40%", 9 }, { "50%", 9 }, { "60%", 9 },
	{ "70%", 9 }, { "80%", 9 }, { "90%", 9 }, { "99%", 9 }, { "100%", 9 },
	{ "obj_allocated", 13 }, { "obj_used", 10 }, { "pages_used", 10 },
	{ "pages_per_zspage", 16 }, { "freeable", 8 }, { "objs_per_zspage", 15 },
};
enum {
	CC_CLASS, CC_SIZE, CC_RATIO, CC_ALLOC = CC_RATIO + ZS_INUSE_COLUMNS, CC_USED, CC_PAGES,
	CC_PPZ, CC_FREEABLE, CC_OPZ, CC__N
};
_Static_assert(sizeof(stats_class_cols) / sizeof(stats_class_cols[0]) == CC__N, "a name per column");
/* The columns a sum over classes makes sense of: all but the geometry. */
static bool stats_class_summed(unsigned int c)
{
	return c != CC_CLASS && c != CC_SIZE && c != CC_PPZ && c != CC_OPZ;
}

/* Class's row over every pool of every compressor in use. */
static bool stats_class_row(unsigned int class, uint64_t *v)
{
	struct zs_class_stat st;

	if (!zswap_store_class_stat(eng.store, class, &st))
		return false;
	v[CC_CLASS] = st.index;
	v[CC_SIZE] = st.size;
	v[CC_PPZ] = st.pages_per_zspage;
	v[CC_OPZ] = st.objs_per_zspage;
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		v[CC_RATIO + c] = st.inuse_ratio[c];
	v[CC_ALLOC] = st.obj_allocated;
	v[CC_USED] = st.obj_used;
	v[CC_PAGES] = st.pages_used;
	v[CC_FREEABLE] = st.freeable;
	return true;
}

/* A class no object of the store is in: all its summed columns zero. */
static bool stats_class_empty(const uint64_t *v)
{
	for (unsigned int c = 0; c < CC__N; c++)
		if (stats_class_summed(c) && v[c])
			return false;
	return true;
}

static void stats_classes(struct emitter *e, bool full)
{
	static const struct emit_table table = { 0, stats_class_cols, CC__N };
	unsigned int npools = eng.store ? zswap_store_nr_pools(eng.store) : 0;
	uint64_t v[CC__N], total[CC__N] = { 0 };
	unsigned int hidden = 0;
	char title[64];

	log_snprintf(title, sizeof(title), "zsmalloc classes (%u pool%s%s)", npools,
		     npools == 1 ? "" : "s", npools > 1 ? ", summed" : "");
	emit_section_begin(e, "classes", title);
	emit_json_u64(e, "pools", npools);
	emit_table_header(e, &table);
	emit_json_array_begin(e, "rows");
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES && npools; i++) {
		if (!stats_class_row(i, v))
			continue;
		if (!full && stats_class_empty(v)) {
			hidden++;
			continue;
		}
		for (unsigned int c = 0; c < CC__N; c++)
			if (stats_class_summed(c))
				total[c] += v[c];
		emit_table_row(e, &table, NULL, v);
	}
	emit_json_array_end(e);
	emit_json_u64(e, "empty_classes_hidden", hidden);
	if (hidden)
		emit_text(e, "(%u empty classes not shown: zswapctl stats --full, ZSWAP_STATS_FULL=1)\n", hidden);
	/* The kernel's Total row: the summed columns under their heads. */
	emit_text(e, "\n %5s %5s ", "Total", "");
	for (unsigned int c = CC_RATIO; c < CC_ALLOC; c++)
		emit_text(e, "%9llu ", (unsigned long long)total[c]);
	emit_text(e, "%13llu %10llu %10llu %16s %8llu\n", (unsigned long long)total[CC_ALLOC],
		  (unsigned long long)total[CC_USED], (unsigned long long)total[CC_PAGES], "",
		  (unsigned long long)total[CC_FREEABLE]);
	emit_json_object_begin(e, "total");
	for (unsigned int c = 0; c < CC__N; c++)
		if (stats_class_summed(c))
			emit_json_u64(e, stats_class_cols[c].name, total[c]);
	emit_json_object_end(e);
	emit_section_end(e);
}

/* The process tree's limit (src/reclaim/group.c), as a memory cgroup shows
 * it: memory.current, memory.max, memory.events and the members' pids. */
static struct group_view stats_gv;	/* under stats_lock */

/* The group's numbers, one list for the dump's section and for the
 * counters request's "group." lines. */
struct stats_group_num {
	const char *name;
	uint64_t val;
};
#define STATS_GROUP_NUMS 10

static void stats_group_nums(const struct group_view *v, struct stats_group_num n[STATS_GROUP_NUMS])
{
	const struct stats_group_num all[STATS_GROUP_NUMS] = {
		{ "memory.current", v->current },
		{ "memory.max", v->max },
		{ "memory.peak", v->peak },
		{ "memory.events.high", v->events_high },
		{ "memory.events.max", v->events_max },
		{ "memory.swap.current", v->swap_current },
		{ "memory.swap.max", v->swap_max },
		{ "memory.swap.events.max", v->swap_events_max },
		{ "memory.stat.pgmajfault", v->refaults },
		{ "members", v->nmembers },
	};

	memcpy(n, all, sizeof(all));
}

static void stats_group(struct emitter *e)
{
	const struct group_view *v = &stats_gv;
	char pids[GROUP_MEMBERS_MAX * 12];
	size_t off = 0;

	if (!group_snapshot(&stats_gv))
		return;
	for (unsigned int i = 0; i < v->nmembers; i++)
		off += log_snprintf(pids + off, sizeof(pids) - off, "%s%d", i ? " " : "", v->pids[i]);
	pids[off] = '\0';
	emit_section_begin(e, "group", "group (the process tree's memory limit)");
	emit_kv_str(e, "token", v->token);
	emit_kv_str(e, "parent", v->parent[0] ? v->parent : "none");
	struct stats_group_num n[STATS_GROUP_NUMS];
	stats_group_nums(v, n);
	for (int i = 0; i < STATS_GROUP_NUMS; i++)
		emit_kv_u64(e, n[i].name, n[i].val);
	emit_kv_str(e, "pids", pids);
	emit_section_end(e);
}

/* One row per compressor in use, the current one first (the kernel's zswap
 * keeps a pool per compressor: pages stored before a change of
 * ZSWAP_COMPRESSOR stay in the pool of theirs until loaded or written
 * back). stored_pages counts the pages a pool holds (same-filled pages are
 * in none), pool_total_size its pages in bytes; their sums are the totals
 * above. */
static void stats_comp_pools(struct emitter *e)
{
	static const struct emit_col cols[] = { { "current", 7 }, { "stored_pages", 14 }, { "pool_total_size", 16 } };
	static const struct emit_table table = { 8, cols, sizeof(cols) / sizeof(cols[0]) };
	struct zswap_store_comp_stat cs[ZSWAP_COMP_KINDS];
	uint64_t freed = 0;
	unsigned int n = eng.store ? zswap_store_comp_stats(eng.store, cs, &freed) : 0;
	char label[16];

	emit_section_begin(e, "pools", "pools (one per compressor in use, the current one first)");
	emit_table_header(e, &table);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t v[] = { cs[i].current, cs[i].stored_pages, cs[i].pool_total_size };

		if (cs[i].comp == ZSWAP_COMP_ZSTD)
			log_snprintf(label, sizeof(label), "%s:%d", comp_name(cs[i].comp), cs[i].level);
		else
			log_snprintf(label, sizeof(label), "%s", comp_name(cs[i].comp));
		emit_table_row(e, &table, label, v);
	}
	emit_kv_u64(e, "pools_freed", freed);
	emit_section_end(e);
}

static void stats_latency(struct emitter *e)
{
	static const struct { const char *name; const struct hist *h; } lat[] = {
		{ "refault", &hist_refault }, { "refault_tier", &hist_refault_tier }, { "evict", &hist_evict },
	};
	static const struct emit_col cols[] = {
		{ "count", 10 }, { "p50", 10 }, { "p90", 10 }, { "p99", 10 }, { "max", 12 },
	};
	static const struct emit_table table = { 12, cols, sizeof(cols) / sizeof(cols[0]) };

	emit_section_begin(e, "latency_ns", "latency (nanoseconds; refault: one page from the pool, "
			   "claim to installed; refault_tier: the same from the second tier; "
			   "evict: one eviction request)");
	emit_table_header(e, &table);
	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		const struct hist *h = lat[i].h;
		uint64_t v[] = { hist_count(h), hist_percentile(h, 50), hist_percentile(h, 90),
				 hist_percentile(h, 99), atomic_load(&h->max) };
		emit_table_row(e, &table, lat[i].name, v);
	}
	emit_section_end(e);
}

/* Refaults per 1000 pages evicted from the mapping. */
static unsigned long long stats_rate(const struct attrib_row *r)
{
	return r->evictions ? (unsigned long long)(r->refaults * 1000 / r->evictions) : 0;
}

static void stats_attribution(struct emitter *e)
{
	size_t total = 0, n = 0;
	char title[160];

	if (stats_rows)
		n = attrib_collect(stats_rows, eng.opt.stats_top, &total);
	log_snprintf(title, sizeof(title), "attribution (top %zu of %zu mappings by evicted bytes; "
		     "refault_rate: refaults per 1000 pages evicted)", n, total);
	emit_section_begin(e, "attribution", title);
	emit_json_u64(e, "mappings", total);
#ifdef HAVE_LIBUNWIND
	emit_json_str(e, "call_sites", "libunwind");
#else
	emit_json_str(e, "call_sites", "unavailable");
#endif
	emit_text(e, "%-31s %-12s %12s %12s %12s %9s %9s %6s  %s\n", "mapping", "kind", "resident",
		  "evicted", "compressed", "refaults", "evictions", "rate", "call site (object)");
	emit_json_array_begin(e, "top");
	for (size_t i = 0; i < n; i++) {
		const struct attrib_row *r = &stats_rows[i];
		char start[24], end[24], range[48];
		log_snprintf(start, sizeof(start), "0x%lx", (unsigned long)r->start);
		log_snprintf(end, sizeof(end), "0x%lx", (unsigned long)r->end);
		log_snprintf(range, sizeof(range), "%lx-%lx", (unsigned long)r->start, (unsigned long)r->end);
		emit_text(e, "%-31s %-12s %12llu %12llu %12llu %9llu %9llu %6llu  %s (%s)\n", range, r->kind,
			  (unsigned long long)r->resident_bytes, (unsigned long long)r->evicted_bytes,
			  (unsigned long long)r->compressed_bytes, (unsigned long long)r->refaults,
			  (unsigned long long)r->evictions, stats_rate(r), r->func, r->object);
		emit_json_object_begin(e, NULL);
		emit_json_str(e, "start", start);
		emit_json_str(e, "end", end);
		emit_json_str(e, "kind", r->kind);
		emit_json_u64(e, "resident_bytes", r->resident_bytes);
		emit_json_u64(e, "evicted_bytes", r->evicted_bytes);
		emit_json_u64(e, "compressed_bytes", r->compressed_bytes);
		emit_json_u64(e, "refaults", r->refaults);
		emit_json_u64(e, "evictions", r->evictions);
		emit_json_u64(e, "refault_rate", stats_rate(r));
		emit_json_str(e, "function", r->func);
		emit_json_str(e, "object", r->object);
		emit_json_object_end(e);
	}
	emit_json_array_end(e);
	emit_section_end(e);
}

/* ---- the summary ------------------------------------------------------------ */

/*
 * Rates "lately": each dump and each counters request leaves a sample
 * (time, refaults, zswpout) in a small ring; a rate is taken against the
 * newest sample at least STATS_RATE_MIN_NS old (the start, counting from
 * zero, when there is none), and says over how long.
 */
#define STATS_RATE_SAMPLES	16
#define STATS_RATE_MIN_NS	2000000000ull

struct stats_sample {
	uint64_t at, refaults, zswpout;
};

static struct stats_sample stats_samples[STATS_RATE_SAMPLES];	/* under stats_lock */
static unsigned int stats_nsamples;

struct stats_rates {
	uint64_t refaults, stores;	/* per second */
	uint64_t window_ms;
};

/* The rates now, against the ring, then this moment added to it. */
static void stats_rates_take(const struct zswap_stats *st, struct stats_rates *r)
{
	uint64_t now = hist_now();
	struct stats_sample base = { stats_t0, 0, 0 };
	unsigned int n = stats_nsamples < STATS_RATE_SAMPLES ? stats_nsamples : STATS_RATE_SAMPLES;

	for (unsigned int k = 1; k <= n; k++) {
		const struct stats_sample *p = &stats_samples[(stats_nsamples - k) % STATS_RATE_SAMPLES];
		if (now - p->at >= STATS_RATE_MIN_NS) {
			base = *p;
			break;
		}
	}
	uint64_t ms = now > base.at + 1000000 ? (now - base.at) / 1000000 : 1;
	/* zswapctl reset may have taken a counter below the sample. */
	uint64_t dref = st->refaults > base.refaults ? st->refaults - base.refaults : 0;
	uint64_t dout = st->zswpout > base.zswpout ? st->zswpout - base.zswpout : 0;
	r->refaults = dref * 1000 / ms;
	r->stores = dout * 1000 / ms;
	r->window_ms = ms;
	stats_samples[stats_nsamples++ % STATS_RATE_SAMPLES] = (struct stats_sample){ now, st->refaults, st->zswpout };
}

/* Memory the store saves: what it holds uncompressed less the pool that
 * holds it, plus the pages in the second tier, which take no memory. */
static uint64_t stats_saved(const struct zswap_stats *st)
{
	uint64_t pool = st->pool_total_size + st->pool_metadata_bytes;
	uint64_t in_pool = st->orig_data_size > pool ? st->orig_data_size - pool : 0;

	return in_pool + (st->bd_count << ZS_PAGE_SHIFT);
}

/* orig_data_size / pool_total_size, in hundredths (0 for an empty pool). */
static uint64_t stats_ratio100(uint64_t orig, uint64_t pool)
{
	return pool ? orig * 100 / pool : 0;	/* orig: bytes, far below 2^57 */
}

static void stats_summary(struct emitter *e, const struct zswap_stats *st)
{
	struct stats_rates r;
	char saved[24], orig[24], pool[24], tier[24], file[24], cap[24], limit[24], charge[24], peak[24];
	uint64_t ratio = stats_ratio100(st->orig_data_size, st->pool_total_size);
	uint64_t held = st->memory_pressure_some_us;

	stats_rates_take(st, &r);
	log_human(saved, sizeof(saved), stats_saved(st));
	log_human(orig, sizeof(orig), st->orig_data_size);
	log_human(pool, sizeof(pool), st->pool_total_size);
	log_human(tier, sizeof(tier), st->bd_count << ZS_PAGE_SHIFT);
	log_human(file, sizeof(file), st->backing_disk_bytes);
	log_human(cap, sizeof(cap), st->backing_max_bytes);
	log_human(limit, sizeof(limit), st->memory_max);
	log_human(charge, sizeof(charge), st->memory_current);
	log_human(peak, sizeof(peak), st->memory_peak);
	emit_section_begin(e, "summary", "summary (the full sections follow)");
	emit_text(e, "saved          %s\n", saved);
	emit_text(e, "stored         %s in a pool of %s, ratio %llu.%02llu\n", orig, pool,
		  (unsigned long long)(ratio / 100), (unsigned long long)(ratio % 100));
	if (st->backing_max_bytes || st->bd_count)
		emit_text(e, "second tier    %s in %llu pages, its file %s of %s\n", tier,
			  (unsigned long long)st->bd_count, file, cap);
	else
		emit_text(e, "second tier    none\n");
	if (st->memory_max)
		emit_text(e, "limit          %s, charge %s, peak %s\n", limit, charge, peak);
	else
		emit_text(e, "limit          none, charge %s\n", charge);
	emit_text(e, "lately         %llu refaults/s, %llu stores/s (over %llu.%llu s)\n",
		  (unsigned long long)r.refaults, (unsigned long long)r.stores,
		  (unsigned long long)(r.window_ms / 1000), (unsigned long long)(r.window_ms % 1000 / 100));
	emit_text(e, "at the limit   %llu.%03llu s held in all\n", (unsigned long long)(held / 1000000),
		  (unsigned long long)(held % 1000000 / 1000));
	emit_json_u64(e, "saved_bytes", stats_saved(st));
	emit_json_u64(e, "stored_bytes", st->orig_data_size);
	emit_json_u64(e, "pool_bytes", st->pool_total_size);
	emit_json_hundredths(e, "ratio", ratio);
	emit_json_u64(e, "tier_bytes", st->bd_count << ZS_PAGE_SHIFT);
	emit_json_u64(e, "tier_file_bytes", st->backing_disk_bytes);
	emit_json_u64(e, "tier_max_bytes", st->backing_max_bytes);
	emit_json_u64(e, "limit_bytes", st->memory_max);
	emit_json_u64(e, "charge_bytes", st->memory_current);
	emit_json_u64(e, "peak_bytes", st->memory_peak);
	emit_json_u64(e, "refaults_per_s", r.refaults);
	emit_json_u64(e, "stores_per_s", r.stores);
	emit_json_u64(e, "rate_window_ms", r.window_ms);
	emit_json_u64(e, "held_at_limit_us", held);
	emit_section_end(e);
}

/* The group section's values as "group.NAME value" lines of the counters
 * request: zswapctl list shows which processes share which limit, and
 * finds a group's members, from what each member reports. */
static void stats_group_counters(struct emit_buf *b)
{
	const struct group_view *v = &stats_gv;

	if (!group_snapshot(&stats_gv))
		return;
	emit_printf(b, "group.token %s\ngroup.parent %s\n", v->token, v->parent[0] ? v->parent : "none");
	struct stats_group_num n[STATS_GROUP_NUMS];
	stats_group_nums(v, n);
	for (int i = 0; i < STATS_GROUP_NUMS; i++)
		emit_printf(b, "group.%s %llu\n", n[i].name, (unsigned long long)n[i].val);
}

/* The "counters" request: one "name value" line per counter (zswapctl
 * watch, list and top), those of struct zswap_stats first, then the dump's
 * own, then the summary's rates, then the group's (stats_group_counters). */
static void stats_build_counters(struct emit_buf *b, const struct zswap_stats *st, uint64_t up)
{
	struct stats_rates r;

	b->len = 0;
	b->failed = false;
	for (int own = 0; own <= 1; own++)
		for (size_t i = 0; i < STATS_NFIELDS; i++)
			if (stats_fields[i].own == own)
				emit_printf(b, "%s %llu\n", stats_fields[i].name,
					    (unsigned long long)stats_get(st, &stats_fields[i]));
	stats_rates_take(st, &r);
	emit_printf(b, "refault_p50_ns %llu\nuptime_ms %llu\nrefaults_per_s %llu\nstores_per_s %llu\n",
		    (unsigned long long)hist_percentile(&hist_refault, 50),
		    (unsigned long long)(up / 1000000), (unsigned long long)r.refaults,
		    (unsigned long long)r.stores);
	stats_group_counters(b);
}

/* The whole dump into b (emptied first): the summary, then every section;
 * full adds what only a developer reads (empty size classes, test-only
 * knobs). stats_lock held. */
static void stats_build(struct emit_buf *b, enum stats_fmt fmt, enum stats_reason why, bool full)
{
	struct zswap_stats st;
	struct emitter e;
	uint64_t up = hist_now() - stats_t0;

	memset(&st, 0, sizeof(st));
	snapshot_stats(&st, sizeof(st));
	if (fmt == STATS_COUNTERS) {
		stats_build_counters(b, &st, up);
		return;
	}
	stats_seq++;
	emit_begin(&e, b, fmt == STATS_JSON ? EMIT_JSON : EMIT_TEXT);
	emit_text(&e, "libzswap %s statistics: pid %ld (%s), dump %llu (%s), uptime %llu.%03llu s\n",
		  ZSWAP_VERSION, stats_pid, stats_comm, (unsigned long long)stats_seq,
		  stats_reason_name[why], (unsigned long long)(up / 1000000000),
		  (unsigned long long)(up / 1000000 % 1000));
	emit_json_str(&e, "libzswap", ZSWAP_VERSION);
	emit_json_u64(&e, "pid", (uint64_t)stats_pid);
	emit_json_str(&e, "comm", stats_comm);
	emit_json_u64(&e, "dump", stats_seq);
	emit_json_str(&e, "reason", stats_reason_name[why]);
	emit_json_u64(&e, "uptime_ms", up / 1000000);
	stats_summary(&e, &st);
	stats_config(&e, full);
	stats_counters(&e, &st, S_ZSWAP);
	stats_counters(&e, &st, S_VMSTAT);
	stats_columns(&e, &st, S_MMSTAT);
	stats_columns(&e, &st, S_BDSTAT);
	stats_counters(&e, &st, S_TIER);
	/* zs_class_stat takes class locks: under ev_lock (read), as
	 * zswap_stats does, so no class lock is held across fork (fork's
	 * prepare handler takes ev_lock for writing). */
	pthread_rwlock_rdlock(&eng.ev_lock);
	stats_comp_pools(&e);
	stats_classes(&e, full);
	pthread_rwlock_unlock(&eng.ev_lock);
	stats_counters(&e, &st, S_ENGINE);
	stats_counters(&e, &st, S_RECLAIM);
	stats_group(&e);
	stats_latency(&e);
	stats_attribution(&e);
	emit_text(&e, "== end\n");
	emit_end(&e);
}

/* ---- where the dump goes -------------------------------------------------- */

/* ZSWAP_STATS_FILE with %p (pid), %t (seconds since the epoch), %n (dump
 * number) and %% expanded. */
static void stats_file_name(char *out, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	log_expand_path(out, len, eng.opt.stats_file, stats_pid, (long long)ts.tv_sec, stats_seq);
}

/* Build and write one dump (stats_lock held). */
static void stats_write_locked(enum stats_reason why)
{
	char path[OPT_STRING_MAX + 64];
	int fd = 2;

	if (eng.opt.inject_crash == 1)
		inject_segv();
	stats_build(&stats_out, eng.opt.stats_format ? STATS_JSON : STATS_TEXT, why, eng.opt.stats_full);
	if (strcmp(eng.opt.stats_file, "stderr") != 0) {
		stats_file_name(path, sizeof(path));
		fd = fdtab_open_append(path, false, "ZSWAP_STATS_FILE", "statistics dump not written");
		if (fd < 0)
			return;
	}
	if (log_write_all(fd, stats_out.p, stats_out.len) != 0 && fd != 2)
		zlog("writing the statistics dump to %s failed (errno %d)", path, errno);
	if (fd != 2)
		fdtab_close_short(fd);
}

static void stats_write_dump(enum stats_reason why)
{
	pthread_mutex_lock(&stats_lock);
	stats_write_locked(why);
	pthread_mutex_unlock(&stats_lock);
}

/* One dump for the signals received so far, unless one written since they
 * came has answered them: the thread on its wake-up, the exit paths for a
 * request it has not reached (stats_exit_signals). */
static void stats_answer_signals(void)
{
	pthread_mutex_lock(&stats_lock);
	uint64_t asked = atomic_load(&stats_asked);
	if (stats_answered < asked) {
		stats_write_locked(STATS_SIGNAL);
		stats_answered = asked;
	}
	pthread_mutex_unlock(&stats_lock);
}

/* ---- the socket ------------------------------------------------------------ */

int stats_open_socket(void)
{
	return sock_open(eng.opt.runtime_dir, stats_pid);
}

void stats_close_socket(void)
{
	sock_remove();
	sock_close();
}

const char *stats_socket_path(void)
{
	return sock_path();
}

/* ---- the socket across a change of the effective uid -------------------- */

static bool stats_owned(void);

/*
 * A program that changes its effective uid (src/shim/creds.c) takes its
 * socket along: the old file is removed while the program may still write
 * to its directory (a daemon that drops root cannot remove it from
 * /run/libzswap afterwards), and the statistics thread, which polls the
 * listening socket and alone may close it, opens a new one for the new
 * uid (for the old one again when the call failed). The caller waits a
 * bounded time for it, so that the socket is in place when the call
 * returns unless a client holds the thread.
 */
static bool stats_setid_moving;		/* between begin and end, the caller's */
static _Atomic uint32_t stats_rehome;	/* 1: the thread is to open the socket again */

#define STATS_REHOME_WAIT_MS 2000

void stats_setid_begin(void)
{
	stats_setid_moving = stats_owned() && sock_path()[0];
	if (stats_setid_moving)
		sock_remove();
}

void stats_setid_end(void)
{
	uint64_t one = 1;
	struct timespec ts = { 0, 1000000 };

	if (!stats_setid_moving)
		return;
	stats_setid_moving = false;
	atomic_store(&stats_rehome, 1);
	syscall(SYS_write, stats_efd, &one, sizeof(one));
	for (int ms = 0; ms < STATS_REHOME_WAIT_MS && atomic_load(&stats_rehome); ms++)
		syscall(SYS_nanosleep, &ts, NULL);
}

/* On the statistics thread: the move stats_setid_end asked for. */
static void stats_rehome_socket(void)
{
	int rc;

	if (!atomic_load(&stats_rehome))
		return;
	stats_close_socket();
	if ((rc = stats_open_socket()) < 0)
		zlog("no statistics socket after the change of user (errno %d): zswapctl stats cannot reach this process",
		     -rc);
	atomic_store(&stats_rehome, 0);
}

/* Serve one client: its request line, then the answer. */
static void stats_serve(int c)
{
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	char req[1024];

	if (syscall(SYS_getsockopt, c, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 ||
	    (cr.uid != (uid_t)syscall(SYS_geteuid) && cr.uid != 0))
		return;	/* the directory's mode should have stopped it already */
	long n = sock_read_request(c, req, sizeof(req));
	if (n <= 0)
		return;	/* a probe (zswapctl list), a client that gave up or a slow one */
	enum stats_fmt fmt;
	/* "text full", "json full": the full dump, whatever ZSWAP_STATS_FULL. */
	bool full = eng.opt.stats_full || (n >= 9 && !strncmp(req + 4, " full", 5));
	if (!strncmp(req, "json", 4))
		fmt = STATS_JSON;
	else if (!strncmp(req, "counters", 8))
		fmt = STATS_COUNTERS;
	else if (!strncmp(req, "text", 4))
		fmt = STATS_TEXT;
	else if (control_serve(c, req, (unsigned long)cr.uid))
		return;
	else {
		static const char bad[] = "error: unknown request (text, json, counters, set, reclaim,"
					  " compact or reset)\n";
		sock_send(c, bad, sizeof(bad) - 1);
		return;
	}
	pthread_mutex_lock(&stats_lock);
	stats_build(&stats_out, fmt, STATS_REQUEST, full);
	sock_send(c, stats_out.p, stats_out.len);
	pthread_mutex_unlock(&stats_lock);
}

/* ---- the signal, the thread, exit --------------------------------------- */

/*
 * The statistics signal while the program leaves it at its default action
 * (sigchain_take_while_default: a handler or SIG_IGN of the program's is
 * the kernel's own). Sent by another process (kill, sigqueue, tgkill), it
 * asks for a dump: the thread is woken. Anything else is the program's own
 * doing (raise, a timer, the kernel) or reaches a process without this
 * state's thread (a vfork child): the default action, as without us, with
 * the stored pages loaded back first when it dumps core.
 */
static bool stats_on_signal(int sig, siginfo_t *info, void *uc)
{
	uint64_t one = 1;
	long pid = syscall(SYS_getpid);
	bool sent = info->si_code == SI_USER || info->si_code == SI_QUEUE || info->si_code == SI_TKILL;
	int state = atomic_load(&eng.state);

	(void)uc;
	if (sent && info->si_pid != pid && pid == eng.pid && stats_early &&
	    !atomic_load_explicit(&stats_ready, memory_order_acquire) &&
	    (state == ENGINE_DEFERRED || state == ENGINE_DORMANT || state == ENGINE_STARTING)) {
		/* Before a deferred start (or a dormant child's): counted, and
		 * stats_init wakes the thread for it. Started meanwhile: the
		 * thread is woken here. */
		atomic_fetch_add(&stats_asked, 1);
		atomic_store(&eng.start_after, 0);
		if (atomic_load_explicit(&stats_ready, memory_order_acquire))
			syscall(SYS_write, stats_efd, &one, sizeof(one));
		return true;
	}
	if (!sent || info->si_pid == pid || pid != stats_pid ||
	    !atomic_load_explicit(&stats_ready, memory_order_acquire)) {
		if (coredump_signal(sig))
			coredump_prepare(sig);
		sigchain_die(sig, info);
		return true;
	}
	atomic_fetch_add(&stats_asked, 1);
	syscall(SYS_write, stats_efd, &one, sizeof(one));
	return true;
}

void *stats_thread(void *arg)
{
	uint64_t next = 0, period = (uint64_t)eng.opt.stats_interval * 1000000000u;

	(void)arg;
	prctl(PR_SET_NAME, "zswap-stats", 0, 0, 0);
	engine_gate_wait();
	crash_thread_start();
	if (period)
		next = hist_now() + period;
	for (;;) {
		/* zswapctl set may have changed ZSWAP_STATS_INTERVAL (served on
		 * this thread, below): the next dump is one new period away. */
		uint64_t want = (uint64_t)__atomic_load_n(&eng.opt.stats_interval, __ATOMIC_RELAXED) * 1000000000u;
		if (want != period) {
			period = want;
			next = period ? hist_now() + period : 0;
		}
		struct pollfd p[2] = {
			{ .fd = stats_efd, .events = POLLIN },
			{ .fd = sock_listen_fd(), .events = POLLIN },
		};
		int timeout = -1;
		if (period) {
			uint64_t now = hist_now();
			timeout = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		}
		int r = poll(p, p[1].fd >= 0 ? 2 : 1, timeout);
		if (r < 0 && errno != EINTR)
			break;
		if (p[0].revents & POLLIN) {
			uint64_t cnt;
			if (read(stats_efd, &cnt, sizeof(cnt)) == sizeof(cnt))
				stats_answer_signals();
			stats_rehome_socket();
		}
		if (p[1].fd >= 0 && (p[1].revents & POLLIN)) {
			int c = sock_accept();
			if (c >= 0) {
				stats_serve(c);
				fdtab_close_short(c);
			}
		}
		if (period && hist_now() >= next) {
			stats_write_dump(STATS_INTERVAL);
			next += period;
			if (next < hist_now())
				next = hist_now() + period;
		}
	}
	zlog("the statistics thread stopped (poll errno %d)", errno);
	return NULL;
}

static void stats_read_comm(void)
{
	if (fdtab_read_file("/proc/self/comm", stats_comm, sizeof(stats_comm)) < 0)
		stats_comm[0] = '\0';
	char *nl = strchr(stats_comm, '\n');
	if (nl)
		*nl = '\0';
}

int stats_init(void)
{
	int rc;

	stats_pid = syscall(SYS_getpid);
	stats_t0 = hist_now();
	control_init(stats_t0);
	stats_read_comm();
	crash_init();
	coredump_init();
	if ((rc = attrib_init()) < 0)
		return rc;
	if (eng.opt.stats_top) {
		stats_rows = prim_alloc(eng.opt.stats_top * sizeof(*stats_rows));
		if (!stats_rows)
			return -ENOMEM;
	}
	if (!emit_buf_reserve(&stats_out, STATS_BUF_INIT, STATS_BUF_INIT))
		return -ENOMEM;
	stats_efd = fdtab_keep((int)syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (stats_efd < 0)
		return -errno;
	if (eng.opt.stats_socket && (rc = stats_open_socket()) < 0 && eng.opt.verbose)
		zlog("no statistics socket (errno %d): zswapctl stats cannot reach this process", -rc);
	if (eng.opt.stats_signal && !stats_early &&
	    (rc = sigchain_take_while_default(eng.opt.stats_signal, stats_on_signal)) < 0)
		zlog("cannot take signal %d for statistics (errno %d)", eng.opt.stats_signal, -rc);
	atomic_store_explicit(&stats_ready, true, memory_order_release);
	if (atomic_load(&stats_asked) != atomic_load(&stats_answered)) {
		uint64_t one = 1;	/* asked for before the start */
		syscall(SYS_write, stats_efd, &one, sizeof(one));
	}
	return 0;
}

ZSWAP_STARTUP void stats_take_signal_early(void)
{
	int rc;

	if (!eng.opt.stats_signal)
		return;
	if ((rc = sigchain_take_while_default(eng.opt.stats_signal, stats_on_signal)) < 0)
		zlog("cannot take signal %d for statistics (errno %d)", eng.opt.stats_signal, -rc);
	else
		stats_early = true;
}

ZSWAP_STARTUP void stats_fork_child_dormant(void)
{
	if (!atomic_load(&stats_ready))
		return;
	/* The eventfd and socket are the parent's until stats_fork_child:
	 * a signal is counted as before a deferred start. */
	atomic_store(&stats_ready, false);
	atomic_store(&stats_answered, atomic_load(&stats_asked));	/* the parent's requests are its own */
	stats_inherited = true;
	stats_early = true;
}

int stats_fork_child(void)
{
	bool dormant = stats_inherited;

	if (!atomic_load(&stats_ready) && !dormant)
		return -ENOENT;
	stats_inherited = false;
	/* The parent's copy: its eventfd is shared with the parent (a signal
	 * to the child would make the parent dump) and its socket is the
	 * parent's path. New ones, under this pid. A signal that comes before
	 * this wakes the parent's thread: one extra dump there, no harm. */
	atomic_store(&stats_ready, false);
	/* The parent's statistics thread may have been answering at the
	 * fork, stats_lock held: the child has no such thread, so the lock
	 * starts free, and a buffer caught mid-growth (emit_buf_reserve) is
	 * left to the parent's copy rather than trusted. */
	if (pthread_mutex_trylock(&stats_lock) != 0) {
		stats_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
		memset(&stats_out, 0, sizeof(stats_out));
		if (!emit_buf_reserve(&stats_out, STATS_BUF_INIT, STATS_BUF_INIT))
			return -ENOMEM;
	} else {
		pthread_mutex_unlock(&stats_lock);
	}
	fdtab_close(stats_efd);
	sock_close();
	stats_pid = syscall(SYS_getpid);
	stats_t0 = hist_now();
	control_fork_child();
	control_init(stats_t0);
	stats_read_comm();
	stats_efd = fdtab_keep((int)syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (stats_efd < 0)
		return -errno;
	if (eng.opt.stats_socket)
		(void)stats_open_socket();
	atomic_store_explicit(&stats_ready, true, memory_order_release);
	if (dormant && atomic_load(&stats_asked) != atomic_load(&stats_answered)) {
		uint64_t one = 1;	/* asked for while dormant */
		syscall(SYS_write, stats_efd, &one, sizeof(one));
	}
	return 0;
}

void stats_fork_child_off(void)
{
	atomic_store(&stats_ready, false);
	if (eng.opt.stats_signal)
		sigchain_give_back(eng.opt.stats_signal);
}

ZSWAP_STARTUP static bool stats_owned(void)
{
	return atomic_load(&stats_ready) && syscall(SYS_getpid) == stats_pid && engine_running();
}

ZSWAP_STARTUP void stats_exit_signals(void)
{
	sigset_t old;

	if (atomic_load(&stats_answered) == atomic_load(&stats_asked) || !stats_owned())
		return;
	engine_sigblock(&old);
	stats_answer_signals();
	engine_sigrestore(&old);
}

ZSWAP_STARTUP bool stats_signal_pending(void)
{
	return atomic_load(&stats_answered) != atomic_load(&stats_asked);
}

/*
 * At exit (src/shim/start.c's destructor, or _exit before a deferred
 * start): a dump the signal asked for and not yet written, the dump at exit
 * (ZSWAP_STATS_AT_EXIT), and the socket removed. Not in a forked child
 * (another pid: the socket is the parent's). Nothing is stopped: faults are
 * still served (see engine.c).
 */
ZSWAP_STARTUP void stats_exit(void)
{
	if (!stats_owned())
		return;
	sock_remove();
	stats_exit_signals();
	if (eng.opt.stats_at_exit) {
		sigset_t old;
		engine_sigblock(&old);
		stats_write_dump(STATS_EXIT);
		engine_sigrestore(&old);
	}
}
