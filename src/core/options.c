/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c - the one option table and the ZSWAP_* environment parser.
 *
 * opt_table below is the only place an option is described: its name, type,
 * default (as text, parsed by the same code as the user's value, so a default
 * can never be out of its own range), range, unit and one-line help. Parsing,
 * validation, the messages, the listing (opt_list: zswapctl options,
 * tests/checks/test_options_man.sh) and opt_format all read it.
 *
 * opt_load() runs in libzswap's constructor inside someone else's process,
 * possibly before stdio is usable and while the program's malloc must not be
 * touched: so it reads environ directly (getenv is not async-signal-safe and
 * may not see an envp passed in), allocates nothing, and reports through
 * zlog(), which formats on the stack and write(2)s one line.
 *
 * Every problem is one line naming the variable, the value as given (quoted,
 * escaped, truncated), what was expected and the value used instead.
 */
#include "config.h"
#include "core/options.h"

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "base/layout.h"
#include "base/log.h"
#include "base/prim.h"
#include "core/parse.h"

#define OPT_PREFIX	"ZSWAP_"
#define OPT_PREFIX_LEN	(sizeof(OPT_PREFIX) - 1)

#define OPT_ZSTD_DEFAULT_LEVEL	3	/* "zstd" alone: zstd's own default level */
#define OPT_SHOW_MAX		40	/* bytes of a user's value or name quoted in a message */
#define OPT_WHY_MAX		160	/* the "expected ..." part of a message */
#define OPT_SUGGEST_MAX		32	/* longest name suffix compared for did-you-mean */

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

