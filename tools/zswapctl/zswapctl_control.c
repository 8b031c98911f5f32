/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_control.c - `zswapctl set`, `reclaim`, `compact`, `reset`,
 * `writeback` and `recompress`:
 * acting on a running process under libzswap through its statistics socket
 * (src/observe/control.c carries them out).
 *
 * Values are checked here with the library's own option table before the
 * process is asked (a typo is a usage error, exit 2, and nothing is sent);
 * the process checks them again. Its answer is "ok" and lines saying what
 * was done, printed here, or one "error: ..." line: exit 1. set also takes
 * a group (@TOKEN): its members are found as zswapctl list finds them.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zswapctl.h"
#include "core/ctlreq.h"
#include "core/options.h"
#include "core/parse.h"

/* -h/--help anywhere before the operands. */
static bool ctl_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	return false;
}

/* Send req to pid and print the answer: 0 if it began with "ok". */
static int ctl_act(const struct zswapctl_cmd *cmd, long pid, const char *req)
{
	int fd = zswapctl_connect(cmd, pid);
	if (fd < 0)
		return 1;
	size_t len, body;
	char *out = zswapctl_request(cmd, pid, fd, req, ZSWAPCTL_CONTROL_TIMEOUT_S, &len);
	close(fd);
	if (!out)
		return 1;
	if (len == 0) {
		fprintf(stderr, "zswapctl: %s: process %ld gave no answer (a libzswap too old for %s?)\n",
			cmd->name, pid, cmd->name);
		free(out);
		return 1;
	}
	int rc = 1;
	switch (zswapctl_answer(out, len, &body)) {
	case ZSWAPCTL_ANSWER_OK:
		zswapctl_print(stdout, out + body, len - body);
		rc = 0;
		break;
	case ZSWAPCTL_ANSWER_PARTIAL:
		/* reclaim freed less than asked: memory.reclaim's EAGAIN;
		 * writeback spent its budget: zram's writeback's EIO. */
		zswapctl_print(stdout, out + body, len - body);
		fprintf(stderr, "zswapctl: %s: %s\n", cmd->name,
			strcmp(cmd->name, "writeback") ? "less than asked was freed: nothing more was resident to store"
						       : "the writeback budget (ZSWAP_WRITEBACK_LIMIT) is spent");
		break;
	default:
		/* "error: ..." lines, and for set what was applied anyway. */
		fprintf(stderr, "zswapctl: %s: ", cmd->name);
		zswapctl_print(stderr, out + body, len - body);
		if (out[len - 1] != '\n')
			fputc('\n', stderr);
		break;
	}
	free(out);
	return rc;
}

/* set on a group (@TOKEN): its memory.max is one value the members share,
 * so a setting of the limit goes to one member, the first that takes it;
 * the others (rest, NULL when none) go to every member. Each answer
 * follows a "pid N:" line; 1 when any member failed. */
static int ctl_set_group(const struct zswapctl_cmd *cmd, const char *arg, const char *req, const char *rest)
{
	struct zswapctl_procs m = { 0 };
	int rc = zswapctl_group_members(cmd, arg, &m);
	bool limit_set = rest && !strcmp(req, rest);	/* no limit in req */

	if (rc)
		return rc;
	for (size_t i = 0; i < m.n; i++) {
		const char *r = limit_set ? rest : req;

		if (!r)
			break;
		printf("pid %ld:\n", m.p[i].pid);
		fflush(stdout);
		if (ctl_act(cmd, m.p[i].pid, r) != 0)
			rc = 1;	/* the next member takes the limit if this one did not */
		else if (r == req)
			limit_set = true;
	}
	free(m.p);
	return limit_set ? rc : 1;
}

/* " NAME=VALUE" appended to req (pos bytes long): false when it is full. */
static bool ctl_append(char *req, size_t size, size_t *pos, const struct opt_def *d, const char *arg)
{
	int w = snprintf(req + *pos, size - *pos, " %s=%s", d->name, strchr(arg, '=') + 1);

	if (w < 0 || (size_t)w >= size - *pos - 1)
		return false;
	*pos += (size_t)w;
	return true;
}

