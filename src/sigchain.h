/*
 * sigchain.h - signals libzswap shares with the program.
 *
 * libzswap keeps its own handler installed in the kernel for a few signals
 * (the statistics signal, ZSWAP_STATS_SIGNAL; SIGSEGV and SIGBUS for crash
 * reports) and interposes sigaction(2) and signal(3) so that the program
 * still sees and sets its own handler for them: the program's action is
 * recorded, returned by later calls, and called by our handler after ours
 * has done its part (chaining). The kernel-side registration mirrors the
 * program's flags and mask (SA_ONSTACK, SA_RESTART, SA_NODEFER, sa_mask), so
 * the program's handler runs as it would without us; SA_RESETHAND is
 * emulated. Every other signal passes straight to the kernel, exactly as the
 * C library would do it (system call, restorer, errors).
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

/* As sigchain_take, but while the program's action is SIG_IGN (now or set
 * later) the kernel is given SIG_IGN itself: an ignored signal stays
 * discarded as it arrives, and interrupts no system call, as without us
 * (src/coredump.c: signals that only matter when they kill). */
int sigchain_take_unless_ignored(int sig, sigchain_fn fn);

/* True when the program has no handler of its own for sig (SIG_DFL, or
 * SIG_IGN, which the kernel does not honour for a fault). */
bool sigchain_program_fatal(int sig);

/* True when the program's action for sig (taken) is SIG_DFL. */
bool sigchain_program_default(int sig);

/* Put the program's own action for sig back in the kernel and stop taking
 * sig (a forked child, where the library's part has no thread to wake).
 * Returns true when that action is the default one. Async-signal-safe. */
bool sigchain_give_back(int sig);

/* Give sig its default action in the kernel, ours and the program's
 * forgotten: a fatal signal re-raised. Async-signal-safe. */
void sigchain_default(int sig);

/* Kill the process with sig's default action, from our handler of sig:
 * sigchain_default, then a fault raised by an instruction (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE with si_code > 0) is taken again as the
 * instruction runs again on return; any other (kill, abort, a seccomp
 * SIGSYS whose call was skipped, the kernel's SIGXCPU) is sent again to
 * this thread and delivered, now fatal, as the handler returns.
 * Async-signal-safe. */
void sigchain_die(int sig, const siginfo_t *info);

/* The interposed entry points' back end (src/interpose.c): libc semantics,
 * -1 with errno on error. */
int sigchain_sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

#endif