const struct opt_def opt_table[OPT__COUNT] = {
	[OPT_ENABLED] = {
		OPT_ENABLED, "ZSWAP_ENABLED", OPT_BOOL, "1", 0, 1, "", "",
		"0 leaves the program alone: no userfaultfd, no eviction", 0 },
	[OPT_COMPRESSOR] = {
		OPT_COMPRESSOR, "ZSWAP_COMPRESSOR", OPT_COMP, "lz4", 1, 19, "", "",
		"compressor of stored pages; zstd takes a level, 3 when omitted; lzo is the kernel's default;"
		" changeable at run time: pages stored before stay in their compressor's pool until loaded",
		OPT_F_RUNTIME },
	[OPT_ZSPAGE_ORDER] = {
		OPT_ZSPAGE_ORDER, "ZSWAP_ZSPAGE_ORDER", OPT_UINT, "3",
		ZS_MIN_PAGE_ORDER, ZS_MAX_PAGE_ORDER, "", "",
		"a zspage spans up to 2^order pages", 0 },
	[OPT_POOL_LOCK] = {
		OPT_POOL_LOCK, "ZSWAP_POOL_LOCK", OPT_CHOICE, "class", 0, 0, "class|pool", "",
		"zsmalloc locking: a lock per size class, or one per pool", 0 },
	[OPT_NR_POOLS] = {
		OPT_NR_POOLS, "ZSWAP_NR_POOLS", OPT_UINT, "1", 1, 64, "", "pools",
		"zsmalloc pools, a page's pool that of the storing thread's workspace", 0 },
	[OPT_MAX_POOL_SIZE] = {
		OPT_MAX_POOL_SIZE, "ZSWAP_MAX_POOL_SIZE", OPT_SIZE, "0", 0, UINT64_MAX, "", "bytes",
		"most memory the pool may take, or N% of physical memory; 0 = no limit",
		OPT_F_PERCENT | OPT_F_RUNTIME },
	[OPT_FAULT_THREADS] = {
		OPT_FAULT_THREADS, "ZSWAP_FAULT_THREADS", OPT_UINT, "0", 0, 16, "", "threads",
		"threads serving userfaultfd faults; 0 = one pinned to each allowed CPU"
		" (the first alone while several program threads fault)", 0 },
	[OPT_MIN_REGION] = {
		OPT_MIN_REGION, "ZSWAP_MIN_REGION", OPT_SIZE, "256K", 4 * KiB, TiB, "", "bytes",
		"smallest private anonymous mapping managed, rounded up to a page",
		OPT_F_PAGE_UP },
	[OPT_PROGRAM_DATA] = {
		OPT_PROGRAM_DATA, "ZSWAP_PROGRAM_DATA", OPT_BOOL, "1", 0, 1, "", "",
		"1 copies the main program's written data segment into anonymous memory at start"
		" (a single-threaded process, the segment at least ZSWAP_MIN_REGION), so that reclaim"
		" can evict it; 0 leaves it a file mapping", 0 },
	[OPT_FAULT_AROUND] = {
		OPT_FAULT_AROUND, "ZSWAP_FAULT_AROUND", OPT_UINT, "16", 1, 512, "", "pages",
		"never-populated pages filled in one call on a first touch", 0 },
	[OPT_READAHEAD] = {
		OPT_READAHEAD, "ZSWAP_READAHEAD", OPT_UINT, "16", 0, 64, "", "pages",
		"most stored pages read ahead on a sequential refault (an adaptive window); 0 = none",
		OPT_F_RUNTIME },
	[OPT_MEMORY_LIMIT] = {
		OPT_MEMORY_LIMIT, "ZSWAP_MEMORY_LIMIT", OPT_SIZE, "0", 0, UINT64_MAX, "", "bytes",
		"resident anonymous memory plus the pool kept at or below this; "
		OPT_LIMIT_PERCENT_TEXT "; 0 = no limit",
		OPT_F_PERCENT | OPT_F_PAGE_UP | OPT_F_CGROUP | OPT_F_RUNTIME },
	[OPT_MEMORY_CHARGE] = {
		OPT_MEMORY_CHARGE, "ZSWAP_MEMORY_CHARGE", OPT_CHOICE, "v2", 0, 0, "v2|v1", "",
		"what ZSWAP_MEMORY_LIMIT counts: v2 = resident memory and the pool (cgroup v2 charges"
		" zswap's pool); v1 = resident memory alone (cgroup v1), the pool bound by ZSWAP_MAX_POOL_*",
		OPT_F_RUNTIME },
	[OPT_MEMORY_SCOPE] = {
		OPT_MEMORY_SCOPE, "ZSWAP_MEMORY_SCOPE", OPT_CHOICE, "tree", 0, 0, "tree|process", "",
		"whom ZSWAP_MEMORY_LIMIT covers: tree = the process and every process it starts, together"
		" (a memory cgroup's memory.max); process = each process alone", 0 },
	[OPT_COLD_AGE] = {
		OPT_COLD_AGE, "ZSWAP_COLD_AGE", OPT_UINT, "120", 0, 86400, "", "seconds",
		"pages idle this long are compressed even below the limit; 0 = never", OPT_F_RUNTIME },
	[OPT_START_DELAY] = {
		OPT_START_DELAY, "ZSWAP_START_DELAY", OPT_UINT, "1000", 0, 60000, "", "milliseconds",
		"a process without a memory limit starts the library at its first memory call this"
		" long after it began: a short-lived one never does; 0 = at once", 0 },
	[OPT_START_SIZE] = {
		OPT_START_SIZE, "ZSWAP_START_SIZE", OPT_SIZE, "8M", 0, TiB, "", "bytes",
		"and only once it holds this much resident anonymous memory: a small one (a shell,"
		" make) never does; 0 = whatever it holds", 0 },
	[OPT_MAX_POOL_PERCENT] = {
		OPT_MAX_POOL_PERCENT, "ZSWAP_MAX_POOL_PERCENT", OPT_UINT, "20", 1, 100, "", "percent",
		"most physical memory the pool may take (ZSWAP_MAX_POOL_SIZE, when set, wins)",
		OPT_F_RUNTIME },
	[OPT_ACCEPT_THRESHOLD_PERCENT] = {
		OPT_ACCEPT_THRESHOLD_PERCENT, "ZSWAP_ACCEPT_THRESHOLD_PERCENT", OPT_UINT, "90", 0, 100, "",
		"percent", "once full, the pool accepts stores again below this share of its limit",
		OPT_F_RUNTIME },
	[OPT_WRITEBACK] = {
		OPT_WRITEBACK, "ZSWAP_WRITEBACK", OPT_BOOL, "auto", 0, 1, "", "",
		"the second tier: pages the pool cannot keep are written to a file on disk;"
		" auto = on under ZSWAP_MEMORY_LIMIT or with ZSWAP_SHRINKER_ENABLED; 0 also leaves"
		" pages that do not compress resident (memory.zswap.writeback)",
		OPT_F_AUTO | OPT_F_RUNTIME },
	[OPT_SHRINKER_ENABLED] = {
		OPT_SHRINKER_ENABLED, "ZSWAP_SHRINKER_ENABLED", OPT_BOOL, "0", 0, 1, "", "",
		"1 writes the pool's coldest pages back to the tier while the system or the memory"
		" cgroup is under memory pressure (zswap's shrinker_enabled)", 0 },
	[OPT_BACKING_DIR] = {
		OPT_BACKING_DIR, "ZSWAP_BACKING_DIR", OPT_STRING, "auto", 0, 0, "", "",
		"directory of the tier's file (never tmpfs); auto = $TMPDIR when on a disk, else /var/tmp",
		OPT_F_DIR },
	[OPT_BACKING_MAX] = {
		OPT_BACKING_MAX, "ZSWAP_BACKING_MAX", OPT_SIZE, "0", 0, UINT64_MAX, "", "bytes",
		"most the tier's file may hold; 0 = half the filesystem's free space at start",
		OPT_F_PAGE_UP },
	[OPT_BACKING_ENCRYPT] = {
		OPT_BACKING_ENCRYPT, "ZSWAP_BACKING_ENCRYPT", OPT_BOOL, "1", 0, 1, "", "",
		"1 seals pages written to the tier (AES-256-GCM, or XChaCha20-Poly1305 without AES-NI;"
		" a key only in memory);"
		" 0 writes them in the clear with a checksum", 0 },
	[OPT_SWAP_CACHE] = {
		OPT_SWAP_CACHE, "ZSWAP_SWAP_CACHE", OPT_BOOL, "1", 0, 1, "", "",
		"1 keeps a page read back from the tier in its slot there while the page stays"
		" unchanged and the tier is under half its cap, so that evicting it again writes"
		" nothing (the kernel's swap cache); 0 frees the slot at every read", 0 },
	[OPT_WRITEBACK_LIMIT] = {
		OPT_WRITEBACK_LIMIT, "ZSWAP_WRITEBACK_LIMIT", OPT_UINT, "0", 0, 1ull << 40, "", "pages",
		"the writeback budget (zram's writeback_limit): pages the tier may still take while"
		" ZSWAP_WRITEBACK_LIMIT_ENABLE is 1; each page written spends one; setting it refills it",
		OPT_F_RUNTIME },
	[OPT_WRITEBACK_LIMIT_ENABLE] = {
		OPT_WRITEBACK_LIMIT_ENABLE, "ZSWAP_WRITEBACK_LIMIT_ENABLE", OPT_BOOL, "0", 0, 1, "", "",
		"1 stops every writeback, on demand or by the reclaimer, once ZSWAP_WRITEBACK_LIMIT"
		" is spent (zram's writeback_limit_enable)", OPT_F_RUNTIME },
	[OPT_RECOMP_ALGORITHM] = {
		OPT_RECOMP_ALGORITHM, "ZSWAP_RECOMP_ALGORITHM", OPT_COMP, "zstd:3", 1, 19, "", "",
		"the second compressor (zram's recomp_algorithm): zswapctl recompress and"
		" ZSWAP_RECOMP_IDLE_AGE compress pages again with it", 0 },
	[OPT_RECOMP_IDLE_AGE] = {
		OPT_RECOMP_IDLE_AGE, "ZSWAP_RECOMP_IDLE_AGE", OPT_UINT, "0", 0, 86400, "", "seconds",
		"pages stored this long are recompressed by the reclaimer with ZSWAP_RECOMP_ALGORITHM;"
		" 0 = never", OPT_F_RUNTIME },
	[OPT_VERBOSE] = {
		OPT_VERBOSE, "ZSWAP_VERBOSE", OPT_UINT, "0", 0, 2, "", "",
		"0: problems only; 1: also the options not at their defaults, start-up and limits;"
		" 2: also binding details and every region", OPT_F_RUNTIME },
	[OPT_INJECT_DECOMPRESS_FAIL] = {
		OPT_INJECT_DECOMPRESS_FAIL, "ZSWAP_INJECT_DECOMPRESS_FAIL", OPT_UINT, "0", 0, 1000000,
		"", "loads",
		"testing: the next N loads of stored pages fail as if their data were corrupt", OPT_F_START },
	[OPT_INJECT_WRITEBACK_FAIL] = {
		OPT_INJECT_WRITEBACK_FAIL, "ZSWAP_INJECT_WRITEBACK_FAIL", OPT_UINT, "0", 0, 1000000,
		"", "writes",
		"testing: the next N writes to the tier fail: ENOSPC, EIO and a short write in turn", OPT_F_START },
	[OPT_INJECT_COMPRESS_FAIL] = {
		OPT_INJECT_COMPRESS_FAIL, "ZSWAP_INJECT_COMPRESS_FAIL", OPT_UINT, "0", 0, 1000000,
		"", "stores", "testing: the compressor fails the next N stores", OPT_F_START },
	[OPT_INJECT_ALLOC_FAIL] = {
		OPT_INJECT_ALLOC_FAIL, "ZSWAP_INJECT_ALLOC_FAIL", OPT_UINT, "0", 0, 1000000,
		"", "stores", "testing: the pool has no memory for the next N stores", OPT_F_START },
	[OPT_INJECT_COPY_FAIL] = {
		OPT_INJECT_COPY_FAIL, "ZSWAP_INJECT_COPY_FAIL", OPT_UINT, "0", 0, 1000000,
		"", "installs",
		"testing: the next N installs of a page read back fail, EAGAIN and ENOMEM in turn", OPT_F_START },
	[OPT_INJECT_THREAD_FAIL] = {
		OPT_INJECT_THREAD_FAIL, "ZSWAP_INJECT_THREAD_FAIL", OPT_UINT, "0", 0, 64,
		"", "threads", "testing: the first N threads the library starts cannot be created", OPT_F_START },
	[OPT_INJECT_POOL_HOLD] = {
		OPT_INJECT_POOL_HOLD, "ZSWAP_INJECT_POOL_HOLD", OPT_UINT, "0", 0, 1000000,
		"", "orders",
		"testing: the next N orders of zswapctl that change the pools (set compressor=, compact)"
		" wait inside the change, where a fork waits for them, until a fault is served"
		" (at most ten seconds; the reply says if none was)", OPT_F_START },
	[OPT_STATS_SIGNAL] = {
		OPT_STATS_SIGNAL, "ZSWAP_STATS_SIGNAL", OPT_SIGNAL, "SIGUSR1", 1, 64, "", "",
		"signal that makes the library write a statistics dump; none: no signal", 0 },
	[OPT_STATS_FILE] = {
		OPT_STATS_FILE, "ZSWAP_STATS_FILE", OPT_STRING, "stderr", 0, 0, "", "",
		"where dumps go: stderr, or an absolute PATH (%p: pid, %t: seconds since the epoch)", 0 },
	[OPT_LOG_FILE] = {
		OPT_LOG_FILE, "ZSWAP_LOG_FILE", OPT_STRING, "stderr", 0, 0, "", "",
		"where the library's own messages go: stderr, or an absolute PATH appended to"
		" (%p: pid, %t: seconds since the epoch)", 0 },
	[OPT_STATS_FORMAT] = {
		OPT_STATS_FORMAT, "ZSWAP_STATS_FORMAT", OPT_CHOICE, "text", 0, 0, "text|json", "",
		"format of the statistics dump", OPT_F_RUNTIME },
	[OPT_STATS_INTERVAL] = {
		OPT_STATS_INTERVAL, "ZSWAP_STATS_INTERVAL", OPT_UINT, "0", 0, 86400, "", "seconds",
		"write a dump every N seconds; 0 = only on the signal", OPT_F_RUNTIME | OPT_F_START },
	[OPT_STATS_AT_EXIT] = {
		OPT_STATS_AT_EXIT, "ZSWAP_STATS_AT_EXIT", OPT_BOOL, "0", 0, 1, "", "",
		"1 writes a dump when the program exits", OPT_F_RUNTIME | OPT_F_START },
	[OPT_STATS_TOP] = {
		OPT_STATS_TOP, "ZSWAP_STATS_TOP", OPT_UINT, "10", 0, 1000, "", "mappings",
		"mappings listed by the dump's attribution, most evicted bytes first", 0 },
	[OPT_STATS_FULL] = {
		OPT_STATS_FULL, "ZSWAP_STATS_FULL", OPT_BOOL, "0", 0, 1, "", "",
		"1 adds empty size classes and test-only knobs to the dump", OPT_F_RUNTIME },
	[OPT_STATS_SOCKET] = {
		OPT_STATS_SOCKET, "ZSWAP_STATS_SOCKET", OPT_BOOL, "1", 0, 1, "", "",
		"1 offers dumps to zswapctl through a socket only this user can open", 0 },
	[OPT_INJECT_CRASH] = {
		OPT_INJECT_CRASH, "ZSWAP_INJECT_CRASH", OPT_UINT, "0", 0, 2, "", "",
		"testing: 1 makes the statistics thread crash at its first dump, 2 the reclaimer at its first step",
		OPT_F_START },
};

