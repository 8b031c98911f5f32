/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * comp.c - LZ4, zstd and LZO over caller-owned workspaces.
 *
 * Why static workspaces: the store runs on the fault path, where a malloc
 * could wait on a lock held by the very thread whose fault is being served.
 * LZ4 needs only its extState (LZ4_sizeofState(), ~16 KiB). zstd's contexts
 * are sized for a single 4 KiB input at the chosen level
 * (ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, PAGE_SIZE, 0))),
 * and every compression passes the page size as the pledged source size, so
 * the parameters zstd derives are exactly those the workspace was sized for;
 * a static context that were ever too small fails with an error rather than
 * allocate.
 *
 * Frames carry no checksum and no content size: the store always knows the
 * output is one page, and the four bytes per object are pool memory.
 *
 * LZO is the kernel's default zswap compressor ("lzo", lib/lzo), there so a
 * comparison with kernel zswap can use the same algorithm. The kernel's
 * compressor is LZO1X-1 with a 13-bit dictionary of 16-bit offsets
 * (lib/lzo/lzodefs.h D_BITS 13). liblzo2 has no variant by that name:
 * lzo1x_1_compress is 14 bits, _11 and _12 are 11 and 12, and _15 is built
 * exactly the kernel's way on machines with unaligned little-endian loads
 * (liblzo2 >= 2.07 gives it D_BITS 13 and a 16-bit dictionary there, with
 * the same multiplicative hash). Measured, not assumed, against zram's
 * "lzo" (tools/bench/bench_pool_kernel.sh): lzo1x_1_15_compress gives
 * every page the kernel's size, lzo1x_1_compress not (docs/DESIGN.md,
 * "Tried and rejected"). The stream format is the same LZO1X either way;
 * src/core/lzo.c decodes it (faster than liblzo2's lzo1x_decompress_safe).
 * The kernel's "lzo-rle" is a different bitstream (a version byte and
 * zero-run codes) that liblzo2 does not have: not offered.
 *
 * LZO cannot stop at an output limit the way LZ4 does: it compresses into a
 * scratch of COMP_LZO_BOUND bytes in the workspace, and only a result that
 * fits is copied out (the kernel's zswap likewise compresses into a
 * two-page buffer and then checks the length).
 */
#include "config.h"
#include "core/comp.h"
#include "core/lzo.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <lz4.h>
#include <lzo/lzo1x.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>

#include "base/dynlib.h"

/*
 * liblz4, libzstd and liblzo2 are loaded when first asked for (comp_load:
 * at the library's start, before its threads run), not linked: a process
 * that never starts the library never loads them. Linked, LZ4 alone cost
 * every exec about 0.16 ms (an open, four mappings, five page faults:
 * /bin/true 2.10 -> 2.26 ms preloaded with an empty library linking it). A
 * workspace is made only once its library is loaded, so the calls through
 * these pointers, the fault path's included, find them set.
 */

/* Each library's functions used, each with its pointer's name: the
 * pointers and the table dynlib fills are both made from one list. */
#define COMP_PTR(tab, fn, field) __typeof__(fn) *field;
#define COMP_SYM(tab, fn, field) { #fn, (void **)&tab.field },
#define COMP_LIB(tab, FNS) \
	static struct { FNS(COMP_PTR) } tab; \
	static const struct dynlib_sym comp_##tab##_syms[] = { FNS(COMP_SYM) };

#define COMP_LZ4_FNS(X) \
	X(lz4, LZ4_sizeofState, state_size) \
	X(lz4, LZ4_compress_fast_extState, compress) \
	X(lz4, LZ4_decompress_safe, decompress)

#define COMP_ZSTD_FNS(X) \
	X(zstd, ZSTD_estimateCCtxSize_usingCParams, cctx_size) \
	X(zstd, ZSTD_getCParams, cparams) \
	X(zstd, ZSTD_estimateDCtxSize, dctx_size) \
	X(zstd, ZSTD_CCtx_setParameter, set_param) \
	X(zstd, ZSTD_initStaticCCtx, init_cctx) \
	X(zstd, ZSTD_initStaticDCtx, init_dctx) \
	X(zstd, ZSTD_compress2, compress2) \
	X(zstd, ZSTD_CCtx_reset, reset) \
	X(zstd, ZSTD_decompressDCtx, decompress) \
	X(zstd, ZSTD_isError, is_error) \
	X(zstd, ZSTD_getErrorCode, error_code)

