/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_run.c - `zswapctl run`: start a program under libzswap.
 *
 * Settings become ZSWAP_* variables, checked here against the library's own
 * option table (src/core/options.c) before anything runs, so a typo is a
 * usage error on the command line instead of a "libzswap:" line ignored in
 * the program's output. Then zswapctl puts the library in LD_PRELOAD and
 * execs the program in its own place, as nice(1) does: the program keeps
 * zswapctl's process ID, and its exit status and signals reach the caller
 * unchanged. exec failing exits 127 (not found) or 126, as env(1) does.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/options.h"
#include "zswapctl.h"

/* The installed library, $(libdir)/libzswap.so.<soname version>: the
 * Makefile passes it, so that it follows --libdir and `make libdir=...`. */
#ifndef ZSWAPCTL_DEFAULT_LIBRARY
#error "ZSWAPCTL_DEFAULT_LIBRARY must name the installed library (mk/tools.am)"
#endif

#define RUN_EXIT_FAIL	1
#define RUN_EXIT_NOEXEC	126	/* found but could not be run, as env(1) */
#define RUN_EXIT_NOENT	127	/* not found, as env(1) and the shell */

/* One checked setting: the table's row and the text it accepted. */
struct run_setting {
	const struct opt_def *def;
	const char *value;
};

/* Check VALUE for the option as the library will parse it; on a bad one,
 * print the table's reason on one line and return false. */
static bool run_check(const struct zswapctl_cmd *cmd, const char *flag, const char *arg,
		      const struct opt_def *d, const char *value)
{
	struct opt_values v;
	char why[160];

	opt_defaults(&v);
	if (opt_parse_one(d->id, value, &v, why, sizeof(why)))
		return true;
	zswapctl_usage_error(cmd, "%s %s: %s='%s' is not valid: %s", flag, arg, d->name, value, why);
	return false;
}

/* Two paths name one file (libzswap.so and libzswap.so.0, say). */
static bool run_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Whether LD_PRELOAD's list (the loader splits it at spaces and colons)
 * already holds lib. */
static bool run_preloaded(const char *list, const char *lib)
{
	char item[PATH_MAX];

	while (*list) {
		size_t n = strcspn(list, " :");

		if (n > 0 && n < sizeof(item)) {
			memcpy(item, list, n);
			item[n] = '\0';
			if (run_same_file(item, lib))
				return true;
		}
		list += n;
		list += strspn(list, " :");
	}
	return false;
}

/*
 * Which library to preload, as an absolute path when it is a path at all: a
 * program that changes directory before it starts others passes LD_PRELOAD
 * on. A bare name (no '/') is a soname the loader looks up itself. Returns
 * false after saying why.
 */
static bool run_library(const char *opt_lib, char *out, size_t out_len)
{
	const char *lib = opt_lib, *from = "--lib";
	char cwd[PATH_MAX];
	struct stat st;

	if (!lib || !*lib) {
		lib = getenv("ZSWAPCTL_LIBRARY");
		from = "ZSWAPCTL_LIBRARY";
	}
	if (!lib || !*lib) {
		lib = ZSWAPCTL_DEFAULT_LIBRARY;
		from = NULL;
	}
	if (strpbrk(lib, " :")) {
		/* The loader would read it as two entries of its list. */
		fprintf(stderr, "zswapctl: run: %s '%s': LD_PRELOAD cannot hold a path with a space "
			"or a colon\n", from ? from : "library", lib);
		return false;
	}
	if (!strchr(lib, '/')) {
		snprintf(out, out_len, "%s", lib);
		return true;
	}
	errno = 0;	/* stat succeeding on a directory leaves it alone */
	if (stat(lib, &st) != 0 || !S_ISREG(st.st_mode)) {
		const char *why = errno != 0 ? strerror(errno) : "not a regular file";

		if (!from)
			fprintf(stderr, "zswapctl: run: the library %s is not there (%s); "
				"point at one with --lib PATH or ZSWAPCTL_LIBRARY\n", lib, why);
		else
			fprintf(stderr, "zswapctl: run: %s '%s': %s\n", from, lib, why);
		return false;
	}
	if (lib[0] == '/') {
		snprintf(out, out_len, "%s", lib);
		return true;
	}
	while (lib[0] == '.' && lib[1] == '/') {	/* "./x" reads better as "x" */
		lib += 2;
		lib += strspn(lib, "/");
	}
	if (!getcwd(cwd, sizeof(cwd)) || (size_t)snprintf(out, out_len, "%s/%s", cwd, lib) >= out_len) {
		fprintf(stderr, "zswapctl: run: %s '%s': cannot make the path absolute\n", from, lib);
		return false;
	}
	return true;
}

