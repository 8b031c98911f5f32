/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layout.h - where the code and data every process touches are placed.
 *
 * Each page of the library a process touches first costs it a page fault,
 * and a shell pays them for each command: the program it execs loads the
 * library, reads its options and defers its start; a fork child runs the
 * library's fork handlers and the calls a shell makes between fork and
 * exec. A fork child faults again on every page of text it runs (the
 * kernel copies no page table entries of a file mapping) and copies every
 * page of data it writes, and after the fork the parent copies or takes
 * back each page it writes as well. Where faults are dear (a guest whose
 * page tables are shadowed: docs/DESIGN.md, "Start-up"), a dozen pages is
 * a tenth of a millisecond a command.
 *
 * ZSWAP_STARTUP puts a function in .text.startup, which the linker places
 * at the head of .text next to _init: the kernel maps up to 64 KiB of a
 * file around a fault, so the start, exit and fork paths cost one fault
 * instead of one for every 64 KiB of text they would cross.
 *
 * The object's segments are aligned to 64 KiB (-z max-page-size, Makefile.am),
 * so that those windows start where the segments do: aligned to 4 KiB, the
 * head of .text or .rodata may sit at the end of a window and cost two
 * faults instead of one.
 *
 * Tables hold text, not pointers (opt_table, stats_fields): a pointer in
 * static data is a relocation, and the loader copies every page that holds
 * one at each exec.
 *
 * ZSWAP_STARTUP_DATA puts a small variable those paths write in .data, a
 * page or two the loader has already copied to relocate the engine's
 * state, instead of on a .bss page of its own. Only for small variables
 * (a kilobyte at most): .data is read from the file at each start.
 *
 * A fork child reads .data and .bss pages without a fault (their entries
 * are copied at the fork) but faults on every page of .rodata it reads (a
 * file mapping's are not): the lock initialisers the child's handlers copy
 * are built on the stack when zero, in .data otherwise, never constants.
 */
#ifndef ZSWAP_LAYOUT_H
#define ZSWAP_LAYOUT_H

#define ZSWAP_STARTUP __attribute__((section(".text.startup")))
#define ZSWAP_STARTUP_DATA __attribute__((section(".data")))

/*
 * The two system calls a fork child's handlers make, inline instead of
 * through libc's syscall(): that function sits on a page of libc's text
 * the child would fault in for this alone. Neither call fails.
 */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
static inline long layout_syscall2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long layout_syscall2(long nr, long a, long b)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory", "cc");
	return x0;
}
#else
static inline long layout_syscall2(long nr, long a, long b)
{
	return syscall(nr, a, b);
}
#endif

static inline pid_t layout_getpid(void)
{
	return (pid_t)layout_syscall2(SYS_getpid, 0, 0);
}

static inline void layout_clock_coarse(struct timespec *ts)
{
	layout_syscall2(SYS_clock_gettime, CLOCK_MONOTONIC_COARSE, (long)ts);
}

#endif
