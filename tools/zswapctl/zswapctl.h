/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl.h - the subcommand table of zswapctl and what subcommands share.
 *
 * A subcommand is one entry in zswapctl_cmds[] (zswapctl.c) and one file
 * tools/zswapctl/zswapctl_<name>.c defining its run function. Conventions:
 * options are long (--name N or --name=N); -h/--help prints the
 * subcommand's help on stdout and exits 0; a usage error prints one
 * "zswapctl: ..." line on stderr and exits ZSWAPCTL_EXIT_USAGE; a runtime
 * failure exits 1.
 */
#ifndef ZSWAP_ZSWAPCTL_H
#define ZSWAP_ZSWAPCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#define ZSWAPCTL_EXIT_USAGE 2

struct zswapctl_cmd {
	const char *name;
	const char *synopsis;	/* arguments after the name, "" if none */
	const char *summary;	/* one line for `zswapctl --help` */
	const char *help;	/* the rest of `zswapctl NAME --help` */
	int (*run)(const struct zswapctl_cmd *cmd, int argc, char **argv); /* argv[0]: name */
};

/* One "zswapctl: CMD: ..." line on stderr; returns ZSWAPCTL_EXIT_USAGE. */
int zswapctl_usage_error(const struct zswapctl_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print a subcommand's help on stdout; returns 0. */
int zswapctl_cmd_help(const struct zswapctl_cmd *cmd);

/* Parse a decimal integer in [min, max]. On failure *cause says why. */
bool zswapctl_parse_uint(const char *s, unsigned long min, unsigned long max,
			 unsigned long *out, const char **cause);

/* Match option "--name" given as "--name VALUE" or "--name=VALUE". Returns
 * false if argv[*i] is not that option; else sets *value (NULL when the value
 * is missing) and advances *i past what it consumed. */
bool zswapctl_option(int argc, char **argv, int *i, const char *name, const char **value);

/* Check a user's NAME=VALUE (arg) with the library's own validator
 * (opt_check, src/core/options.h): NAME with or without ZSWAP_, in any case
 * (cold_age, COLD_AGE, zswap_cold_age); how adds OPT_CHECK_* rules. Returns
 * the option's row, its value set in *v; or NULL after one usage line
 * naming the variable ("did you mean" for a misspelt name). */
struct opt_def;
struct opt_values;
const struct opt_def *zswapctl_check_setting(const struct zswapctl_cmd *cmd, const char *arg,
					     unsigned int how, struct opt_values *v);

/*
 * Talking to a process under libzswap (zswapctl_sock.c). No socket is
 * trusted for its name alone: a directory is used only when it is a real
 * directory of the process's user (or root's) open to no one else, and a
 * server only when SO_PEERCRED says it is the process asked for.
 *
 * Connect to pid's statistics socket: the descriptor, or -1 after one line
 * on stderr saying why (no such process, not under libzswap, another
 * user's, a socket served by another process).
 */
int zswapctl_connect(const struct zswapctl_cmd *cmd, long pid);

/* How long a whole answer may take: a dump, and a control request (the
 * process waits up to 30 s for its reclaimer, src/observe/control.c). */
#define ZSWAPCTL_STATS_TIMEOUT_S	10
#define ZSWAPCTL_CONTROL_TIMEOUT_S	45
/* The largest answer taken: far above any dump. */
#define ZSWAPCTL_ANSWER_MAX		(16u << 20)

/* Send one request line and read the whole answer (malloc'd,
 * NUL-terminated; it may hold NUL bytes of its own), all within timeout_s
 * seconds and ZSWAPCTL_ANSWER_MAX bytes. NULL after one line on stderr. */
char *zswapctl_request(const struct zswapctl_cmd *cmd, long pid, int fd, const char *req,
		       int timeout_s, size_t *len);

/* The socket directories zswapctl trusts for processes of user uid, each
 * open (O_DIRECTORY|O_NOFOLLOW) and checked through its descriptor: a
 * directory owned by uid or root, with no group or other permission. */
#define ZSWAPCTL_MAX_DIRS 16
struct zswapctl_dirs {
	int n;
	int fd[ZSWAPCTL_MAX_DIRS];
	char path[ZSWAPCTL_MAX_DIRS][512];
	bool denied;		/* a directory this user may not open */
	char tried[2048];	/* the directories used, for messages */
	char notes[2048];	/* "DIR: why: skipped" for those refused */
};
void zswapctl_dirs_open(struct zswapctl_dirs *ds, uid_t uid);
void zswapctl_dirs_close(struct zswapctl_dirs *ds);
/* Connect (non-blocking) to NAME in an open directory, through
 * /proc/self/fd: the descriptor, or -1 with errno. */
int zswapctl_dial(int dirfd, const char *name);
/* Whether fd's server is process pid of user uid or root; *cr says who. */
struct ucred;
bool zswapctl_peer_ok(int fd, long pid, uid_t uid, struct ucred *cr);
/* The effective uid of pid (/proc/PID/status): false if it is gone. */
bool zswapctl_proc_euid(long pid, uid_t *uid);

/*
 * What a server sent, made safe (zswapctl_reply.c). zswapctl_escape writes
 * in[0..n) to out (room for 4 * n + 1) with every byte but printable ASCII,
 * tab and newline as \xHH: the length written. zswapctl_print writes a
 * reply so to f; everything a server sent reaches the terminal through it.
 */
size_t zswapctl_escape(const char *in, size_t n, char *out);
void zswapctl_print(FILE *f, const char *s, size_t n);
/* The value of a "NAME VALUE" line of a counters reply. */
bool zswapctl_counter(const char *buf, size_t len, const char *name, unsigned long long *v);
/* The value of a "NAME WORD" line whose WORD is n lower-case hex digits,
 * into out (room for n + 1). */
bool zswapctl_counter_hex(const char *buf, size_t len, const char *name, char *out, size_t n);
/* A control answer's kind; *body is where the text after its head starts. */
enum zswapctl_answer {
	ZSWAPCTL_ANSWER_OK,		/* "ok\n" */
	ZSWAPCTL_ANSWER_PARTIAL,	/* "partial\n": reclaim stored less */
	ZSWAPCTL_ANSWER_ERROR,		/* "error: ..." */
	ZSWAPCTL_ANSWER_OTHER,		/* none of these */
};
enum zswapctl_answer zswapctl_answer(const char *buf, size_t len, size_t *body);

/* watch's and top's options, --interval N and --count N (and --help),
 * into *interval and *count: -1 when the operands follow at argv[optind],
 * else the exit status (after the help, or a usage error). */
int zswapctl_interval_count(const struct zswapctl_cmd *cmd, int argc, char **argv, unsigned long *interval,
			    unsigned long *count);

/*
 * This user's processes under libzswap (zswapctl_list.c): one row each,
 * from the process's "counters" answer, by PID. list and top print them;
 * stats and set find a group's members among them.
 */
enum {
	ZSWAPCTL_LV_LIMIT, ZSWAPCTL_LV_CHARGE, ZSWAPCTL_LV_STORED, ZSWAPCTL_LV_POOL, ZSWAPCTL_LV_TIER_PAGES,
	ZSWAPCTL_LV_REFAULTS_S, ZSWAPCTL_LV__N
};
#define ZSWAPCTL_TOKEN_HEX	32	/* a group's token: 128 bits in hex */
#define ZSWAPCTL_TOKEN_SHORT	8	/* the digits list shows, the fewest @PREFIX takes */

/* A process's group as it reports it (its dump's group section). */
struct zswapctl_group {
	char token[ZSWAPCTL_TOKEN_HEX + 1];	/* "" when not in a group */
	char parent[ZSWAPCTL_TOKEN_HEX + 1];	/* "" for a group of its own */
	unsigned long long current, max, peak;	/* memory.current, memory.max, memory.peak */
	unsigned long long events_high, events_max, members;
};

struct zswapctl_proc {
	long pid;
	char comm[4 * 64 + 1];		/* escaped: the program names itself */
	char sock[600];
	unsigned long long v[ZSWAPCTL_LV__N];
	struct zswapctl_group grp;
};

struct zswapctl_procs {
	struct zswapctl_proc *p;
	size_t n, cap;
};

/* Every process of this user under libzswap, by PID (quiet: no line for
 * the directories skipped). */
void zswapctl_procs_collect(const struct zswapctl_cmd *cmd, struct zswapctl_procs *set, bool quiet);
/* list's table, each group's row before its members' (lines end with eol). */
void zswapctl_procs_table(FILE *f, const struct zswapctl_procs *set, const char *eol);

/* The group as a JSON object named as in the dump's JSON, or null. */
void zswapctl_json_group(FILE *f, const struct zswapctl_group *g);

/* Whether an operand names a group: @TOKEN or @PREFIX. */
static inline bool zswapctl_is_group(const char *arg)
{
	return arg && arg[0] == '@';
}

/* The members of the group arg names (@TOKEN, or @PREFIX of at least
 * ZSWAPCTL_TOKEN_SHORT hex digits, unique among this user's groups) into
 * *members (emptied first), by PID: 0, or the exit status after one line
 * saying why (a malformed operand, no such group, a prefix of several). */
int zswapctl_group_members(const struct zswapctl_cmd *cmd, const char *arg, struct zswapctl_procs *members);

/* A PID argument: 0, or the usage error's exit status after saying why. */
int zswapctl_parse_pid(const struct zswapctl_cmd *cmd, const char *s, long *pid);

int zswapctl_classes(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_stats(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_watch(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_top(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_set(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_reclaim(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_compact(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_reset(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_writeback(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_recompress(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_run(const struct zswapctl_cmd *cmd, int argc, char **argv);

#endif
