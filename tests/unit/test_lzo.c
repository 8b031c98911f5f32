/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_lzo.c - src/core/lzo.c's LZO1X decoder against liblzo2's: every stream
 * liblzo2 makes (pages of every kind, 64 KiB buffers built to need every
 * instruction, long distances included) decodes to the original, with the
 * byte after the output untouched; the stream's end, truncations, trailing
 * bytes and a version byte are refused; and random corruption never reads
 * past the input or writes past the output (the input ends at an
 * inaccessible page, the output has guard bytes), whatever it returns.
 */
#include "config.h"
#include "core/lzo.h"
#include "test_store_util.h"

#include <lzo/lzo1x.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define BIG	65536
#define GUARD	64

static uint8_t wrk[LZO1X_1_15_MEM_COMPRESS] __attribute__((aligned(16)));
static uint8_t cbuf[BIG + BIG / 16 + 64 + 3];
static uint8_t out[BIG + GUARD];
static uint64_t rs = 0x2545f4914f6cdd1dull;

static size_t compress(const uint8_t *src, size_t n)
{
	lzo_uint len = 0;

	TP_CHECK_EQ(lzo1x_1_15_compress(src, n, cbuf, &len, wrk), LZO_E_OK);
	return (size_t)len;
}

/* Decode, check against the source and the guard after it. */
static void round_trip(const uint8_t *src, size_t n)
{
	size_t len = compress(src, n);

	memset(out, 0xA5, sizeof(out));
	TP_CHECK_EQ(lzo1x_decode(cbuf, len, out, n), (long)n);
	TP_CHECK(memcmp(out, src, n) == 0);
	for (size_t i = n; i < n + GUARD; i++)
		TP_CHECK_EQ(out[i], 0xA5);
	/* liblzo2 agrees. */
	static uint8_t ref[BIG];
	lzo_uint rn = n;
	TP_CHECK_EQ(lzo1x_decompress_safe(cbuf, len, ref, &rn, NULL), LZO_E_OK);
	TP_CHECK(rn == n && memcmp(ref, src, n) == 0);
	/* Too little room, cut short, or a byte too many: refused. */
	if (n > 1)
		TP_CHECK_EQ(lzo1x_decode(cbuf, len, out, n - 1), -1);
	TP_CHECK_EQ(lzo1x_decode(cbuf, len - 1, out, n), -1);
	cbuf[len] = 0;
	TP_CHECK_EQ(lzo1x_decode(cbuf, len + 1, out, n), -1);
}

/* A buffer that needs every instruction: literal runs of every length (at
 * the start too), matches of every length at near and far distances (over
 * 16 KiB: the 16..31 codes), short repeats (overlapping copies), zeros. */
static void fill_mixed(uint8_t *b, size_t n, unsigned int shape)
{
	size_t o = 0;

	while (o < n) {
		uint64_t r = tp_rand(&rs);
		size_t len = 1 + (size_t)(r % (shape & 1 ? 300 : 24));
		if (len > n - o)
			len = n - o;
		switch ((r >> 20) % 5) {
		case 0:	/* literals */
			for (size_t i = 0; i < len; i++)
				b[o + i] = (uint8_t)tp_rand(&rs);
			break;
		case 1:	/* a copy from anywhere before */
			if (o) {
				size_t d = 1 + (size_t)((r >> 32) % o);
				for (size_t i = 0; i < len; i++)
					b[o + i] = b[o + i - d];
				break;
			}
			/* fall through */
		case 2:	/* a short period: overlapping matches */
		{
			size_t p = 1 + (size_t)((r >> 40) % 7);
			for (size_t i = 0; i < len; i++)
				b[o + i] = i < p ? (uint8_t)(r >> (8 * (i % 4))) : b[o + i - p];
			break;
		}
		case 3:	/* zeros */
			memset(b + o, 0, len);
			break;
		default: /* text-like */
			for (size_t i = 0; i < len; i++)
				b[o + i] = (uint8_t)("the zswap pool stores pages "[(r + i) % 28]);
		}
		o += len;
	}
}