/*
 * ZSWAP_* names that are not options but are set around libzswap on purpose:
 * the test harness exports them (Makefile.am AM_TESTS_ENVIRONMENT) and users
 * keep the library's path in ZSWAP_LIB. Calling them typos would print lines
 * into every program run under `make check`.
 */
static const char *const opt_not_options[] = {
	"ZSWAP_LIB", "ZSWAP_BUILDDIR", "ZSWAP_SRCDIR",
	/* The group's token (src/reclaim/group.c), set by the library for the
	 * programs its members run, and the parent's, set by zswapctl run. */
	OPT_GROUP_VAR, OPT_GROUP_PARENT_VAR,
};

/* A parsed value before it is stored into struct opt_values. */
struct opt_val {
	uint64_t u;	/* bool, integer, size in bytes, choice index, enum zswap_comp, signal */
	int level;	/* OPT_COMPRESSOR: zstd level, 0 for lz4 and lzo */
	const char *str;	/* OPT_STRING: the text (copied by opt_set) */
};

/* ---- small string helpers (no locale, no libc beyond mem/str) ---------- */

/* strcspn(s, {c}): every program's start parses the defaults, and a libc
 * function no one else calls costs its pages' faults (src/base/layout.h). */
ZSWAP_STARTUP static size_t opt_until(const char *s, char c)
{
	size_t n = 0;

	while (s[n] && s[n] != c)
		n++;
	return n;
}

static char opt_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Case-insensitive compare of s[0..n) with the NUL-terminated word w. */
ZSWAP_STARTUP static bool opt_word_eq(const char *s, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] == '\0' || opt_lower(s[i]) != opt_lower(w[i]))
			return false;
	return w[i] == '\0';
}

/* Append a NUL-terminated string to buf at *pos, truncating at cap. */
static void opt_cat(char *buf, size_t cap, size_t *pos, const char *s)
{
	*pos += log_snprintf(buf + *pos, cap - *pos, "%s", s);
}

/* Format a byte count with the largest K/M/G/T suffix that divides it. */
static size_t opt_format_size(uint64_t v, char *buf, size_t len)
{
	static const char sfx[] = "KMGT";
	int i;

	if (v == 0)
		return log_snprintf(buf, len, "0");
	for (i = 4; i > 0; i--)
		if (v % (1ULL << (10 * i)) == 0)
			return log_snprintf(buf, len, "%llu%c",
					    (unsigned long long)(v >> (10 * i)), sfx[i - 1]);
	return log_snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* Bytes of physical memory (sysinfo(2), a plain syscall: safe this early). */
static uint64_t opt_phys_bytes(void)
{
	struct sysinfo si;

	if (syscall(SYS_sysinfo, &si) != 0)
		return 0;
	return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

/* ---- per-type parsers: true on success, else the "expected" text in why -- */

/* A boolean, in the same words for every one; with OPT_F_AUTO "auto" too,
 * and the value is then OPT_AUTO, OPT_OFF or OPT_ON. */
static bool opt_parse_bool(const struct opt_def *d, const char *s, struct opt_val *out,
			   char *why, size_t why_len)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };
	bool tri = d->flags & OPT_F_AUTO;
	size_t n = strlen(s);

	if (tri && opt_word_eq(s, n, "auto")) {
		out->u = OPT_AUTO;
		return true;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (opt_word_eq(s, n, yes[i])) {
			out->u = tri ? OPT_ON : 1;
			return true;
		}
		if (opt_word_eq(s, n, no[i])) {
			out->u = tri ? OPT_OFF : 0;
			return true;
		}
	}
	log_snprintf(why, why_len, "expected %s" OPT_BOOL_WORDS, tri ? "auto, " : "");
	return false;
}

static bool opt_parse_uint(const struct opt_def *d, const char *s, struct opt_val *out,
			   char *why, size_t why_len)
{
	uint64_t v;

	if (parse_u64(s, d->min, d->max, &v) == PARSE_OK) {
		out->u = v;
		return true;
	}
	if (d->unit[0])
		log_snprintf(why, why_len, "expected an integer from %llu to %llu (%s)",
			     (unsigned long long)d->min, (unsigned long long)d->max, d->unit);
	else
		log_snprintf(why, why_len, "expected an integer from %llu to %llu",
			     (unsigned long long)d->min, (unsigned long long)d->max);
	return false;
}

/* The "expected" text for a size that could not be read at all. */
static void opt_size_syntax(const struct opt_def *d, char *why, size_t why_len)
{
	if (d->flags & OPT_F_CGROUP)
		log_snprintf(why, why_len, "expected a size like 512M or 2GiB, a percentage "
			     "of the memory cgroup's limit like 20%%, auto, or 0 for no limit");
	else if (d->flags & OPT_F_PERCENT)
		log_snprintf(why, why_len, "expected a size like 512M or 2GiB, a percentage "
			     "of physical memory like 20%%, or 0 for no limit");
	else
		log_snprintf(why, why_len, "expected a size like 64K, 1M or 2GiB");
}

/*
 * N% of physical memory (options with OPT_F_PERCENT), in bytes in *v: false
 * with the "expected" text in why when it is a percentage out of 1..100.
 */
static bool opt_parse_percent(const struct opt_def *d, uint64_t pct, enum parse_err e,
			      struct opt_val *out, uint64_t *v, char *why, size_t why_len)
{
	uint64_t phys;

	if (e != PARSE_OK) {
		log_snprintf(why, why_len, "expected a percentage %s from 1%% to 100%%",
			     (d->flags & OPT_F_CGROUP) ? "of the memory cgroup's limit" : "of physical memory");
		return false;
	}
	phys = opt_phys_bytes();
	if (phys == 0) {
		log_snprintf(why, why_len, "expected a size: the size of physical "
			     "memory is unknown (sysinfo failed)");
		return false;
	}
	/* phys / 100 * pct <= phys cannot overflow; the remainder term keeps
	 * the result exact. */
	if (d->flags & OPT_F_CGROUP)
		out->level = (int)pct;	/* resolved against the cgroup later */
	*v = (phys / 100 * pct + phys % 100 * pct / 100) & ZS_PAGE_MASK;
	return true;
}

/*
 * A size (core/parse.h: digits, then optionally K, M, G or T with an
 * optional B or iB, or B alone); or, for options with OPT_F_PERCENT, "N%"
 * of physical memory with N from 1 to 100.
 */
