/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lzo.c - an LZO1X decoder for one page, written for the refault path.
 *
 * Why our own: liblzo2's lzo1x_decompress_safe (2.10, Debian's) copies
 * literals and matches a byte at a time: several times LZ4's time a page
 * (docs/DESIGN.md, "Tried and rejected"), and every refault under
 * ZSWAP_COMPRESSOR=lzo pays it in the handler while the program waits. The
 * kernel's decoder (lib/lzo, rewritten in 2012) copies in words. This one
 * follows the format as the kernel documents it
 * (Documentation/staging/lzo.rst) and copies in 8-byte words where both
 * buffers have room, bytes near their ends. liblzo2 still compresses
 * (comp.c): the stream is the same LZO1X.
 *
 * Every read is checked against the end of the input and every write
 * against the end of the page, and every match against what was written:
 * a corrupt object ends in -1, never in a byte outside either buffer. Only
 * the version 0 bitstream ("lzo") is read; a version byte ("lzo-rle") is
 * refused.
 *
 * The stream: an instruction's first byte is its opcode; after any match
 * S = 0..3 literals follow (the opcode's or its distance's low two bits),
 * and what an opcode below 16 means depends on how many literals came
 * last (state: 0, 1..3, or 4 for a longer run).
 *
 *   first byte > 17   t = byte - 17 literals (state t, or 4 if t >= 4)
 *   0..15, state 0    a run of 3 + L literals (L = 0: 15 + 255 per zero
 *                     byte + the next byte), state 4
 *   0..15, state 1-3  a 2-byte match, distance (H << 2) + D + 1
 *   0..15, state 4    a 3-byte match, distance (H << 2) + D + 2049
 *   16..31            a match of 2 + L (L: 3 bits, extended as above),
 *                     LE16 operand, distance 16384 + (bit 3 << 14) + D;
 *                     distance 16384 ends the stream
 *   32..63            a match of 2 + L (L: 5 bits, extended), LE16
 *                     operand, distance D + 1
 *   64..127           a match of 3 + L (1 bit), distance (H << 3) + D + 1
 *   128..255          a match of 5 + L (2 bits), distance (H << 3) + D + 1
 */
#include "config.h"
#include "core/lzo.h"

#include <stdint.h>
#include <string.h>

/* A length's extension: 255 for every zero byte, then the first non-zero
 * byte, added to base. -1 past the input's end or when the sum could not
 * fit a page. */
static long lzo_ext(const uint8_t **ipp, const uint8_t *ip_end, long base)
{
	const uint8_t *ip = *ipp;
	long n = base;

	for (;;) {
		if (ip >= ip_end)
			return -1;
		uint8_t b = *ip++;
		if (b) {
			n += b;
			break;
		}
		n += 255;
		if (n > LZO_MAX_OUT)
			return -1;
	}
	*ipp = ip;
	return n;
}

/* n bytes from m to op, which may overlap only as a match does (m before
 * op): 8 at a time when they are 8 apart or more and op has room for the
 * overshoot (rewritten by what follows, or past a corrupt stream's end),
 * else a byte at a time. */
static inline void lzo_copy_match(uint8_t *op, const uint8_t *m, size_t n, const uint8_t *op_end)
{
	size_t dist = (size_t)(op - m), room = (size_t)(op_end - op);
	uint64_t w;

	if (dist >= 8 && room >= n + 16) {
		/* Two words cover most matches (3 to 8, or M3's short ones). */
		memcpy(&w, m, 8);
		memcpy(op, &w, 8);
		memcpy(&w, m + 8, 8);
		memcpy(op + 8, &w, 8);
		for (size_t i = 16; i < n; i += 8) {
			memcpy(&w, m + i, 8);
			memcpy(op + i, &w, 8);
		}
		return;
	}
	for (size_t i = 0; i < n; i++)
		op[i] = m[i];
}

long lzo1x_decode(const void *src, size_t len, void *dst, size_t cap)
{
	const uint8_t *ip = src, *const ip_end = ip + len;
	uint8_t *op = dst, *const out = dst, *const op_end = op + cap;
	unsigned int state = 0;
	size_t lit, mlen, dist;

	if (cap > LZO_MAX_OUT || len < 3)
		return -1;
	if (*ip == 17)
		return -1;	/* a version byte: lzo-rle, not read here */
	if (*ip > 17) {
		lit = (size_t)(*ip++ - 17);
		goto literals;
	}
	for (;;) {
		if (ip >= ip_end)
			return -1;
		unsigned int opc = *ip++;

		if (opc >= 64) {
			/* The commonest: 3 to 8 bytes within 2 KiB, one byte of
			 * operand (64..127: 3 + L, 128..255: 5 + L, so opc >> 5
			 * plus one either way). */
			if (ip >= ip_end)
				return -1;
			dist = ((size_t)*ip++ << 3) + ((opc >> 2) & 7) + 1;
			mlen = (opc >> 5) + 1;
			lit = opc & 3;
		} else if (opc < 16) {
			if (state == 0) {
				/* A run of 4 or more literals. */
				long n = (opc & 15) ? (long)(opc & 15) : lzo_ext(&ip, ip_end, 15);
				if (n < 0)
					return -1;
				lit = (size_t)n + 3;
				goto literals;
			}
			if (ip >= ip_end)
				return -1;
			dist = ((size_t)*ip++ << 2) + ((opc >> 2) & 3) + (state == 4 ? 2049 : 1);
			mlen = state == 4 ? 3 : 2;
			lit = opc & 3;
		} else if (opc < 32) {
			long n = (opc & 7) ? (long)(opc & 7) : lzo_ext(&ip, ip_end, 7);
			if (n < 0 || ip_end - ip < 2)
				return -1;
			unsigned int d = (unsigned int)ip[0] | (unsigned int)ip[1] << 8;
			ip += 2;
			dist = 16384 + ((size_t)(opc & 8) << 11) + (d >> 2);
			if (dist == 16384) {
				/* End of stream: all of the input, exactly. */
				if (n != 1 || ip != ip_end)
					return -1;
				return (long)(op - out);
			}
			mlen = (size_t)n + 2;
			lit = d & 3;
		} else {
			long n = (opc & 31) ? (long)(opc & 31) : lzo_ext(&ip, ip_end, 31);
			if (n < 0 || ip_end - ip < 2)
				return -1;
			unsigned int d = (unsigned int)ip[0] | (unsigned int)ip[1] << 8;
			ip += 2;
			dist = (d >> 2) + 1;
			mlen = (size_t)n + 2;
			lit = d & 3;
		}
		if (dist > (size_t)(op - out) || mlen > (size_t)(op_end - op))
			return -1;
		lzo_copy_match(op, op - dist, mlen, op_end);
		op += mlen;
		state = (unsigned int)lit;
		if (!lit)
			continue;
		if (ip_end - ip >= 4 && op_end - op >= 4) {
			/* 1..3 literals: one 4-byte copy. */
			memcpy(op, ip, 4);
			ip += lit;
			op += lit;
			continue;
		}
	literals:
		if (lit > (size_t)(ip_end - ip) || lit > (size_t)(op_end - op))
			return -1;
		if (lit <= 16 && ip_end - ip >= 16 && op_end - op >= 16)
			memcpy(op, ip, 16);	/* the common short run: one fixed copy */
		else
			memcpy(op, ip, lit);
		ip += lit;
		op += lit;
		state = lit >= 4 ? 4 : (unsigned int)lit;
	}
}
