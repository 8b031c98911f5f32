/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crash.h - a report when libzswap itself crashes.
 *
 * SIGSEGV and SIGBUS are shared with the program (src/base/sigchain.c). When one
 * arrives from the kernel (a real fault, not kill(2)) with the faulting
 * instruction inside libzswap's own code, or on one of libzswap's threads
 * (they run on library-owned stacks), the library writes a backtrace
 * (libunwind; "unavailable" without it) and a one-line state summary to
 * stderr, then the signal takes its default action (core dump). Any other
 * fault is the program's: its own handler runs as if we were not there.
 */
#ifndef ZSWAP_CRASH_H
#define ZSWAP_CRASH_H

/* Start-up: take SIGSEGV and SIGBUS. */
void crash_init(void);

/* Called first by each library thread that may run with SIGSEGV and
 * SIGBUS unblocked (they are blocked in every library thread otherwise, and
 * a blocked fault signal kills at once, without a report). */
void crash_thread_start(void);

#endif