static bool opt_parse_size(const struct opt_def *d, const char *s, struct opt_val *out,
			   char *why, size_t why_len)
{
	uint64_t v = 0, pct = 0;
	enum parse_err e;
	char range_min[24], range_max[24];

	if ((d->flags & OPT_F_CGROUP) && opt_word_eq(s, strlen(s), "auto")) {
		out->u = 0;	/* outside a limited memory cgroup: none */
		out->level = OPT_LIMIT_AUTO;
		return true;
	}
	e = (d->flags & OPT_F_PERCENT) ? parse_percent(s, &pct) : PARSE_NOT_NUMBER;
	if (e != PARSE_NOT_NUMBER && e != PARSE_EMPTY) {
		if (!opt_parse_percent(d, pct, e, out, &v, why, why_len))
			return false;
	} else {
		/* The range applies to the value as given (1K is below a 4K
		 * minimum, not 4K); rounding up to a page comes after. */
		e = parse_size(s, d->min, d->max, &v);
		if (e == PARSE_EMPTY || e == PARSE_NOT_NUMBER || e == PARSE_BAD_UNIT) {
			opt_size_syntax(d, why, why_len);
			return false;
		}
		if (e != PARSE_OK)
			goto out_of_range;
	}
	if (v >= d->min && v <= d->max) {
		if ((d->flags & OPT_F_PAGE_UP) && (v & ~ZS_PAGE_MASK)) {
			if (v > UINT64_MAX - ZS_PAGE_SIZE)
				goto out_of_range;
			v = (v + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK;
		}
		out->u = v;
		return true;
	}
out_of_range:
	opt_format_size(d->min, range_min, sizeof(range_min));
	opt_format_size(d->max, range_max, sizeof(range_max));
	if (d->max == UINT64_MAX)
		log_snprintf(why, why_len, "expected a size of at most %llu bytes",
			     (unsigned long long)UINT64_MAX);
	else
		log_snprintf(why, why_len, "expected a size from %s to %s", range_min, range_max);
	return false;
}

/* "class|pool" -> "class or pool"; "a|b|c" -> "a, b or c". */
static void opt_choices_text(const char *choices, char *buf, size_t len)
{
	size_t pos = 0, nbars = 0, seen = 0;

	for (const char *c = choices; *c; c++)
		nbars += *c == '|';
	for (const char *c = choices; *c && pos + 1 < len; c++) {
		if (*c != '|') {
			buf[pos++] = *c;
			continue;
		}
		seen++;
		opt_cat(buf, len, &pos, seen == nbars ? " or " : ", ");
	}
	buf[pos < len ? pos : len - 1] = '\0';
}

static bool opt_parse_choice(const struct opt_def *d, const char *s, struct opt_val *out,
			     char *why, size_t why_len)
{
	size_t n = strlen(s), index = 0;
	const char *w = d->choices;
	char list[96];

	while (*w) {
		size_t wl = opt_until(w, '|');
		char word[32];

		if (wl < sizeof(word)) {
			memcpy(word, w, wl);
			word[wl] = '\0';
			if (opt_word_eq(s, n, word)) {
				out->u = index;
				return true;
			}
		}
		w += wl + (w[wl] == '|');
		index++;
	}
	opt_choices_text(d->choices, list, sizeof(list));
	log_snprintf(why, why_len, "expected %s", list);
	return false;
}

static unsigned opt_distance(const char *a, size_t an, const char *b, size_t bn);

/* The compressor a misspelt name most likely meant ("zstdd", "lz5"), as
 * opt_suggest judges names: within a third of the longer word; NULL if
 * none is. */
static const char *opt_comp_suggest(const char *s, size_t n)
{
	static const char *const names[] = { "lz4", "lzo", "zstd" };
	const char *best = NULL;
	unsigned best_d = ~0U;

	if (n == 0 || n > OPT_SUGGEST_MAX)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t kn = strlen(names[i]);
		unsigned dist = opt_distance(s, n, names[i], kn);

		if (dist < best_d && 3 * dist <= (n > kn ? n : kn)) {
			best_d = dist;
			best = names[i];
		}
	}
	return best;
}

static bool opt_parse_comp(const struct opt_def *d, const char *s, struct opt_val *out,
			   char *why, size_t why_len)
{
	const char *hint;
	size_t n = opt_until(s, ':');
	uint64_t level;

	if (opt_word_eq(s, n, "lz4") && s[n] == '\0') {
		out->u = ZSWAP_COMP_LZ4;
		out->level = 0;
		return true;
	}
	if (opt_word_eq(s, n, "lzo") && s[n] == '\0') {
		out->u = ZSWAP_COMP_LZO;
		out->level = 0;
		return true;
	}
	if (opt_word_eq(s, n, "zstd")) {
		if (s[n] == '\0') {
			out->u = ZSWAP_COMP_ZSTD;
			out->level = OPT_ZSTD_DEFAULT_LEVEL;
			return true;
		}
		if (parse_u64(s + n + 1, d->min, d->max, &level) == PARSE_OK) {
			out->u = ZSWAP_COMP_ZSTD;
			out->level = (int)level;
			return true;
		}
	}
	hint = opt_word_eq(s, n, "zstd") ? NULL : opt_comp_suggest(s, n);
	log_snprintf(why, why_len, "expected lz4, lzo, zstd or zstd:LEVEL with LEVEL from %llu to %llu%s%s%s",
		     (unsigned long long)d->min, (unsigned long long)d->max, hint ? " (did you mean " : "",
		     hint ? hint : "", hint ? "?)" : "");
	return false;
}

/*
 * A file name for the library to write to: "stderr", or an absolute path (a
 * relative one would follow the program's working directory, which changes
 * under it). The value is copied (opt_set), so the environment may change.
 */
static bool opt_parse_string(const struct opt_def *d, const char *s, struct opt_val *out, char *why,
			     size_t why_len)
{
	size_t n = strlen(s);

	if (d->flags & OPT_F_DIR) {
		if ((opt_word_eq(s, n, "auto") || s[0] == '/') && n < OPT_STRING_MAX) {
			out->str = opt_word_eq(s, n, "auto") ? "auto" : s;
			return true;
		}
		log_snprintf(why, why_len, "expected auto or an absolute path shorter than %d bytes",
			     OPT_STRING_MAX);
		return false;
	}

	if ((opt_word_eq(s, n, "stderr") || s[0] == '/') && n < OPT_STRING_MAX) {
		out->str = opt_word_eq(s, n, "stderr") ? "stderr" : s;
		return true;
	}
	log_snprintf(why, why_len, "expected stderr or an absolute path shorter than %d bytes",
		     OPT_STRING_MAX);
	return false;
}

/* Signal names as kill -l prints them, by number (index 0 unused). */
static const char *const opt_signames[] = {
	NULL, "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
	"SEGV", "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP",
	"TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
};
#define OPT_NSIGNAMES (sizeof(opt_signames) / sizeof(opt_signames[0]))

/*
 * A signal for the statistics dump: a name (SIGUSR1 or USR1, any case), a
 * number, or 0/none. Signals the program cannot meaningfully share are
 * refused: KILL and STOP cannot be caught; ILL, TRAP, BUS, FPE and SEGV mean
 * a fault; 32 and 33 belong to the C library's threads.
 */
static bool opt_parse_signal(const struct opt_def *d, const char *s, struct opt_val *out,
			     char *why, size_t why_len)
{
	size_t n = strlen(s);
	uint64_t v = UINT64_MAX;

	if (opt_word_eq(s, n, "none") || opt_word_eq(s, n, "0")) {
		out->u = 0;
		return true;
	}
	if (n > 3 && opt_word_eq(s, 3, "SIG")) {
		s += 3;
		n -= 3;
	}
	if (parse_u64(s, 0, UINT64_MAX, &v) != PARSE_OK) {
		for (size_t i = 1; i < OPT_NSIGNAMES; i++)
			if (opt_word_eq(s, n, opt_signames[i]))
				v = i;
	}
	if (v >= d->min && v <= d->max && v != 4 && v != 5 && v != 7 && v != 8 && v != 9 &&
	    v != 11 && v != 19 && v != 32 && v != 33) {
		out->u = v;
		return true;
	}
	log_snprintf(why, why_len, "expected none or a signal from %llu to %llu such as SIGUSR1 "
		     "(not KILL, STOP, a fault signal, 32 or 33)",
		     (unsigned long long)d->min, (unsigned long long)d->max);
	return false;
}

