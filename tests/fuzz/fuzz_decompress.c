/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_decompress.c - libFuzzer target: compressed data that is not what the
 * compressor wrote. The first byte chooses the compressor (lz4, lzo, zstd);
 * the rest is used twice: as a stream of its own, and as edits (offset,
 * value pairs) to the compressed form of a page made from it. Decompression
 * must either fail or give exactly one page, and never write past it: the
 * page sits right before a guard the target checks. (A corrupted stream that
 * still decodes gives another page: neither the kernel's compressors nor
 * these carry a checksum; the second tier's pages carry one.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/comp.h"

#define PAGE 4096

static struct comp_ws ws[3];
static void *mem[3];

static void setup(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	for (int c = 0; c < 3; c++) {
		size_t n = comp_ws_size((enum zswap_comp)c, 0);
		if (posix_memalign(&mem[c], 64, n) || comp_ws_init(&ws[c], (enum zswap_comp)c, 0, mem[c], n))
			abort();
	}
}

/* Decompress and check the bounds: a page, then 64 guard bytes. */
static void try(struct comp_ws *w, const uint8_t *src, size_t len)
{
	static unsigned char out[PAGE + 64];

	memset(out + PAGE, 0xA5, 64);
	int rc = comp_decompress(w, src, len, out);
	if (rc != 0 && rc != -5)	/* 0 or -EIO */
		abort();
	for (int k = 0; k < 64; k++)
		if (out[PAGE + k] != 0xA5)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char page[PAGE], comp[2 * PAGE];

	setup();
	if (size < 2)
		return 0;
	struct comp_ws *w = &ws[data[0] % 3];
	data++;
	size--;
	try(w, data, size);
	/* A page of the input repeated (compressible), compressed, then edited. */
	for (size_t i = 0; i < PAGE; i++)
		page[i] = data[i % size];
	int n = comp_compress(w, page, comp, sizeof(comp));
	if (n <= 0)
		return 0;
	for (size_t i = 0; i + 1 < size && i < 16; i += 2)
		comp[data[i] % (unsigned int)n] ^= data[i + 1] | 1;
	try(w, comp, (size_t)n);
	/* Truncated. */
	try(w, comp, (size_t)n / 2);
	return 0;
}
