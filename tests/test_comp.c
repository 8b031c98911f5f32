/*
 * test_comp.c - the compressors over static workspaces: round trips of every
 * kind of page with LZ4 and zstd at several levels, output that does not fit,
 * corrupt input detected (never a wrong page, never a write past the page),
 * and no call to the malloc family while compressing or decompressing.
 */
#include "config.h"
#include "comp.h"
#include "prim.h"
#include "test_store_util.h"

#include <errno.h>
#include <string.h>

#define NPAGES 64

static const struct { enum zswap_comp comp; int level; } cases[] = {
	{ ZSWAP_COMP_LZ4, 0 },
	{ ZSWAP_COMP_ZSTD, 1 },
	{ ZSWAP_COMP_ZSTD, 3 },
	{ ZSWAP_COMP_ZSTD, 9 },
	{ ZSWAP_COMP_ZSTD, 19 },
	{ ZSWAP_COMP_ZSTD, 0 },		/* default level */
};

static uint8_t *pages[TP__COUNT];

static void *ws_mem(enum zswap_comp comp, int level, size_t *len)
{
	*len = comp_ws_size(comp, level);
	TP_CHECK(*len > 0 && *len % 64 == 0);
	void *m = prim_alloc(*len);
	TP_CHECK(m);
	return m;
}

/* Every page of every kind compresses and comes back byte for byte. */
static void test_round_trip(struct comp_ws *ws)
{
	static uint8_t buf[COMP_BUF_SIZE], out[TP_PAGE + 64];

	for (int k = 0; k < TP__COUNT; k++) {
		size_t in = 0, outb = 0;

		for (size_t p = 0; p < NPAGES; p++) {
			const uint8_t *src = pages[k] + p * TP_PAGE;
			int n = comp_compress(ws, src, buf, sizeof(buf));

			TP_CHECK(n > 0);
			memset(out, 0xA5, sizeof(out));
			TP_CHECK_EQ(comp_decompress(ws, buf, (size_t)n, out), 0);
			TP_CHECK(memcmp(out, src, TP_PAGE) == 0);
			for (size_t i = TP_PAGE; i < sizeof(out); i++)
				TP_CHECK_EQ(out[i], 0xA5);
			in += TP_PAGE;
			outb += (size_t)n;
		}
		fprintf(stderr, "  %s level %d %-6s ratio %.2f\n", comp_name(ws->comp), ws->level,
			tp_kind_name[k], (double)in / (double)outb);
		if (k == TP_ZERO || k == TP_SAME)
			TP_CHECK(outb < in / 20);
		if (k == TP_TEXT)
			TP_CHECK(outb < in * 4 / 5);
	}
}

/* Output limited below what a page needs: 0 ("does not fit"), not an error. */
static void test_does_not_fit(struct comp_ws *ws)
{
	static uint8_t buf[COMP_BUF_SIZE];

	for (size_t p = 0; p < NPAGES; p++)
		TP_CHECK_EQ(comp_compress(ws, pages[TP_RANDOM] + p * TP_PAGE, buf, 3000), 0);
	/* and the workspace is still good afterwards */
	int n = comp_compress(ws, pages[TP_TEXT], buf, sizeof(buf));
	TP_CHECK(n > 0);
	uint8_t out[TP_PAGE];
	TP_CHECK_EQ(comp_decompress(ws, buf, (size_t)n, out), 0);
	TP_CHECK(memcmp(out, pages[TP_TEXT], TP_PAGE) == 0);
}

