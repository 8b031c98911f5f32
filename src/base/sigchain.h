/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigchain.h - signals libzswap shares with the program.
 *
 * libzswap takes a few signals and interposes sigaction(2) and signal(3) so
 * that the program still sees and sets its own action for them. Two ways:
 * - always (SIGSEGV and SIGBUS, for crash reports): our handler stays in the
 *   kernel; the program's action is recorded, returned by later calls, and
 *   called by our handler after ours has done its part (chaining). The
 *   kernel-side registration mirrors the program's flags and mask
 *   (SA_ONSTACK, SA_RESTART, SA_NODEFER, sa_mask); SA_RESETHAND is emulated.
 * - while default (the statistics signal, the core-dumping signals): our
 *   handler is in the kernel only while the program's action is SIG_DFL;
 *   a handler or SIG_IGN of the program's goes to the kernel as it is, so
 *   it runs, or the signal is discarded, exactly as without us.
 * Every other signal passes straight to the kernel, exactly as the C library
 * would do it (system call, restorer, errors).
 *
 * No malloc, no locks the program can hold; the handler path is
 * async-signal-safe. Calls the interposer never sees (raw rt_sigaction
 * system calls, the C library's own internal calls) bypass all of this: a
 * program that installs a handler that way replaces ours.
 */
#ifndef ZSWAP_SIGCHAIN_H
#define ZSWAP_SIGCHAIN_H

#include <signal.h>
#include <stdbool.h>

/* What our part of a shared signal does. Returns true when the signal was
 * fully handled (the program's action must not run: a crash report that
 * re-raised with the default action). */
typedef bool (*sigchain_fn)(int sig, siginfo_t *info, void *uc);

/* Take over sig: record the action in effect now as the program's, install
 * ours. Start-up only (single-threaded). 0 or -errno. */
int sigchain_take(int sig, sigchain_fn fn);

/* Take sig while the program leaves it at its default action (now or set
 * later); any other action of the program's is the kernel's own. fn then
 * stands for the default action: it does our part, or takes the default
 * action itself (sigchain_die), and returns true. Start-up only. */
int sigchain_take_while_default(int sig, sigchain_fn fn);

/* In a fork() child (its own copy of memory): the records are this
 * process's now. Until then, sigaction calls in a process that shares the
 * records without owning them (a vfork() child) go to its kernel table
 * only. */
void sigchain_fork_child(void);

/* True when the program has no handler of its own for sig (SIG_DFL, or
 * SIG_IGN, which the kernel does not honour for a fault). */
bool sigchain_program_fatal(int sig);

/* True when the program's action for sig (taken) is SIG_DFL. */
bool sigchain_program_default(int sig);

/* Put the program's own action for sig back in the kernel and stop taking
 * sig (a forked child that runs without the library). */
void sigchain_give_back(int sig);

/* Give sig its default action in the kernel (our handler is called no
 * more; the records stay: sigchain.c says why). Async-signal-safe. */
void sigchain_default(int sig);

/* Kill the process with sig's default action, from our handler of sig:
 * sigchain_default, then a fault raised by an instruction (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE with si_code > 0) is taken again as the
 * instruction runs again on return; any other (kill, abort, a seccomp
 * SIGSYS whose call was skipped, the kernel's SIGXCPU) is sent again to
 * this thread and delivered, now fatal, as the handler returns.
 * Async-signal-safe. */
void sigchain_die(int sig, const siginfo_t *info);

/* The library's own call to one of its threads: a taken signal sent with
 * tgkill by this process (si_code SI_TKILL, si_pid ours) is offered to fn
 * first, which returns true when it was such a call for the thread it runs
 * on (then nothing else runs). Start-up only. Async-signal-safe. */
void sigchain_on_tkill(bool (*fn)(void));

/* True when the kernel holds our handler for sig now (a program that
 * installs its own with a raw rt_sigaction replaces it). */
bool sigchain_installed(int sig);

/* The interposed entry points' back end (src/shim/interpose.c): libc semantics,
 * -1 with errno on error. */
int sigchain_sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

#endif
