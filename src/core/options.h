/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - libzswap's one option table.
 *
 * Every tunable is a ZSWAP_* environment variable, read once at start-up from
 * environ (no getenv after start-up). The table (options.c) is the single
 * source for parsing, validation, `zswapctl options`, the statistics dump and
 * the man page check (tests/checks/test_options_man.sh).
 *
 * A bad value (empty, negative, overflowing, garbage, unknown name or unit)
 * yields exactly one "libzswap:" line naming the variable, the value, what was
 * expected and the value used instead. An unknown ZSWAP_* name (a typo) is
 * named too, with the closest known name when one is near.
 */
#ifndef ZSWAP_OPTIONS_H
#define ZSWAP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/store.h"

enum opt_type {
	OPT_BOOL,	/* OPT_BOOL_WORDS; with OPT_F_AUTO also auto */
	OPT_UINT,	/* decimal integer in [min, max] */
	OPT_SIZE,	/* bytes, with K/M/G/T suffix (powers of 1024), in [min, max] */
	OPT_CHOICE,	/* one of a fixed list of words */
	OPT_COMP,	/* lz4 | lzo | zstd[:LEVEL], LEVEL in [min, max]. (Not called
			 * OPT_COMPRESSOR: that name is the option's id below.) */
	OPT_STRING,	/* free text (a path), at most OPT_STRING_MAX - 1 bytes */
	OPT_SIGNAL,	/* a signal: SIGUSR1, USR1 or a number in [min, max]; 0 or none for none */
};

/* The words every boolean takes, wherever it is set: the environment,
 * zswapctl run -o, zswapctl set. */
#define OPT_BOOL_WORDS	"1 or 0 (or yes/no, on/off, true/false)"

/* What N% and auto mean for ZSWAP_MEMORY_LIMIT: the one definition the
 * option table's help, zswapctl's help, the pages and the README give
 * (tests/checks/test_rules_docs.sh holds them to it). */
#define OPT_LIMIT_PERCENT_TEXT \
	"N% is N percent of the memory cgroup's limit, or of physical memory outside a limited" \
	" cgroup; auto is 7/8 of the cgroup's limit, or no limit outside one"

#define OPT_STRING_MAX	256	/* bytes of an OPT_STRING value, its NUL included */

/* Flags of an option (struct opt_def.flags). */
#define OPT_F_PERCENT	0x1	/* OPT_SIZE: also "N%" of physical memory, N 1..100 */
#define OPT_F_PAGE_UP	0x2	/* OPT_SIZE: rounded up to a whole page */
#define OPT_F_DIR	0x4	/* OPT_STRING: auto, or an absolute path (not stderr) */
/* Changeable in a running process (zswapctl set; src/observe/control.c). */
#define OPT_F_RUNTIME	0x8
/* OPT_SIZE with OPT_F_PERCENT: also "auto", and N% is of the memory cgroup's
 * limit when the process is in a limited one (src/reclaim/cgroup.c); the
 * value keeps which it was (opt_values.memory_limit_rel). */
#define OPT_F_CGROUP	0x10
/* OPT_BOOL: also "auto"; the value is then OPT_AUTO, OPT_OFF or OPT_ON. */
#define OPT_F_AUTO	0x20
/* Nonzero, the library starts at once, not at ZSWAP_START_DELAY's deferred
 * start: what it does (a dump at exit or on a clock, a failure injected
 * at start-up) needs the library running (opt_starts_now). */
#define OPT_F_START	0x40

