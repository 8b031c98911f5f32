/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl.c - command-line front end: find the subcommand, run it.
 *
 * Adding a subcommand: write tools/zswapctl/zswapctl_<name>.c with its run
 * function, declare it in zswapctl.h, add a row to zswapctl_cmds[] and the
 * file to mk/tools.am, and document it in man/zswapctl.1.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "zswapctl.h"
#include "core/options.h"
#include "core/parse.h"

static const struct zswapctl_cmd zswapctl_cmds[] = {
	{
		.name = "run",
		.synopsis = "[--limit LIMIT] [--scope tree|process] [-o NAME=VALUE]... [--lib PATH] [--] PROGRAM [ARGS...]",
		.summary = "run a program under libzswap with these settings",
		.help =
		"Run PROGRAM with libzswap preloaded: zswapctl puts the library first in\n"
		"LD_PRELOAD (keeping what is there), sets the options and executes PROGRAM\n"
		"in its own place, so the program has zswapctl's process ID and its exit\n"
		"status is zswapctl's. Every setting is checked as libzswap reads it\n"
		"before anything runs; a bad one is a usage error.\n"
		"\n"
		"  --limit LIMIT    ZSWAP_MEMORY_LIMIT: a size (64M, 2G, 1GiB: K, M, G, T are\n"
		"                   powers of 1024, B or iB may follow), N% or auto, 0 for none.\n"
		"                   N% is N percent of the memory cgroup's limit, or of physical\n"
		"                   memory outside a limited cgroup; auto is 7/8 of the cgroup's\n"
		"                   limit, or no limit outside one. It covers PROGRAM and every\n"
		"                   process it starts, together (a memory cgroup's memory.max);\n"
		"                   inside such a group it makes a child group\n"
		"  --scope SCOPE    ZSWAP_MEMORY_SCOPE: tree (the default) or process (each\n"
		"                   process its own limit)\n"
		"  -o NAME=VALUE    ZSWAP_NAME=VALUE: any option of libzswap(7), named with or\n"
		"                   without ZSWAP_, in any case (-o cold_age=10); repeatable.\n"
		"                   Switches take 1/0, yes/no, on/off, true/false (and auto\n"
		"                   where libzswap(7) says so)\n"
		"  --lib PATH       the library to preload (default: $ZSWAPCTL_LIBRARY, else\n"
		"                   .libs/libzswap.so of the build tree zswapctl runs from,\n"
		"                   else the installed library,\n"
		"                   " ZSWAPCTL_DEFAULT_LIBRARY ")\n"
		"  -h, --help       this text\n"
		"\n"
		"A setting is checked as the library checks the environment, with the same\n"
		"words and messages (\"did you mean\" for a misspelt name), and the\n"
		"directory of the second tier (ZSWAP_BACKING_DIR, from -o or the\n"
		"environment) must exist, be a directory, be writable and not be on tmpfs.\n"
		"\n"
		"Exit status: PROGRAM's; 126 if it cannot be executed, 127 if it is not\n"
		"found, 2 on a usage error, 1 if the library is not there or the\n"
		"directory of the second tier cannot hold it.\n",
		.run = zswapctl_run,
	},
	{
		.name = "classes",
		.synopsis = "[--order N]",
		.summary = "print the size-class table of a fresh zsmalloc pool",
		.help =
		"Print the size classes of an empty pool whose zspages hold up to 2^N\n"
		"pages, in the format of the kernel's debugfs file\n"
		"/sys/kernel/debug/zsmalloc/<pool>/classes (one row per class that is\n"
		"not merged into a larger one), then the huge-class watermark.\n"
		"\n"
		"  --order N   zspage order, 2..4 (default 3, as ZSWAP_ZSPAGE_ORDER)\n"
		"  -h, --help  this text\n",
		.run = zswapctl_classes,
	},
	{
		.name = "stats",
		.synopsis = "[--json] [--full] PID|@GROUP",
		.summary = "print the statistics dump of a process (or a group) under libzswap",
		.help =
		"Ask process PID, running under libzswap, for its statistics dump (the\n"
		"one ZSWAP_STATS_SIGNAL writes; see libzswap(7)) and print it here: a\n"
		"summary in human units first (memory saved, stored and pool with the\n"
		"ratio, the second tier, limit and charge, refaults and stores per\n"
		"second lately, time held at the limit), then the full sections.\n"
		"The process answers through its statistics socket, so its standard\n"
		"error does not matter. Only its own user (or root) may ask, and\n"
		"only a socket the process itself serves is believed (zswapctl(1),\n"
		"SECURITY).\n"
		"\n"
		"@GROUP is a group of processes under one limit: @ and its token, or the\n"
		"token's first 8 or more hex digits (zswapctl list's GROUP column). It\n"
		"prints the group's section once (memory.current, memory.max,\n"
		"memory.events, members), its members' rows of zswapctl list, then every\n"
		"member's dump without its group section; with --json one object,\n"
		"{\"group\": {...}, \"members\": [dump, ...]}. Exits 1 if a member is gone.\n"
		"\n"
		"  --json      the dump as one JSON object\n"
		"  --full      with the empty size classes and the test-only knobs\n"
		"              (ZSWAP_INJECT_*), as ZSWAP_STATS_FULL=1 makes every dump\n"
		"  -h, --help  this text\n",
		.run = zswapctl_stats,
	},
	{
		.name = "watch",
		.synopsis = "[--interval N] [--count N] PID",
		.summary = "show live rates of a process under libzswap, as vmstat does",
		.help =
		"Every N seconds print one line for process PID: pages stored\n"
		"(zswpout/s), loaded back (zswpin/s), faults and refaults per second,\n"
		"pages evicted per second, then pages stored now, the pool's size in\n"
		"bytes, the compression ratio (orig_data_size / pool_total_size) and\n"
		"the refault latency's p50 in nanoseconds.\n"
		"\n"
		"  --interval N  seconds between lines, 1..3600 (default 1)\n"
		"  --count N     stop after N lines (default: until interrupted)\n"
		"  -h, --help    this text\n",
		.run = zswapctl_watch,
	},
	{
		.name = "set",
		.synopsis = "PID|@GROUP NAME=VALUE...",
		.summary = "change options of a process (or a group) running under libzswap",
		.help =
		"Change options of process PID while it runs, as if it had started with\n"
		"them: NAME is an option of libzswap(7), with or without ZSWAP_, in any\n"
		"case (memory_limit=256M, ZSWAP_COLD_AGE=30). Only those libzswap(7)\n"
		"marks as changeable at run time are accepted: ZSWAP_MEMORY_LIMIT,\n"
		"ZSWAP_MEMORY_CHARGE, ZSWAP_COLD_AGE, ZSWAP_MAX_POOL_SIZE,\n"
		"ZSWAP_MAX_POOL_PERCENT, ZSWAP_ACCEPT_THRESHOLD_PERCENT, ZSWAP_WRITEBACK,\n"
		"ZSWAP_WRITEBACK_LIMIT, ZSWAP_WRITEBACK_LIMIT_ENABLE, ZSWAP_RECOMP_IDLE_AGE,\n"
		"ZSWAP_READAHEAD, ZSWAP_VERBOSE and ZSWAP_STATS_{INTERVAL,FORMAT,AT_EXIT,FULL}.\n"
		"Every value is checked first; one bad value changes nothing. Prints\n"
		"each change as NAME=NEW (was OLD); the process's dump lists them in its\n"
		"configuration section. Only its own user (or root) may ask.\n"
		"\n"
		"@GROUP (as for zswapctl stats) changes every member of a group: the\n"
		"limit goes to one member, since the group's memory.max is one value all\n"
		"members hold to; every other setting goes to each member. Each member's\n"
		"answer follows a \"pid N:\" line; exits 1 if a member failed.\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_set,
	},
	{
		.name = "reclaim",
		.synopsis = "PID SIZE",
		.summary = "free SIZE bytes of a process's charge now, coldest memory first (memory.reclaim)",
		.help =
		"Store the process's resident managed memory in its pool now, coldest\n"
		"first, until its charge has gone down by SIZE bytes (K, M, G, T:\n"
		"powers of 1024), as writing to a memory cgroup's memory.reclaim does,\n"
		"whatever its limit. Prints the charge freed, what was stored for it\n"
		"(more: the pool holding it is charged too), and the pool and the charge\n"
		"before and after. Exits 1 when less than SIZE was freed (nothing more\n"
		"was resident to store).\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_reclaim,
	},
	{
		.name = "compact",
		.synopsis = "PID",
		.summary = "compact the pool of a process under libzswap (zram's compact)",
		.help =
		"Move the objects of partly used zspages together and free the pages\n"
		"that empties, as writing to zram's compact does; prints the pages\n"
		"freed (also counted in pages_compacted) and the pool before and after.\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_compact,
	},
	{
		.name = "writeback",
		.synopsis = "PID idle[=SECONDS]|huge|incompressible|PAGES",
		.summary = "write pages of a process's pool to its second tier now (zram's writeback)",
		.help =
		"Write pages held in the pool of process PID to its second tier now,\n"
		"with or without a memory limit, as writing to zram's writeback does:\n"
		"\n"
		"  idle            every page in the pool\n"
		"  idle=SECONDS    the pages stored at least SECONDS ago\n"
		"  huge            the pages held whole (the huge size class)\n"
		"  incompressible  the pages held whole that do not shrink at all\n"
		"  PAGES           that many pages, those saving least in the pool first\n"
		"\n"
		"With ZSWAP_WRITEBACK_LIMIT_ENABLE=1 at most ZSWAP_WRITEBACK_LIMIT pages\n"
		"are written, each spending the budget. Prints the pages written, the\n"
		"pool before and after and the budget left. Exits 1 when the budget is\n"
		"spent or the process writes nothing back (ZSWAP_WRITEBACK=0).\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_writeback,
	},
	{
		.name = "recompress",
		.synopsis = "PID [idle[=SECONDS]] [huge] [threshold=BYTES]",
		.summary = "compress a process's pool pages again with ZSWAP_RECOMP_ALGORITHM (zram's recompress)",
		.help =
		"Compress pages held in the pool of process PID again with its second\n"
		"algorithm (ZSWAP_RECOMP_ALGORITHM, zstd unless set), as writing to\n"
		"zram's recompress does; a page is kept so only when it lands in a\n"
		"smaller size class, and is not tried again until it changes. Every\n"
		"condition given must hold:\n"
		"\n"
		"  idle            (no more than every page in the pool)\n"
		"  idle=SECONDS    pages stored at least SECONDS ago\n"
		"  huge            pages held whole (the huge size class)\n"
		"  threshold=BYTES pages taking at least BYTES (1..4096) in the pool\n"
		"\n"
		"Prints the pages recompressed (num_recompressed), kept as they were,\n"
		"failed, and the pool before and after.\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_recompress,
	},
	{
		.name = "reset",
		.synopsis = "PID",
		.summary = "start the counters of a process under libzswap again from 0",
		.help =
		"Make every counter since start (zswpout, refaults, pgsteal...) read 0\n"
		"from now on and mem_used_max the pool's size now. What the process\n"
		"holds (stored_pages, pool_total_size...) is not touched.\n"
		"\n"
		"  -h, --help  this text\n",
		.run = zswapctl_reset,
	},
	{
		.name = "list",
		.synopsis = "[--json]",
		.summary = "list this user's processes under libzswap in a table, as zramctl",
		.help =
		"Print one row for every process of this user that runs under libzswap\n"
		"and offers its statistics (a socket served by another process is\n"
		"skipped with a line on stderr), as zramctl does for zram devices: PID,\n"
		"COMMAND, LIMIT (ZSWAP_MEMORY_LIMIT, - for none), CHARGE (the memory\n"
		"charged now), STORED (uncompressed), POOL, RATIO (STORED / POOL), TIER\n"
		"(in the second tier), REFAULTS/s (lately), GROUP (the first 8 hex digits\n"
		"of the process's group's token, - for none) and SOCKET. Sizes are in\n"
		"powers of 1024 (K, M, G).\n"
		"\n"
		"The members of a group follow one row for the group: PID \"group\",\n"
		"COMMAND members=N, LIMIT its memory.max, CHARGE its memory.current,\n"
		"STORED, POOL, TIER and REFAULTS/s summed over the members listed, and\n"
		"in the last column its memory.events (and, for a group inside\n"
		"another, parent= and the parent's first 8 hex digits).\n"
		"\n"
		"  --json      the rows as a JSON array of objects, sizes in bytes; \"group\"\n"
		"              is null or the process's group (token, parent,\n"
		"              memory.current, memory.max, memory.events.*, members)\n"
		"  -h, --help  this text\n",
		.run = zswapctl_list,
	},
	{
		.name = "top",
		.synopsis = "[--interval N] [--count N]",
		.summary = "show the list's table of every process under libzswap, refreshed",
		.help =
		"Draw zswapctl list's table (with its groups' rows) in the terminal and\n"
		"draw it again every N seconds, with processes coming and going, until q\n"
		"is pressed (or an interrupt). Plain ANSI escapes, no curses.\n"
		"\n"
		"  --interval N  seconds between refreshes, 1..3600 (default 2)\n"
		"  --count N     stop after N tables (default: until q)\n"
		"  -h, --help    this text\n",
		.run = zswapctl_top,
	},
};

