/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_options.c - the option table, the ZSWAP_* parser and its messages.
 *
 * Each opt_load() runs in a forked child whose stderr is a pipe: the parent
 * reads exactly what the child printed and the values it ended with. A fresh
 * child per case also gives zlog() a fresh rate-limit window, so no line can
 * be suppressed between cases (the parent itself never calls zlog).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/options.h"
#include "base/prim.h"
#include "test_check.h"

struct load_result {
	int problems;
	struct opt_values v;
	char err[16384];	/* what the child wrote on fd 2 */
	size_t err_len;
	int nlines;
};

static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (size_t)r == cap - len) {
			if (r > 0)
				len += (size_t)r;
			break;
		}
		len += (size_t)r;
	}
	return len;
}

/* Run opt_load(envp) in a child (envp NULL: the child's environ becomes
 * use_environ first) and collect its stderr, return value and values. The
 * tests' environments are string literals: const here, cast once to the
 * type of environ that opt_load takes (it never writes through it). */
static void load_in_child(const char *const *envp, const char *const *use_environ, struct load_result *res)
{
	int errp[2], resp[2], status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe(errp) || pipe(resp)) {
		perror("pipe");
		exit(99);
	}
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(99);
	}
	if (pid == 0) {
		struct opt_values v;
		int n;

		close(errp[0]);
		close(resp[0]);
		dup2(errp[1], 2);
		if (!envp)
			environ = (char **)use_environ;
		n = opt_load(&v, (char *const *)envp);
		if (write(resp[1], &n, sizeof(n)) != sizeof(n) ||
		    write(resp[1], &v, sizeof(v)) != sizeof(v))
			_exit(98);
		_exit(0);
	}
	close(errp[1]);
	close(resp[1]);
	res->err_len = read_all(errp[0], res->err, sizeof(res->err) - 1);
	res->err[res->err_len] = '\0';
	if (read_all(resp[0], (char *)&res->problems, sizeof(res->problems)) != sizeof(res->problems) ||
	    read_all(resp[0], (char *)&res->v, sizeof(res->v)) != sizeof(res->v)) {
		fprintf(stderr, "child died before reporting\n");
		exit(99);
	}
	close(errp[0]);
	close(resp[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "child failed (status %#x)\n", status);
		exit(99);
	}
	for (size_t i = 0; i < res->err_len; i++)
		res->nlines += res->err[i] == '\n';
}

static void load1(const char *entry, struct load_result *res)
{
	const char *envp[] = { entry, NULL };

	load_in_child(envp, NULL, res);
}

static void format_all(const struct opt_values *v, char *buf, size_t len)
{
	opt_format_all(v, buf, len);
}

/* The value of one option in res, as text. */
static const char *value_of(const struct load_result *res, enum opt_id id)
{
	static char buf[64];

	opt_format(id, &res->v, buf, sizeof(buf));
	return buf;
}

static uint64_t phys_bytes(void)
{
	struct sysinfo si;

	if (sysinfo(&si) != 0)
		return 0;
	return (uint64_t)si.totalram * si.mem_unit;
}

/* ---- the table itself --------------------------------------------------- */

static void test_table(void)
{
	struct opt_values d;
	char buf[128];

	opt_defaults(&d);
	for (int i = 0; i < OPT__COUNT; i++) {
		const struct opt_def *o = &opt_table[i];

		CHECK(o->id == (enum opt_id)i, "row %d has id %d", i, o->id);
		/* The text is inline: a string that fills its field exactly
		 * compiles without its NUL. */
		CHECK(memchr(o->name, 0, sizeof(o->name)) && memchr(o->def, 0, sizeof(o->def)) &&
		      memchr(o->choices, 0, sizeof(o->choices)) && memchr(o->unit, 0, sizeof(o->unit)) &&
		      memchr(o->help, 0, sizeof(o->help)),
		      "row %d: every field ends in its NUL", i);
		CHECK(strncmp(o->name, "ZSWAP_", 6) == 0, "%s", o->name);
		CHECK(o->help[0] && !strchr(o->help, '\n'), "%s help", o->name);
		CHECK((o->type == OPT_CHOICE) == (o->choices[0] != 0), "%s choices", o->name);
		CHECK(opt_find(o->name, strlen(o->name)) == o, "opt_find(%s)", o->name);
		/* The default formats back to the table's text. */
		opt_format((enum opt_id)i, &d, buf, sizeof(buf));
		CHECK(strcmp(buf, o->def) == 0, "%s default formats as %s, table says %s",
		      o->name, buf, o->def);
	}
	CHECK(opt_find("ZSWAP_ENABLE", 12) == NULL, "prefix of a name");
	CHECK(opt_find("ZSWAP_ENABLEDX", 13) == &opt_table[OPT_ENABLED], "length-bounded lookup");

	CHECK(d.enabled == true, "enabled");
	CHECK(d.comp == ZSWAP_COMP_LZ4 && d.comp_level == 0, "comp");
	CHECK(d.zspage_order == 3, "order %u", d.zspage_order);
	CHECK(d.pool_lock == ZS_LOCK_CLASS, "lock");
	CHECK(d.nr_pools == 1, "nr_pools");
	CHECK(d.max_pool_size == 0, "max_pool_size");
	CHECK(d.fault_threads == 0, "fault_threads (0: one per allowed CPU)");
	CHECK(d.min_region == 256 << 10, "min_region %" PRIu64, d.min_region);
	CHECK(d.fault_around == 16, "fault_around");
	CHECK(d.readahead == 16, "readahead");
	CHECK(d.verbose == 0, "verbose");
	CHECK(!d.pool_uncharged, "the pool charged (v2) by default");

	opt_format_range(&opt_table[OPT_ZSPAGE_ORDER], buf, sizeof(buf));
	CHECK(strcmp(buf, "2..4") == 0, "%s", buf);
	opt_format_range(&opt_table[OPT_MIN_REGION], buf, sizeof(buf));
	CHECK(strcmp(buf, "4K..1T") == 0, "%s", buf);
	opt_format_range(&opt_table[OPT_COMPRESSOR], buf, sizeof(buf));
	CHECK(strcmp(buf, "lz4|lzo|zstd[:1..19]") == 0, "%s", buf);
	opt_format_range(&opt_table[OPT_POOL_LOCK], buf, sizeof(buf));
	CHECK(strcmp(buf, "class|pool") == 0, "%s", buf);
	opt_format_range(&opt_table[OPT_MEMORY_CHARGE], buf, sizeof(buf));
	CHECK(strcmp(buf, "v2|v1") == 0, "%s", buf);
}

