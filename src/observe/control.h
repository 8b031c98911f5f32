/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.h - zswapctl's requests that act on a running process, through
 * the statistics socket: set NAME=VALUE..., reclaim BYTES, compact, reset
 * (zswapctl(1); the options that can change: OPT_F_RUNTIME in the table).
 */
#ifndef ZSWAP_CONTROL_H
#define ZSWAP_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "observe/emit.h"

/* Start-up: when the process started (hist_now()), for the change log. */
void control_init(uint64_t t0_ns);

/* In a followed fork child: its own lock and an empty change log. */
void control_fork_child(void);

/* Carry out one request line from a peer of user uid (already checked:
 * the process's user or root) and write the answer to fd: "ok" and what
 * was done, or one "error: ..." line. False if req is none of these
 * requests (the caller answers the others). */
bool control_serve(int fd, char *req, unsigned long uid);

/* The change log, in the dump's configuration section. */
void control_emit(struct emitter *e);

#endif
