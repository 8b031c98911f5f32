/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_list.c - `zswapctl list` and `zswapctl top`: every process of
 * this user under libzswap at a glance, as zramctl shows every device.
 *
 * Each process is found by its socket in the trusted directories
 * (zswapctl_sock.c), believed only when SO_PEERCRED says the process named
 * serves it, and asked for its "counters" lines: the row is made from
 * those (the rates are the library's own, over its recent requests), its
 * group too (the group.* lines: a process reports the group it is in, so
 * nothing here opens another process's group file). A group's row comes
 * before its members' rows, and a group operand (@TOKEN) of stats and set
 * is found among the same rows. top
 * draws the same table again every interval with plain ANSI escapes in a
 * terminal it puts in non-canonical mode, and quits on q.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "zswapctl.h"

/* What a row shows, from the process's counters. */
static const char *const list_counter[ZSWAPCTL_LV__N] = {
	"memory_max", "memory_current", "orig_data_size", "pool_total_size", "bd_count", "refaults_per_s",
};

/* The group section's values (src/observe/stats.c, stats_group_counters):
 * absent from a process in no group. */
static void list_group(const char *out, size_t len, struct zswapctl_group *g)
{
	memset(g, 0, sizeof(*g));
	if (!out || !zswapctl_counter_hex(out, len, "group.token", g->token, ZSWAPCTL_TOKEN_HEX))
		return;
	if (!zswapctl_counter_hex(out, len, "group.parent", g->parent, ZSWAPCTL_TOKEN_HEX))
		g->parent[0] = '\0';
	zswapctl_counter(out, len, "group.memory.current", &g->current);
	zswapctl_counter(out, len, "group.memory.max", &g->max);
	zswapctl_counter(out, len, "group.memory.peak", &g->peak);
	zswapctl_counter(out, len, "group.memory.events.high", &g->events_high);
	zswapctl_counter(out, len, "group.memory.events.max", &g->events_max);
	zswapctl_counter(out, len, "group.members", &g->members);
}

/* Append a copy of r to set: false when memory runs out. */
static bool list_add(struct zswapctl_procs *set, const struct zswapctl_proc *r)
{
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		struct zswapctl_proc *p = realloc(set->p, cap * sizeof(*p));
		if (!p)
			return false;
		set->p = p;
		set->cap = cap;
	}
	set->p[set->n++] = *r;
	return true;
}

/* The row of one socket of a listed directory, if its server is the
 * process its name gives, alive and under libzswap: true when added. */
static bool list_one(const struct zswapctl_cmd *cmd, const struct zswapctl_dirs *ds, int i,
		     const char *name, struct zswapctl_procs *set)
{
	char *end;
	long pid = strtol(name, &end, 10);
	struct ucred cr;
	uid_t uid;

	if (pid <= 0 || strcmp(end, ".sock") != 0)
		return false;
	if ((kill((pid_t)pid, 0) != 0 && errno == ESRCH) || !zswapctl_proc_euid(pid, &uid))
		return false;	/* a killed process's socket */
	/* Alive, but perhaps a process that exec'd without the library:
	 * only a socket that answers counts, and only from that process. */
	int fd = zswapctl_dial(ds->fd[i], name);
	if (fd < 0)
		return false;
	if (!zswapctl_peer_ok(fd, pid, uid, &cr)) {
		fprintf(stderr, "zswapctl: %s: the socket %s/%s is served by pid %ld of user %lu, not "
			"process %ld: skipped\n", cmd->name, ds->path[i], name, (long)cr.pid,
			(unsigned long)cr.uid, pid);
		close(fd);
		return false;
	}
	size_t len;
	char *out = zswapctl_request(cmd, pid, fd, "counters\n", ZSWAPCTL_STATS_TIMEOUT_S, &len);
	close(fd);
	struct zswapctl_proc row = { .pid = pid };
	if (!list_add(set, &row)) {
		free(out);
		return false;
	}
	struct zswapctl_proc *r = &set->p[set->n - 1];
	for (int k = 0; out && k < ZSWAPCTL_LV__N; k++)
		if (!zswapctl_counter(out, len, list_counter[k], &r->v[k]))
			r->v[k] = 0;
	list_group(out, len, &r->grp);
	free(out);
	snprintf(r->sock, sizeof(r->sock), "%s/%s", ds->path[i], name);
	char path[64], comm[64] = "?";
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	zswapctl_escape(comm, strlen(comm), r->comm);
	return true;
}

static int list_by_pid(const void *a, const void *b)
{
	long x = ((const struct zswapctl_proc *)a)->pid, y = ((const struct zswapctl_proc *)b)->pid;

	return (x > y) - (x < y);
}

void zswapctl_procs_collect(const struct zswapctl_cmd *cmd, struct zswapctl_procs *set, bool quiet)
{
	struct zswapctl_dirs ds;

	set->n = 0;
	zswapctl_dirs_open(&ds, geteuid());
	if (ds.notes[0] && !quiet)	/* "; DIR: why: skipped" */
		fprintf(stderr, "zswapctl: %s: %s\n", cmd->name, ds.notes + 2);
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
			list_one(cmd, &ds, i, e->d_name, set);
		closedir(d);
	}
	zswapctl_dirs_close(&ds);
	if (set->n)
		qsort(set->p, set->n, sizeof(*set->p), list_by_pid);
}

