/*
 * zswapctl.h - the subcommand table of zswapctl and what subcommands share.
 *
 * A subcommand is one entry in zswapctl_cmds[] (zswapctl.c) and one file
 * tools/zswapctl_<name>.c defining its run function. Conventions: options are
 * long (--name N or --name=N); -h/--help prints the subcommand's help on
 * stdout and exits 0; a usage error prints one "zswapctl: ..." line on stderr
 * and exits ZSWAPCTL_EXIT_USAGE; a runtime failure exits 1.
 */
#ifndef ZSWAP_ZSWAPCTL_H
#define ZSWAP_ZSWAPCTL_H

#include <stdbool.h>
#include <stddef.h>

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

/* The option table's row for a user's NAME (len bytes): with or without
 * the ZSWAP_ prefix, in any case (cold_age, COLD_AGE, zswap_cold_age).
 * NULL if the table has no such option. */
struct opt_def;
const struct opt_def *zswapctl_find_option(const char *name, size_t len);

/* Talking to a process under libzswap (zswapctl_stats.c). Connect to pid's
 * statistics socket: the descriptor, or -1 after one line on stderr saying
 * why (no such process, not under libzswap, another user's). */
int zswapctl_connect(const struct zswapctl_cmd *cmd, long pid);
/* Send one request line, read the whole answer (malloc'd, NUL-terminated;
 * NULL on failure). */
char *zswapctl_request(int fd, const char *req, size_t *len);
/* A PID argument: 0, or the usage error's exit status after saying why. */
int zswapctl_parse_pid(const struct zswapctl_cmd *cmd, const char *s, long *pid);

int zswapctl_classes(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_stats(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_watch(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_list(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_set(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_reclaim(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_compact(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_reset(const struct zswapctl_cmd *cmd, int argc, char **argv);
int zswapctl_run(const struct zswapctl_cmd *cmd, int argc, char **argv);

#endif