ZSWAP_STARTUP static bool opt_parse_value(const struct opt_def *d, const char *s, struct opt_val *out,
			    char *why, size_t why_len)
{
	switch (d->type) {
	case OPT_BOOL:
		return opt_parse_bool(d, s, out, why, why_len);
	case OPT_UINT:
		return opt_parse_uint(d, s, out, why, why_len);
	case OPT_SIZE:
		return opt_parse_size(d, s, out, why, why_len);
	case OPT_CHOICE:
		return opt_parse_choice(d, s, out, why, why_len);
	case OPT_COMP:
		return opt_parse_comp(d, s, out, why, why_len);
	case OPT_STRING:
		return opt_parse_string(d, s, out, why, why_len);
	case OPT_SIGNAL:
		return opt_parse_signal(d, s, out, why, why_len);
	}
	log_snprintf(why, why_len, "expected a value of a known type");
	return false;
}

/* ---- struct opt_values <-> struct opt_val, the one switch over ids ------ */

ZSWAP_STARTUP static void opt_set(enum opt_id id, const struct opt_val *val, struct opt_values *v)
{
	switch (id) {
	case OPT_ENABLED:	v->enabled = val->u != 0; break;
	case OPT_COMPRESSOR:	v->comp = (enum zswap_comp)val->u; v->comp_level = val->level; break;
	case OPT_ZSPAGE_ORDER:	v->zspage_order = (unsigned int)val->u; break;
	case OPT_POOL_LOCK:	v->pool_lock = val->u ? ZS_LOCK_POOL : ZS_LOCK_CLASS; break;
	case OPT_NR_POOLS:	v->nr_pools = (unsigned int)val->u; break;
	case OPT_MAX_POOL_SIZE:	v->max_pool_size = val->u; break;
	case OPT_FAULT_THREADS:	v->fault_threads = (unsigned int)val->u; break;
	case OPT_MIN_REGION:	v->min_region = val->u; break;
	case OPT_PROGRAM_DATA:	v->program_data = val->u != 0; break;
	case OPT_FAULT_AROUND:	v->fault_around = (unsigned int)val->u; break;
	case OPT_READAHEAD:	v->readahead = (unsigned int)val->u; break;
	case OPT_MEMORY_LIMIT:
		v->memory_limit = val->u;
		v->memory_limit_rel = (unsigned int)val->level;
		break;
	case OPT_MEMORY_CHARGE:	v->pool_uncharged = val->u != 0; break;
	case OPT_MEMORY_SCOPE:	v->memory_scope = (unsigned int)val->u; break;
	case OPT_COLD_AGE:	v->cold_age = (unsigned int)val->u; break;
	case OPT_START_DELAY:	v->start_delay = (unsigned int)val->u; break;
	case OPT_START_SIZE:	v->start_size = val->u; break;
	case OPT_MAX_POOL_PERCENT: v->max_pool_percent = (unsigned int)val->u; break;
	case OPT_ACCEPT_THRESHOLD_PERCENT: v->accept_threshold_percent = (unsigned int)val->u; break;
	case OPT_WRITEBACK:	v->writeback = (unsigned int)val->u; break;
	case OPT_SHRINKER_ENABLED: v->shrinker_enabled = val->u != 0; break;
	case OPT_BACKING_DIR:
		log_snprintf(v->backing_dir, sizeof(v->backing_dir), "%s", val->str ? val->str : "");
		break;
	case OPT_BACKING_MAX:	v->backing_max = val->u; break;
	case OPT_BACKING_ENCRYPT: v->backing_encrypt = val->u != 0; break;
	case OPT_SWAP_CACHE:	v->swap_cache = val->u != 0; break;
	case OPT_WRITEBACK_LIMIT: v->writeback_limit = val->u; break;
	case OPT_WRITEBACK_LIMIT_ENABLE: v->writeback_limit_enable = val->u != 0; break;
	case OPT_RECOMP_ALGORITHM: v->recomp = (enum zswap_comp)val->u; v->recomp_level = val->level; break;
	case OPT_RECOMP_IDLE_AGE: v->recomp_idle_age = (unsigned int)val->u; break;
	case OPT_VERBOSE:	v->verbose = (unsigned int)val->u; break;
	case OPT_INJECT_DECOMPRESS_FAIL: v->inject_decompress_fail = (unsigned int)val->u; break;
	case OPT_INJECT_WRITEBACK_FAIL: v->inject_writeback_fail = (unsigned int)val->u; break;
	case OPT_INJECT_COMPRESS_FAIL: v->inject_compress_fail = (unsigned int)val->u; break;
	case OPT_INJECT_ALLOC_FAIL: v->inject_alloc_fail = (unsigned int)val->u; break;
	case OPT_INJECT_COPY_FAIL: v->inject_copy_fail = (unsigned int)val->u; break;
	case OPT_INJECT_THREAD_FAIL: v->inject_thread_fail = (unsigned int)val->u; break;
	case OPT_INJECT_POOL_HOLD: v->inject_pool_hold = (unsigned int)val->u; break;
	case OPT_STATS_SIGNAL:	v->stats_signal = (int)val->u; break;
	case OPT_STATS_FILE:
		log_snprintf(v->stats_file, sizeof(v->stats_file), "%s", val->str ? val->str : "");
		break;
	case OPT_LOG_FILE:
		log_snprintf(v->log_file, sizeof(v->log_file), "%s", val->str ? val->str : "");
		break;
	case OPT_STATS_FORMAT:	v->stats_format = (unsigned int)val->u; break;
	case OPT_STATS_INTERVAL: v->stats_interval = (unsigned int)val->u; break;
	case OPT_STATS_AT_EXIT:	v->stats_at_exit = val->u != 0; break;
	case OPT_STATS_TOP:	v->stats_top = (unsigned int)val->u; break;
	case OPT_STATS_FULL:	v->stats_full = val->u != 0; break;
	case OPT_STATS_SOCKET:	v->stats_socket = val->u != 0; break;
	case OPT_INJECT_CRASH:	v->inject_crash = (unsigned int)val->u; break;
	case OPT__COUNT:	break;
	}
}

