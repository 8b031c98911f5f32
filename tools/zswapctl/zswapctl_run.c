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

#include "core/backing.h"
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

/*
 * The tier's directory, if the settings or the environment name one (not
 * auto), checked as the library will check it when it opens the tier, so
 * that a directory that cannot hold it stops the run before the program
 * starts. given: a setting of the command line names it, not the
 * environment the run inherits.
 */
static bool run_check_backing(const struct opt_values *v, bool given)
{
	const char *dir = v->backing_dir;
	char why[400];

	if (!strcmp(dir, "auto") || backing_check_dir(dir, why, sizeof(why)) == 0)
		return true;
	fprintf(stderr, "zswapctl: run: %s=%s%s: %s\n",
		opt_table[OPT_BACKING_DIR].name, dir, given ? "" : " (in the environment)", why);
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
 * The library of the build tree zswapctl was built in, when it runs from
 * one (build/tools/zswapctl/zswapctl beside build/.libs/libzswap.so, the
 * tree's libzswap.la saying it is libtool's output), so that a build tree's
 * zswapctl runs its own library, not an installed one of another version.
 */
static bool run_build_tree_library(char *out, size_t out_len)
{
	char exe[PATH_MAX], la[PATH_MAX + 32];
	struct stat st;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* build/tools/zswapctl/zswapctl -> build */
	for (int up = 0; up < 3; up++) {
		slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return false;
		*slash = '\0';
	}
	if ((size_t)snprintf(la, sizeof(la), "%s/libzswap.la", exe) >= sizeof(la) ||
	    (size_t)snprintf(out, out_len, "%s/.libs/libzswap.so", exe) >= out_len)
		return false;
	return stat(la, &st) == 0 && S_ISREG(st.st_mode) && stat(out, &st) == 0 && S_ISREG(st.st_mode);
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
	if ((!lib || !*lib) && run_build_tree_library(out, out_len))
		return true;
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
static int run_parse(const struct zswapctl_cmd *cmd, int argc, char **argv, struct run_setting *set,
		     int *nset, struct opt_values *v, bool *backing_given, const char **lib_opt, int *prog)
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
			char msg[OPT_CHECK_MSG_MAX];

			if (!value || !*value)
				return zswapctl_usage_error(cmd, "--limit needs a value (what %s takes)",
							    d->name);
			if (opt_check(d->name, strlen(d->name), value, 0, v, &d, msg, sizeof(msg)) != OPT_CHECK_OK)
				return zswapctl_usage_error(cmd, "--limit %s: %s", value, msg);
			set[(*nset)++] = (struct run_setting){ d, value };
			continue;
		}
		if (zswapctl_option(argc, argv, &i, "--scope", &value)) {
			const struct opt_def *d = &opt_table[OPT_MEMORY_SCOPE];
			char msg[OPT_CHECK_MSG_MAX];

			if (!value || opt_check(d->name, strlen(d->name), value, 0, v, &d, msg, sizeof(msg)) != OPT_CHECK_OK)
				return zswapctl_usage_error(cmd, "--scope takes tree or process");
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
			const struct opt_def *d;

			i += a[2] ? 1 : 2;
			if (!kv)
				return zswapctl_usage_error(cmd, "-o needs NAME=VALUE");
			d = zswapctl_check_setting(cmd, kv, 0, v);
			if (!d)
				return ZSWAPCTL_EXIT_USAGE;
			if (d->id == OPT_BACKING_DIR)
				*backing_given = true;
			set[(*nset)++] = (struct run_setting){ d, strchr(kv, '=') + 1 };
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
	char names[OPT__COUNT * 40] = "";
	size_t pos = 0;

	for (int k = 0; k < nset; k++) {
		const char *name = set[k].def->name;

		if (setenv(name, set[k].value, 1) != 0) {
			fprintf(stderr, "zswapctl: run: setting %s: %s\n", name, strerror(errno));
			return false;
		}
		if (!strstr(names, name))
			pos += (size_t)snprintf(names + pos, sizeof(names) - pos, "%s%s", pos ? " " : "", name);
	}
	/* A limit given inside a group makes a child group: the program's
	 * library starts one under the group it was in, which still counts
	 * its memory (libzswap(7), GROUPS). */
	const char *group = getenv(OPT_GROUP_VAR);
	for (int k = 0; k < nset; k++) {
		if (set[k].def->id != OPT_MEMORY_LIMIT || !group)
			continue;
		if (setenv(OPT_GROUP_PARENT_VAR, group, 1) != 0 || unsetenv(OPT_GROUP_VAR) != 0) {
			fprintf(stderr, "zswapctl: run: setting %s: %s\n", OPT_GROUP_PARENT_VAR, strerror(errno));
			return false;
		}
		break;
	}
	/* Which of the program's ZSWAP_* zswapctl set: its ZSWAP_VERBOSE lines
	 * say so. Unset when none, so that an outer run's list does not speak
	 * for this one. */
	if ((nset ? setenv(OPT_RUN_VAR, names, 1) : unsetenv(OPT_RUN_VAR)) != 0) {
		fprintf(stderr, "zswapctl: run: setting %s: %s\n", OPT_RUN_VAR, strerror(errno));
		return false;
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
	struct opt_values v;
	const char *lib_opt = NULL, *env_dir = getenv(opt_table[OPT_BACKING_DIR].name);
	char lib[PATH_MAX + 1];
	bool backing_given = false;
	int nset = 0, prog = 0, rc, err;

	/* At most one setting per argument. */
	set = calloc((size_t)argc + 1, sizeof(*set));
	if (!set) {
		fprintf(stderr, "zswapctl: run: out of memory\n");
		return RUN_EXIT_FAIL;
	}
	/* The environment's directory counts unless a setting replaces it. */
	opt_defaults(&v);
	if (env_dir)
		opt_parse_one(OPT_BACKING_DIR, env_dir, &v, NULL, 0);
	rc = run_parse(cmd, argc, argv, set, &nset, &v, &backing_given, &lib_opt, &prog);
	if (rc < 0)
		rc = run_check_backing(&v, backing_given) && run_library(lib_opt, lib, sizeof(lib)) &&
		     run_environ(set, nset, lib) ? -1 : RUN_EXIT_FAIL;
	free(set);
	if (rc >= 0)
		return rc;
	execvp(argv[prog], argv + prog);
	err = errno;
	fprintf(stderr, "zswapctl: run: '%s': %s\n", argv[prog], strerror(err));
	return err == ENOENT ? RUN_EXIT_NOENT : RUN_EXIT_NOEXEC;
}
