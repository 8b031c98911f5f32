/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c - a tiny printf for diagnostics that must never allocate or lock.
 */
#include "config.h"
#include "base/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/layout.h"

struct log_buf {
	char *p;
	size_t cap;
	size_t len;
};

static void log_putc(struct log_buf *b, char c)
{
	if (b->len + 1 < b->cap)
		b->p[b->len] = c;
	b->len++;
}

ZSWAP_STARTUP static void log_puts(struct log_buf *b, const char *s, int width, bool left)
{
	size_t n = strlen(s);

	if (!left)
		for (int i = (int)n; i < width; i++)
			log_putc(b, ' ');
	for (size_t i = 0; i < n; i++)
		log_putc(b, s[i]);
	if (left)
		for (int i = (int)n; i < width; i++)
			log_putc(b, ' ');
}

static void log_putu(struct log_buf *b, unsigned long long v, unsigned base,
		     int width, bool left, bool neg, bool zero)
{
	char tmp[32];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (zero && !left && n < width - (neg ? 1 : 0) && n < 30)
		tmp[n++] = '0';
	if (neg)
		tmp[n++] = '-';
	char out[33];
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
	log_puts(b, out, width, left);
}

ZSWAP_STARTUP size_t log_format(char *buf, size_t cap, const char *fmt, va_list ap)
{
	struct log_buf b = { buf, cap, 0 };

	for (const char *f = fmt; *f; f++) {
		if (*f != '%') {
			log_putc(&b, *f);
			continue;
		}
		f++;
		bool left = false, zero = false;
		int width = 0, lng = 0;
		if (*f == '-') {
			left = true;
			f++;
		}
		if (*f == '0') {
			zero = true;
			f++;
		}
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (*f++ - '0');
		while (*f == 'l') {
			lng++;
			f++;
		}
		if (*f == 'z') {
			lng = 2;
			f++;
		}
		switch (*f) {
		case 'd':
		case 'i': {
			long long v = lng >= 2 ? va_arg(ap, long long) :
				      lng == 1 ? va_arg(ap, long) : va_arg(ap, int);
			log_putu(&b, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v,
				 10, width, left, v < 0, zero);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = lng >= 2 ? va_arg(ap, unsigned long long) :
					       lng == 1 ? va_arg(ap, unsigned long) :
							  va_arg(ap, unsigned);
			log_putu(&b, v, *f == 'x' ? 16 : 10, width, left, false, zero);
			break;
		}
		case 'p':
			log_putc(&b, '0');
			log_putc(&b, 'x');
			log_putu(&b, (uintptr_t)va_arg(ap, void *), 16, width, left, false, zero);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			log_puts(&b, s ? s : "(null)", width, left);
			break;
		}
		case 'c':
			log_putc(&b, (char)va_arg(ap, int));
			break;
		case '%':
			log_putc(&b, '%');
			break;
		case '\0':
			f--;
			break;
		default:
			log_putc(&b, '%');
			log_putc(&b, *f);
			break;
		}
	}
	if (cap)
		buf[b.len < cap ? b.len : cap - 1] = '\0';
	return b.len < cap ? b.len : (cap ? cap - 1 : 0);
}

ZSWAP_STARTUP size_t log_snprintf(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = log_format(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}

size_t log_human(char *buf, size_t cap, uint64_t bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned int u = 0;

	while (u + 1 < sizeof(unit) / sizeof(unit[0]) && bytes >> (10 * (u + 1)))
		u++;
	if (!u)
		return log_snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
	uint64_t whole = bytes >> (10 * u), part = bytes & ((1ull << (10 * u)) - 1);
	return log_snprintf(buf, cap, "%llu.%llu %s", (unsigned long long)whole,
			    (unsigned long long)((part * 10) >> (10 * u)), unit[u]);
}

int log_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		long r = syscall(SYS_write, fd, buf, len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Where lines go: stderr unless ZSWAP_LOG_FILE named a file (log_set_fd). */
static _Atomic int log_fd = 2;

void log_set_fd(int fd)
{
	atomic_store(&log_fd, fd >= 0 ? fd : 2);
}

int log_get_fd(void)
{
	return atomic_load(&log_fd);
}

size_t log_expand_path(char *out, size_t len, const char *pattern, long pid, long long secs,
		       unsigned long long n)
{
	size_t pos = 0;

	for (const char *f = pattern; *f && pos + 1 < len; f++) {
		if (*f != '%' || !f[1]) {
			out[pos++] = *f;
			continue;
		}
		f++;
		if (*f == 'p')
			pos += log_snprintf(out + pos, len - pos, "%ld", pid);
		else if (*f == 't')
			pos += log_snprintf(out + pos, len - pos, "%lld", secs);
		else if (*f == 'n')
			pos += log_snprintf(out + pos, len - pos, "%llu", n);
		else
			out[pos++] = *f;
	}
	if (pos >= len)
		pos = len - 1;
	out[pos] = '\0';
	return pos;
}

static _Atomic long log_window;		/* the second the current burst started */
static _Atomic int log_in_window;	/* lines written in that second */
static _Atomic unsigned long log_dropped;

void zlog(const char *fmt, ...)
{
	char line[512];
	struct timespec ts;
	size_t n;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	long now = ts.tv_sec, win = atomic_load(&log_window);
	if (now != win && atomic_compare_exchange_strong(&log_window, &win, now)) {
		unsigned long dropped = atomic_exchange(&log_dropped, 0);
		atomic_store(&log_in_window, 0);
		if (dropped) {
			n = log_snprintf(line, sizeof(line),
					 "libzswap: %lu messages suppressed\n", dropped);
			log_write_all(atomic_load(&log_fd), line, n);
		}
	}
	if (atomic_fetch_add(&log_in_window, 1) >= LOG_BURST) {
		atomic_fetch_add(&log_dropped, 1);
		return;
	}

	n = log_snprintf(line, sizeof(line), "libzswap: ");
	va_start(ap, fmt);
	n += log_format(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	log_write_all(atomic_load(&log_fd), line, n);
}

void log_check_failed(const char *file, int line, const char *cond)
{
	char buf[512];
	size_t n = log_snprintf(buf, sizeof(buf),
				"libzswap: internal check failed at %s:%d: %s\n", file, line, cond);
	log_write_all(atomic_load(&log_fd), buf, n);
	abort();
}