int zswapctl_group_members(const struct zswapctl_cmd *cmd, const char *arg, struct zswapctl_procs *members)
{
	const char *want = arg + 1;
	size_t n = strlen(want);
	struct zswapctl_procs all = { 0 };
	const char *found = NULL;
	int rc = 0;

	members->n = 0;
	if (n < ZSWAPCTL_TOKEN_SHORT || n > ZSWAPCTL_TOKEN_HEX || strspn(want, "0123456789abcdefABCDEF") != n)
		return zswapctl_usage_error(cmd, "group '%s': expected @ and %d to %d hex digits of its token "
					    "(zswapctl list shows them)", arg, ZSWAPCTL_TOKEN_SHORT, ZSWAPCTL_TOKEN_HEX);
	zswapctl_procs_collect(cmd, &all, false);
	for (size_t i = 0; i < all.n && !rc; i++) {
		const char *tok = all.p[i].grp.token;

		if (!tok[0] || strncasecmp(tok, want, n) != 0)
			continue;
		if (found && strcmp(found, tok) != 0) {
			fprintf(stderr, "zswapctl: %s: %s names more than one group (%s and %s): give more of the "
				"token's digits\n", cmd->name, arg, found, tok);
			rc = 1;
		} else if (!list_add(members, &all.p[i])) {
			fprintf(stderr, "zswapctl: %s: out of memory\n", cmd->name);
			rc = 1;
		}
		found = tok;
	}
	if (!rc && !members->n) {
		fprintf(stderr, "zswapctl: %s: no group %s among this user's processes under libzswap "
			"(zswapctl list shows the groups)\n", cmd->name, arg);
		rc = 1;
	}
	free(all.p);
	return rc;
}

/* A size as zramctl writes it: 0, 512B, 4K, 12.3M, 2G. */
static const char *list_size(char *buf, size_t len, unsigned long long v)
{
	static const char unit[] = "BKMGTPE";
	unsigned int u = 0;
	double x = (double)v;

	while (x >= 1024 && u + 1 < sizeof(unit) - 1) {
		x /= 1024;
		u++;
	}
	if (!v)
		snprintf(buf, len, "0");
	else if (!u || x >= 10 || x == (double)(unsigned long long)x)
		snprintf(buf, len, "%.0f%c", x, unit[u]);
	else
		snprintf(buf, len, "%.1f%c", x, unit[u]);
	return buf;
}

/* orig_data_size over pool_total_size, as zswapctl watch shows it. */
static double list_ratio(const unsigned long long *v)
{
	return v[ZSWAPCTL_LV_POOL] ? (double)v[ZSWAPCTL_LV_STORED] / (double)v[ZSWAPCTL_LV_POOL] : 0.0;
}

