/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_options_list.c - print libzswap's option table, one option a line:
 * name, default, range, unit, help; with --runtime, the names of those zswapctl
 * set may change. tests/checks/test_options_man.sh compares both
 * with man/libzswap.7; the table itself is in src/core/options.c.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/options.h"

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--runtime") == 0) {
		/* The options zswapctl set may change (OPT_F_RUNTIME), one a line. */
		for (int i = 0; i < OPT__COUNT; i++)
			if (opt_table[i].flags & OPT_F_RUNTIME)
				printf("%s\n", opt_table[i].name);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "usage: %s [--runtime]\n(prints libzswap's ZSWAP_* option table, or the names of"
			" those a running process may change)\n", argv[0]);
		return 2;
	}
	if (opt_list(1) != 0) {
		perror("test_options_list: write");
		return 1;
	}
	return 0;
}