/* ---- good values ---------------------------------------------------------- */

struct good {
	const char *entry;	/* NAME=value */
	enum opt_id id;
	const char *want;	/* opt_format of the result */
};

static void test_good_values(void)
{
	static const struct good cases[] = {
		{ "ZSWAP_ENABLED=0", OPT_ENABLED, "0" },
		{ "ZSWAP_ENABLED=1", OPT_ENABLED, "1" },
		{ "ZSWAP_ENABLED=no", OPT_ENABLED, "0" },
		{ "ZSWAP_ENABLED=YES", OPT_ENABLED, "1" },
		{ "ZSWAP_ENABLED=Off", OPT_ENABLED, "0" },
		{ "ZSWAP_ENABLED=on", OPT_ENABLED, "1" },
		{ "ZSWAP_ENABLED=FALSE", OPT_ENABLED, "0" },
		{ "ZSWAP_ENABLED=true", OPT_ENABLED, "1" },
		{ "ZSWAP_COMPRESSOR=lz4", OPT_COMPRESSOR, "lz4" },
		{ "ZSWAP_COMPRESSOR=LZ4", OPT_COMPRESSOR, "lz4" },
		{ "ZSWAP_COMPRESSOR=lzo", OPT_COMPRESSOR, "lzo" },
		{ "ZSWAP_COMPRESSOR=LZO", OPT_COMPRESSOR, "lzo" },
		{ "ZSWAP_COMPRESSOR=zstd", OPT_COMPRESSOR, "zstd:3" },
		{ "ZSWAP_COMPRESSOR=ZSTD:1", OPT_COMPRESSOR, "zstd:1" },
		{ "ZSWAP_COMPRESSOR=Zstd:19", OPT_COMPRESSOR, "zstd:19" },
		{ "ZSWAP_COMPRESSOR=zstd:07", OPT_COMPRESSOR, "zstd:7" },
		{ "ZSWAP_ZSPAGE_ORDER=2", OPT_ZSPAGE_ORDER, "2" },
		{ "ZSWAP_ZSPAGE_ORDER=3", OPT_ZSPAGE_ORDER, "3" },
		{ "ZSWAP_ZSPAGE_ORDER=004", OPT_ZSPAGE_ORDER, "4" },
		{ "ZSWAP_POOL_LOCK=class", OPT_POOL_LOCK, "class" },
		{ "ZSWAP_POOL_LOCK=pool", OPT_POOL_LOCK, "pool" },
		{ "ZSWAP_POOL_LOCK=POOL", OPT_POOL_LOCK, "pool" },
		{ "ZSWAP_POOL_LOCK=Class", OPT_POOL_LOCK, "class" },
		{ "ZSWAP_NR_POOLS=1", OPT_NR_POOLS, "1" },
		{ "ZSWAP_NR_POOLS=32", OPT_NR_POOLS, "32" },
		{ "ZSWAP_NR_POOLS=64", OPT_NR_POOLS, "64" },
		{ "ZSWAP_MAX_POOL_SIZE=0", OPT_MAX_POOL_SIZE, "0" },
		{ "ZSWAP_MAX_POOL_SIZE=512M", OPT_MAX_POOL_SIZE, "512M" },
		{ "ZSWAP_MAX_POOL_SIZE=2g", OPT_MAX_POOL_SIZE, "2G" },
		{ "ZSWAP_MAX_POOL_SIZE=1T", OPT_MAX_POOL_SIZE, "1T" },
		{ "ZSWAP_MAX_POOL_SIZE=1024G", OPT_MAX_POOL_SIZE, "1T" },
		{ "ZSWAP_MAX_POOL_SIZE=4096", OPT_MAX_POOL_SIZE, "4K" },
		{ "ZSWAP_MAX_POOL_SIZE=12345", OPT_MAX_POOL_SIZE, "12345" },
		{ "ZSWAP_MAX_POOL_SIZE=64KiB", OPT_MAX_POOL_SIZE, "64K" },
		{ "ZSWAP_MAX_POOL_SIZE=3mb", OPT_MAX_POOL_SIZE, "3M" },
		{ "ZSWAP_MAX_POOL_SIZE=100B", OPT_MAX_POOL_SIZE, "100" },
		{ "ZSWAP_MAX_POOL_SIZE=16777215T", OPT_MAX_POOL_SIZE, "16777215T" },
		{ "ZSWAP_FAULT_THREADS=1", OPT_FAULT_THREADS, "1" },
		{ "ZSWAP_FAULT_THREADS=16", OPT_FAULT_THREADS, "16" },
		{ "ZSWAP_MIN_REGION=4K", OPT_MIN_REGION, "4K" },
		{ "ZSWAP_MIN_REGION=4096", OPT_MIN_REGION, "4K" },
		{ "ZSWAP_MIN_REGION=64k", OPT_MIN_REGION, "64K" },
		{ "ZSWAP_MIN_REGION=2M", OPT_MIN_REGION, "2M" },
		{ "ZSWAP_MIN_REGION=1T", OPT_MIN_REGION, "1T" },
		{ "ZSWAP_MIN_REGION=5000", OPT_MIN_REGION, "8K" },	/* page-aligned up */
		{ "ZSWAP_MIN_REGION=4097", OPT_MIN_REGION, "8K" },
		{ "ZSWAP_MIN_REGION=1025K", OPT_MIN_REGION, "1028K" },
		{ "ZSWAP_FAULT_AROUND=1", OPT_FAULT_AROUND, "1" },
		{ "ZSWAP_FAULT_AROUND=512", OPT_FAULT_AROUND, "512" },
		{ "ZSWAP_READAHEAD=0", OPT_READAHEAD, "0" },
		{ "ZSWAP_READAHEAD=64", OPT_READAHEAD, "64" },
		{ "ZSWAP_WRITEBACK_LIMIT=0", OPT_WRITEBACK_LIMIT, "0" },
		{ "ZSWAP_WRITEBACK_LIMIT=102400", OPT_WRITEBACK_LIMIT, "102400" },
		{ "ZSWAP_WRITEBACK_LIMIT_ENABLE=1", OPT_WRITEBACK_LIMIT_ENABLE, "1" },
		{ "ZSWAP_RECOMP_ALGORITHM=zstd:19", OPT_RECOMP_ALGORITHM, "zstd:19" },
		{ "ZSWAP_RECOMP_ALGORITHM=lzo", OPT_RECOMP_ALGORITHM, "lzo" },
		{ "ZSWAP_RECOMP_IDLE_AGE=3600", OPT_RECOMP_IDLE_AGE, "3600" },
		{ "ZSWAP_VERBOSE=0", OPT_VERBOSE, "0" },
		{ "ZSWAP_VERBOSE=1", OPT_VERBOSE, "1" },
		{ "ZSWAP_VERBOSE=2", OPT_VERBOSE, "2" },
		{ "ZSWAP_STATS_SIGNAL=SIGUSR2", OPT_STATS_SIGNAL, "SIGUSR2" },
		{ "ZSWAP_STATS_SIGNAL=usr2", OPT_STATS_SIGNAL, "SIGUSR2" },
		{ "ZSWAP_STATS_SIGNAL=12", OPT_STATS_SIGNAL, "SIGUSR2" },
		{ "ZSWAP_STATS_SIGNAL=40", OPT_STATS_SIGNAL, "40" },
		{ "ZSWAP_STATS_SIGNAL=none", OPT_STATS_SIGNAL, "none" },
		{ "ZSWAP_STATS_SIGNAL=0", OPT_STATS_SIGNAL, "none" },
		{ "ZSWAP_STATS_FILE=/tmp/d-%p-%t.txt", OPT_STATS_FILE, "/tmp/d-%p-%t.txt" },
		{ "ZSWAP_STATS_FILE=STDERR", OPT_STATS_FILE, "stderr" },
		{ "ZSWAP_STATS_FORMAT=JSON", OPT_STATS_FORMAT, "json" },
		{ "ZSWAP_STATS_INTERVAL=86400", OPT_STATS_INTERVAL, "86400" },
		{ "ZSWAP_STATS_AT_EXIT=yes", OPT_STATS_AT_EXIT, "1" },
		{ "ZSWAP_STATS_TOP=0", OPT_STATS_TOP, "0" },
		{ "ZSWAP_STATS_FULL=on", OPT_STATS_FULL, "1" },
		{ "ZSWAP_STATS_SOCKET=off", OPT_STATS_SOCKET, "0" },
	};
	struct load_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load1(cases[i].entry, &res);
		CHECK(res.problems == 0 && res.err_len == 0, "%s: %d problems: %s",
		      cases[i].entry, res.problems, res.err);
		CHECK(strcmp(value_of(&res, cases[i].id), cases[i].want) == 0,
		      "%s gave %s, want %s", cases[i].entry, value_of(&res, cases[i].id),
		      cases[i].want);
	}

	/* Only the named option changes. */
	struct opt_values d;
	char a[512], b[512];
	opt_defaults(&d);
	load1("ZSWAP_NR_POOLS=8", &res);
	res.v.nr_pools = d.nr_pools;
	format_all(&res.v, a, sizeof(a));
	format_all(&d, b, sizeof(b));
	CHECK(strcmp(a, b) == 0, "others changed: %s vs %s", a, b);

	/* Percentages of physical memory, rounded down to a page. */
	uint64_t phys = phys_bytes();
	if (phys) {
		uint64_t want20 = (phys / 100 * 20 + phys % 100 * 20 / 100) & ZS_PAGE_MASK;
		load1("ZSWAP_MAX_POOL_SIZE=20%", &res);
		CHECK(res.problems == 0 && res.v.max_pool_size == want20,
		      "20%% of %" PRIu64 " gave %" PRIu64 " (%s)", phys, res.v.max_pool_size, res.err);
		load1("ZSWAP_MAX_POOL_SIZE=100%", &res);
		CHECK(res.problems == 0 && res.v.max_pool_size == (phys & ZS_PAGE_MASK),
		      "100%% gave %" PRIu64, res.v.max_pool_size);
		load1("ZSWAP_MAX_POOL_SIZE=1%", &res);
		CHECK(res.problems == 0 && res.v.max_pool_size > 0 &&
		      res.v.max_pool_size <= phys / 100, "1%% gave %" PRIu64, res.v.max_pool_size);
	}

	/* Names that are not options but are set on purpose are left alone,
	 * and so is everything outside the ZSWAP_ prefix. */
	const char *quiet[] = { "ZSWAP_LIB=/x/libzswap.so", "ZSWAP_BUILDDIR=/b", "ZSWAP_SRCDIR=/s",
			  "PATH=/bin", "ZSWAPX=1", "LD_PRELOAD=libzswap.so", NULL };
	load_in_child(quiet, NULL, &res);
	CHECK(res.problems == 0 && res.err_len == 0, "quiet names: %s", res.err);

	/* opt_load(v, NULL) reads environ. */
	const char *env[] = { "HOME=/", "ZSWAP_FAULT_THREADS=4", "ZSWAP_COMPRESSOR=zstd:5", NULL };
	load_in_child(NULL, env, &res);
	CHECK(res.problems == 0 && res.v.fault_threads == 4 && res.v.comp == ZSWAP_COMP_ZSTD &&
	      res.v.comp_level == 5, "environ: %d %u %s", res.problems, res.v.fault_threads, res.err);
}

