/*
 * start.h - start-up (a constructor: nothing to call) and fork: the one
 * place that starts the subsystems and every library thread.
 */
#ifndef ZSWAP_START_H
#define ZSWAP_START_H

#include <stdbool.h>

/* A fork the C library makes without its atfork handlers (glibc's _Fork,
 * clone without CLONE_VM: src/shim/interpose.c): the library's handlers run
 * around it all the same, but always as the interim (every stored page
 * loaded back first, the child a pass-through): such a child may make no
 * thread before exec, and following it needs some. raw_prepare before the
 * call, raw_parent after it in the parent (failed or not; errno kept),
 * raw_child first thing in the child (fds_shared: it shares the parent's
 * descriptor table, CLONE_FILES, and must close none of them). */
void start_fork_raw_prepare(void);
void start_fork_raw_parent(void);
void start_fork_raw_child(bool fds_shared);

#endif
