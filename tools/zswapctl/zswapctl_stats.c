/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_stats.c - `zswapctl stats` and `watch`: talking to running
 * processes under libzswap through their statistics sockets.
 *
 * A request is one line ("text", "json" or "counters"); the answer runs
 * until the library closes. zswapctl_sock.c finds the socket and checks
 * it; what the process sends reaches the terminal through zswapctl_print.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zswapctl.h"

int zswapctl_parse_pid(const struct zswapctl_cmd *cmd, const char *s, long *pid)
{
	unsigned long v;
	const char *cause;

	if (!s)
		return zswapctl_usage_error(cmd, "a PID is needed");
	if (!zswapctl_parse_uint(s, 1, 4194304, &v, &cause))
		return zswapctl_usage_error(cmd, "PID '%s': %s", s, cause);
	*pid = (long)v;
	return 0;
}

/* pid's dump (req): malloc'd, or NULL after one line on stderr. */
static char *stats_fetch(const struct zswapctl_cmd *cmd, long pid, const char *req, size_t *len)
{
	int fd = zswapctl_connect(cmd, pid);
	if (fd < 0)
		return NULL;
	char *out = zswapctl_request(cmd, pid, fd, req, ZSWAPCTL_STATS_TIMEOUT_S, len);
	close(fd);
	if (out && *len == 0) {
		fprintf(stderr, "zswapctl: %s: process %ld sent no statistics\n", cmd->name, pid);
		free(out);
		out = NULL;
	}
	return out;
}

/* Where the group section of a text dump starts and where the next
 * section starts (or the dump ends): false when it has none. */
static bool stats_group_span(const char *d, size_t len, size_t *from, size_t *to)
{
	static const char head[] = "\n== group ";
	const char *p = memmem(d, len, head, sizeof(head) - 1);

	if (!p)
		return false;
	*from = (size_t)(p - d) + 1;
	const char *q = memmem(d + *from, len - *from, "\n==", 3);
	*to = q ? (size_t)(q - d) + 1 : len;
	return true;
}

/* The dumps of a group's members: in text, the group's section once (from
 * the first member's dump that has one), the members' rows of zswapctl
 * list, then each member's dump without its group section (every member's
 * shows the same group); in JSON, {"group": ..., "members": [dump, ...]}.
 * 1 when a member could not be asked (the others are printed). */
static int stats_group(const struct zswapctl_cmd *cmd, const char *arg, const char *req, bool json)
{
	struct zswapctl_procs m = { 0 };
	int rc = zswapctl_group_members(cmd, arg, &m);
	if (rc)
		return rc;
	char **out = calloc(m.n, sizeof(*out));
	size_t *len = calloc(m.n, sizeof(*len)), from = 0, to = 0;
	bool have = false;

	if (!out || !len) {
		fprintf(stderr, "zswapctl: %s: out of memory\n", cmd->name);
		free(out);
		out = NULL;
		rc = 1;
	}
	for (size_t i = 0; out && i < m.n; i++)
		if (!(out[i] = stats_fetch(cmd, m.p[i].pid, req, &len[i])))
			rc = 1;	/* gone since it was listed: the others still */
	if (out && json) {
		fputs("{\"group\":", stdout);
		zswapctl_json_group(stdout, &m.p[0].grp);
		fputs(",\"members\":[", stdout);
		for (size_t i = 0, k = 0; i < m.n; i++) {
			size_t n = len[i];

			if (!out[i])
				continue;
			while (n && (out[i][n - 1] == '\n' || out[i][n - 1] == ' '))
				n--;
			fputs(k++ ? "," : "", stdout);
			zswapctl_print(stdout, out[i], n);
		}
		fputs("]}\n", stdout);
	} else if (out) {
		for (size_t i = 0; i < m.n && !have; i++)
			if (out[i] && stats_group_span(out[i], len[i], &from, &to)) {
				zswapctl_print(stdout, out[i] + from, to - from);
				have = true;
			}
		fputs("== members (zswapctl list)\n", stdout);
		zswapctl_procs_table(stdout, &m, "\n");
		for (size_t i = 0; i < m.n; i++) {
			if (!out[i])
				continue;
			if (!stats_group_span(out[i], len[i], &from, &to))
				from = to = len[i];
			zswapctl_print(stdout, out[i], from);
			zswapctl_print(stdout, out[i] + to, len[i] - to);
		}
	}
	for (size_t i = 0; out && i < m.n; i++)
		free(out[i]);
	free(out);
	free(len);
	free(m.p);
	return rc;
}