/* Put lib first in LD_PRELOAD, keeping what is there; nothing if it is
 * there already (where it stands, it is loaded). */
static bool run_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;
	int rc;

	if (!old || !*old)
		return setenv("LD_PRELOAD", lib, 1) == 0;
	if (run_preloaded(old, lib))
		return true;
	if (asprintf(&val, "%s %s", lib, old) < 0)
		return false;
	rc = setenv("LD_PRELOAD", val, 1);
	free(val);
	return rc == 0;
}

/*
 * Read run's options into set[] (checked) and *lib_opt; *prog is the index
 * of the program's name. Returns -1 to go on, else the exit status.
 */
static int run_parse(const struct zswapctl_cmd *cmd, int argc, char **argv,
		     struct run_setting *set, int *nset, const char **lib_opt, int *prog)
{
	const char *value;
	int i = 1;

	while (i < argc) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;	/* the program, as nice(1) takes it */
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return zswapctl_cmd_help(cmd);
		if (zswapctl_option(argc, argv, &i, "--limit", &value)) {
			const struct opt_def *d = &opt_table[OPT_MEMORY_LIMIT];

			if (!value || !*value)
				return zswapctl_usage_error(cmd, "--limit needs a value (what %s takes)",
							    d->name);
			if (!run_check(cmd, "--limit", value, d, value))
				return ZSWAPCTL_EXIT_USAGE;
			set[(*nset)++] = (struct run_setting){ d, value };
			continue;
		}
		if (zswapctl_option(argc, argv, &i, "--lib", &value)) {
			if (!value || !*value)
				return zswapctl_usage_error(cmd, "--lib needs a path");
			*lib_opt = value;
			continue;
		}
		if (!strncmp(a, "-o", 2)) {
			/* -o NAME=VALUE or -oNAME=VALUE, as mount(8) takes them. */
			const char *kv = a[2] ? a + 2 : (i + 1 < argc ? argv[i + 1] : NULL);
			const char *eq = kv ? strchr(kv, '=') : NULL;
			const struct opt_def *d;

			i += a[2] ? 1 : 2;
			if (!kv || !eq || eq == kv)
				return zswapctl_usage_error(cmd, "-o needs NAME=VALUE%s%s%s",
							    kv ? " (got '" : "", kv ? kv : "",
							    kv ? "')" : "");
			d = zswapctl_find_option(kv, (size_t)(eq - kv));
			if (!d)
				return zswapctl_usage_error(cmd, "-o %s: '%.*s' is not a libzswap option "
							    "(libzswap(7) lists them)", kv,
							    (int)(eq - kv), kv);
			if (!run_check(cmd, "-o", kv, d, eq + 1))
				return ZSWAPCTL_EXIT_USAGE;
			set[(*nset)++] = (struct run_setting){ d, eq + 1 };
			continue;
		}
		return zswapctl_usage_error(cmd, "unknown option '%s'", a);
	}
	if (i >= argc)
		return zswapctl_usage_error(cmd, "no program given");
	*prog = i;
	return -1;
}

/* Set the checked options in command-line order (a later setting of one
 * option wins) and the library in LD_PRELOAD. */
static bool run_environ(const struct run_setting *set, int nset, const char *lib)
{
	for (int k = 0; k < nset; k++) {
		if (setenv(set[k].def->name, set[k].value, 1) != 0) {
			fprintf(stderr, "zswapctl: run: setting %s: %s\n", set[k].def->name,
				strerror(errno));
			return false;
		}
	}
	if (!run_preload(lib)) {
		fprintf(stderr, "zswapctl: run: setting LD_PRELOAD: %s\n", strerror(errno));
		return false;
	}
	return true;
}

int zswapctl_run(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	struct run_setting *set;
	const char *lib_opt = NULL;
	char lib[PATH_MAX + 1];
	int nset = 0, prog = 0, rc, err;

	/* At most one setting per argument. */
	set = calloc((size_t)argc + 1, sizeof(*set));
	if (!set) {
		fprintf(stderr, "zswapctl: run: out of memory\n");
		return RUN_EXIT_FAIL;
	}
	rc = run_parse(cmd, argc, argv, set, &nset, &lib_opt, &prog);
	if (rc < 0)
		rc = run_library(lib_opt, lib, sizeof(lib)) && run_environ(set, nset, lib) ?
		     -1 : RUN_EXIT_FAIL;
	free(set);
	if (rc >= 0)
		return rc;
	execvp(argv[prog], argv + prog);
	err = errno;
	fprintf(stderr, "zswapctl: run: '%s': %s\n", argv[prog], strerror(err));
	return err == ENOENT ? RUN_EXIT_NOENT : RUN_EXIT_NOEXEC;
}