enum opt_id {
	OPT_ENABLED,		/* ZSWAP_ENABLED */
	OPT_COMPRESSOR,		/* ZSWAP_COMPRESSOR */
	OPT_ZSPAGE_ORDER,	/* ZSWAP_ZSPAGE_ORDER */
	OPT_POOL_LOCK,		/* ZSWAP_POOL_LOCK */
	OPT_NR_POOLS,		/* ZSWAP_NR_POOLS */
	OPT_MAX_POOL_SIZE,	/* ZSWAP_MAX_POOL_SIZE */
	OPT_FAULT_THREADS,	/* ZSWAP_FAULT_THREADS */
	OPT_MIN_REGION,		/* ZSWAP_MIN_REGION */
	OPT_PROGRAM_DATA,	/* ZSWAP_PROGRAM_DATA */
	OPT_FAULT_AROUND,	/* ZSWAP_FAULT_AROUND */
	OPT_READAHEAD,		/* ZSWAP_READAHEAD */
	OPT_MEMORY_LIMIT,	/* ZSWAP_MEMORY_LIMIT */
	OPT_MEMORY_CHARGE,	/* ZSWAP_MEMORY_CHARGE */
	OPT_MEMORY_SCOPE,	/* ZSWAP_MEMORY_SCOPE */
	OPT_COLD_AGE,		/* ZSWAP_COLD_AGE */
	OPT_START_DELAY,	/* ZSWAP_START_DELAY */
	OPT_START_SIZE,		/* ZSWAP_START_SIZE */
	OPT_MAX_POOL_PERCENT,	/* ZSWAP_MAX_POOL_PERCENT */
	OPT_ACCEPT_THRESHOLD_PERCENT,	/* ZSWAP_ACCEPT_THRESHOLD_PERCENT */
	OPT_WRITEBACK,		/* ZSWAP_WRITEBACK */
	OPT_SHRINKER_ENABLED,	/* ZSWAP_SHRINKER_ENABLED */
	OPT_BACKING_DIR,	/* ZSWAP_BACKING_DIR */
	OPT_BACKING_MAX,	/* ZSWAP_BACKING_MAX */
	OPT_BACKING_ENCRYPT,	/* ZSWAP_BACKING_ENCRYPT */
	OPT_SWAP_CACHE,		/* ZSWAP_SWAP_CACHE */
	OPT_WRITEBACK_LIMIT,	/* ZSWAP_WRITEBACK_LIMIT */
	OPT_WRITEBACK_LIMIT_ENABLE,	/* ZSWAP_WRITEBACK_LIMIT_ENABLE */
	OPT_RECOMP_ALGORITHM,	/* ZSWAP_RECOMP_ALGORITHM */
	OPT_RECOMP_IDLE_AGE,	/* ZSWAP_RECOMP_IDLE_AGE */
	OPT_VERBOSE,		/* ZSWAP_VERBOSE */
	OPT_INJECT_DECOMPRESS_FAIL,	/* ZSWAP_INJECT_DECOMPRESS_FAIL (testing) */
	OPT_INJECT_WRITEBACK_FAIL,	/* ZSWAP_INJECT_WRITEBACK_FAIL (testing) */
	OPT_INJECT_COMPRESS_FAIL,	/* ZSWAP_INJECT_COMPRESS_FAIL (testing) */
	OPT_INJECT_ALLOC_FAIL,	/* ZSWAP_INJECT_ALLOC_FAIL (testing) */
	OPT_INJECT_COPY_FAIL,	/* ZSWAP_INJECT_COPY_FAIL (testing) */
	OPT_INJECT_THREAD_FAIL,	/* ZSWAP_INJECT_THREAD_FAIL (testing) */
	OPT_INJECT_POOL_HOLD,	/* ZSWAP_INJECT_POOL_HOLD (testing) */
	OPT_STATS_SIGNAL,	/* ZSWAP_STATS_SIGNAL */
	OPT_STATS_FILE,		/* ZSWAP_STATS_FILE */
	OPT_LOG_FILE,		/* ZSWAP_LOG_FILE */
	OPT_STATS_FORMAT,	/* ZSWAP_STATS_FORMAT */
	OPT_STATS_INTERVAL,	/* ZSWAP_STATS_INTERVAL */
	OPT_STATS_AT_EXIT,	/* ZSWAP_STATS_AT_EXIT */
	OPT_STATS_TOP,		/* ZSWAP_STATS_TOP */
	OPT_STATS_FULL,		/* ZSWAP_STATS_FULL */
	OPT_STATS_SOCKET,	/* ZSWAP_STATS_SOCKET */
	OPT_INJECT_CRASH,	/* ZSWAP_INJECT_CRASH (testing) */
	OPT__COUNT
};