#define COMP_LZO_FNS(X) \
	X(lzo, __lzo_init_v2, init_v2) \
	X(lzo, lzo1x_1_15_compress, compress)

COMP_LIB(lz4, COMP_LZ4_FNS)
COMP_LIB(zstd, COMP_ZSTD_FNS)
COMP_LIB(lzo, COMP_LZO_FNS)

/* lzo_init() is a macro that passes the header's ABI to __lzo_init_v2. */
#define __lzo_init_v2 (*lzo.init_v2)

#define COMP_DYNLIB(soname, tab) \
	{ soname, comp_##tab##_syms, sizeof(comp_##tab##_syms) / sizeof(comp_##tab##_syms[0]), 0, NULL, "" }

static struct dynlib comp_libs[ZSWAP_COMP_KINDS] = {
	[ZSWAP_COMP_LZ4] = COMP_DYNLIB("liblz4.so.1", lz4),
	[ZSWAP_COMP_ZSTD] = COMP_DYNLIB("libzstd.so.1", zstd),
	[ZSWAP_COMP_LZO] = COMP_DYNLIB("liblzo2.so.2", lzo),
};

const char *comp_missing(enum zswap_comp comp)
{
	if ((unsigned int)comp >= ZSWAP_COMP_KINDS)
		return "unknown compressor";
	struct dynlib *lib = &comp_libs[comp];
	if (!lib->soname || dynlib_load(lib))
		return NULL;
	return dynlib_why(lib);
}

void comp_load(void)
{
	for (unsigned int k = 0; k < ZSWAP_COMP_KINDS; k++)
		comp_missing((enum zswap_comp)k);
}

#define COMP_ALIGN 64

static size_t comp_round(size_t n)
{
	return (n + COMP_ALIGN - 1) & ~(size_t)(COMP_ALIGN - 1);
}

int comp_effective_level(enum zswap_comp comp, int level)
{
	switch (comp) {
	case ZSWAP_COMP_LZ4:
	case ZSWAP_COMP_LZO:
		return 0;
	case ZSWAP_COMP_ZSTD:
		if (level < 1 || level > COMP_ZSTD_MAX_LEVEL)
			return COMP_ZSTD_DEFAULT_LEVEL;
		return level;
	}
	return -1;
}

static size_t comp_zstd_cctx_size(int level)
{
	return comp_round(zstd.cctx_size(zstd.cparams(level, ZS_PAGE_SIZE, 0)));
}

size_t comp_ws_size(enum zswap_comp comp, int level)
{
	if (comp_missing(comp))
		return 0;
	switch (comp) {
	case ZSWAP_COMP_LZ4:
		return comp_round((size_t)lz4.state_size());
	case ZSWAP_COMP_ZSTD:
		level = comp_effective_level(comp, level);
		return comp_zstd_cctx_size(level) + comp_round(zstd.dctx_size());
	case ZSWAP_COMP_LZO:
		/* The header's size, not the 16 KiB the 13-bit dictionary
		 * really uses: the rest is never touched, so never resident. */
		return comp_round(LZO1X_1_15_MEM_COMPRESS) + comp_round(COMP_LZO_BOUND);
	}
	return 0;
}

/* Parameters set once; each is a static-context-safe setting (no allocation). */
static int comp_zstd_setup(ZSTD_CCtx *cctx, int level)
{
	static const struct { ZSTD_cParameter p; int v; } fixed[] = {
		{ ZSTD_c_checksumFlag, 0 },
		{ ZSTD_c_contentSizeFlag, 0 },
		{ ZSTD_c_dictIDFlag, 0 },
		{ ZSTD_c_nbWorkers, 0 },
	};

	if (zstd.is_error(zstd.set_param(cctx, ZSTD_c_compressionLevel, level)))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (zstd.is_error(zstd.set_param(cctx, fixed[i].p, fixed[i].v)))
			return -EINVAL;
	return 0;
}

int comp_ws_init(struct comp_ws *ws, enum zswap_comp comp, int level, void *mem, size_t len)
{
	size_t need = comp_ws_size(comp, level);

	if (!need || len < need || ((uintptr_t)mem & (COMP_ALIGN - 1)))
		return -EINVAL;
	memset(ws, 0, sizeof(*ws));
	ws->comp = comp;
	ws->level = comp_effective_level(comp, level);
	if (comp == ZSWAP_COMP_LZ4) {
		ws->lz4_state = mem;
		return 0;
	}
	if (comp == ZSWAP_COMP_LZO) {
		/* lzo_init() only checks that the library was built for this
		 * ABI; it allocates nothing and may run any number of times. */
		if (lzo_init() != LZO_E_OK)
			return -EINVAL;
		ws->lzo_wrk = mem;
		ws->lzo_out = (char *)mem + comp_round(LZO1X_1_15_MEM_COMPRESS);
		return 0;
	}

	size_t csize = comp_zstd_cctx_size(ws->level);
	ZSTD_CCtx *cctx = zstd.init_cctx(mem, csize);
	ZSTD_DCtx *dctx = zstd.init_dctx((char *)mem + csize, need - csize);

	if (!cctx || !dctx || comp_zstd_setup(cctx, ws->level))
		return -EINVAL;
	ws->cctx = cctx;
	ws->dctx = dctx;
	return 0;
}

int comp_compress(struct comp_ws *ws, const void *src, void *dst, size_t dst_cap)
{
	if (ws->comp == ZSWAP_COMP_LZ4) {
		/* 0 means it did not fit in dst_cap: LZ4 gives up as soon as the
		 * output would pass the limit, so a poor page costs less. */
		int n = lz4.compress(ws->lz4_state, src, dst, (int)ZS_PAGE_SIZE,
						   (int)dst_cap, 1);
		return n > 0 ? n : 0;
	}
	if (ws->comp == ZSWAP_COMP_LZO) {
		lzo_uint n = 0;

		if (lzo.compress(src, ZS_PAGE_SIZE, ws->lzo_out, &n, ws->lzo_wrk) != LZO_E_OK)
			return -EIO;
		if (n > dst_cap)
			return 0;
		memcpy(dst, ws->lzo_out, n);
		return (int)n;
	}

	size_t r = zstd.compress2(ws->cctx, dst, dst_cap, src, ZS_PAGE_SIZE);

	if (zstd.is_error(r)) {
		/* A failed frame leaves the context mid-stream: reset the session
		 * (parameters are kept) so the next page starts clean. */
		zstd.reset(ws->cctx, ZSTD_reset_session_only);
		return zstd.error_code(r) == ZSTD_error_dstSize_tooSmall ? 0 : -EIO;
	}
	return (int)r;
}

int comp_decompress(struct comp_ws *ws, const void *src, size_t len, void *dst)
{
	if (ws->comp == ZSWAP_COMP_LZ4) {
		int n = lz4.decompress(src, dst, (int)len, (int)ZS_PAGE_SIZE);
		return n == (int)ZS_PAGE_SIZE ? 0 : -EIO;
	}
	if (ws->comp == ZSWAP_COMP_LZO) {
		/* Our decoder (src/core/lzo.c: liblzo2's copies a byte at a time)
		 * checks both bounds: a corrupt entry ends in -1, never a write
		 * past the page or a read past src; trailing input is corrupt
		 * too. */
		return lzo1x_decode(src, len, dst, ZS_PAGE_SIZE) == (long)ZS_PAGE_SIZE ? 0 : -EIO;
	}

	size_t r = zstd.decompress(ws->dctx, dst, ZS_PAGE_SIZE, src, len);

	return !zstd.is_error(r) && r == ZS_PAGE_SIZE ? 0 : -EIO;
}

const char *comp_name(enum zswap_comp comp)
{
	switch (comp) {
	case ZSWAP_COMP_LZ4:
		return "lz4";
	case ZSWAP_COMP_ZSTD:
		return "zstd";
	case ZSWAP_COMP_LZO:
		return "lzo";
	}
	return "?";
}