/* ---- bad values ---------------------------------------------------------------- */

struct bad {
	const char *name;
	const char *value;
	const char *expected;	/* a substring of the "expected ..." part */
};

/* One line "libzswap: NAME="value": expected ...; using DEFAULT\n", the
 * default kept, one problem counted. */
static void check_bad(const char *name, const char *value, const char *quoted,
		      const char *expected)
{
	char entry[256], head[512], tail[64];
	struct load_result res;
	const struct opt_def *d = opt_find(name, strlen(name));
	struct opt_values def;

	snprintf(entry, sizeof(entry), "%s=%s", name, value);
	load1(entry, &res);
	opt_defaults(&def);
	snprintf(head, sizeof(head), "libzswap: %s=%s: expected ", name, quoted ? quoted : "");
	if (!quoted)
		snprintf(head, sizeof(head), "libzswap: %s=\"%s\": expected ", name, value);
	snprintf(tail, sizeof(tail), "; using %s\n", d ? d->def : "?");

	CHECK(d != NULL, "%s is in the table", name);
	CHECK(res.problems == 1, "%s: %d problems", entry, res.problems);
	CHECK(res.nlines == 1, "%s: %d lines: %s", entry, res.nlines, res.err);
	CHECK(strncmp(res.err, head, strlen(head)) == 0, "%s: line %s does not start with %s",
	      entry, res.err, head);
	CHECK(strstr(res.err, expected) != NULL, "%s: line %s lacks %s", entry, res.err, expected);
	CHECK(res.err_len >= strlen(tail) &&
	      strcmp(res.err + res.err_len - strlen(tail), tail) == 0,
	      "%s: line %s does not end with %s", entry, res.err, tail);
	CHECK(res.err_len < 512, "%s: line of %zu bytes", entry, res.err_len);
	if (d) {
		char got[64];
		opt_format(d->id, &res.v, got, sizeof(got));
		CHECK(strcmp(got, d->def) == 0, "%s: value %s, default %s", entry, got, d->def);
	}
	/* opt_parse_one agrees and leaves the value alone. */
	if (d) {
		char why[256] = "";
		struct opt_values v = def;
		CHECK(!opt_parse_one(d->id, value, &v, why, sizeof(why)), "parse_one %s", entry);
		CHECK(strncmp(why, "expected ", 9) == 0 && strstr(res.err, why),
		      "parse_one why: %s", why);
		CHECK(memcmp(&v, &def, sizeof(v)) == 0, "parse_one changed the values for %s", entry);
	}
}

