/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fork.h - following fork(): the child keeps every byte and a libzswap of
 * its own, without the pool being decompressed at fork.
 *
 * With UFFD_FEATURE_EVENT_FORK the kernel gives the child's registered
 * mappings a userfaultfd of their own and delivers it to the parent as a
 * FORK message; fork() waits in the kernel until that message is read. The
 * child's copy of the library (region table, slots, pool) is its own from
 * then on, so once it holds that descriptor and runs handler threads it
 * serves its evicted pages from its own copy. Three steps (fork.c):
 *
 *  1. prepare (engine_fork_prepare, the forking thread): the mapping gate
 *     closed (below: no munmap/mremap/discard of the program's in flight),
 *     evictions stopped (eng.evict_gate), no page in a handler's buffer
 *     (INBUF), then the library state is frozen: eng.ev_lock held for
 *     writing and the region table for reading by the forking thread until
 *     the child took over.
 *     The fork thread (fork_thread) is then the only reader of eng.uffd: it
 *     serves the parent's faults without changing the table or the pool (a
 *     stored page is decompressed, not loaded: its entry stays until the
 *     freeze ends), keeps events for later, and reads the FORK message.
 *     Nothing the child inherits changes while the kernel copies it.
 *  2. the window (fork thread): the child's faults before its atfork child
 *     handler runs (glibc touches malloc arenas and thread descriptors) are
 *     served on the child's descriptor from the same frozen state, which is
 *     exactly the child's copy. The descriptor goes to the child over a
 *     socketpair made in prepare (SCM_RIGHTS); the child acknowledges, the
 *     fork thread waits until no mapping change of the parent's is in
 *     flight (one the gate does not see: glibc's own, raw system calls),
 *     stops reading it and answers with the addresses it filled without
 *     freeing their entries and the events it read while frozen.
 *  3. the child (engine_fork_child): re-creates its locks, takes the
 *     descriptor, starts its threads (they wait at a gate: their creation
 *     allocates and may fault, which the parent serves until the child
 *     acknowledges), acknowledges, applies the parent's UNMAP/REMAP events
 *     its own address space shows came before the copy, drops the entries
 *     of pages now present, and opens the gate. The parent
 *     (engine_fork_parent) processes the events kept, drops the entries of
 *     the pages it was served during the freeze, opens the gate, and goes
 *     on.
 *
 * Any failure before fork() falls back to the interim: every page loaded
 * back in the parent and the child a pass-through (its descriptor closed).
 * Without fork events (fork_restarts) the freeze ends with the parent's
 * fork() and the child starts a libzswap of its own.
 */
#ifndef ZSWAP_FORK_H
#define ZSWAP_FORK_H

#include <stdbool.h>

#include "base/compat.h"

/* Start-up: the buffers and the decompression workspace of the fork thread.
 * Returns true when forks can be followed (EVENT_FORK negotiated, the pool
 * not in pool-lock mode, memory available); false leaves the interim. */
bool fork_init(void);

/* True once fork_init() succeeded: engine.c starts fork_thread then. */
bool fork_enabled(void);

/* True when forks restart rather than follow: the kernel gives no fork
 * events (they need CAP_SYS_PTRACE), so the child's mappings lose their
 * registration at the copy. Every page is loaded back first (the caller),
 * the state is frozen as for a followed fork so that the child's copy is
 * whole, and the freeze ends as soon as the parent's fork() returns. The
 * child keeps its copy dormant and starts a libzswap of its own over it
 * (fork_restart_open, evict_register_again) at its first memory call. */
bool fork_restarts(void);

/* True when the fork being prepared restarts: without fork events, or a
 * light fork (fork_prepare) that found the store empty. */
bool fork_restarting(void);

/* The body of the fork thread (engine.c creates it with the handlers). */
void *fork_thread(void *arg);

/* The atfork handlers' halves, called by engine.c with signals blocked and
 * eng.evict_gate held for writing. fork_prepare returns true when this fork
 * is followed (the state is frozen until fork_parent / fork_child), false
 * for the interim. light: the caller's child may start late (no memory
 * limit covers it); if the store then holds nothing, the fork restarts
 * (fork_restarting) even with fork events: the child's copy has every byte
 * in place, the fork thread closes the child's userfaultfd from the FORK
 * message instead of handing it over, and the child needs no threads until
 * it starts its own. fork_child returns true when the child holds its own
 * userfaultfd (engine.c then starts its threads), false when it must run as
 * a pass-through. */
bool fork_prepare(bool light);

/* The interim taken on purpose: glibc's _Fork (src/shim/interpose.c) runs no
 * atfork handler, so its child cannot be handed over (that needs threads
 * in the child); the caller loads every page back. The child's FORK
 * message, if the kernel sends one, is closed by a handler. Returns false
 * (not followed), as fork_prepare does when it takes the interim. */
bool fork_prepare_interim(void);
void fork_parent(void);
/* The child's half, in two steps around the start of its threads:
 * fork_child_take re-creates what the forking thread held and takes the
 * child's descriptor (-1: none, the child runs as a pass-through; the
 * parent's fork thread serves the child's faults until the next step).
 * fork_child_finish(fd, go_on) acknowledges, takes the parent's answer and
 * applies it; with go_on false (the child's threads could not start) it
 * closes the descriptor and ends the handover, and returns false. The
 * threads start in between because pthread_create allocates (glibc's calloc
 * of the new thread's TLS) and that may fault on an evicted page of the
 * program's heap: served by the parent until the acknowledgement, by nobody
 * after it until the child's handlers run. */
int fork_child_take(void);
bool fork_child_finish(int fd, bool go_on);

/* The restart's halves in the child. fork_restart_child, at fork (one
 * thread): the locks afresh, the parent's descriptors (its userfaultfd,
 * its pagemap) closed. fork_restart_open, when the child starts: a
 * userfaultfd of its own as eng.uffd (-1, said, if none opens) and the
 * regions it has no mapping for forgotten. */
void fork_restart_child(void);
int fork_restart_open(void);

/* A FORK message read by a handler thread: nobody waits for it (a child
 * made by raw clone() or _Fork(), which run no atfork handler, or a fork in
 * the interim). Its descriptor is closed, which drops the child's
 * registrations: the child reads its evicted pages as zeros (README). */
void fork_event_unclaimed(int ufd);

/*
 * The mapping gate. The program's own munmap, mremap and discarding madvise
 * (the interposed entry points) hold it shared for their whole call, system
 * call and bookkeeping; fork's prepare handler closes it before the freeze
 * and waits until no such call is in progress, and it opens again when the
 * freeze ends (fork_gate_open in the parent, fork_gate_reset in the child).
 * So no call of the program's changes a mapping between the table's freeze
 * and the kernel's copy: the child's copy of the table describes its
 * address space (see DESIGN.md "## Fork" for the calls it cannot see).
 * Shared side: two atomics on the fast path; nested calls (a signal handler
 * inside a call) pass; signals are blocked while a call waits.
 */
void fork_gate_enter(void);
void fork_gate_exit(void);
void fork_gate_close(void);
void fork_gate_open(void);
void fork_gate_reset(void);

#endif