ZSWAP_STARTUP static void opt_get(enum opt_id id, const struct opt_values *v, struct opt_val *val)
{
	val->level = 0;
	val->str = NULL;
	switch (id) {
	case OPT_ENABLED:	val->u = v->enabled; break;
	case OPT_COMPRESSOR:	val->u = v->comp; val->level = v->comp_level; break;
	case OPT_ZSPAGE_ORDER:	val->u = v->zspage_order; break;
	case OPT_POOL_LOCK:	val->u = v->pool_lock == ZS_LOCK_POOL; break;
	case OPT_NR_POOLS:	val->u = v->nr_pools; break;
	case OPT_MAX_POOL_SIZE:	val->u = v->max_pool_size; break;
	case OPT_FAULT_THREADS:	val->u = v->fault_threads; break;
	case OPT_MIN_REGION:	val->u = v->min_region; break;
	case OPT_PROGRAM_DATA:	val->u = v->program_data; break;
	case OPT_FAULT_AROUND:	val->u = v->fault_around; break;
	case OPT_READAHEAD:	val->u = v->readahead; break;
	case OPT_MEMORY_LIMIT:	val->u = v->memory_limit; val->level = (int)v->memory_limit_rel; break;
	case OPT_MEMORY_CHARGE:	val->u = v->pool_uncharged; break;
	case OPT_MEMORY_SCOPE:	val->u = v->memory_scope; break;
	case OPT_COLD_AGE:	val->u = v->cold_age; break;
	case OPT_START_DELAY:	val->u = v->start_delay; break;
	case OPT_START_SIZE:	val->u = v->start_size; break;
	case OPT_MAX_POOL_PERCENT: val->u = v->max_pool_percent; break;
	case OPT_ACCEPT_THRESHOLD_PERCENT: val->u = v->accept_threshold_percent; break;
	case OPT_WRITEBACK:	val->u = v->writeback; break;
	case OPT_SHRINKER_ENABLED: val->u = v->shrinker_enabled; break;
	case OPT_BACKING_DIR:	val->u = 0; val->str = v->backing_dir; break;
	case OPT_BACKING_MAX:	val->u = v->backing_max; break;
	case OPT_BACKING_ENCRYPT: val->u = v->backing_encrypt; break;
	case OPT_SWAP_CACHE:	val->u = v->swap_cache; break;
	case OPT_WRITEBACK_LIMIT: val->u = v->writeback_limit; break;
	case OPT_WRITEBACK_LIMIT_ENABLE: val->u = v->writeback_limit_enable; break;
	case OPT_RECOMP_ALGORITHM: val->u = v->recomp; val->level = v->recomp_level; break;
	case OPT_RECOMP_IDLE_AGE: val->u = v->recomp_idle_age; break;
	case OPT_VERBOSE:	val->u = v->verbose; break;
	case OPT_INJECT_DECOMPRESS_FAIL: val->u = v->inject_decompress_fail; break;
	case OPT_INJECT_WRITEBACK_FAIL: val->u = v->inject_writeback_fail; break;
	case OPT_INJECT_COMPRESS_FAIL: val->u = v->inject_compress_fail; break;
	case OPT_INJECT_ALLOC_FAIL: val->u = v->inject_alloc_fail; break;
	case OPT_INJECT_COPY_FAIL: val->u = v->inject_copy_fail; break;
	case OPT_INJECT_THREAD_FAIL: val->u = v->inject_thread_fail; break;
	case OPT_INJECT_POOL_HOLD: val->u = v->inject_pool_hold; break;
	case OPT_STATS_SIGNAL:	val->u = (uint64_t)v->stats_signal; break;
	case OPT_STATS_FILE:	val->u = 0; val->str = v->stats_file; break;
	case OPT_LOG_FILE:	val->u = 0; val->str = v->log_file; break;
	case OPT_STATS_FORMAT:	val->u = v->stats_format; break;
	case OPT_STATS_INTERVAL: val->u = v->stats_interval; break;
	case OPT_STATS_AT_EXIT:	val->u = v->stats_at_exit; break;
	case OPT_STATS_TOP:	val->u = v->stats_top; break;
	case OPT_STATS_FULL:	val->u = v->stats_full; break;
	case OPT_STATS_SOCKET:	val->u = v->stats_socket; break;
	case OPT_INJECT_CRASH:	val->u = v->inject_crash; break;
	case OPT__COUNT:	val->u = 0; break;
	}
}

/* ---- the public calls ---------------------------------------------------- */

void opt_copy(enum opt_id id, const struct opt_values *from, struct opt_values *to)
{
	struct opt_val val;

	if ((unsigned)id >= OPT__COUNT)
		return;
	opt_get(id, from, &val);
	opt_set(id, &val, to);
}

ZSWAP_STARTUP bool opt_starts_now(const struct opt_values *v)
{
	struct opt_val val;

	for (int i = 0; i < OPT__COUNT; i++) {
		if (!(opt_table[i].flags & OPT_F_START))
			continue;
		opt_get((enum opt_id)i, v, &val);
		if (val.u)
			return true;
	}
	return false;
}

ZSWAP_STARTUP void opt_defaults(struct opt_values *v)
{
	char why[OPT_WHY_MAX];

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < OPT__COUNT; i++) {
		struct opt_val val = { 0, 0, NULL };
		bool ok = opt_parse_value(&opt_table[i], opt_table[i].def, &val, why, sizeof(why));

		/* The table is wrong, not the user: fail loudly in every build. */
		ZS_CHECK(ok && opt_table[i].id == (enum opt_id)i);
		opt_set((enum opt_id)i, &val, v);
	}
}

bool opt_parse_one(enum opt_id id, const char *text, struct opt_values *v, char *why, size_t why_len)
{
	char dummy[OPT_WHY_MAX];
	struct opt_val val = { 0, 0, NULL };

	if (!why || why_len == 0) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	if ((unsigned)id >= OPT__COUNT || !text) {
		log_snprintf(why, why_len, "expected a known option");
		return false;
	}
	if (!opt_parse_value(&opt_table[id], text, &val, why, why_len))
		return false;
	opt_set(id, &val, v);
	return true;
}

size_t opt_format_signal(int sig, char *buf, size_t len)
{
	if (sig <= 0)
		return log_snprintf(buf, len, "none");
	if ((size_t)sig < OPT_NSIGNAMES)
		return log_snprintf(buf, len, "SIG%s", opt_signames[sig]);
	return log_snprintf(buf, len, "%d", sig);
}

size_t opt_format(enum opt_id id, const struct opt_values *v, char *buf, size_t len)
{
	const struct opt_def *d;
	struct opt_val val = { 0, 0, NULL };

	if ((unsigned)id >= OPT__COUNT)
		return log_snprintf(buf, len, "?");
	d = &opt_table[id];
	opt_get(id, v, &val);
	switch (d->type) {
	case OPT_BOOL:
		if (d->flags & OPT_F_AUTO)
			return log_snprintf(buf, len, "%s", val.u == OPT_AUTO ? "auto" :
					    val.u == OPT_ON ? "1" : "0");
		return log_snprintf(buf, len, "%u", val.u ? 1U : 0U);
	case OPT_UINT:
		return log_snprintf(buf, len, "%llu", (unsigned long long)val.u);
	case OPT_SIZE:
		if ((d->flags & OPT_F_CGROUP) && val.level == OPT_LIMIT_AUTO)
			return log_snprintf(buf, len, "auto");
		if ((d->flags & OPT_F_CGROUP) && val.level > 0)
			return log_snprintf(buf, len, "%d%%", val.level);
		return opt_format_size(val.u, buf, len);
	case OPT_CHOICE: {
		const char *w = d->choices;
		size_t wl = opt_until(w, '|');

		for (uint64_t i = 0; i < val.u && w[wl] == '|'; i++) {
			w += wl + 1;
			wl = opt_until(w, '|');
		}
		if (len == 0)
			return 0;
		if (wl >= len)
			wl = len - 1;
		memcpy(buf, w, wl);
		buf[wl] = '\0';
		return wl;
	}
	case OPT_COMP:
		if (val.u == ZSWAP_COMP_ZSTD)
			return log_snprintf(buf, len, "zstd:%d", val.level);
		if (val.u == ZSWAP_COMP_LZO)
			return log_snprintf(buf, len, "lzo");
		return log_snprintf(buf, len, "lz4");
	case OPT_STRING:
		return log_snprintf(buf, len, "%s", val.str ? val.str : "");
	case OPT_SIGNAL:
		return opt_format_signal((int)val.u, buf, len);
	}
	return log_snprintf(buf, len, "?");
}

size_t opt_format_all(const struct opt_values *v, char *buf, size_t len)
{
	size_t pos = 0;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	for (int i = 0; i < OPT__COUNT && pos + 1 < len; i++) {
		pos += log_snprintf(buf + pos, len - pos, "%s%s=", i ? " " : "", opt_table[i].name);
		if (pos + 1 < len)
			pos += opt_format((enum opt_id)i, v, buf + pos, len - pos);
	}
	return pos < len ? pos : len - 1;
}

