/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sock.h - the statistics socket: where it lives and how long a client may
 * hold the statistics thread.
 *
 * The socket's directory is chosen, checked and used through one
 * descriptor: once a candidate directory is open and found private (ours,
 * mode 0700, a directory and not a link), the socket is bound, the
 * directory swept and the socket removed through that descriptor, never
 * through its path again, so a directory swapped after the check is not
 * the one used. A client gets one deadline for its request line and one
 * for taking the answer, not one per read or write: the statistics thread
 * it holds also writes the dumps the signal asks for.
 */
#ifndef ZSWAP_SOCK_H
#define ZSWAP_SOCK_H

#include <stdbool.h>
#include <stddef.h>

#define SOCK_REQ_WAIT_MS	2000	/* the whole request line, from accept */
#define SOCK_SEND_WAIT_MS	5000	/* the whole answer, from its first byte */
#define SOCK_PATH_MAX		512	/* a runtime directory, "/libzswap/", "PID.sock" */

/* Bind and listen on PID.sock in the first private directory of
 * runtime_dir/libzswap ("" for none), /run/user/EUID/libzswap, /run/libzswap
 * (root) and /tmp/libzswap-EUID (or a /tmp/libzswap-EUID.XXXXXX of ours when
 * that one is another user's), made mode 0700 if missing; the sockets of
 * processes that are gone are swept from it. Any socket open before is
 * closed first (not removed). 0, or -errno when no directory would do. */
int sock_open(const char *runtime_dir, long pid);

/* The listening socket (non-blocking), or -1. */
int sock_listen_fd(void);

/* The socket's path, "" when there is none. */
const char *sock_path(void);

/* Unlink the socket from its directory (through the directory's
 * descriptor; at exit). The descriptors stay open: the statistics thread
 * may be polling the socket. */
void sock_remove(void);

/* Close the socket and its directory's descriptor, removing nothing (a
 * fork child's copies are the parent's; after sock_remove, on the thread
 * that polls the socket or with none polling it). */
void sock_close(void);

/* A client from the listening socket: a short-lived non-blocking
 * descriptor (fdtab_short), or -1. */
int sock_accept(void);

/* The request line of client c into req (NUL-terminated): its length (0 for
 * a client that closed without a word), or -1 when the line did not come
 * within SOCK_REQ_WAIT_MS in all; the caller then drops the client. */
long sock_read_request(int c, char *req, size_t cap);

/* Send the whole of buf to client c within SOCK_SEND_WAIT_MS in all. 0, or
 * -1 (the client is too slow or gone: drop it). */
int sock_send(int c, const char *buf, size_t len);

#endif