#define ZSWAPCTL_NR_CMDS (sizeof(zswapctl_cmds) / sizeof(zswapctl_cmds[0]))

static void zswapctl_usage(FILE *f)
{
	fprintf(f, "usage: zswapctl COMMAND [OPTIONS]\n"
		   "       zswapctl COMMAND --help\n"
		   "       zswapctl --help | --version\n\n"
		   "Run programs under libzswap, the kernel's zswap modelled inside one\n"
		   "process, inspect them and change them while they run.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ZSWAPCTL_NR_CMDS; i++) {
		const struct zswapctl_cmd *c = &zswapctl_cmds[i];

		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	}
	fprintf(f, "\nA process is reached through its statistics socket, trusted only in a\n"
		   "private directory of the process's user or root and only when served by\n"
		   "that process (SO_PEERCRED); its answer is bounded in time and size, and\n"
		   "bytes other than printable ASCII, tab and newline are shown as \\xHH.\n"
		   "\nExit status: 0 on success, 1 on failure, 2 on a usage error; run exits\n"
		   "with its program's status.\n"
		   "See zswapctl(1).\n");
}

int zswapctl_usage_error(const struct zswapctl_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs("zswapctl: ", stderr);
	if (cmd)
		fprintf(stderr, "%s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'zswapctl %s%s--help')\n", cmd ? cmd->name : "", cmd ? " " : "");
	return ZSWAPCTL_EXIT_USAGE;
}

