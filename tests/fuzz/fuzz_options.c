/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_options.c - libFuzzer target: the option parser. The input is an
 * environment, one NAME=VALUE a line (names drawn from the option table
 * when the line starts with a byte below 0x20: the table's row), given to
 * opt_load as a program's environ would be; then each value once more to
 * opt_parse_one for the option the line names. Nothing may crash, hang or
 * read past a string; every value parsed must lie within its option's
 * range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>

#include "base/log.h"
#include "core/options.h"

#define LINES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[LINES][512];
	char *envp[LINES + 1];
	size_t n = 0, i = 0;

	while (i < size && n < LINES) {
		size_t len = 0;
		char *l = buf[n];
		if (data[i] < 0x20) {	/* a real name */
			len = (size_t)snprintf(l, 256, "%s=", opt_table[data[i] % OPT__COUNT].name);
			i++;
		}
		while (i < size && data[i] != '\n' && len < sizeof(buf[0]) - 1)
			l[len++] = (char)data[i++];
		l[len] = 0;
		i++;
		envp[n++] = l;
	}
	envp[n] = NULL;

	/* Its one line per problem go nowhere (the sanitizers' reports still
	 * reach stderr). */
	static int quiet = -1;
	if (quiet < 0) {
		quiet = open("/dev/null", O_WRONLY);
		log_set_fd(quiet);
	}
	struct opt_values v;
	opt_load(&v, envp);
	if (v.zspage_order < 2 || v.zspage_order > 4 || v.nr_pools < 1 || v.nr_pools > 64 ||
	    v.min_region < 4096 || v.fault_around < 1 || v.fault_around > 512 || v.readahead > 64)
		abort();
	for (size_t k = 0; k < n; k++) {
		char *eq = strchr(envp[k], '=');
		if (!eq)
			continue;
		for (int id = 0; id < OPT__COUNT; id++) {
			size_t nl = strlen(opt_table[id].name);
			if ((size_t)(eq - envp[k]) == nl && !memcmp(envp[k], opt_table[id].name, nl)) {
				char why[256];
				struct opt_values one;
				opt_defaults(&one);
				opt_parse_one((enum opt_id)id, eq + 1, &one, why, sizeof(why));
			}
		}
	}
	return 0;
}
