/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdtab.h - the library's own file descriptors, kept out of the program's way.
 *
 * The program owns the descriptor numbers: shells write `exec 5>file`, libtool
 * `exec 5<&0`, daemons close every descriptor they did not open, Python calls
 * os.closerange(3, ...). A userfaultfd replaced or closed under the engine
 * reads every evicted page back as zeros, and a fork then waits forever for a
 * FORK message nobody reads. So every descriptor the library keeps is moved
 * up to a high number when it is opened (fdtab_keep: the lowest free one
 * from 64 under min(soft RLIMIT_NOFILE, 1024), so select() users lose
 * nothing), and the interposed close, close_range, closefrom, dup2 and dup3
 * (interpose.c) leave those alone. Raw system calls are not seen
 * (docs/DESIGN.md "Descriptors").
 *
 * All calls are async-signal-safe (system calls and atomics only).
 */
#ifndef ZSWAP_FDTAB_H
#define ZSWAP_FDTAB_H

#include <stdbool.h>
#include <stddef.h>

/* Move fd up (close-on-exec) and record it as the library's. Returns the
 * descriptor to use from then on: the new one, or fd itself if it could not
 * be moved (recorded all the same), or fd if negative (an open that failed,
 * passed through). */
int fdtab_keep(int fd);

/* Open path read-only (close-on-exec, a raw openat) and move it up: kept
 * (fdtab_keep) or short-lived (fdtab_short). Returns it, or -1 (errno set). */
int fdtab_open_ro(const char *path, bool keep);

/* Open a file the user named (ZSWAP_LOG_FILE, ZSWAP_STATS_FILE) for
 * appending, kept (fdtab_keep) or short-lived (fdtab_short). The library may
 * run as root in a directory others can write (/tmp), so it writes only to a
 * file that is its own: the path's last component is not followed if a
 * symbolic link; a FIFO or device is refused without blocking (O_NONBLOCK);
 * an existing file must be a regular file owned by the effective user with
 * one link (a hard link planted to another file has two); a missing one is
 * created afresh (O_CREAT|O_EXCL, mode 0600). Returns the descriptor, or -1
 * after one line "VAR PATH why: then" (then says what the library does
 * instead). */
int fdtab_open_append(const char *path, bool keep, const char *var, const char *then);

/* Read a small file (a /proc or /sys one) into buf with one read through a
 * short-lived descriptor, NUL-terminated. Its length, or -1 (errno set). */
long fdtab_read_file(const char *path, char *buf, size_t cap);

/* Forget a descriptor fdtab_keep() recorded and close it (a raw close: the
 * interposed one would refuse). Negative fd: nothing. */
void fdtab_close(int fd);

/* Close every descriptor fdtab_keep() recorded (a fork child that runs
 * without the library: nothing of the parent's stays open in it). */
void fdtab_close_all(void);

/* A short-lived descriptor (a /proc file read once): moved up, not recorded,
 * closed by fdtab_close_short(). Returns the descriptor to use, or fd if
 * negative. */
int fdtab_short(int fd);

/* Close a descriptor the library opened and does not keep (fdtab_short's, or
 * one given up before fdtab_keep) with a raw close: in libzswap.so, close()
 * is the shim's interposed one. Negative fd: nothing. */
void fdtab_close_short(int fd);

/* True if fd is one the library keeps (the interposed calls ask). */
bool fdtab_is_ours(int fd);

/* What the interposed close_range does: the same, around the library's
 * descriptors. Returns 0, or -errno of the first call that failed. */
long fdtab_close_range(unsigned int first, unsigned int last, int flags);

/* What the interposed closefrom does: close_range from first up, around the
 * library's descriptors; one at a time up to the soft RLIMIT_NOFILE on a
 * kernel without close_range (before 5.9). */
void fdtab_closefrom(unsigned int first);

/* The program asked to put another file where one of ours is (dup2, dup3):
 * say so, once. */
void fdtab_refused(int fd, const char *call);

#endif