/* One row: a process's, or a group's (pid "group"). */
static void list_row(FILE *f, const char *pid, const char *comm, const unsigned long long *v, const char *group,
		     const char *last, const char *eol)
{
	char lim[16], chg[16], sto[16], pool[16], tier[16];

	fprintf(f, "%8s %-16s %8s %8s %8s %8s %6.2f %8s %10llu %-8s  %s%s", pid, comm,
		v[ZSWAPCTL_LV_LIMIT] ? list_size(lim, sizeof(lim), v[ZSWAPCTL_LV_LIMIT]) : "-",
		list_size(chg, sizeof(chg), v[ZSWAPCTL_LV_CHARGE]), list_size(sto, sizeof(sto), v[ZSWAPCTL_LV_STORED]),
		list_size(pool, sizeof(pool), v[ZSWAPCTL_LV_POOL]), list_ratio(v),
		list_size(tier, sizeof(tier), v[ZSWAPCTL_LV_TIER_PAGES] * 4096ull), v[ZSWAPCTL_LV_REFAULTS_S], group,
		last, eol);
}

static void list_proc_row(FILE *f, const struct zswapctl_proc *r, const char *eol)
{
	char pid[24], group[ZSWAPCTL_TOKEN_SHORT + 1] = "-";

	snprintf(pid, sizeof(pid), "%ld", r->pid);
	if (r->grp.token[0])
		snprintf(group, sizeof(group), "%.*s", ZSWAPCTL_TOKEN_SHORT, r->grp.token);
	list_row(f, pid, r->comm, r->v, group, r->sock, eol);
}

/* The row of the group of set->p[first] (its first listed member): LIMIT
 * and CHARGE are the group's memory.max and memory.current, STORED, POOL,
 * TIER and REFAULTS/s the sums over its members listed here, and the last
 * column its memory.events and parent. */
static void list_group_row(FILE *f, const struct zswapctl_procs *set, size_t first, const char *eol)
{
	const struct zswapctl_group *g = &set->p[first].grp;
	unsigned long long v[ZSWAPCTL_LV__N] = { 0 };
	char comm[32], group[ZSWAPCTL_TOKEN_SHORT + 1], last[96];

	for (size_t i = first; i < set->n; i++)
		if (!strcmp(set->p[i].grp.token, g->token))
			for (int k = ZSWAPCTL_LV_STORED; k < ZSWAPCTL_LV__N; k++)
				v[k] += set->p[i].v[k];
	v[ZSWAPCTL_LV_LIMIT] = g->max;
	v[ZSWAPCTL_LV_CHARGE] = g->current;
	snprintf(comm, sizeof(comm), "members=%llu", g->members);
	snprintf(group, sizeof(group), "%.*s", ZSWAPCTL_TOKEN_SHORT, g->token);
	snprintf(last, sizeof(last), "events high=%llu max=%llu%s%.*s", g->events_high, g->events_max,
		 g->parent[0] ? " parent=" : "", ZSWAPCTL_TOKEN_SHORT, g->parent);
	list_row(f, "group", comm, v, group, last, eol);
}

void zswapctl_procs_table(FILE *f, const struct zswapctl_procs *set, const char *eol)
{
	bool *done = calloc(set->n ? set->n : 1, sizeof(*done));

	fprintf(f, "%8s %-16s %8s %8s %8s %8s %6s %8s %10s %-8s  %s%s", "PID", "COMMAND", "LIMIT", "CHARGE",
		"STORED", "POOL", "RATIO", "TIER", "REFAULTS/s", "GROUP", "SOCKET", eol);
	/* By PID, except that a group's members follow its row together,
	 * where its first member would be. */
	for (size_t i = 0; i < set->n; i++) {
		const char *tok = set->p[i].grp.token;

		if (done && done[i])
			continue;
		if (!tok[0] || !done) {
			list_proc_row(f, &set->p[i], eol);
			continue;
		}
		list_group_row(f, set, i, eol);
		for (size_t j = i; j < set->n; j++)
			if (!strcmp(set->p[j].grp.token, tok)) {
				list_proc_row(f, &set->p[j], eol);
				done[j] = true;
			}
	}
	free(done);
}

/* A JSON string of what is already printable ASCII (zswapctl_escape made
 * it so): only the quote and the backslash need escaping. */