int zswapctl_set(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	long pid = 0;
	int c;

	if (ctl_wants_help(argc, argv))
		return zswapctl_cmd_help(cmd);
	if (argc < 2)
		return zswapctl_usage_error(cmd, "a PID (or @GROUP) and NAME=VALUE are needed");
	bool group = zswapctl_is_group(argv[1]);
	if (!group && (c = zswapctl_parse_pid(cmd, argv[1], &pid)) != 0)
		return c;
	if (argc < 3)
		return zswapctl_usage_error(cmd, "nothing to set: give NAME=VALUE");
	/* req: every setting; rest: all but the limit (for a group's members). */
	char req[1024] = "set", rest[1024] = "set";
	size_t pos = 3, rpos = 3;
	struct opt_values v;
	opt_defaults(&v);
	for (int i = 2; i < argc; i++) {
		const struct opt_def *d = zswapctl_check_setting(cmd, argv[i], OPT_CHECK_RUNTIME, &v);
		if (!d)
			return ZSWAPCTL_EXIT_USAGE;
		if (!ctl_append(req, sizeof(req), &pos, d, argv[i]) ||
		    (d->id != OPT_MEMORY_LIMIT && !ctl_append(rest, sizeof(rest), &rpos, d, argv[i])))
			return zswapctl_usage_error(cmd, "too many settings in one call");
	}
	memcpy(req + pos, "\n", 2);
	memcpy(rest + rpos, "\n", 2);
	if (group)
		return ctl_set_group(cmd, argv[1], req, rpos > 3 ? rest : NULL);
	return ctl_act(cmd, pid, req);
}

int zswapctl_reclaim(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	uint64_t bytes;
	long pid;
	int c;

	if (ctl_wants_help(argc, argv))
		return zswapctl_cmd_help(cmd);
	if (argc != 3)
		return zswapctl_usage_error(cmd, "a PID and a SIZE are needed");
	if ((c = zswapctl_parse_pid(cmd, argv[1], &pid)) != 0)
		return c;
	if (parse_size(argv[2], 1, UINT64_MAX, &bytes) != PARSE_OK)
		return zswapctl_usage_error(cmd, "SIZE '%s': expected a size above 0 like 4096, 64M or 1G",
					    argv[2]);
	char req[64];
	snprintf(req, sizeof(req), "reclaim %llu\n", (unsigned long long)bytes);
	return ctl_act(cmd, pid, req);
}

/* -h/--help, then the PID into *pid: -1 to go on, else the exit status. */
static int ctl_pid(const struct zswapctl_cmd *cmd, int argc, char **argv, long *pid)
{
	if (ctl_wants_help(argc, argv))
		return zswapctl_cmd_help(cmd);
	if (argc < 2)
		return zswapctl_usage_error(cmd, "a PID is needed");
	int c = zswapctl_parse_pid(cmd, argv[1], pid);
	return c ? c : -1;
}

/* compact and reset: a PID alone. */
static int ctl_pid_only(const struct zswapctl_cmd *cmd, int argc, char **argv, const char *req)
{
	long pid;
	int c = ctl_pid(cmd, argc, argv, &pid);

	if (c >= 0)
		return c;
	if (argc > 2)
		return zswapctl_usage_error(cmd, "unexpected argument '%s'", argv[2]);
	return ctl_act(cmd, pid, req);
}

/* req, pos bytes long, ended with a newline and sent. */
static int ctl_act_line(const struct zswapctl_cmd *cmd, long pid, char *req, size_t pos)
{
	req[pos++] = '\n';
	req[pos] = '\0';
	return ctl_act(cmd, pid, req);
}

int zswapctl_compact(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	return ctl_pid_only(cmd, argc, argv, "compact\n");
}

int zswapctl_reset(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	return ctl_pid_only(cmd, argc, argv, "reset\n");
}

int zswapctl_writeback(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct ctlreq_wb wb;
	long pid;
	int c = ctl_pid(cmd, argc, argv, &pid);

	if (c >= 0)
		return c;
	if (argc != 3)
		return zswapctl_usage_error(cmd, "a PID and what to write back are needed");
	if (!ctlreq_parse_writeback(argv[2], &wb))
		return zswapctl_usage_error(cmd, "'%s': expected idle, idle=SECONDS, huge, incompressible or"
					    " a number of pages above 0", argv[2]);
	char req[64] = "writeback ";
	size_t pos = strlen(req);
	pos += ctlreq_format_writeback(&wb, req + pos, sizeof(req) - pos - 1);
	return ctl_act_line(cmd, pid, req, pos);
}

int zswapctl_recompress(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct ctlreq_rc rc = { 0 };
	long pid;
	int c = ctl_pid(cmd, argc, argv, &pid);

	if (c >= 0)
		return c;
	for (int i = 2; i < argc; i++)
		if (!ctlreq_parse_recompress(argv[i], &rc))
			return zswapctl_usage_error(cmd, "'%s': expected idle, idle=SECONDS, huge or threshold=BYTES"
						    " (1..4096)", argv[i]);
	char req[128] = "recompress";
	size_t pos = strlen(req);
	pos += ctlreq_format_recompress(&rc, req + pos, sizeof(req) - pos - 1);
	return ctl_act_line(cmd, pid, req, pos);
}
