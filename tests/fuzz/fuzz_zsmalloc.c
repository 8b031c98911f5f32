/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_zsmalloc.c - libFuzzer target: sequences of pool operations against a
 * model. Each input byte is an operation on a pool of one zspage order and
 * lock mode (the first byte chooses): allocate an object (its size from the
 * next two bytes) and fill it from its number, free one, map one and check
 * every byte, compact. At the end every live object is checked, freed, and
 * the pool must hold no page. A wrong byte, a handle given twice or a page
 * left behind aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/zsmalloc.h"

#define LIVE_MAX 512

struct obj {
	unsigned long h;
	size_t size;
	uint32_t seed;
};

static void pattern(unsigned char *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

static void check(struct zs_pool *pool, const struct obj *o)
{
	static unsigned char want[ZS_MAX_ALLOC_SIZE];
	const unsigned char *p = zs_map_object(pool, o->h);

	pattern(want, o->size, o->seed);
	if (memcmp(p, want, o->size) != 0)
		abort();
	zs_unmap_object(pool, o->h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct obj live[LIVE_MAX];
	size_t nlive = 0, i = 1;
	uint32_t serial = 0;

	if (size < 1)
		return 0;
	struct zs_pool *pool = zs_create_pool("fuzz", ZS_MIN_PAGE_ORDER + data[0] % 3,
					      (data[0] & 4) ? ZS_LOCK_POOL : ZS_LOCK_CLASS);
	if (!pool)
		abort();
	while (i < size) {
		uint8_t op = data[i++];
		switch (op % 8) {
		case 0: case 1: case 2: case 3: {	/* allocate */
			size_t n = 1;
			if (i + 1 < size) {
				n = 1 + (((size_t)data[i] << 8 | data[i + 1]) % ZS_MAX_ALLOC_SIZE);
				i += 2;
			}
			if (nlive == LIVE_MAX)
				break;
			unsigned long h = zs_malloc(pool, n);
			if (!h)
				abort();	/* no limit on this pool: it must not fail */
			for (size_t k = 0; k < nlive; k++)
				if (live[k].h == h)
					abort();
			struct obj *o = &live[nlive++];
			o->h = h;
			o->size = n;
			o->seed = ++serial;
			unsigned char *p = zs_map_object(pool, h);
			pattern(p, n, o->seed);
			zs_unmap_object(pool, h);
			break;
		}
		case 4: case 5:	/* free */
			if (nlive) {
				size_t k = op % nlive;
				check(pool, &live[k]);
				zs_free(pool, live[k].h);
				live[k] = live[--nlive];
			}
			break;
		case 6:	/* check one */
			if (nlive)
				check(pool, &live[op % nlive]);
			break;
		case 7:	/* compact, then everything still right */
			zs_compact(pool);
			for (size_t k = 0; k < nlive; k++)
				check(pool, &live[k]);
			break;
		}
	}
	for (size_t k = 0; k < nlive; k++) {
		check(pool, &live[k]);
		zs_free(pool, live[k].h);
	}
	zs_compact(pool);
	if (zs_get_total_pages(pool) != 0)
		abort();
	zs_destroy_pool(pool);
	return 0;
}
