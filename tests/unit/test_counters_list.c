/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_counters_list.c - print libzswap's table of counters
 * (src/engine/counters.def), one counter a line: name, section, source,
 * api (PUBLIC or DUMP), reset (RESET or KEEP), meaning.
 * tests/checks/test_counters_man.sh compares it with man/libzswap.7.
 * Compiling it compiles the table's ties to struct zswap_stats
 * (src/engine/counters.h).
 */
#include "config.h"

#include <stdio.h>

#include "engine/counters.h"

static const struct {
	const char *name, *sect, *src, *api, *reset, *help;
} rows[] = {
#define COUNTER(name, sect, src, api, reset, help) { #name, #sect, #src, #api, #reset, help },
#include "engine/counters.def"
#undef COUNTER
};
_Static_assert(sizeof(rows) / sizeof(rows[0]) == COUNTER__COUNT, "a line per row");

int main(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "usage: %s\n(prints libzswap's table of counters)\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < COUNTER__COUNT; i++)
		if (printf("%s %s %s %s %s %s\n", rows[i].name, rows[i].sect, rows[i].src, rows[i].api,
			   rows[i].reset, rows[i].help) < 0) {
			perror("test_counters_list: write");
			return 1;
		}
	return 0;
}