void opt_store_config(const struct opt_values *v, struct zswap_store_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->comp = v->comp;
	cfg->level = v->comp == ZSWAP_COMP_ZSTD ? v->comp_level : 0;
	cfg->recomp = v->recomp;
	cfg->recomp_level = v->recomp == ZSWAP_COMP_ZSTD ? v->recomp_level : 0;
	cfg->order = v->zspage_order;
	cfg->lock = v->pool_lock;
	cfg->nr_pools = v->nr_pools;
	cfg->mem_limit = v->max_pool_size;
	cfg->refuse_poor = v->writeback == OPT_WB_OFF;
	cfg->nr_workspaces = 0;	/* the store's default; it knows its callers */
}

const struct opt_def *opt_find(const char *name, size_t name_len)
{
	for (int i = 0; i < OPT__COUNT; i++)
		if (strlen(opt_table[i].name) == name_len &&
		    memcmp(opt_table[i].name, name, name_len) == 0)
			return &opt_table[i];
	return NULL;
}

size_t opt_format_range(const struct opt_def *d, char *buf, size_t len)
{
	char a[24], b[24];

	switch (d->type) {
	case OPT_BOOL:
		return log_snprintf(buf, len, (d->flags & OPT_F_AUTO) ? "auto|0|1" : "0|1");
	case OPT_UINT:
		return log_snprintf(buf, len, "%llu..%llu",
				    (unsigned long long)d->min, (unsigned long long)d->max);
	case OPT_SIZE:
		opt_format_size(d->min, a, sizeof(a));
		if (d->max == UINT64_MAX)
			b[0] = '\0';
		else
			opt_format_size(d->max, b, sizeof(b));
		return log_snprintf(buf, len, "%s..%s%s%s", a, b,
				    (d->flags & OPT_F_PERCENT) ? ",1%..100%" : "",
				    (d->flags & OPT_F_CGROUP) ? ",auto" : "");
	case OPT_CHOICE:
		return log_snprintf(buf, len, "%s", d->choices);
	case OPT_COMP:
		return log_snprintf(buf, len, "lz4|lzo|zstd[:%llu..%llu]",
				    (unsigned long long)d->min, (unsigned long long)d->max);
	case OPT_STRING:
		return log_snprintf(buf, len, (d->flags & OPT_F_DIR) ? "auto|PATH" : "stderr|PATH");
	case OPT_SIGNAL:
		return log_snprintf(buf, len, "none|SIGNAME,%llu..%llu",
				    (unsigned long long)d->min, (unsigned long long)d->max);
	}
	return log_snprintf(buf, len, "?");
}

int opt_list(int fd)
{
	char line[320], range[48];
	size_t n;

	n = log_snprintf(line, sizeof(line), "%-21s %-7s %-18s %-7s %s\n",
			 "NAME", "DEFAULT", "RANGE", "UNIT", "HELP");
	if (log_write_all(fd, line, n) != 0)
		return -1;
	for (int i = 0; i < OPT__COUNT; i++) {
		const struct opt_def *d = &opt_table[i];

		opt_format_range(d, range, sizeof(range));
		n = log_snprintf(line, sizeof(line), "%-21s %-7s %-18s %-7s %s\n",
				 d->name, d->def, range, d->unit[0] ? d->unit : "-", d->help);
		if (log_write_all(fd, line, n) != 0)
			return -1;
	}
	return 0;
}

/* ---- opt_load: environ, messages, did-you-mean ------------------------- */

/*
 * Quote n bytes of s for a message: printable ASCII as is, '"' and '\' with
 * a backslash, anything else as \xNN; at most OPT_SHOW_MAX bytes shown, then
 * "... (N bytes)". The bytes come from the environment and end up on a
 * terminal: a stray escape sequence or newline must not reach it raw.
 */
