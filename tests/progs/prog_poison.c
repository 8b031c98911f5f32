/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_poison.c - a failed decompression must poison the address (SIGBUS),
 * never hand back a wrong or zero page.
 *
 * Run under the library with a failure injected into its next load (the
 * script passes the injection hook; see test_eng_poison.sh). The program
 * evicts 4 MiB of text pages and touches them one by one with a SIGBUS
 * handler installed, expecting:
 *   - exactly one page raises SIGBUS, with si_addr inside that page;
 *   - touching it again (read or write) raises SIGBUS again: it stays
 *     poisoned, it never reads zeros;
 *   - write(2) from it fails with EFAULT instead of writing anything;
 *   - every other page reads back intact;
 *   - decompress_fail and poisoned_pages are 1;
 *   - MADV_DONTNEED on the poisoned page clears it: it then reads zeros and
 *     is managed memory again.
 * If nothing was injected (no SIGBUS, every page intact, decompress_fail 0)
 * the hook is missing: exit 77 saying so. A wrong page without SIGBUS is a
 * failure.
 *
 * usage: prog_poison
 */
#include "prog_common.h"

#include <setjmp.h>
#include <signal.h>

#define NPAGES 1024UL
#define LEN (NPAGES * PC_PAGE)

static sigjmp_buf jb;
static volatile sig_atomic_t in_probe;
static void *volatile bus_addr;
static volatile int bus_code;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!in_probe) {
		pc_write_str(2, "prog_poison: FAIL: SIGBUS outside a probe\n");
		_exit(1);
	}
	bus_addr = si->si_addr;
	bus_code = si->si_code;
	siglongjmp(jb, 1);
}

/* Read (or write) one byte of the page; true if that raised SIGBUS. */
static bool probe(char *page, bool write)
{
	bus_addr = NULL;
	if (sigsetjmp(jb, 1)) {
		in_probe = 0;
		return true;
	}
	in_probe = 1;
	if (write)
		*(volatile char *)(page + 123) = 1;
	else
		(void)*(volatile char *)(page + 123);
	in_probe = 0;
	return false;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct zswap_stats a, b;
	static unsigned char expect[PC_PAGE];

	pc_init("prog_poison", &argc, argv);
	if (!pc_managed())
		pc_skip("needs the library active (mode %s)", pc_mode_name());
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);

	char *p = pc_map(LEN);
	pc_fill_range(p, NPAGES, PC_TEXT, 3);
	pc_evict("poison", p, NPAGES, false);
	pc_stats(&a);

	long poisoned = -1;
	size_t wrong = 0;
	for (size_t i = 0; i < NPAGES; i++) {
		char *pg = p + i * PC_PAGE;
		if (probe(pg, false)) {
			if ((char *)bus_addr < pg || (char *)bus_addr >= pg + PC_PAGE)
				pc_fail("SIGBUS on page %zu reported si_addr %p, outside the page %p", i, bus_addr, (void *)pg);
			if (poisoned >= 0)
				pc_fail("a second page (%zu, after %ld) raised SIGBUS: one failure was injected", i, poisoned);
			poisoned = (long)i;
			pc_info("page %zu raised SIGBUS (si_code %d) at %p", i, bus_code, bus_addr);
			continue;
		}
		pc_fill(expect, PC_TEXT, pc_page_seed(3, i));
		if (memcmp(pg, expect, PC_PAGE) != 0) {
			wrong++;
			pc_info("page %zu is wrong without SIGBUS: %s", i, pc_describe(pg, PC_TEXT, pc_page_seed(3, i)));
		}
	}
	pc_stats(&b);
	uint64_t df = b.decompress_fail - a.decompress_fail, pp = b.poisoned_pages - a.poisoned_pages;
	pc_info("decompress_fail +%" PRIu64 ", poisoned_pages +%" PRIu64 ", wrong pages %zu, poisoned page %ld",
		df, pp, wrong, poisoned);
	PC_CHECK(wrong == 0, "%zu page(s) came back wrong without SIGBUS: a failed load was returned as a page", wrong);
	if (poisoned < 0 && df == 0)
		pc_skip("no decompression failure was injected: the library offers no injection hook (see the script)");
	PC_CHECK(poisoned >= 0, "decompress_fail grew by %" PRIu64 " but no page raised SIGBUS", df);
	PC_CHECK(df == 1, "decompress_fail grew by %" PRIu64 ", expected 1", df);
	PC_CHECK(pp == 1, "poisoned_pages grew by %" PRIu64 ", expected 1", pp);

	char *pg = p + (size_t)poisoned * PC_PAGE;
	PC_CHECK(probe(pg, false), "the poisoned page read without SIGBUS the second time%s",
		 pc_page_is_zero(pg) ? " (it reads zeros)" : "");
	PC_CHECK(probe(pg, true), "a write to the poisoned page did not raise SIGBUS");
	/* A pipe copies what it is given (/dev/null would not even look). */
	int pfd[2];
	if (pipe(pfd) != 0)
		pc_fail("pipe: %s", strerror(errno));
	errno = 0;
	ssize_t w = write(pfd[1], pg, PC_PAGE);
	PC_CHECK(w == -1 && errno == EFAULT, "write(2) from the poisoned page returned %zd (errno %d), expected -1 EFAULT",
		 w, errno);
	close(pfd[0]);
	close(pfd[1]);

	/* Discarding the page clears the poison: zeros, and managed again. */
	if (madvise(pg, PC_PAGE, MADV_DONTNEED) != 0)
		pc_fail("madvise DONTNEED: %s", strerror(errno));
	PC_CHECK(!probe(pg, false), "the poisoned page still raises SIGBUS after MADV_DONTNEED");
	pc_expect_zero("poisoned page after MADV_DONTNEED", pg, 1);
	pc_fill(pg, PC_TEXT, pc_page_seed(3, (size_t)poisoned));
	pc_evict("after the poison", p, NPAGES, false);
	pc_expect_range("after the poison", p, NPAGES, PC_TEXT, 3);
	pc_expect_stored("poison", 0);
	printf("poison ok\n");
	return 0;
}
