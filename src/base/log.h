/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - diagnostics written from inside someone else's process.
 *
 * Every message is one line "libzswap: ...\n" on stderr (or the file
 * ZSWAP_LOG_FILE names: log_set_fd), formatted into a
 * stack buffer by our own formatter (no malloc, no stdio, no locale) and
 * written with one write(2): safe on the fault path and in signal handlers.
 * Supported conversions: %s %c %d %i %u %x %p %% with the l, ll and z length
 * modifiers, and a field width (%5u, %-12s; %03u pads numbers with zeros).
 */
#ifndef ZSWAP_LOG_H
#define ZSWAP_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Format like snprintf into buf (always NUL-terminated); returns the length written. */
size_t log_format(char *buf, size_t cap, const char *fmt, va_list ap);
size_t log_snprintf(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* bytes in a unit people read: "512 B", "1.5 KiB", "12.3 MiB", "2.0 GiB"
 * (powers of 1024, one decimal, cut not rounded). Returns the length. */
size_t log_human(char *buf, size_t cap, uint64_t bytes);

/* One "libzswap: " line to stderr. Rate-limited: at most LOG_BURST lines per
 * second, the rest counted and reported once. */
void zlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Send every later line to fd (the caller opened it; negative: stderr again).
 * log_get_fd() says where lines go now. */
void log_set_fd(int fd);
int log_get_fd(void);

/* A file name from a pattern with %p (pid), %t (secs), %n (n) and %%
 * expanded, truncated to fit len. Returns its length. */
size_t log_expand_path(char *out, size_t len, const char *pattern, long pid, long long secs,
		       unsigned long long n);

/* Write a whole buffer to a file descriptor, retrying short writes and EINTR. */
int log_write_all(int fd, const char *buf, size_t len);

/* A failed consistency check: one line naming the file, line and condition,
 * then abort(). Cheap always-on checks on the free and fault paths use it. */
#define ZS_CHECK(cond) \
	do { if (__builtin_expect(!(cond), 0)) log_check_failed(__FILE__, __LINE__, #cond); } while (0)
void log_check_failed(const char *file, int line, const char *cond) __attribute__((noreturn));

/* Lines per second before zlog() starts counting instead of writing: room
 * for one line per option at start-up (every option set wrong at once; the
 * table holds at most 64, the width of a control request's mask). */
#define LOG_BURST 64

#endif
