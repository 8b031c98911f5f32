/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_list.c - `zswapctl list` and `zswapctl top`: every process of
 * this user under libzswap at a glance, as zramctl shows every device.
 *
 * Each process is found by its socket in the trusted directories
 * (zswapctl_sock.c), believed only when SO_PEERCRED says the process named
 * serves it, and asked for its "counters" lines: the row is made from
 * those (the rates are the library's own, over its recent requests). top
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
#include <termios.h>
#include <unistd.h>

#include "zswapctl.h"

/* What a row shows, from the process's counters. */
enum {
	LV_LIMIT, LV_CHARGE, LV_STORED, LV_POOL, LV_TIER_PAGES, LV_REFAULTS_S, LV__N
};
static const char *const list_counter[LV__N] = {
	"memory_max", "memory_current", "orig_data_size", "pool_total_size", "bd_count", "refaults_per_s",
};

struct list_inst {
	long pid;
	char comm[4 * 64 + 1];		/* escaped: the program names itself */
	char sock[600];
	unsigned long long v[LV__N];
};

struct list_set {
	struct list_inst *p;
	size_t n, cap;
};

/* The row of one socket of a listed directory, if its server is the
 * process its name gives, alive and under libzswap: true when added. */
static bool list_one(const struct zswapctl_cmd *cmd, const struct zswapctl_dirs *ds, int i,
		     const char *name, struct list_set *set)
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
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;
		struct list_inst *p = realloc(set->p, cap * sizeof(*p));
		if (!p) {
			free(out);
			return false;
		}
		set->p = p;
		set->cap = cap;
	}
	struct list_inst *r = &set->p[set->n++];
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	for (int k = 0; out && k < LV__N; k++)
		if (!zswapctl_counter(out, len, list_counter[k], &r->v[k]))
			r->v[k] = 0;
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
	long x = ((const struct list_inst *)a)->pid, y = ((const struct list_inst *)b)->pid;

	return (x > y) - (x < y);
}

/* Every process of this user under libzswap, by PID. */
static void list_collect(const struct zswapctl_cmd *cmd, struct list_set *set, bool quiet)
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
static double list_ratio(const struct list_inst *r)
{
	return r->v[LV_POOL] ? (double)r->v[LV_STORED] / (double)r->v[LV_POOL] : 0.0;
}

static void list_table(FILE *f, const struct list_set *set, const char *eol)
{
	fprintf(f, "%8s %-16s %8s %8s %8s %8s %6s %8s %10s  %s%s", "PID", "COMMAND", "LIMIT", "CHARGE",
		"STORED", "POOL", "RATIO", "TIER", "REFAULTS/s", "SOCKET", eol);
	for (size_t i = 0; i < set->n; i++) {
		const struct list_inst *r = &set->p[i];
		char lim[16], chg[16], sto[16], pool[16], tier[16];

		fprintf(f, "%8ld %-16s %8s %8s %8s %8s %6.2f %8s %10llu  %s%s", r->pid, r->comm,
			r->v[LV_LIMIT] ? list_size(lim, sizeof(lim), r->v[LV_LIMIT]) : "-",
			list_size(chg, sizeof(chg), r->v[LV_CHARGE]), list_size(sto, sizeof(sto), r->v[LV_STORED]),
			list_size(pool, sizeof(pool), r->v[LV_POOL]), list_ratio(r),
			list_size(tier, sizeof(tier), r->v[LV_TIER_PAGES] * 4096ull), r->v[LV_REFAULTS_S], r->sock,
			eol);
	}
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

static void list_json(FILE *f, const struct list_set *set)
{
	fputc('[', f);
	for (size_t i = 0; i < set->n; i++) {
		const struct list_inst *r = &set->p[i];

		fprintf(f, "%s{\"pid\":%ld,\"command\":", i ? "," : "", r->pid);
		list_json_str(f, r->comm);
		fprintf(f, ",\"limit_bytes\":%llu,\"charge_bytes\":%llu,\"stored_bytes\":%llu,\"pool_bytes\":%llu,"
			"\"ratio\":%.2f,\"tier_bytes\":%llu,\"refaults_per_s\":%llu,\"socket\":",
			r->v[LV_LIMIT], r->v[LV_CHARGE], r->v[LV_STORED], r->v[LV_POOL], list_ratio(r),
			r->v[LV_TIER_PAGES] * 4096ull, r->v[LV_REFAULTS_S]);
		list_json_str(f, r->sock);
		fputc('}', f);
	}
	fputs("]\n", f);
}

int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct list_set set = { 0 };
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
	list_collect(cmd, &set, false);
	if (json)
		list_json(stdout, &set);
	else
		list_table(stdout, &set, "\n");
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
	struct list_set set = { 0 };
	int c;

	if ((c = zswapctl_interval_count(cmd, argc, argv, &interval, &count)) >= 0)
		return c;
	if (optind < argc)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	top_terminal();
	fputs("\033[?25l\033[2J", stdout);	/* no cursor over the table, a clear screen */
	for (unsigned long k = 0; !count || k < count; k++) {
		list_collect(cmd, &set, true);
		/* Home, the table over the last one, each line and the rest of
		 * the screen cleared: no flicker of a full clear. */
		printf("\033[Hzswapctl top: %zu process%s under libzswap, every %lu s; q quits\033[K\r\n\033[K\r\n",
		       set.n, set.n == 1 ? "" : "es", interval);
		list_table(stdout, &set, "\033[K\r\n");
		fputs("\033[J", stdout);
		fflush(stdout);
		if (k + 1 != count && top_wait_quit((int)interval * 1000))
			break;
	}
	top_restore();
	free(set.p);
	return 0;
}
