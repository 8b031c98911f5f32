/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * comp.h - the compressors (LZ4, zstd, LZO) behind the store, with workspaces
 * the caller allocates up front.
 *
 * A workspace is the whole state one thread needs to compress or decompress a
 * page: LZ4's extState, zstd's static compression and decompression
 * contexts, or LZO1X-1's dictionary plus an output scratch. The caller hands
 * comp_ws_init() a block of comp_ws_size() bytes (from prim) and from then on
 * nothing here allocates: LZ4 is used through LZ4_compress_fast_extState /
 * LZ4_decompress_safe, zstd through contexts made by ZSTD_initStaticCCtx /
 * ZSTD_initStaticDCtx over that block, which zstd never grows (it fails
 * instead, which the store counts), LZO through lzo1x_1_15_compress, which
 * takes its memory from the caller only, and our own decoder (src/core/lzo.c).
 * zstd and liblzo2 are called through pointers to libraries loaded at start
 * (comp_load), LZ4 directly.
 *
 * A workspace is used by one thread at a time; the store hands them out.
 */
#ifndef ZSWAP_COMP_H
#define ZSWAP_COMP_H

#include <stddef.h>

#include "base/prim.h"

#define COMP_ZSTD_DEFAULT_LEVEL	3	/* the kernel crypto zstd default */
#define COMP_ZSTD_MAX_LEVEL	19

/* Output buffer that always holds a compressed page, whatever the compressor:
 * at least LZ4_compressBound(PAGE_SIZE), ZSTD_compressBound(PAGE_SIZE) and
 * COMP_LZO_BOUND. */
#define COMP_BUF_SIZE		(2 * ZS_PAGE_SIZE)

/* LZO1X's worst case for one page (LZO's documented bound: n + n/16 + 64 + 3;
 * the kernel's lzo1x_worst_compress adds 2 more). */
#define COMP_LZO_BOUND		(ZS_PAGE_SIZE + ZS_PAGE_SIZE / 16 + 64 + 3 + 2)

enum zswap_comp {
	ZSWAP_COMP_LZ4 = 0,
	ZSWAP_COMP_ZSTD = 1,
	ZSWAP_COMP_LZO = 2,	/* LZO1X-1 as the kernel's "lzo" (liblzo2's lzo1x_1_15) */
};
#define ZSWAP_COMP_KINDS	3	/* compressors: an entry keeps its own in 2 bits */

struct comp_ws {
	enum zswap_comp comp;
	int level;
	void *lz4_state;	/* LZ4_sizeofState() bytes */
	void *cctx;		/* ZSTD_CCtx *, static */
	void *dctx;		/* ZSTD_DCtx *, static */
	void *lzo_wrk;		/* LZO1X_1_15_MEM_COMPRESS bytes */
	void *lzo_out;		/* COMP_LZO_BOUND bytes: LZO cannot stop at a limit */
};

/* The level actually used for comp/level (zstd: 0 or out of range means the
 * default), or -1 when comp is not a known compressor. */
int comp_effective_level(enum zswap_comp comp, int level);

/* Bytes of memory one workspace for comp/level needs (a multiple of 64), or 0
 * when comp is unknown. */
size_t comp_ws_size(enum zswap_comp comp, int level);

/* Build a workspace over mem (len >= comp_ws_size(), 64-byte aligned).
 * Returns 0, or -EINVAL when comp is unknown or len too small. */
int comp_ws_init(struct comp_ws *ws, enum zswap_comp comp, int level, void *mem, size_t len);

/* Compress one PAGE_SIZE page into dst (dst_cap bytes). Returns the
 * compressed length (> 0); 0 when the result does not fit in dst_cap (the
 * page does not shrink enough); -EIO when the compressor failed otherwise. */
int comp_compress(struct comp_ws *ws, const void *src, void *dst, size_t dst_cap);

/* Decompress src (len bytes) into dst, which receives exactly PAGE_SIZE bytes.
 * Returns 0, or -EIO when the data is corrupt or does not decompress to
 * exactly one page. Never writes past dst + PAGE_SIZE. */
int comp_decompress(struct comp_ws *ws, const void *src, size_t len, void *dst);

/* NULL if comp can be used, else why not ("libzstd.so.1: cannot open shared
 * object file: ..."). zstd and lzo are libraries loaded at their first use
 * (src/core/comp.c): a caller that must not load one (a library thread)
 * calls comp_load first. */
const char *comp_missing(enum zswap_comp comp);

/* Load every compressor's library now (the library's start-up, before its
 * threads run): afterwards comp_missing only answers. */
void comp_load(void);

/* "lz4", "zstd" or "lzo" (the kernel's crypto names). */
const char *comp_name(enum zswap_comp comp);

#endif
