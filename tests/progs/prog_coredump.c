/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_coredump.c - stored pages in a core dump (tests/engine/test_eng_coredump.sh).
 *
 *   prog_coredump HOW MIB
 *
 * Maps MIB MiB, writes every page (its first and last 8-byte words:
 * PROG_COREDUMP_MAGIC ^ the page's index, and its index ^ ~0; the rest the
 * index repeated), asks for all of it to be paged out (madvise MADV_PAGEOUT)
 * and, under the library, checks that at least 90 % of the pages left the
 * page tables. Prints "base=0xADDR pages=N" on stdout, then, by HOW:
 *   abort     abort(): SIGABRT, default action
 *   segv      writes through a null pointer: SIGSEGV, default action
 *   quit-ign  SIGQUIT ignored (signal()), raised: must survive, prints
 *             "survived"
 *   quit-own  its own SIGQUIT handler, raised: the handler must run once,
 *             prints "handled"
 * The script reads the pages back from the core.
 */
#include "prog_common.h"

#include <signal.h>

#define PROG_COREDUMP_MAGIC 0x5a17c0de00000000ULL

static volatile sig_atomic_t quit_runs;

static void on_quit(int sig)
{
	(void)sig;
	quit_runs++;
}

int main(int argc, char **argv)
{
	pc_init("prog_coredump", &argc, argv);
	if (argc != 3) {
		fprintf(stderr, "usage: prog_coredump abort|segv|quit-ign|quit-own MIB\n");
		return 2;
	}
	const char *how = argv[1];
	size_t pages = (size_t)strtoul(argv[2], NULL, 10) * (PC_MIB / PC_PAGE);
	uint64_t *p = pc_map(pages * PC_PAGE);
	const size_t words = PC_PAGE / sizeof(uint64_t);

	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = p + i * words;
		for (size_t j = 1; j + 1 < words; j++)
			w[j] = i;
		w[0] = PROG_COREDUMP_MAGIC ^ i;
		w[words - 1] = i ^ ~0ULL;
	}
	PC_CHECK(pc_pageout(p, pages * PC_PAGE) == 0, "madvise(MADV_PAGEOUT): %s", strerror(errno));
	if (pc_managed()) {
		size_t present = 0;
		for (size_t i = 0; i < pages; i++)
			present += pc_present(p + i * words);
		PC_CHECK(present * 10 <= pages, "%zu of %zu pages still present after MADV_PAGEOUT", present, pages);
	}
	printf("base=%p pages=%zu\n", (void *)p, pages);
	fflush(stdout);

	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv")) {
		volatile int *volatile nowhere = NULL;
		*nowhere = 1;
		pc_fail("survived a write through a null pointer");
	}
	if (!strcmp(how, "quit-ign")) {
		signal(SIGQUIT, SIG_IGN);
		raise(SIGQUIT);
		printf("survived\n");
		return 0;
	}
	if (!strcmp(how, "quit-own")) {
		signal(SIGQUIT, on_quit);
		raise(SIGQUIT);
		PC_CHECK(quit_runs == 1, "the program's SIGQUIT handler ran %d times", (int)quit_runs);
		printf("handled\n");
		return 0;
	}
	fprintf(stderr, "prog_coredump: unknown HOW %s\n", how);
	return 2;
}