int zswapctl_cmd_help(const struct zswapctl_cmd *cmd)
{
	printf("usage: zswapctl %s %s\n\n%s", cmd->name, cmd->synopsis, cmd->help);
	return 0;
}

bool zswapctl_parse_uint(const char *s, unsigned long min, unsigned long max,
			 unsigned long *out, const char **cause)
{
	uint64_t v;
	enum parse_err e = parse_u64(s, min, max, &v);

	if (e != PARSE_OK) {
		*cause = parse_cause(e);
		return false;
	}
	*out = (unsigned long)v;
	return true;
}

const struct opt_def *zswapctl_check_setting(const struct zswapctl_cmd *cmd, const char *arg,
					     unsigned int how, struct opt_values *v)
{
	const char *eq = strchr(arg, '=');
	const struct opt_def *d;
	char msg[OPT_CHECK_MSG_MAX];

	if (!eq || eq == arg) {
		zswapctl_usage_error(cmd, "'%s': expected NAME=VALUE", arg);
		return NULL;
	}
	if (opt_check(arg, (size_t)(eq - arg), eq + 1, how | OPT_CHECK_LOOSE, v, &d, msg,
		      sizeof(msg)) != OPT_CHECK_OK) {
		zswapctl_usage_error(cmd, "%s: %s", arg, msg);
		return NULL;
	}
	return d;
}