static void opt_quote(const char *s, size_t n, bool quotes, char *buf, size_t len)
{
	size_t pos = 0, show = n < OPT_SHOW_MAX ? n : OPT_SHOW_MAX;

	if (quotes)
		opt_cat(buf, len, &pos, "\"");
	for (size_t i = 0; i < show && pos + 1 < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			pos += log_snprintf(buf + pos, len - pos, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			pos += log_snprintf(buf + pos, len - pos, "%c", c);
		else
			pos += log_snprintf(buf + pos, len - pos, "\\x%c%c",
					    "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]);
	}
	if (quotes)
		opt_cat(buf, len, &pos, "\"");
	if (show < n)
		pos += log_snprintf(buf + pos, len - pos, "... (%zu bytes)", n);
	buf[pos < len ? pos : len - 1] = '\0';
}

/* Optimal string alignment distance (edits, including swapping two adjacent
 * letters) between a[0..an) and b[0..bn), both at most OPT_SUGGEST_MAX. */
static unsigned opt_distance(const char *a, size_t an, const char *b, size_t bn)
{
	unsigned d[3][OPT_SUGGEST_MAX + 1];	/* rows i-2, i-1, i, rotated */

	for (size_t j = 0; j <= bn; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= an; i++) {
		unsigned *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3];

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= bn; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = prev[j - 1] + cost;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return d[an % 3][bn];
}

_Static_assert(OPT_CHECK_MSG_MAX >= OPT_WHY_MAX + OPT_SHOW_MAX * 4 + 64,
	       "opt_check's message holds a quoted value and the reason");

/* The bytes s[0..sn) contain w[0..wn) (case-insensitively)? */
static bool opt_contains(const char *s, size_t sn, const char *w, size_t wn)
{
	for (size_t i = 0; wn && i + wn <= sn; i++) {
		size_t k = 0;

		while (k < wn && opt_lower(s[i + k]) == opt_lower(w[k]))
			k++;
		if (k == wn)
			return true;
	}
	return false;
}

/*
 * The option an unknown ZSWAP_* name most likely meant, or NULL: the nearest
 * by edit distance when within a third of the longer name (a typo), else the
 * one option whose name contains the unknown part, or is contained in it
 * (ZSWAP_ORDER, ZSWAP_MIN_REGION_SIZE), when only one does.
 */
static const struct opt_def *opt_suggest(const char *name, size_t name_len)
{
	const char *u = name + OPT_PREFIX_LEN;
	size_t un = name_len - OPT_PREFIX_LEN;
	const struct opt_def *best = NULL, *contains = NULL;
	unsigned best_d = ~0U;
	int ncontains = 0;

	if (un == 0 || un > OPT_SUGGEST_MAX)
		return NULL;
	for (int i = 0; i < OPT__COUNT; i++) {
		const char *k = opt_table[i].name + OPT_PREFIX_LEN;
		size_t kn = strlen(k);
		unsigned d = opt_distance(u, un, k, kn);

		if (d < best_d && 3 * d <= (un > kn ? un : kn)) {
			best_d = d;
			best = &opt_table[i];
		}
		if (un >= 4 && (opt_contains(k, kn, u, un) || opt_contains(u, un, k, kn))) {
			contains = &opt_table[i];
			ncontains++;
		}
	}
	if (best)
		return best;
	return ncontains == 1 ? contains : NULL;
}

/* The option whose name matches name case-insensitively (zswap_verbose). */
static const struct opt_def *opt_find_nocase(const char *name, size_t name_len)
{
	for (int i = 0; i < OPT__COUNT; i++)
		if (opt_word_eq(name, name_len, opt_table[i].name))
			return &opt_table[i];
	return NULL;
}

static bool opt_is_not_option(const char *name, size_t name_len)
{
	for (size_t i = 0; i < sizeof(opt_not_options) / sizeof(opt_not_options[0]); i++)
		if (strlen(opt_not_options[i]) == name_len &&
		    memcmp(opt_not_options[i], name, name_len) == 0)
			return true;
	return false;
}

/* A known name in the wrong case (zswap_verbose). */
static void opt_report_case(const char *name, size_t name_len, const struct opt_def *hint)
{
	char shown[OPT_SHOW_MAX * 4 + 32];

	opt_quote(name, name_len, false, shown, sizeof(shown));
	zlog("%s is not a libzswap option (did you mean %s?); ignored", shown, hint->name);
}

/*
 * A name as zswapctl takes it (cold_age, Zswap_Cold_Age) as the table spells
 * it (ZSWAP_COLD_AGE) in full[]: its length, or 0 when it cannot be one.
 */
static size_t opt_loose_name(const char *name, size_t len, char *full, size_t cap)
{
	if (len >= OPT_PREFIX_LEN && opt_word_eq(name, OPT_PREFIX_LEN, OPT_PREFIX)) {
		name += OPT_PREFIX_LEN;
		len -= OPT_PREFIX_LEN;
	}
	if (len == 0 || OPT_PREFIX_LEN + len >= cap)
		return 0;
	memcpy(full, OPT_PREFIX, OPT_PREFIX_LEN);
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		full[OPT_PREFIX_LEN + i] = c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
	}
	full[OPT_PREFIX_LEN + len] = '\0';
	return OPT_PREFIX_LEN + len;
}

enum opt_check_res opt_check(const char *name, size_t name_len, const char *value, unsigned int how,
			     struct opt_values *v, const struct opt_def **def, char *msg, size_t msg_len)
{
	char full[OPT_PREFIX_LEN + OPT_SUGGEST_MAX + 1], shown[OPT_SHOW_MAX * 4 + 32], why[OPT_WHY_MAX];
	const struct opt_def *d, *hint = NULL;
	size_t n;

	if ((how & OPT_CHECK_LOOSE) && (n = opt_loose_name(name, name_len, full, sizeof(full))) != 0) {
		name = full;
		name_len = n;
	}
	*def = d = opt_find(name, name_len);
	if (!d) {
		if (name_len > OPT_PREFIX_LEN && strncmp(name, OPT_PREFIX, OPT_PREFIX_LEN) == 0)
			hint = opt_suggest(name, name_len);
		opt_quote(name, name_len, false, shown, sizeof(shown));
		if (hint)
			log_snprintf(msg, msg_len, "%s is not a libzswap option (did you mean %s?)",
				     shown, hint->name);
		else
			log_snprintf(msg, msg_len, "%s is not a libzswap option", shown);
		return OPT_CHECK_UNKNOWN;
	}
	if ((how & OPT_CHECK_RUNTIME) && !(d->flags & OPT_F_RUNTIME)) {
		log_snprintf(msg, msg_len, "%s is read once at start-up and cannot change in a running process",
			     d->name);
		return OPT_CHECK_STARTUP;
	}
	if (!opt_parse_one(d->id, value, v, why, sizeof(why))) {
		opt_quote(value, strlen(value), true, shown, sizeof(shown));
		log_snprintf(msg, msg_len, "%s=%s: %s", d->name, shown, why);
		return OPT_CHECK_BAD;
	}
	return OPT_CHECK_OK;
}

ZSWAP_STARTUP bool opt_peek(enum opt_id id, struct opt_values *v, char *const *envp)
{
	char why[OPT_WHY_MAX];
	const struct opt_def *d = &opt_table[id];
	size_t n = strlen(d->name);

	if (!envp)
		envp = environ;
	if (!envp)
		return false;
	for (char *const *e = envp; *e; e++)
		if (strncmp(*e, d->name, n) == 0 && (*e)[n] == '=')
			return opt_parse_one(id, *e + n + 1, v, why, sizeof(why));
	return false;
}

/*
 * The options ZSWAPCTL_RUN names came from zswapctl run, when the
 * environment set them: a program it started that starts others passes both
 * on. Its names are checked, never trusted to be options.
 */
static void opt_mark_run(struct opt_values *v, char *const *envp)
{
	const size_t n = sizeof(OPT_RUN_VAR) - 1;
	const char *list = NULL;

	for (char *const *e = envp; *e && !list; e++)
		if (strncmp(*e, OPT_RUN_VAR, n) == 0 && (*e)[n] == '=')
			list = *e + n + 1;
	while (list && *list) {
		size_t len = opt_until(list, ' ');
		const struct opt_def *d = opt_find(list, len);

		if (d && v->from[d->id] == OPT_FROM_ENV)
			v->from[d->id] = OPT_FROM_RUN;
		list += len;
		list += strspn(list, " ");
	}
}

ZSWAP_STARTUP int opt_load(struct opt_values *v, char *const *envp)
{
	char msg[OPT_CHECK_MSG_MAX], shown[OPT_SHOW_MAX * 4 + 32], def[32];
	bool seen[OPT__COUNT] = { false };
	int problems = 0;

	opt_defaults(v);
	if (!envp)
		envp = environ;
	if (!envp)
		return 0;

	for (char *const *e = envp; *e; e++) {
		const char *entry = *e, *eq = strchr(entry, '=');
		size_t name_len = eq ? (size_t)(eq - entry) : strlen(entry);
		const char *value = eq ? eq + 1 : "";
		const struct opt_def *d;

		if (name_len == 15 && strncmp(entry, "XDG_RUNTIME_DIR", 15) == 0 &&
		    strlen(value) < sizeof(v->runtime_dir) && value[0] == '/') {
			log_snprintf(v->runtime_dir, sizeof(v->runtime_dir), "%s", value);
			continue;
		}
		if (name_len == 6 && strncmp(entry, "TMPDIR", 6) == 0 && strlen(value) < sizeof(v->tmpdir) &&
		    value[0] == '/') {
			log_snprintf(v->tmpdir, sizeof(v->tmpdir), "%s", value);
			continue;
		}
		if (strncmp(entry, OPT_PREFIX, OPT_PREFIX_LEN) != 0) {
			/* Environment names are case-sensitive; a lower-case
			 * zswap_verbose would otherwise do nothing, silently.
			 * The table is searched only for names that begin so:
			 * every program the library is loaded into reads its
			 * whole environment here. */
			if (name_len < OPT_PREFIX_LEN || !opt_word_eq(entry, OPT_PREFIX_LEN, OPT_PREFIX))
				continue;
			d = opt_find_nocase(entry, name_len);
			if (d) {
				opt_report_case(entry, name_len, d);
				problems++;
			}
			continue;
		}
		d = opt_find(entry, name_len);
		if (!d && opt_is_not_option(entry, name_len))
			continue;
		if (d && seen[d->id]) {
			/* getenv() and most programs see the first one. */
			opt_quote(value, strlen(value), true, shown, sizeof(shown));
			zlog("%s=%s: set a second time; ignored (the first setting counts)",
			     d->name, shown);
			problems++;
			continue;
		}
		switch (opt_check(entry, name_len, value, 0, v, &d, msg, sizeof(msg))) {
		case OPT_CHECK_OK:
			seen[d->id] = true;
			v->from[d->id] = OPT_FROM_ENV;
			break;
		case OPT_CHECK_UNKNOWN:
			zlog("%s; ignored", msg);
			problems++;
			break;
		default:
			seen[d->id] = true;
			opt_format(d->id, v, def, sizeof(def));
			zlog("%s; using %s", msg, def);
			problems++;
			break;
		}
	}
	opt_mark_run(v, envp);
	return problems;
}

const char *opt_from_name(unsigned int from)
{
	static const char *const names[] = {
		[OPT_FROM_DEFAULT] = "the default", [OPT_FROM_ENV] = "the environment",
		[OPT_FROM_RUN] = "zswapctl run", [OPT_FROM_SET] = "zswapctl set",
	};

	return from < sizeof(names) / sizeof(names[0]) ? names[from] : "?";
}

void opt_log_in_force(const struct opt_values *v)
{
	struct opt_values def;
	char now[OPT_STRING_MAX], was[OPT_STRING_MAX];
	int changed = 0;

	opt_defaults(&def);
	for (int i = 0; i < OPT__COUNT; i++) {
		opt_format((enum opt_id)i, v, now, sizeof(now));
		opt_format((enum opt_id)i, &def, was, sizeof(was));
		if (strcmp(now, was) == 0)
			continue;
		zlog("option %s=%s (from %s)", opt_table[i].name, now, opt_from_name(v->from[i]));
		changed++;
	}
	if (!changed)
		zlog("options: all at their defaults");
}
