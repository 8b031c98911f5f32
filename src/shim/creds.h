/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.h - programs that change their credentials under the library.
 *
 * Capabilities, keepcaps and securebits belong to each thread, while glibc
 * applies a set*id call (setuid, setresgid, setgroups, ...) to every thread
 * of the process, the library's included, and aborts the process when one
 * thread's result differs from the caller's. A program that raises a
 * capability on the calling thread (setpriv, a daemon that keeps CAP_SETGID
 * across setresuid) would have the call fail on the library's threads. So
 * before each such call every library thread takes the calling thread's
 * capability sets and securebits (keepcaps is one of them), which gives it
 * the caller's result; and after each capset(2) the program makes through
 * the C library, it takes them too, so that library threads never keep a
 * capability the program dropped. The statistics socket follows a change
 * of the effective uid into the new user's directory (stats.h).
 */
#ifndef ZSWAP_CREDS_H
#define ZSWAP_CREDS_H

#include <stdbool.h>
#include <sys/types.h>

/* Around a set*id call of the program (src/shim/interpose.c): begin before
 * it, given the effective uid the call asks for ((uid_t)-1: none, a gid or
 * groups call), end after it whatever it answered (errno kept). begin
 * returns what end must be given. One program thread at a time. */
bool creds_setid_begin(uid_t euid);
void creds_setid_end(bool begun);

/* After a capset(2) of the program's that succeeded on the calling thread:
 * the library's threads take the same sets. */
void creds_capset_after(void);

#endif
