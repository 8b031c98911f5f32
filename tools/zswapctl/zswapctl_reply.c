/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_reply.c - what zswapctl makes of a server's reply: the text it
 * lets reach the terminal, the counters (watch, list) and the control
 * answers' kind.
 *
 * A reply is untrusted: any bytes, any length up to zswapctl's cap, NUL
 * bytes included. Nothing here reads past len or takes a byte as anything
 * but data; tests/fuzz/fuzz_reply.c feeds it arbitrary replies.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "zswapctl.h"

/* Printable ASCII, tab and newline pass; the dump is ASCII, and anything
 * else (escape sequences, C1 controls, carriage returns) could act on the
 * terminal instead of being read. */
static bool reply_plain(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n';
}

size_t zswapctl_escape(const char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		if (reply_plain(c)) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
	return o;
}

void zswapctl_print(FILE *f, const char *s, size_t n)
{
	char buf[4 * 4096 + 1];

	while (n > 0) {
		size_t k = n < 4096 ? n : 4096;

		fwrite(buf, 1, zswapctl_escape(s, k, buf), f);
		s += k;
		n -= k;
	}
}

/* Where the value of the first "NAME VALUE" line starts (*q) and its line
 * ends (*end): false when no line has that name. */
static bool reply_line(const char *buf, size_t len, const char *name, size_t *q, size_t *end)
{
	size_t nl = strlen(name);

	for (size_t p = 0; p < len;) {
		const char *eol = memchr(buf + p, '\n', len - p);
		size_t e = eol ? (size_t)(eol - buf) : len;

		if (e - p > nl && !memcmp(buf + p, name, nl) && buf[p + nl] == ' ') {
			*q = p + nl + 1;
			*end = e;
			return true;
		}
		p = e + 1;
	}
	return false;
}

bool zswapctl_counter(const char *buf, size_t len, const char *name, unsigned long long *v)
{
	unsigned long long x = 0;
	size_t q, end;

	if (!reply_line(buf, len, name, &q, &end) || q >= end || buf[q] < '0' || buf[q] > '9')
		return false;
	for (; q < end && buf[q] >= '0' && buf[q] <= '9'; q++) {
		unsigned d = (unsigned)(buf[q] - '0');

		if (x > (~0ull - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

bool zswapctl_counter_hex(const char *buf, size_t len, const char *name, char *out, size_t n)
{
	size_t q, end;

	if (!reply_line(buf, len, name, &q, &end) || end - q != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", buf[q + i]) || !buf[q + i])
			return false;
	memcpy(out, buf + q, n);
	out[n] = '\0';
	return true;
}

enum zswapctl_answer zswapctl_answer(const char *buf, size_t len, size_t *body)
{
	static const struct {
		const char *head;
		enum zswapctl_answer kind;
	} heads[] = {
		{ "ok\n", ZSWAPCTL_ANSWER_OK },
		{ "partial\n", ZSWAPCTL_ANSWER_PARTIAL },
		{ "error: ", ZSWAPCTL_ANSWER_ERROR },
	};

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		size_t hl = strlen(heads[i].head);

		if (len >= hl && !memcmp(buf, heads[i].head, hl)) {
			*body = hl;
			return heads[i].kind;
		}
	}
	*body = 0;
	return ZSWAPCTL_ANSWER_OTHER;
}