static const struct option ctl_stats_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "full", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int zswapctl_stats(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	int json = 0, full = 0, c;
	long pid;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jfh", ctl_stats_opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'f')
			full = 1;
		else if (c == 'h')
			return zswapctl_cmd_help(cmd);
		else
			return zswapctl_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
	}
	if (optind + 1 < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	/* A library without the full form reads "text full" as "text". */
	const char *req = json ? (full ? "json full\n" : "json\n") : (full ? "text full\n" : "text\n");
	if (zswapctl_is_group(argv[optind]))
		return stats_group(cmd, argv[optind], req, json);
	if ((c = zswapctl_parse_pid(cmd, argv[optind], &pid)) != 0)
		return c;
	size_t len;
	char *out = stats_fetch(cmd, pid, req, &len);
	if (!out)
		return 1;
	zswapctl_print(stdout, out, len);
	free(out);
	return 0;
}

/* ---- watch ----------------------------------------------------------------- */

#define WATCH_N 9
static const char *const watch_names[WATCH_N] = {
	"zswpout", "zswpin", "faults", "refaults", "evicted_pages", "stored_pages",
	"pool_total_size", "orig_data_size", "refault_p50_ns",
};

static int watch_sample(long pid, const struct zswapctl_cmd *cmd, unsigned long long v[WATCH_N])
{
	int fd = zswapctl_connect(cmd, pid);
	size_t len;

	if (fd < 0)
		return -1;
	char *out = zswapctl_request(cmd, pid, fd, "counters\n", ZSWAPCTL_STATS_TIMEOUT_S, &len);
	close(fd);
	if (!out)
		return -1;
	for (int i = 0; i < WATCH_N; i++)
		if (!zswapctl_counter(out, len, watch_names[i], &v[i]))
			v[i] = 0;
	free(out);
	return 0;
}

static const struct option ctl_interval_opts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int zswapctl_interval_count(const struct zswapctl_cmd *cmd, int argc, char **argv, unsigned long *interval,
			    unsigned long *count)
{
	const char *cause;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+i:c:h", ctl_interval_opts, NULL)) != -1) {
		if (c == 'h')
			return zswapctl_cmd_help(cmd);
		if (c == 'i' && !zswapctl_parse_uint(optarg, 1, 3600, interval, &cause))
			return zswapctl_usage_error(cmd, "--interval '%s': %s, expected 1..3600", optarg, cause);
		if (c == 'c' && !zswapctl_parse_uint(optarg, 1, 1000000, count, &cause))
			return zswapctl_usage_error(cmd, "--count '%s': %s, expected 1..1000000", optarg, cause);
		if (c == '?' || c == ':')
			return zswapctl_usage_error(cmd, "unknown option or missing value: '%s'",
						    argv[optind - 1]);
	}
	return -1;
}

int zswapctl_watch(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	unsigned long interval = 1, count = 0;
	long pid;
	int c;

	if ((c = zswapctl_interval_count(cmd, argc, argv, &interval, &count)) >= 0)
		return c;
	if (optind + 1 < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if ((c = zswapctl_parse_pid(cmd, argv[optind], &pid)) != 0)
		return c;
	unsigned long long prev[WATCH_N], cur[WATCH_N];
	if (watch_sample(pid, cmd, prev) != 0)
		return 1;
	/* As vmstat: rates per second over the interval, levels as they are. */
	printf("%10s %10s %10s %10s %10s %12s %12s %8s %10s\n", "zswpout/s", "zswpin/s", "faults/s",
	       "refault/s", "evicted/s", "stored", "pool_bytes", "ratio", "p50_ns");
	fflush(stdout);
	for (unsigned long k = 0; !count || k < count; k++) {
		sleep((unsigned int)interval);
		if (watch_sample(pid, cmd, cur) != 0)
			return 1;
		unsigned long long d[5];
		for (int i = 0; i < 5; i++)
			d[i] = (cur[i] - prev[i]) / interval;
		double ratio = cur[6] ? (double)cur[7] / (double)cur[6] : 0.0;
		printf("%10llu %10llu %10llu %10llu %10llu %12llu %12llu %8.2f %10llu\n", d[0], d[1], d[2],
		       d[3], d[4], cur[5], cur[6], ratio, cur[8]);
		fflush(stdout);
		memcpy(prev, cur, sizeof(prev));
	}
	return 0;
}