/*
 * A row holds its text, not pointers to it: the loader relocates nothing in
 * the table, which is then read-only data every process shares instead of a
 * page or two each copies at exec (src/base/layout.h). Every field ends in
 * its NUL (tests/unit/test_options.c).
 */
#define OPT_NAME_MAX	32
#define OPT_DEF_MAX	16
#define OPT_CHOICES_MAX	32
#define OPT_UNIT_MAX	16
#define OPT_HELP_MAX	256

struct opt_def {
	enum opt_id id;
	char name[OPT_NAME_MAX];	/* "ZSWAP_COMPRESSOR" */
	enum opt_type type;
	char def[OPT_DEF_MAX];	/* default, as text, e.g. "lz4", "1M" */
	uint64_t min, max;	/* OPT_UINT / OPT_SIZE range; zstd levels for OPT_COMP */
	char choices[OPT_CHOICES_MAX];	/* for OPT_CHOICE: "class|pool"; else "" */
	char unit[OPT_UNIT_MAX];	/* "bytes", "pages", "threads", "" */
	char help[OPT_HELP_MAX];	/* one line */
	unsigned int flags;	/* OPT_F_* */
};

/* Where an option's value came from (opt_values.from). zswapctl run lists
 * the options it sets in ZSWAPCTL_RUN, so that the library tells them from
 * the environment's own. */
enum opt_from { OPT_FROM_DEFAULT, OPT_FROM_ENV, OPT_FROM_RUN, OPT_FROM_SET };

/* A process tree's group (src/reclaim/group.c): its token, which the library
 * sets for the programs its members run, and the parent's, which zswapctl
 * run --limit sets in its place inside a group (a child group). */
#define OPT_GROUP_VAR		"ZSWAP_GROUP"
#define OPT_GROUP_PARENT_VAR	"ZSWAP_GROUP_PARENT"

#define OPT_RUN_VAR	"ZSWAPCTL_RUN"	/* "ZSWAP_COLD_AGE ZSWAP_MEMORY_LIMIT": what zswapctl run set */