/* Corrupt or truncated input is reported, and nothing is written past dst. */
static void test_corrupt(struct comp_ws *ws)
{
	static uint8_t buf[COMP_BUF_SIZE], out[TP_PAGE + 64];
	int n = comp_compress(ws, pages[TP_TEXT] + TP_PAGE, buf, sizeof(buf));

	TP_CHECK(n > 16);
	memset(out, 0xA5, sizeof(out));
	TP_CHECK_EQ(comp_decompress(ws, buf, (size_t)n / 2, out), -EIO);	/* truncated */
	for (size_t i = TP_PAGE; i < sizeof(out); i++)
		TP_CHECK_EQ(out[i], 0xA5);

	memset(buf, 0xFF, (size_t)n);						/* scribbled */
	TP_CHECK_EQ(comp_decompress(ws, buf, (size_t)n, out), -EIO);
	for (size_t i = TP_PAGE; i < sizeof(out); i++)
		TP_CHECK_EQ(out[i], 0xA5);

	/* A page's worth of output plus trailing garbage is not one page either. */
	n = comp_compress(ws, pages[TP_TEXT], buf, sizeof(buf));
	TP_CHECK(n > 0 && (size_t)n + 64 <= sizeof(buf));
	memset(buf + n, 0x11, 64);
	TP_CHECK_EQ(comp_decompress(ws, buf, (size_t)n + 64, out), -EIO);
}

/* The whole compress/decompress loop makes no malloc-family call. */
static void test_no_malloc(struct comp_ws *ws)
{
	static uint8_t buf[COMP_BUF_SIZE], out[TP_PAGE];

	/* First prove the counter sees this binary's calls. */
	atomic_store(&tp_mcount, 0);
	atomic_store(&tp_mcount_on, 1);
	void *volatile probe = malloc(24);	/* volatile: not elided */
	free(probe);
	atomic_store(&tp_mcount_on, 0);
	TP_CHECK_EQ(atomic_load(&tp_mcount), 1);

	atomic_store(&tp_mcount, 0);
	atomic_store(&tp_mcount_on, 1);
	for (int k = 0; k < TP__COUNT; k++)
		for (size_t p = 0; p < NPAGES; p++) {
			int n = comp_compress(ws, pages[k] + p * TP_PAGE, buf, sizeof(buf));
			if (n > 0)
				comp_decompress(ws, buf, (size_t)n, out);
			comp_compress(ws, pages[k] + p * TP_PAGE, buf, 2000);
		}
	atomic_store(&tp_mcount_on, 0);
	TP_CHECK_EQ(atomic_load(&tp_mcount), 0);
}

static void test_bad_args(void)
{
	struct comp_ws ws;
	size_t len;
	void *m = ws_mem(ZSWAP_COMP_ZSTD, 3, &len);

	TP_CHECK_EQ(comp_ws_size((enum zswap_comp)7, 0), 0);
	TP_CHECK_EQ(comp_ws_init(&ws, (enum zswap_comp)7, 0, m, len), -EINVAL);
	TP_CHECK_EQ(comp_ws_init(&ws, ZSWAP_COMP_ZSTD, 3, m, len - 64), -EINVAL);
	TP_CHECK_EQ(comp_ws_init(&ws, ZSWAP_COMP_ZSTD, 3, (char *)m + 8, len - 64), -EINVAL);
	TP_CHECK_EQ(comp_effective_level(ZSWAP_COMP_ZSTD, 0), COMP_ZSTD_DEFAULT_LEVEL);
	TP_CHECK_EQ(comp_effective_level(ZSWAP_COMP_ZSTD, 99), COMP_ZSTD_DEFAULT_LEVEL);
	TP_CHECK_EQ(comp_effective_level(ZSWAP_COMP_ZSTD, 7), 7);
	prim_free(m, len);
}

int main(void)
{
	for (int k = 0; k < TP__COUNT; k++)
		pages[k] = tp_pages((enum tp_kind)k, NPAGES, 42 + (uint64_t)k);

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct comp_ws ws;
		size_t len;
		void *m = ws_mem(cases[c].comp, cases[c].level, &len);

		TP_CHECK_EQ(comp_ws_init(&ws, cases[c].comp, cases[c].level, m, len), 0);
		fprintf(stderr, "%s level %d: workspace %zu bytes\n", comp_name(ws.comp), ws.level, len);
		test_round_trip(&ws);
		test_does_not_fit(&ws);
		test_corrupt(&ws);
		test_no_malloc(&ws);
		prim_free(m, len);
	}
	test_bad_args();
	for (int k = 0; k < TP__COUNT; k++)
		free(pages[k]);
	return 0;
}
