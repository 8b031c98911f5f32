/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lzo.h - an LZO1X decoder (version 0 bitstream, the kernel's "lzo") with
 * word copies, for the refault path (src/core/lzo.c says why).
 */
#ifndef ZSWAP_LZO_H
#define ZSWAP_LZO_H

#include <stddef.h>

/* The largest output lzo1x_decode() accepts to produce. */
#define LZO_MAX_OUT	65536

/* Decode the LZO1X stream src (len bytes, exactly one stream) into dst
 * (cap bytes at most, cap <= LZO_MAX_OUT). Returns the bytes written, or
 * -1 when the stream is corrupt, truncated, has trailing bytes or does not
 * fit: nothing is ever read past src + len or written past dst + cap. No
 * allocation, no lock, no system call. */
long lzo1x_decode(const void *src, size_t len, void *dst, size_t cap);

#endif