/* The parsed values, defaults filled in. */
struct opt_values {
	bool enabled;
	enum zswap_comp comp;
	int comp_level;			/* zstd level; 0 for lz4 and lzo */
	unsigned int zspage_order;
	enum zs_lock_mode pool_lock;
	unsigned int nr_pools;
	uint64_t max_pool_size;		/* 0 = unlimited */
	unsigned int fault_threads;
	uint64_t min_region;
	bool program_data;		/* the main program's data made anonymous at start */
	unsigned int fault_around;	/* pages */
	unsigned int readahead;		/* pages */
	uint64_t memory_limit;		/* bytes of resident anonymous memory + pool; 0 = none */
	/* How ZSWAP_MEMORY_LIMIT was given: 0 bytes, 1..100 percent (of the
	 * memory cgroup's limit, else of physical memory: memory_limit holds
	 * the latter), OPT_LIMIT_AUTO: from the memory cgroup, else none. */
	unsigned int memory_limit_rel;
	/* ZSWAP_MEMORY_CHARGE=v1: the limit leaves the pool out (cgroup v1's
	 * rule: zswap's pool is nobody's charge) and ZSWAP_MAX_POOL_* alone
	 * bound it; v2 (false): the charge holds the pool's pages. */
	bool pool_uncharged;
	/* ZSWAP_MEMORY_SCOPE: OPT_SCOPE_TREE, the limit is the process tree's
	 * (src/reclaim/group.c); OPT_SCOPE_PROCESS, each process's own. */
	unsigned int memory_scope;
	unsigned int cold_age;		/* seconds; 0 = no proactive reclaim */
	unsigned int start_delay;	/* milliseconds before a process without a limit starts */
	uint64_t start_size;		/* bytes of resident anonymous memory it holds first */
	unsigned int max_pool_percent;	/* of physical memory */
	unsigned int accept_threshold_percent;	/* of the pool limit */
	unsigned int writeback;		/* OPT_WB_*: the second tier */
	bool shrinker_enabled;		/* writeback under memory pressure */
	char backing_dir[OPT_STRING_MAX];	/* "auto", or where the tier's file goes */
	uint64_t backing_max;		/* bytes; 0 = half the free space at start */
	bool backing_encrypt;
	bool swap_cache;
	uint64_t writeback_limit;	/* pages the tier may still take (zram's writeback_limit) */
	bool writeback_limit_enable;	/* whether that budget applies */
	enum zswap_comp recomp;		/* the recompression algorithm (zram's recomp_algorithm) */
	int recomp_level;
	unsigned int recomp_idle_age;	/* seconds; 0 = the reclaimer does not recompress */
	unsigned int verbose;
	unsigned int inject_decompress_fail;	/* loads made to fail, for tests */
	unsigned int inject_writeback_fail;	/* writes to the tier made to fail, for tests */
	unsigned int inject_compress_fail;	/* compressions made to fail, for tests */
	unsigned int inject_alloc_fail;		/* pool allocations made to fail, for tests */
	unsigned int inject_copy_fail;		/* page installs made to fail, for tests */
	unsigned int inject_thread_fail;	/* library threads made not to start, for tests */
	unsigned int inject_pool_hold;	/* changes of compressor held until a fault is served, for tests */
	int stats_signal;		/* 0 = none */
	char stats_file[OPT_STRING_MAX];	/* "stderr", or a path with %p/%t */
	char log_file[OPT_STRING_MAX];		/* "stderr", or a path with %p/%t */
	unsigned int stats_format;	/* 0 text, 1 json */
	unsigned int stats_interval;	/* seconds; 0 = no periodic dump */
	bool stats_at_exit;
	unsigned int stats_top;		/* mappings listed by attribution */
	bool stats_full;		/* empty size classes and test-only knobs too */
	bool stats_socket;		/* offer the dump to zswapctl */
	unsigned int inject_crash;	/* 1: the statistics thread crashes, 2: the reclaimer; for tests */
	/* Not an option: $XDG_RUNTIME_DIR as opt_load found it ("" if unset),
	 * where the statistics socket goes (src/observe/stats.c reads no environment). */
	char runtime_dir[OPT_STRING_MAX];
	/* Not an option either: $TMPDIR ("" if unset), ZSWAP_BACKING_DIR=auto's
	 * first choice. */
	char tmpdir[OPT_STRING_MAX];
	/* enum opt_from of each option, by enum opt_id. */
	unsigned char from[OPT__COUNT];
};

#define OPT_LIMIT_AUTO	101	/* opt_values.memory_limit_rel: "auto" */

/* The values of a boolean with OPT_F_AUTO. ZSWAP_WRITEBACK: auto (on under a
 * memory limit), off, on. */
enum { OPT_AUTO, OPT_OFF, OPT_ON };
#define OPT_WB_AUTO	OPT_AUTO
#define OPT_SCOPE_TREE		0
#define OPT_SCOPE_PROCESS	1

#define OPT_WB_OFF	OPT_OFF
#define OPT_WB_ON	OPT_ON

/* The table, OPT__COUNT rows in enum opt_id order. */
extern const struct opt_def opt_table[OPT__COUNT];

/* Defaults for every option. */
void opt_defaults(struct opt_values *v);

/* Parse every ZSWAP_* variable of envp (environ when NULL) into *v (which
 * opt_load fills with defaults first). Each problem is reported through
 * zlog() as one line: a bad value, an unknown ZSWAP_* name (also a known
 * name in the wrong case, zswap_verbose), a variable set twice (the first
 * counts, as getenv would see). ZSWAP_LIB, ZSWAP_BUILDDIR and ZSWAP_SRCDIR
 * are not options and pass silently. Returns the number of problems. No
 * malloc, no getenv, no stdio: safe in a constructor. */
int opt_load(struct opt_values *v, char *const *envp);

/* Set one option from the environment (envp, or environ when NULL) as
 * opt_load will, silently: true if it is there and valid. For what must be
 * known before the other options are read (ZSWAP_LOG_FILE). */
