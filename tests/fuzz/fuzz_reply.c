/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_reply.c - libFuzzer target: what zswapctl makes of a server's reply
 * (tools/zswapctl/zswapctl_reply.c). The input is the reply. The printable
 * filter must pass printable ASCII, tab and newline unchanged and nothing
 * else raw, and write at most four bytes per byte read; watch's counters
 * must come from a "NAME VALUE" line of the reply, a group's token from a
 * line of 32 hex digits; a control answer's body
 * must start within it at the end of its head. Nothing may read past the
 * reply (it is copied to a buffer of its own size, without a terminating NUL).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zswapctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool fuzz_plain(unsigned char c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n';
}

static void fuzz_escape(const char *in, size_t n)
{
	char *out = malloc(4 * n + 1);
	size_t o = zswapctl_escape(in, n, out), j = 0;

	if (o > 4 * n || out[o] != '\0')
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];

		if (fuzz_plain(c)) {
			if (j >= o || out[j] != (char)c)
				abort();
			j++;
			continue;
		}
		char want[5];
		snprintf(want, sizeof(want), "\\x%02x", c);
		if (j + 4 > o || memcmp(out + j, want, 4) != 0)
			abort();
		j += 4;
	}
	if (j != o)
		abort();
	for (size_t k = 0; k < o; k++)
		if (!fuzz_plain((unsigned char)out[k]))
			abort();
	free(out);
}

static void fuzz_counters(const char *in, size_t n)
{
	static const char *const names[] = { "zswpout", "zswpin", "faults", "pool_total_size", "x", "" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		unsigned long long v = 0;
		size_t nl = strlen(names[k]);

		if (!zswapctl_counter(in, n, names[k], &v))
			continue;
		/* A line that begins "NAME " with digits after it. */
		bool seen = false;
		for (size_t p = 0; p + nl + 1 < n && !seen; p++)
			seen = (p == 0 || in[p - 1] == '\n') && !memcmp(in + p, names[k], nl) &&
			       in[p + nl] == ' ' && in[p + nl + 1] >= '0' && in[p + nl + 1] <= '9';
		if (!seen)
			abort();
	}
}

/* A group's token: a "NAME HEX" line of exactly that many hex digits. */
static void fuzz_token(const char *in, size_t n)
{
	char tok[33];

	if (!zswapctl_counter_hex(in, n, "group.token", tok, 32))
		return;
	if (strlen(tok) != 32 || strspn(tok, "0123456789abcdef") != 32 || !memmem(in, n, tok, 32))
		abort();
}

static void fuzz_answer(const char *in, size_t n)
{
	size_t body = 99;
	enum zswapctl_answer a = zswapctl_answer(in, n, &body);

	if (body > n)
		abort();
	switch (a) {
	case ZSWAPCTL_ANSWER_OK:
		if (body != 3 || memcmp(in, "ok\n", 3))
			abort();
		break;
	case ZSWAPCTL_ANSWER_PARTIAL:
		if (body != 8 || memcmp(in, "partial\n", 8))
			abort();
		break;
	case ZSWAPCTL_ANSWER_ERROR:
		if (body != 7 || memcmp(in, "error: ", 7))
			abort();
		break;
	default:
		if (body != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size ? size : 1);

	memcpy(in, data, size);
	fuzz_escape(in, size);
	fuzz_counters(in, size);
	fuzz_token(in, size);
	fuzz_answer(in, size);
	free(in);
	return 0;
}
