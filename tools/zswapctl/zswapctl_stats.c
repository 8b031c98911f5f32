/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_stats.c - `zswapctl stats`, `watch` and `list`: talking to
 * running processes under libzswap through their statistics sockets.
 *
 * A request is one line ("text", "json" or "counters"); the answer runs
 * until the library closes. zswapctl_sock.c finds the socket and checks
 * it; what the process sends reaches the terminal through zswapctl_print.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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
	if ((c = zswapctl_parse_pid(cmd, argv[optind], &pid)) != 0)
		return c;
	int fd = zswapctl_connect(cmd, pid);
	if (fd < 0)
		return 1;
	size_t len;
	/* A library without the full form reads "text full" as "text". */
	const char *req = json ? (full ? "json full\n" : "json\n") : (full ? "text full\n" : "text\n");
	char *out = zswapctl_request(cmd, pid, fd, req, ZSWAPCTL_STATS_TIMEOUT_S, &len);
	close(fd);
	if (!out)
		return 1;
	if (len == 0) {
		fprintf(stderr, "zswapctl: %s: process %ld sent no statistics\n", cmd->name, pid);
		free(out);
		return 1;
	}
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

static const struct option ctl_watch_opts[] = {
	{ "interval", required_argument, NULL, 'i' },
	{ "count", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int zswapctl_watch(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	unsigned long interval = 1, count = 0;
	const char *cause;
	long pid;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+i:c:h", ctl_watch_opts, NULL)) != -1) {
		if (c == 'h')
			return zswapctl_cmd_help(cmd);
		if (c == 'i' && !zswapctl_parse_uint(optarg, 1, 3600, &interval, &cause))
			return zswapctl_usage_error(cmd, "--interval '%s': %s, expected 1..3600", optarg, cause);
		if (c == 'c' && !zswapctl_parse_uint(optarg, 1, 1000000, &count, &cause))
			return zswapctl_usage_error(cmd, "--count '%s': %s, expected 1..1000000", optarg, cause);
		if (c == '?' || c == ':')
			return zswapctl_usage_error(cmd, "unknown option or missing value: '%s'",
						    argv[optind - 1]);
	}
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

/* ---- list ------------------------------------------------------------------- */

/* One socket of a listed directory: printed if its server is the process
 * its name gives, alive and under libzswap. */
static void list_one(const struct zswapctl_cmd *cmd, const struct zswapctl_dirs *ds, int i,
		     const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	struct ucred cr;
	uid_t uid;

	if (pid <= 0 || strcmp(end, ".sock") != 0)
		return;
	if ((kill((pid_t)pid, 0) != 0 && errno == ESRCH) || !zswapctl_proc_euid(pid, &uid))
		return;	/* a killed process's socket */
	/* Alive, but perhaps a process that exec'd without the library:
	 * only a socket that answers counts, and only from that process. */
	int fd = zswapctl_dial(ds->fd[i], name);
	if (fd < 0)
		return;
	bool ok = zswapctl_peer_ok(fd, pid, uid, &cr);
	close(fd);
	if (!ok) {
		fprintf(stderr, "zswapctl: %s: the socket %s/%s is served by pid %ld of user %lu, not "
			"process %ld: skipped\n", cmd->name, ds->path[i], name, (long)cr.pid,
			(unsigned long)cr.uid, pid);
		return;
	}
	char path[64], comm[64] = "?", shown[4 * sizeof(comm) + 1];
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	/* The name is the program's to choose: escaped like a reply. */
	zswapctl_escape(comm, strlen(comm), shown);
	printf("%8ld %-16s %s/%s\n", pid, shown, ds->path[i], name);
}

int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct zswapctl_dirs ds;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return zswapctl_cmd_help(cmd);
		return zswapctl_usage_error(cmd, argv[i][0] == '-' ? "unknown option '%s'"
								   : "unexpected argument '%s'", argv[i]);
	}
	zswapctl_dirs_open(&ds, geteuid());
	if (ds.notes[0])	/* "; DIR: why: skipped" */
		fprintf(stderr, "zswapctl: %s: %s\n", cmd->name, ds.notes + 2);
	printf("%8s %-16s %s\n", "PID", "COMMAND", "SOCKET");
	for (int i = 0; i < ds.n; i++) {
		int dfd = dup(ds.fd[i]);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		struct dirent *e;

		if (!d) {
			if (dfd >= 0)
				close(dfd);
			continue;
		}
		while ((e = readdir(d)))
			list_one(cmd, &ds, i, e->d_name);
		closedir(d);
	}
	zswapctl_dirs_close(&ds);
	return 0;
}