bool opt_peek(enum opt_id id, struct opt_values *v, char *const *envp);

/* Parse one value for one option, as opt_load does: returns true and sets
 * the field on success; on failure leaves the default and writes the text of
 * the "expected ..." part into why (for tools and tests). */
bool opt_parse_one(enum opt_id id, const char *text, struct opt_values *v, char *why, size_t why_len);

/* How opt_check reads a setting's name. */
#define OPT_CHECK_LOOSE		0x1	/* ZSWAP_ optional, any case (zswapctl's -o cold_age=1) */
#define OPT_CHECK_RUNTIME	0x2	/* only options a running process may change */

#define OPT_CHECK_MSG_MAX	480	/* bytes of opt_check's message, its NUL included */

enum opt_check_res {
	OPT_CHECK_OK,
	OPT_CHECK_UNKNOWN,	/* no such option */
	OPT_CHECK_STARTUP,	/* OPT_CHECK_RUNTIME and the option is read at start-up only */
	OPT_CHECK_BAD,		/* the value is not valid */
};

/*
 * Check one setting NAME=VALUE as every entry point does (the environment at
 * start-up, zswapctl run -o, zswapctl set and the control socket behind it):
 * one grammar, one validator, one wording. On success the option's row is in
 * *def and its value set in *v. On a problem msg holds one line (no newline,
 * no "libzswap:"), naming the variable: "ZSWAP_COLD_AGEE is not a libzswap
 * option (did you mean ZSWAP_COLD_AGE?)", "ZSWAP_COLD_AGE=\"soon\": expected
 * an integer from 0 to 86400 (seconds)". *def is the row found, or NULL.
 */
enum opt_check_res opt_check(const char *name, size_t name_len, const char *value, unsigned int how,
			     struct opt_values *v, const struct opt_def **def, char *msg, size_t msg_len);

/* Option id's value in from, set in to (zswapctl set: a running process's
 * values changed one option at a time). */
void opt_copy(enum opt_id id, const struct opt_values *from, struct opt_values *to);

/* True when an option flagged OPT_F_START is set (nonzero) in v. */
bool opt_starts_now(const struct opt_values *v);

/* The store configuration these options describe. */
void opt_store_config(const struct opt_values *v, struct zswap_store_config *cfg);

/* A signal number as the dump shows it: "SIGUSR1", "40", or "none" for 0. */
size_t opt_format_signal(int sig, char *buf, size_t len);

/* Format the current value of one option as text (e.g. "zstd:3", "1M"). */
size_t opt_format(enum opt_id id, const struct opt_values *v, char *buf, size_t len);

/* The row of the option called name (name_len bytes, not NUL-terminated
 * necessarily), or NULL. Exact, case-sensitive, as environment names are. */
const struct opt_def *opt_find(const char *name, size_t name_len);

/* The accepted values of an option as text ("2..4", "class|pool",
 * "lz4|lzo|zstd[:1..19]", "4K..1T"): the range column of the listing. */
size_t opt_format_range(const struct opt_def *d, char *buf, size_t len);

/* Where a value came from as words: "the environment", "zswapctl run"... */
const char *opt_from_name(unsigned int from);

/* ZSWAP_VERBOSE's start-up lines: every option not at its default, one a
 * line through zlog(), with where it came from ("ZSWAP_COLD_AGE=10 (from
 * zswapctl run)"), or one line saying all are at their defaults. */
void opt_log_in_force(const struct opt_values *v);

/* Every option of v as "NAME=value" separated by spaces, on one line (for
 * ZSWAP_VERBOSE and the statistics dump). */
size_t opt_format_all(const struct opt_values *v, char *buf, size_t len);

/* Write the table to fd, one option a line after a header line: name,
 * default, range, unit ("-" when none), help. Columns are separated by
 * spaces and only the help contains spaces, so `awk '$1 ~ /^ZSWAP_/'` reads
 * it (tests/checks/test_options_man.sh; zswapctl options). No malloc, no stdio.
 * Returns 0, or -1 with errno if a write failed. */
int opt_list(int fd);

#endif