static void list_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void zswapctl_json_group(FILE *f, const struct zswapctl_group *g)
{
	if (!g->token[0]) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"token\":\"%s\",\"parent\":", g->token);
	if (g->parent[0])
		fprintf(f, "\"%s\"", g->parent);
	else
		fputs("null", f);
	fprintf(f, ",\"memory.current\":%llu,\"memory.max\":%llu,\"memory.peak\":%llu,\"memory.events.high\":%llu,"
		"\"memory.events.max\":%llu,\"members\":%llu}", g->current, g->max, g->peak, g->events_high,
		g->events_max, g->members);
}

static void list_json(FILE *f, const struct zswapctl_procs *set)
{
	fputc('[', f);
	for (size_t i = 0; i < set->n; i++) {
		const struct zswapctl_proc *r = &set->p[i];
		const unsigned long long *v = r->v;

		fprintf(f, "%s{\"pid\":%ld,\"command\":", i ? "," : "", r->pid);
		list_json_str(f, r->comm);
		fprintf(f, ",\"limit_bytes\":%llu,\"charge_bytes\":%llu,\"stored_bytes\":%llu,\"pool_bytes\":%llu,"
			"\"ratio\":%.2f,\"tier_bytes\":%llu,\"refaults_per_s\":%llu,\"socket\":",
			v[ZSWAPCTL_LV_LIMIT], v[ZSWAPCTL_LV_CHARGE], v[ZSWAPCTL_LV_STORED], v[ZSWAPCTL_LV_POOL],
			list_ratio(v), v[ZSWAPCTL_LV_TIER_PAGES] * 4096ull, v[ZSWAPCTL_LV_REFAULTS_S]);
		list_json_str(f, r->sock);
		fputs(",\"group\":", f);
		zswapctl_json_group(f, &r->grp);
		fputc('}', f);
	}
	fputs("]\n", f);
}

int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct zswapctl_procs set = { 0 };
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return zswapctl_cmd_help(cmd);
		if (!strcmp(argv[i], "--json")) {
			json = true;
			continue;
		}
		return zswapctl_usage_error(cmd, argv[i][0] == '-' ? "unknown option '%s'"
								   : "unexpected argument '%s'", argv[i]);
	}
	zswapctl_procs_collect(cmd, &set, false);
	if (json)
		list_json(stdout, &set);
	else
		zswapctl_procs_table(stdout, &set, "\n");
	free(set.p);
	return 0;
}

/* ---- top ------------------------------------------------------------------ */

static struct termios top_saved;
static bool top_raw;

static void top_restore(void)
{
	if (top_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &top_saved);
	top_raw = false;
	fputs("\033[?25h", stdout);	/* the cursor back */
	fflush(stdout);
}

static volatile sig_atomic_t top_stop;

static void top_on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

/* Keys one at a time, without echo, when stdin is a terminal. */
static void top_terminal(void)
{
	struct termios t;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = top_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &top_saved) != 0)
		return;
	t = top_saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0)
		top_raw = true;
}

/* Wait up to ms for a key: true when q (or the end of input) asks to quit. */
static bool top_wait_quit(int ms)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

	if (poll(&p, 1, ms) <= 0 || top_stop)
		return top_stop;
	char c;
	ssize_t n = read(STDIN_FILENO, &c, 1);
	return n == 0 || (n == 1 && (c == 'q' || c == 'Q'));
}

int zswapctl_top(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	unsigned long interval = 2, count = 0;
	struct zswapctl_procs set = { 0 };
	int c;

	if ((c = zswapctl_interval_count(cmd, argc, argv, &interval, &count)) >= 0)
		return c;
	if (optind < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	top_terminal();
	fputs("\033[?25l\033[2J", stdout);	/* no cursor over the table, a clear screen */
	for (unsigned long k = 0; !count || k < count; k++) {
		zswapctl_procs_collect(cmd, &set, true);
		/* Home, the table over the last one, each line and the rest of
		 * the screen cleared: no flicker of a full clear. */
		printf("\033[Hzswapctl top: %zu process%s under libzswap, every %lu s; q quits\033[K\r\n\033[K\r\n",
		       set.n, set.n == 1 ? "" : "es", interval);
		zswapctl_procs_table(stdout, &set, "\033[K\r\n");
		fputs("\033[J", stdout);
		fflush(stdout);
		if (k + 1 != count && top_wait_quit((int)interval * 1000))
			break;
	}
	top_restore();
	free(set.p);
	return 0;
}