static void test_round_trips(void)
{
	static uint8_t big[BIG];
	uint8_t *pages[TP__COUNT];
	size_t streams = 0;

	for (int k = 0; k < TP__COUNT; k++) {
		pages[k] = tp_pages((enum tp_kind)k, 64, 77 + (uint64_t)k);
		for (size_t p = 0; p < 64; p++, streams++)
			round_trip(pages[k] + p * TP_PAGE, TP_PAGE);
	}
	/* Text with a random head: literal runs of every length first. */
	for (size_t cut = 0; cut <= 600; cut++, streams++) {
		static uint8_t pg[TP_PAGE];
		memcpy(pg, pages[TP_TEXT], TP_PAGE);
		for (size_t i = 0; i < cut; i++)
			pg[i] = (uint8_t)tp_rand(&rs);
		round_trip(pg, TP_PAGE);
	}
	for (unsigned int shape = 0; shape < 400; shape++, streams++) {
		size_t n = shape % 4 ? TP_PAGE : BIG;
		fill_mixed(big, n, shape);
		round_trip(big, n);
	}
	/* Sizes other than a page. */
	for (size_t n = 1; n <= 300; n++, streams++) {
		fill_mixed(big, n, (unsigned int)n);
		round_trip(big, n);
	}
	fprintf(stderr, "  %zu streams decoded as liblzo2 decodes them\n", streams);
	for (int k = 0; k < TP__COUNT; k++)
		free(pages[k]);
}

/* A version byte (lzo-rle's first byte), an empty or tiny input: refused. */
static void test_refused(void)
{
	static const uint8_t rle[] = { 17, 1, 0x11, 0, 0 };
	static const uint8_t eos[] = { 0x11, 0, 0 };

	TP_CHECK_EQ(lzo1x_decode(rle, sizeof(rle), out, TP_PAGE), -1);
	TP_CHECK_EQ(lzo1x_decode(eos, 0, out, TP_PAGE), -1);
	TP_CHECK_EQ(lzo1x_decode(eos, 2, out, TP_PAGE), -1);
	TP_CHECK_EQ(lzo1x_decode(eos, sizeof(eos), out, BIG + 1), -1);
}

/* Random corruption of real streams: whatever it returns, the decoder stays
 * inside both buffers. The input is copied to the end of an accessible page
 * with an inaccessible one after it, so a read past it faults. */
static void test_corruption(void)
{
	long pg = TP_PAGE;
	uint8_t *map = mmap(NULL, 4 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TP_CHECK(map != MAP_FAILED);
	TP_CHECK_EQ(mprotect(map + 3 * pg, (size_t)pg, PROT_NONE), 0);
	uint8_t *pages = tp_pages(TP_TEXT, 16, 5), *bin = tp_pages(TP_BINARY, 16, 6);
	size_t ok = 0, refused = 0;

	for (unsigned int it = 0; it < 200000; it++) {
		const uint8_t *src = (it & 1 ? bin : pages) + (it % 16) * TP_PAGE;
		size_t len = compress(src, TP_PAGE);
		if (len > 3 * (size_t)pg)
			continue;
		uint8_t *in = map + 3 * pg - len;
		memcpy(in, cbuf, len);
		unsigned int flips = 1 + it % 4;
		for (unsigned int f = 0; f < flips; f++) {
			uint64_t r = tp_rand(&rs);
			in[r % len] ^= (uint8_t)(1u << ((r >> 32) % 8));
		}
		size_t cut = it % 7 == 0 ? (size_t)(tp_rand(&rs) % len) : 0;
		memset(out, 0xA5, sizeof(out));
		long n = lzo1x_decode(in + cut, len - cut, out, TP_PAGE);
		TP_CHECK(n == -1 || (n >= 0 && n <= TP_PAGE));
		for (size_t i = TP_PAGE; i < TP_PAGE + GUARD; i++)
			TP_CHECK_EQ(out[i], 0xA5);
		if (n < 0)
			refused++;
		else
			ok++;
	}
	fprintf(stderr, "  corrupt streams: %zu refused, %zu decoded to some length, none out of bounds\n",
		refused, ok);
	/* No checksum in LZO: a flipped literal still decodes. Structure
	 * damage must be seen at least sometimes. */
	TP_CHECK(refused > 1000);
	free(pages);
	free(bin);
	munmap(map, 4 * (size_t)pg);
}

int main(void)
{
	TP_CHECK_EQ(lzo_init(), LZO_E_OK);
	test_round_trips();
	test_refused();
	test_corruption();
	return 0;
}
