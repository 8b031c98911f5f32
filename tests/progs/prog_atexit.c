/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_atexit.c - evicted memory read at exit: by an atexit handler, by the
 * program's destructor, and by the destructor of a library finalised after
 * libzswap (tests/progs/prog_atexit_lib.c, preloaded after libzswap so that it is
 * initialised before it and finalised after it). The library must serve
 * faults until the process ends.
 *
 * The atexit handler also evicts again and reads back (eviction at exit).
 * Output goes through write(2) only, so its order does not depend on when
 * stdio is flushed; it is the same with and without the library.
 *
 * usage: prog_atexit [--inactive-ok]
 */
#include "prog_common.h"

#define NPAGES 1024UL
#define LEN (NPAGES * PC_PAGE)

static char *area_atexit, *area_dtor, *area_lib;

static void say(const char *what, const char *p, enum pc_kind kind, uint64_t seed)
{
	char line[160];
	long bad = pc_verify_range(p, NPAGES, kind, seed);

	snprintf(line, sizeof(line), "%s: %s sum=%016" PRIx64 "\n", what, bad < 0 ? "ok" : "WRONG", pc_sum(p, LEN));
	pc_write_str(1, line);
	if (bad >= 0) {
		snprintf(line, sizeof(line), "prog_atexit: FAIL: %s: page %ld is wrong%s\n", what, bad,
			 pc_page_is_zero(p + bad * PC_PAGE) ? " (reads zeros)" : "");
		pc_write_str(2, line);
		_exit(1);
	}
}

static void at_exit(void)
{
	say("atexit handler", area_atexit, PC_TEXT, 1);
	/* Evict again from the handler and read back. */
	if (pc_managed()) {
		if (pc_pageout(area_atexit, LEN) != 0)
			pc_write_str(2, "prog_atexit: FAIL: MADV_PAGEOUT in the atexit handler failed\n"), _exit(1);
		if (pc_count_present(area_atexit, NPAGES) != 0)
			pc_write_str(2, "prog_atexit: FAIL: nothing evicted in the atexit handler\n"), _exit(1);
	}
	say("atexit handler, evicted again", area_atexit, PC_TEXT, 1);
}

__attribute__((destructor)) static void dtor(void)
{
	if (area_dtor)
		say("program destructor", area_dtor, PC_BINARY, 2);
}

int main(int argc, char **argv)
{
	pc_init("prog_atexit", &argc, argv);
	void (*lib_set)(void *, size_t, uint64_t) =
		(void (*)(void *, size_t, uint64_t))dlsym(RTLD_DEFAULT, "prog_atexit_lib_set");

	area_atexit = pc_map(LEN);
	area_dtor = pc_map(LEN);
	area_lib = pc_map(LEN);
	pc_fill_range(area_atexit, NPAGES, PC_TEXT, 1);
	pc_fill_range(area_dtor, NPAGES, PC_BINARY, 2);
	pc_fill_range(area_lib, NPAGES, PC_TEXT, 3);
	if (!lib_set)
		pc_info("prog_atexit_lib is not preloaded: no late destructor");
	else
		lib_set(area_lib, LEN, pc_sum(area_lib, LEN));
	atexit(at_exit);
	pc_evict("atexit", area_atexit, NPAGES, false);
	pc_evict("destructor", area_dtor, NPAGES, false);
	pc_evict("library destructor", area_lib, NPAGES, false);
	pc_write_str(1, "main returns\n");
	return 0;
}