static void test_bad_values(void)
{
	static const struct bad cases[] = {
		/* empty */
		{ "ZSWAP_ENABLED", "", "1 or 0" },
		{ "ZSWAP_COMPRESSOR", "", "lz4, lzo, zstd" },
		{ "ZSWAP_ZSPAGE_ORDER", "", "an integer from 2 to 4" },
		{ "ZSWAP_POOL_LOCK", "", "class or pool" },
		{ "ZSWAP_MAX_POOL_SIZE", "", "a size like" },
		{ "ZSWAP_MIN_REGION", "", "a size like 64K, 1M or 2G" },
		/* negative */
		{ "ZSWAP_NR_POOLS", "-1", "an integer from 1 to 64 (pools)" },
		{ "ZSWAP_FAULT_THREADS", "-4", "from 0 to 16" },
		{ "ZSWAP_MIN_REGION", "-1M", "a size like" },
		{ "ZSWAP_MAX_POOL_SIZE", "-20%", "a size like" },
		{ "ZSWAP_COMPRESSOR", "zstd:-1", "LEVEL from 1 to 19" },
		/* beyond uint64 */
		{ "ZSWAP_READAHEAD", "18446744073709551616", "from 0 to 64 (pages)" },
		{ "ZSWAP_VERBOSE", "99999999999999999999999999", "from 0 to 2" },
		{ "ZSWAP_MAX_POOL_SIZE", "18446744073709551616", "at most" },
		{ "ZSWAP_MAX_POOL_SIZE", "16777216T", "at most" },
		{ "ZSWAP_MIN_REGION", "99999999999999999999K", "a size from 4K to 1T" },
		{ "ZSWAP_COMPRESSOR", "zstd:99999999999999999999", "LEVEL from 1 to 19" },
		/* the statistics' own kinds */
		{ "ZSWAP_STATS_SIGNAL", "SIGKILL", "not KILL, STOP" },
		{ "ZSWAP_STATS_SIGNAL", "11", "a fault signal" },
		{ "ZSWAP_STATS_SIGNAL", "65", "from 1 to 64" },
		{ "ZSWAP_STATS_SIGNAL", "USR3", "such as SIGUSR1" },
		/* a number with more after it is no number, nor a signal's name */
		{ "ZSWAP_STATS_SIGNAL", "12x", "such as SIGUSR1" },
		{ "ZSWAP_STATS_SIGNAL", "SIG10abc", "such as SIGUSR1" },
		{ "ZSWAP_STATS_FILE", "relative/dump.txt", "stderr or an absolute path" },
		{ "ZSWAP_STATS_FILE", "", "stderr or an absolute path" },
		{ "ZSWAP_STATS_FORMAT", "xml", "text or json" },
		/* beyond the range */
		{ "ZSWAP_ZSPAGE_ORDER", "7", "from 2 to 4" },
		{ "ZSWAP_ZSPAGE_ORDER", "1", "from 2 to 4" },
		{ "ZSWAP_NR_POOLS", "0", "from 1 to 64" },
		{ "ZSWAP_NR_POOLS", "65", "from 1 to 64" },
		{ "ZSWAP_FAULT_THREADS", "17", "from 0 to 16" },
		{ "ZSWAP_FAULT_AROUND", "0", "from 1 to 512 (pages)" },
		{ "ZSWAP_FAULT_AROUND", "513", "from 1 to 512" },
		{ "ZSWAP_READAHEAD", "65", "from 0 to 64" },
		{ "ZSWAP_WRITEBACK_LIMIT", "1099511627777", "from 0 to 1099511627776 (pages)" },
		{ "ZSWAP_WRITEBACK_LIMIT", "100M", "an integer" },
		{ "ZSWAP_WRITEBACK_LIMIT_ENABLE", "2", "1 or 0" },
		{ "ZSWAP_RECOMP_IDLE_AGE", "86401", "from 0 to 86400 (seconds)" },
		{ "ZSWAP_VERBOSE", "3", "from 0 to 2" },
		{ "ZSWAP_ENABLED", "2", "1 or 0" },
		{ "ZSWAP_MIN_REGION", "1K", "a size from 4K to 1T" },
		{ "ZSWAP_MIN_REGION", "0", "a size from 4K to 1T" },
		{ "ZSWAP_MIN_REGION", "2T", "a size from 4K to 1T" },
		{ "ZSWAP_MAX_POOL_SIZE", "0%", "from 1% to 100%" },
		{ "ZSWAP_MAX_POOL_SIZE", "101%", "from 1% to 100%" },
		{ "ZSWAP_MAX_POOL_SIZE", "99999999999999999999%", "from 1% to 100%" },
		/* garbage */
		{ "ZSWAP_ENABLED", "maybe", "1 or 0" },
		{ "ZSWAP_NR_POOLS", "four", "an integer" },
		{ "ZSWAP_NR_POOLS", "0x10", "an integer" },
		{ "ZSWAP_NR_POOLS", "+4", "an integer" },
		{ "ZSWAP_MIN_REGION", "big", "a size like" },
		{ "ZSWAP_MAX_POOL_SIZE", "%", "a size like" },
		{ "ZSWAP_MAX_POOL_SIZE", "lots", "or 0 for no limit" },
		/* trailing junk, leading and trailing blanks */
		{ "ZSWAP_ZSPAGE_ORDER", "3x", "from 2 to 4" },
		{ "ZSWAP_ZSPAGE_ORDER", "3 ", "from 2 to 4" },
		{ "ZSWAP_ZSPAGE_ORDER", " 3", "from 2 to 4" },
		{ "ZSWAP_ENABLED", "yess", "1 or 0" },
		{ "ZSWAP_MIN_REGION", "1MM", "a size like" },
		{ "ZSWAP_MIN_REGION", "1.5M", "a size like" },
		{ "ZSWAP_MAX_POOL_SIZE", "20%x", "a size like" },
		{ "ZSWAP_MAX_POOL_SIZE", "20 %", "a size like" },
		{ "ZSWAP_POOL_LOCK", "pool ", "class or pool" },
		{ "ZSWAP_COMPRESSOR", "lz4 ", "lz4, lzo, zstd" },
		{ "ZSWAP_COMPRESSOR", "zstd:3x", "LEVEL from 1 to 19" },
		/* unknown unit */
		{ "ZSWAP_MIN_REGION", "12Q", "a size like 64K, 1M or 2G" },
		{ "ZSWAP_MAX_POOL_SIZE", "1P", "a size like" },
		{ "ZSWAP_MIN_REGION", "20%", "a size like" },	/* no percentage here */
		{ "ZSWAP_MIN_REGION", "4Bi", "a size like" },
		/* unknown choice word */
		{ "ZSWAP_POOL_LOCK", "global", "class or pool" },
		{ "ZSWAP_POOL_LOCK", "classes", "class or pool" },
		{ "ZSWAP_COMPRESSOR", "gzip", "lz4, lzo, zstd or zstd:LEVEL" },
		{ "ZSWAP_COMPRESSOR", "lz4hc", "lz4, lzo, zstd" },
		{ "ZSWAP_COMPRESSOR", "lz4:1", "lz4, lzo, zstd" },
		{ "ZSWAP_COMPRESSOR", "lzo:1", "lz4, lzo, zstd" },
		{ "ZSWAP_COMPRESSOR", "lzo-rle", "lz4, lzo, zstd" },
		/* a misspelt compressor: the one meant */
		{ "ZSWAP_COMPRESSOR", "zstdd", "zstd:LEVEL with LEVEL from 1 to 19 (did you mean zstd?)" },
		{ "ZSWAP_COMPRESSOR", "zsdt", "(did you mean zstd?)" },
		{ "ZSWAP_COMPRESSOR", "lz5", "(did you mean lz4?)" },
		{ "ZSWAP_RECOMP_ALGORITHM", "ztsd:3", "(did you mean zstd?)" },
		/* zstd level out of range, missing, not a number */
		{ "ZSWAP_COMPRESSOR", "zstd:0", "LEVEL from 1 to 19" },
		{ "ZSWAP_COMPRESSOR", "zstd:20", "LEVEL from 1 to 19" },
		{ "ZSWAP_COMPRESSOR", "zstd:", "LEVEL from 1 to 19" },
		{ "ZSWAP_COMPRESSOR", "zstd:fast", "LEVEL from 1 to 19" },
		{ "ZSWAP_COMPRESSOR", "zstd:3:4", "LEVEL from 1 to 19" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_bad(cases[i].name, cases[i].value, NULL, cases[i].expected);

	/* The exact lines of the brief. */
	struct load_result res;
	load1("ZSWAP_ZSPAGE_ORDER=7", &res);
	CHECK(strcmp(res.err, "libzswap: ZSWAP_ZSPAGE_ORDER=\"7\": expected an integer "
		     "from 2 to 4; using 3\n") == 0, "%s", res.err);
	load1("ZSWAP_MIN_REGION=12Q", &res);
	CHECK(strcmp(res.err, "libzswap: ZSWAP_MIN_REGION=\"12Q\": expected a size like "
		     "64K, 1M or 2GiB; using 256K\n") == 0, "%s", res.err);

	/* A variable without '=' (possible through execve) is an empty value. */
	load1("ZSWAP_VERBOSE", &res);
	CHECK(res.problems == 1 && res.nlines == 1 && res.v.verbose == 0 &&
	      strstr(res.err, "ZSWAP_VERBOSE=\"\": expected"), "%s", res.err);

	/* Set twice: the first counts (as getenv would see), the second is named. */
	const char *twice[] = { "ZSWAP_NR_POOLS=4", "ZSWAP_NR_POOLS=8", NULL };
	load_in_child(twice, NULL, &res);
	CHECK(res.problems == 1 && res.nlines == 1 && res.v.nr_pools == 4 &&
	      strstr(res.err, "ZSWAP_NR_POOLS=\"8\"") && strstr(res.err, "ignored"),
	      "%s", res.err);
}

/* Values with odd bytes are quoted, escaped and cut: one line, no raw
 * control byte, no terminal escape reaching the user's screen. */
static void test_odd_bytes(void)
{
	struct load_result res;

	check_bad("ZSWAP_NR_POOLS", "1\n2", "\"1\\x0a2\"", "an integer");
	check_bad("ZSWAP_NR_POOLS", "\x1b[31mred", "\"\\x1b[31mred\"", "an integer");
	check_bad("ZSWAP_POOL_LOCK", "say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"", "class or pool");
	check_bad("ZSWAP_POOL_LOCK", "\xff\xfe", "\"\\xff\\xfe\"", "class or pool");
	check_bad("ZSWAP_MIN_REGION", "\t1M", "\"\\x091M\"", "a size like");

	/* 10,000 digits: overflow, one short line, truncated with the length. */
	static char big[10000 + 32];
	strcpy(big, "ZSWAP_FAULT_AROUND=");
	memset(big + strlen(big), '7', 10000);
	load1(big, &res);
	CHECK(res.problems == 1 && res.nlines == 1 && res.err_len < 300 &&
	      strstr(res.err, "... (10000 bytes): expected an integer from 1 to 512") &&
	      strstr(res.err, "; using 16\n"), "%s", res.err);

	/* A 5,000-byte unknown name with control bytes in it. */
	static char name[5000 + 32];
	strcpy(name, "ZSWAP_\x01");
	memset(name + strlen(name), 'Q', 5000);
	strcat(name, "=1");
	load1(name, &res);
	CHECK(res.problems == 1 && res.nlines == 1 && res.err_len < 300 &&
	      strstr(res.err, "libzswap: ZSWAP_\\x01QQQ") && strstr(res.err, "(5007 bytes)") &&
	      strstr(res.err, "is not a libzswap option; ignored\n"), "%s", res.err);

	for (size_t i = 0; i + 1 < res.err_len; i++)
		CHECK((unsigned char)res.err[i] >= 0x20 && (unsigned char)res.err[i] < 0x7f,
		      "raw byte %#x in the message", (unsigned char)res.err[i]);
}

/* ---- unknown names ----------------------------------------------------------------- */

static void test_unknown_names(void)
{
	static const struct {
		const char *entry;
		const char *line;
	} cases[] = {
		{ "ZSWAP_COMPRSSOR=zstd", "libzswap: ZSWAP_COMPRSSOR is not a libzswap option "
		  "(did you mean ZSWAP_COMPRESSOR?); ignored\n" },
		{ "ZSWAP_ENABLE=0", "libzswap: ZSWAP_ENABLE is not a libzswap option "
		  "(did you mean ZSWAP_ENABLED?); ignored\n" },
		{ "ZSWAP_FAULTAROUND=4", "libzswap: ZSWAP_FAULTAROUND is not a libzswap option "
		  "(did you mean ZSWAP_FAULT_AROUND?); ignored\n" },
		{ "ZSWAP_NR_POLOS=4", "libzswap: ZSWAP_NR_POLOS is not a libzswap option "
		  "(did you mean ZSWAP_NR_POOLS?); ignored\n" },
		{ "ZSWAP_VERBOSITY=1", "libzswap: ZSWAP_VERBOSITY is not a libzswap option "
		  "(did you mean ZSWAP_VERBOSE?); ignored\n" },
		{ "ZSWAP_ORDER=3", "libzswap: ZSWAP_ORDER is not a libzswap option "
		  "(did you mean ZSWAP_ZSPAGE_ORDER?); ignored\n" },
		{ "ZSWAP_MIN_REGION_SIZE=1M", "libzswap: ZSWAP_MIN_REGION_SIZE is not a libzswap "
		  "option (did you mean ZSWAP_MIN_REGION?); ignored\n" },
		{ "zswap_verbose=1", "libzswap: zswap_verbose is not a libzswap option "
		  "(did you mean ZSWAP_VERBOSE?); ignored\n" },
		{ "ZSWAP_XYZZY=1", "libzswap: ZSWAP_XYZZY is not a libzswap option; ignored\n" },
		{ "ZSWAP_POOL=1", "libzswap: ZSWAP_POOL is not a libzswap option; ignored\n" },
		{ "ZSWAP_=1", "libzswap: ZSWAP_ is not a libzswap option; ignored\n" },
	};
	struct load_result res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		load1(cases[i].entry, &res);
		CHECK(res.problems == 1 && strcmp(res.err, cases[i].line) == 0,
		      "%s gave %d problems: %s", cases[i].entry, res.problems, res.err);
		struct opt_values d;
		char a[512], b[512];
		opt_defaults(&d);
		format_all(&res.v, a, sizeof(a));
		format_all(&d, b, sizeof(b));
		CHECK(strcmp(a, b) == 0, "%s changed a value: %s", cases[i].entry, a);
	}
}

/* ---- several problems at once --------------------------------------------------------- */

static void test_several(void)
{
	const char *env[] = {
		"HOME=/root",
		"ZSWAP_NR_POOLS=8",		/* good */
		"ZSWAP_ZSPAGE_ORDER=9",		/* bad */
		"ZSWAP_COMPRESSOR=bz2",		/* bad */
		"ZSWAP_TYPO=1",			/* unknown */
		"ZSWAP_VERBOSE=2",		/* good */
		"ZSWAP_MIN_REGION=12Q",		/* bad */
		"ZSWAP_POOL_LOCK=pool",		/* good */
		NULL,
	};
	struct load_result res;

	load_in_child(env, NULL, &res);
	CHECK(res.problems == 4 && res.nlines == 4, "%d problems, %d lines: %s",
	      res.problems, res.nlines, res.err);
	CHECK(res.v.nr_pools == 8 && res.v.verbose == 2 && res.v.pool_lock == ZS_LOCK_POOL,
	      "good values applied");
	CHECK(res.v.zspage_order == 3 && res.v.comp == ZSWAP_COMP_LZ4 &&
	      res.v.min_region == 256 << 10, "bad values left at defaults");

	/* In the order of the environment, each line starting with the prefix. */
	const char *order[] = { "ZSWAP_ZSPAGE_ORDER=\"9\"", "ZSWAP_COMPRESSOR=\"bz2\"",
				"ZSWAP_TYPO is not", "ZSWAP_MIN_REGION=\"12Q\"" };
	const char *line = res.err;
	for (size_t i = 0; i < 4 && line && *line; i++) {
		CHECK(strncmp(line, "libzswap: ", 10) == 0 &&
		      strncmp(line + 10, order[i], strlen(order[i])) == 0,
		      "line %zu: %.80s", i, line);
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}

	/* Eleven bad values at once: eleven lines (below zlog's burst of 20). */
	const char *all_bad[OPT__COUNT + 1];
	static char entries[OPT__COUNT][64];
	for (int i = 0; i < OPT__COUNT; i++) {
		snprintf(entries[i], sizeof(entries[i]), "%s=bogus", opt_table[i].name);
		all_bad[i] = entries[i];
	}
	all_bad[OPT__COUNT] = NULL;
	load_in_child(all_bad, NULL, &res);
	CHECK(res.problems == OPT__COUNT && res.nlines == OPT__COUNT, "%d problems, %d lines",
	      res.problems, res.nlines);
	for (int i = 0; i < OPT__COUNT; i++) {
		char want[96];
		snprintf(want, sizeof(want), "libzswap: %s=\"bogus\": expected ", opt_table[i].name);
		CHECK(strstr(res.err, want) != NULL, "no line for %s", opt_table[i].name);
	}
}

/* ---- formatting, store config, listing ------------------------------------------------------ */

static void test_format_and_config(void)
{
	struct opt_values v;
	struct zswap_store_config cfg;
	char buf[1024], why[128];

	opt_defaults(&v);
	CHECK(opt_parse_one(OPT_COMPRESSOR, "zstd:7", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_ZSPAGE_ORDER, "4", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_POOL_LOCK, "pool", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_NR_POOLS, "32", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_MAX_POOL_SIZE, "3G", &v, why, sizeof(why)), "%s", why);
	CHECK(!opt_parse_one(OPT__COUNT, "1", &v, why, sizeof(why)), "bad id");
	CHECK(!opt_parse_one(OPT_VERBOSE, NULL, &v, why, sizeof(why)), "NULL text");
	CHECK(!opt_parse_one(OPT_VERBOSE, "9", &v, NULL, 0), "NULL why");

	opt_store_config(&v, &cfg);
	CHECK(cfg.comp == ZSWAP_COMP_ZSTD && cfg.level == 7 && cfg.order == 4 &&
	      cfg.lock == ZS_LOCK_POOL && cfg.nr_pools == 32 && cfg.mem_limit == 3ULL << 30,
	      "store config");
	opt_defaults(&v);
	opt_store_config(&v, &cfg);
	CHECK(cfg.comp == ZSWAP_COMP_LZ4 && cfg.level == 0 && cfg.order == 3 &&
	      cfg.lock == ZS_LOCK_CLASS && cfg.nr_pools == 1 && cfg.mem_limit == 0,
	      "default store config");

	/* Every value formats to text that parses back to itself. */
	opt_defaults(&v);
	CHECK(opt_parse_one(OPT_COMPRESSOR, "zstd:12", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_MIN_REGION, "12345", &v, why, sizeof(why)), "%s", why);
	CHECK(opt_parse_one(OPT_ENABLED, "off", &v, why, sizeof(why)), "%s", why);
	for (int i = 0; i < OPT__COUNT; i++) {
		struct opt_values w;
		char text[64];

		opt_defaults(&w);
		opt_format((enum opt_id)i, &v, text, sizeof(text));
		CHECK(opt_parse_one((enum opt_id)i, text, &w, why, sizeof(why)),
		      "%s=%s does not parse back: %s", opt_table[i].name, text, why);
		opt_format((enum opt_id)i, &w, buf, sizeof(buf));
		CHECK(strcmp(text, buf) == 0, "%s: %s vs %s", opt_table[i].name, text, buf);
	}

	opt_format_all(&v, buf, sizeof(buf));
	CHECK(strstr(buf, "ZSWAP_ENABLED=0 ") == buf && strstr(buf, " ZSWAP_COMPRESSOR=zstd:12 ") &&
	      strstr(buf, " ZSWAP_MIN_REGION=16K ") && strstr(buf, " ZSWAP_VERBOSE=0"),
	      "%s", buf);
	/* Truncation keeps a terminated string. */
	size_t n = opt_format_all(&v, buf, 10);
	CHECK(n == 9 && strlen(buf) == 9, "truncated to %zu: %s", n, buf);
}

static void test_list(void)
{
	int p[2];
	char out[8192];
	size_t len;

	if (pipe(p)) {
		perror("pipe");
		exit(99);
	}
	CHECK(opt_list(p[1]) == 0, "opt_list");
	close(p[1]);
	len = read_all(p[0], out, sizeof(out) - 1);
	out[len] = '\0';
	close(p[0]);

	int lines = 0;
	for (char *l = out; *l; lines++) {
		char *nl = strchr(l, '\n');
		CHECK(nl != NULL, "unterminated line");
		if (!nl)
			break;
		if (lines == 0) {
			CHECK(strncmp(l, "NAME", 4) == 0, "header: %.40s", l);
		} else if (lines <= OPT__COUNT) {
			const struct opt_def *d = &opt_table[lines - 1];
			char name[64], def[64], range[64], unit[64];
			CHECK(sscanf(l, "%63s %63s %63s %63s", name, def, range, unit) == 4,
			      "fields: %.80s", l);
			CHECK(strcmp(name, d->name) == 0 && strcmp(def, d->def) == 0,
			      "row %d: %.80s", lines, l);
			*nl = '\0';
			CHECK(strstr(l, d->help) != NULL, "help of %s", d->name);
		}
		l = nl + 1;
	}
	CHECK(lines == OPT__COUNT + 1, "%d lines", lines);
}

/* The deferred start's exceptions come from the table: every OPT_F_START
 * option set makes the library start at once, none set does not, and the
 * dump options and the test hooks are all flagged. */
static void test_starts_now(void)
{
	struct opt_values d, v;
	char why[256];
	int flagged = 0;

	opt_defaults(&d);
	CHECK(!opt_starts_now(&d), "the defaults start the library at once");
	for (int i = 0; i < OPT__COUNT; i++) {
		const struct opt_def *o = &opt_table[i];
		bool want = strncmp(o->name, "ZSWAP_INJECT_", 13) == 0 || o->id == OPT_STATS_AT_EXIT ||
			    o->id == OPT_STATS_INTERVAL;
		CHECK(!!(o->flags & OPT_F_START) == want, "%s %s OPT_F_START", o->name, want ? "lacks" : "has");
		if (!(o->flags & OPT_F_START))
			continue;
		flagged++;
		v = d;
		CHECK(opt_parse_one(o->id, "1", &v, why, sizeof(why)), "%s=1: %s", o->name, why);
		CHECK(opt_starts_now(&v), "%s=1 does not start the library at once", o->name);
	}
	CHECK(flagged == 10, "%d options flagged OPT_F_START, expected 10", flagged);
}

int main(void)
{
	test_table();
	test_starts_now();
	test_good_values();
	test_bad_values();
	test_odd_bytes();
	test_unknown_names();
	test_several();
	test_format_and_config();
	test_list();
	if (failures) {
		fprintf(stderr, "test_options: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_options: all checks passed\n");
	return 0;
}