bool zswapctl_option(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return false;
	if (a[n] == '=') {
		*value = a + n + 1;
		(*i)++;
		return true;
	}
	if (a[n] != '\0')
		return false;
	*value = *i + 1 < argc ? argv[*i + 1] : NULL;
	*i += *value ? 2 : 1;
	return true;
}

static const struct option zswapctl_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	int c;

	/* Options before the command only ("+": stop at the first word). */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hV", zswapctl_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			zswapctl_usage(stdout);
			return 0;
		case 'V':
			printf("zswapctl (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			return 0;
		default:
			return zswapctl_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	const char *name = optind < argc ? argv[optind] : NULL;

	if (!name)
		return zswapctl_usage_error(NULL, "no command given");
	if (!strcmp(name, "help")) {
		zswapctl_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < ZSWAPCTL_NR_CMDS; i++) {
		const struct zswapctl_cmd *cmd = &zswapctl_cmds[i];
		int rc;

		if (strcmp(name, cmd->name) != 0)
			continue;
		rc = cmd->run(cmd, argc - optind, argv + optind);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "zswapctl: %s: writing output: %s\n", cmd->name, strerror(errno));
			return 1;
		}
		return rc;
	}
	return zswapctl_usage_error(NULL, "unknown command '%s'", name);
}
