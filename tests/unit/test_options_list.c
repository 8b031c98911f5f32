/*
 * test_options_list.c - print libzswap's option table, one option a line:
 * name, default, range, unit, help. tests/checks/test_options_man.sh compares it
 * with man/libzswap.7; the table itself is in src/core/options.c.
 */
#include "config.h"

#include <stdio.h>

#include "core/options.h"

int main(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "usage: %s\n(prints libzswap's ZSWAP_* option table)\n", argv[0]);
		return 2;
	}
	if (opt_list(1) != 0) {
		perror("test_options_list: write");
		return 1;
	}
	return 0;
}
