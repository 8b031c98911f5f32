/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h - the statistics dump (ZSWAP_STATS_*) and its thread.
 *
 * A dump is made on the statistics signal (SIGUSR1 by default), every
 * ZSWAP_STATS_INTERVAL seconds, at exit (ZSWAP_STATS_AT_EXIT), and when
 * zswapctl asks through the per-process socket. The signal handler only
 * wakes the statistics thread (an eventfd write); the thread builds the dump
 * in library memory and write(2)s it. Sections, in order: the configuration,
 * zswap's debugfs counters, vmstat, zram's mm_stat line, zsmalloc's classes,
 * the engine's counters, latency percentiles, attribution.
 */
#ifndef ZSWAP_STATS_H
#define ZSWAP_STATS_H

#include <stdbool.h>

#define STATS_STACK_SIZE (256 * 1024)

/* Start-up (engine_init, engine running): buffers, the wake-up eventfd,
 * the socket, the statistics signal, crash reports. 0 when the statistics
 * thread should be started (engine.c starts it: stats_thread), -errno if
 * not (the dump is then unavailable; the engine runs on). */
int stats_init(void);

/* A deferred start (ZSWAP_START_DELAY): the statistics signal is taken at
 * once, so that one sent before the start is not the default action (the
 * end of the program): the dump is written once the library starts, which
 * the signal brings forward to the program's next memory call. stats_init
 * then keeps it. */
void stats_take_signal_early(void);

/* The statistics thread's body (library stack, every signal blocked). */
void *stats_thread(void *arg);

/* In a followed fork child, or a dormant one that starts: a wake-up
 * eventfd and socket of its own. Returns 0 when the caller must start
 * stats_thread, -errno if not. */
int stats_fork_child(void);

/* In a dormant fork child (start.h): the parent's eventfd and socket are
 * left alone, and the statistics signal is counted as before a deferred
 * start, its dump written once the child starts (at its next memory call,
 * or at exit). */
void stats_fork_child_dormant(void);

/* In a fork child that runs without the library (the interim): the
 * statistics signal goes back to the program's own action. */
void stats_fork_child_off(void);

/* The process ends now (_exit, _Exit): a dump the statistics signal asked
 * for and the thread has not written yet is written by the caller. exit()
 * needs no call: a destructor does the same. */
void stats_exit_signals(void);

/* A dump the statistics signal asked for is not written yet. */
bool stats_signal_pending(void);

/* At exit, from the library's one destructor (src/shim/start.c) or _exit:
 * a dump asked for, the dump at exit, the socket removed. */
void stats_exit(void);

/* The statistics socket for the current effective user (sock.h says
 * where): any socket open before is closed first, not removed. 0, or
 * -errno when there is none. */
int stats_open_socket(void);

/* Remove the socket and close it (the effective user changes: then
 * stats_open_socket moves it to the new user's directory). On the
 * statistics thread, or with it stopped: it polls the socket. */
void stats_close_socket(void);

/* The socket's path (for tools and tests); "" when the library offers
 * none. */
const char *stats_socket_path(void);

/* Around a set*id call that changes the effective uid (src/shim/creds.c):
 * begin removes the socket's file while the process may still write to its
 * directory; end opens the socket again in the directory of the effective
 * uid now (the new user's, or the old one's when the call failed) and
 * hands it to the statistics thread under the same descriptor number. */
void stats_setid_begin(void);
void stats_setid_end(void);

#endif
