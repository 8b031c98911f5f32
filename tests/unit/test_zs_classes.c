/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_zs_classes.c - the size-class table against the kernel's.
 *
 * The rows below are copied from the kernel's "zsmalloc/zram: configurable
 * zspage size" series (patch 1/6), as its debugfs "classes" file
 * printed them for an empty pool, in that kernel's columns (class, size,
 * almost_full, almost_empty, obj_allocated, obj_used, pages_used,
 * pages_per_zspage, freeable). Each row's class, size, pages per zspage and
 * counts must be ours; the fullness columns it had are all 0, as every one of
 * ours is in an empty pool. Each table is also contiguous (the rows between
 * its first and last are all the unmerged classes in that range), so the set
 * of unmerged classes in each range is checked too.
 *
 * Then `zswapctl classes --order N` must print exactly the table built here
 * from zs_class_stat() with the current kernel's seq_printf formats (the
 * inuse-ratio columns 10% .. 100%, then objs_per_zspage after freeable), and
 * reject bad orders with exit status 2.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/zsmalloc.h"
#include "test_check.h"

struct kernel_table {
	unsigned int order;
	unsigned int first, last;	/* the contiguous range the rows cover */
	const char *rows[24];
};

/* The kernel's, verbatim (one leading space lost). */
static const struct kernel_table kernel_tables[] = {
	{ 2, 94, 100, {
"   94  1536           0            0             0          0          0                3        0",
"  100  1632           0            0             0          0          0                2        0",
	} },
	{ 2, 202, 254, {
"  202  3264           0            0             0          0          0                4        0",
"  254  4096           0            0             0          0          0                1        0",
	} },
	{ 3, 202, 254, {
"  202  3264           0            0             0          0          0                4        0",
"  211  3408           0            0             0          0          0                5        0",
"  217  3504           0            0             0          0          0                6        0",
"  222  3584           0            0             0          0          0                7        0",
"  225  3632           0            0             0          0          0                8        0",
"  254  4096           0            0             0          0          0                1        0",
	} },
	{ 4, 202, 254, {
"  202  3264           0            0             0          0          0                4        0",
"  206  3328           0            0             0          0          0               13        0",
"  207  3344           0            0             0          0          0                9        0",
"  208  3360           0            0             0          0          0               14        0",
"  211  3408           0            0             0          0          0                5        0",
"  212  3424           0            0             0          0          0               16        0",
"  214  3456           0            0             0          0          0               11        0",
"  217  3504           0            0             0          0          0                6        0",
"  219  3536           0            0             0          0          0               13        0",
"  222  3584           0            0             0          0          0                7        0",
"  223  3600           0            0             0          0          0               15        0",
"  225  3632           0            0             0          0          0                8        0",
"  228  3680           0            0             0          0          0                9        0",
"  230  3712           0            0             0          0          0               10        0",
"  232  3744           0            0             0          0          0               11        0",
"  234  3776           0            0             0          0          0               12        0",
"  235  3792           0            0             0          0          0               13        0",
"  236  3808           0            0             0          0          0               14        0",
"  238  3840           0            0             0          0          0               15        0",
"  254  4096           0            0             0          0          0                1        0",
	} },
};

static const size_t watermarks[] = { [2] = 3264, [3] = 3632, [4] = 3840 };

static const char *const ratio_heads[ZS_INUSE_COLUMNS] = {
	"10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "99%", "100%",
};

/* The kernel's zs_stats_size_show() row, with the objs_per_zspage column. */
static void format_row(char *buf, size_t cap, const struct zs_class_stat *st)
{
	size_t n = (size_t)snprintf(buf, cap, " %5u %5u ", st->index, st->size);

	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		n += (size_t)snprintf(buf + n, cap - n, "%9lu ", st->inuse_ratio[c]);
	snprintf(buf + n, cap - n, "%13lu %10lu %10lu %16d %8lu %15d\n", st->obj_allocated,
		 st->obj_used, st->pages_used, (int)st->pages_per_zspage, st->freeable,
		 (int)st->objs_per_zspage);
}

static bool all_zero(const unsigned long *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

static void check_kernel_rows(void)
{
	for (size_t t = 0; t < sizeof(kernel_tables) / sizeof(kernel_tables[0]); t++) {
		const struct kernel_table *tab = &kernel_tables[t];
		struct zs_pool *pool = zs_create_pool("kernel", tab->order, ZS_LOCK_CLASS);
		unsigned int nrows = 0, kept = 0;

		CHECK(pool, "zs_create_pool(order %u): %s", tab->order, strerror(errno));
		if (!pool)
			continue;
		for (const char *const *r = tab->rows; *r; r++, nrows++) {
			struct zs_class_stat st;
			unsigned int idx, size, ppz;
			unsigned long full, empty, alloc, used, pages, freeable;

			CHECK(sscanf(*r, "%u %u %lu %lu %lu %lu %lu %u %lu", &idx, &size, &full, &empty,
				     &alloc, &used, &pages, &ppz, &freeable) == 9,
			      "unreadable row '%s'", *r);
			if (!zs_class_stat(pool, idx, &st)) {
				CHECK(0, "order %u: class %u is merged, the kernel lists it", tab->order, idx);
				continue;
			}
			CHECK(st.size == size && st.pages_per_zspage == ppz && st.obj_allocated == alloc &&
			      st.obj_used == used && st.pages_used == pages && st.freeable == freeable &&
			      full == 0 && empty == 0 && all_zero(st.inuse_ratio, ZS_INUSE_COLUMNS),
			      "order %u class %u: size %u, %u pages per zspage; the kernel's row '%s'",
			      tab->order, idx, st.size, st.pages_per_zspage, *r);
		}
		for (unsigned int i = tab->first; i <= tab->last; i++) {
			struct zs_class_stat st;

			kept += zs_class_stat(pool, i, &st);
		}
		CHECK(kept == nrows, "order %u: %u unmerged classes in %u..%u, the kernel shows %u",
		      tab->order, kept, tab->first, tab->last, nrows);
		zs_destroy_pool(pool);
	}
}

static void check_geometry(void)
{
	struct zs_class_stat st;

	CHECK(ZS_SIZE_CLASSES == 255, "ZS_SIZE_CLASSES %d", (int)ZS_SIZE_CLASSES);
	/* The series' trace of class 96 (1568 bytes): 2 pages at order 2, 5 at order 3. */
	CHECK(zs_pages_per_zspage(1568, 2) == 2, "%u", zs_pages_per_zspage(1568, 2));
	CHECK(zs_pages_per_zspage(1568, 3) == 5, "%u", zs_pages_per_zspage(1568, 3));
	/* 3/8 of a page: 3 pages hold 8 objects exactly (the kernel's comment). */
	CHECK(zs_pages_per_zspage(1536, 4) == 3, "%u", zs_pages_per_zspage(1536, 4));

	CHECK(zs_create_pool("bad", 1, ZS_LOCK_CLASS) == NULL && errno == EINVAL, "order 1 accepted");
	CHECK(zs_create_pool("bad", 5, ZS_LOCK_CLASS) == NULL && errno == EINVAL, "order 5 accepted");

	for (unsigned int order = ZS_MIN_PAGE_ORDER; order <= ZS_MAX_PAGE_ORDER; order++) {
		struct zs_pool *pool = zs_create_pool("geom", order, ZS_LOCK_POOL);
		unsigned int kept = 0, prev_size = 0;
		size_t wm, huge;
		unsigned long h;

		CHECK(pool, "zs_create_pool(order %u): %s", order, strerror(errno));
		if (!pool)
			continue;
		CHECK(zs_get_order(pool) == order, "%u", zs_get_order(pool));
		wm = zs_huge_class_watermark(pool);
		huge = zs_huge_class_size(pool);
		CHECK(wm == watermarks[order], "order %u: watermark %zu, want %zu", order, wm,
		      watermarks[order]);
		CHECK(huge == wm - (ZS_HANDLE_SIZE - 1), "order %u: huge_class_size %zu", order, huge);

		for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++) {
			if (!zs_class_stat(pool, i, &st))
				continue;
			kept++;
			CHECK(st.index == i && st.size == ZS_MIN_ALLOC_SIZE + i * ZS_SIZE_CLASS_DELTA,
			      "order %u class %u: size %u", order, i, st.size);
			CHECK(st.size > prev_size && st.size % 16 == 0, "class %u size %u", i, st.size);
			CHECK(st.pages_per_zspage >= 1 && st.pages_per_zspage <= (1U << order),
			      "class %u ppz %u", i, st.pages_per_zspage);
			CHECK(st.objs_per_zspage == st.pages_per_zspage * ZS_PAGE_SIZE / st.size,
			      "class %u objs %u", i, st.objs_per_zspage);
			CHECK(st.obj_allocated == 0 && st.obj_used == 0 && st.pages_used == 0 &&
			      st.freeable == 0 && all_zero(st.inuse_ratio, ZS_INUSE_COLUMNS),
			      "fresh pool, class %u not empty", i);
			/* Above the watermark only the huge class is left. */
			CHECK(st.size <= wm || i == ZS_SIZE_CLASSES - 1, "order %u class %u above %zu",
			      order, i, wm);
			prev_size = st.size;
		}
		CHECK(zs_class_stat(pool, 0, &st) && zs_class_stat(pool, ZS_SIZE_CLASSES - 1, &st) &&
		      st.size == 4096 && st.pages_per_zspage == 1 && st.objs_per_zspage == 1,
		      "first/last class");
		CHECK(!zs_class_stat(pool, ZS_SIZE_CLASSES, &st), "index 255 accepted");
		CHECK(kept > 2, "order %u: %u classes", order, kept);

		/* The largest request below huge_class_size shares pages... */
		h = zs_malloc(pool, huge - 1);
		CHECK(h && zs_class_stat(pool, (unsigned int)(wm - ZS_MIN_ALLOC_SIZE) / 16, &st) &&
		      st.obj_used == 1, "order %u: %zu bytes not in the watermark class", order, huge - 1);
		zs_free(pool, h);
		/* ...and from huge_class_size up, objects are one per page. */
		h = zs_malloc(pool, huge);
		CHECK(h && zs_class_stat(pool, ZS_SIZE_CLASSES - 1, &st) && st.obj_used == 1,
		      "order %u: %zu bytes not in the huge class", order, huge);
		zs_free(pool, h);
		CHECK(zs_get_total_pages(pool) == 0, "%lu pages left", zs_get_total_pages(pool));
		zs_destroy_pool(pool);
	}
}

/* The whole `zswapctl classes` text, built here from zs_class_stat(). */
static size_t expected_table(unsigned int order, char *buf, size_t cap)
{
	struct zs_pool *pool = zs_create_pool("expect", order, ZS_LOCK_CLASS);
	unsigned long t_ratio[ZS_INUSE_COLUMNS] = { 0 };
	unsigned long t_alloc = 0, t_used = 0, t_pages = 0, t_free = 0;
	size_t len = 0;

	if (!pool)
		return 0;
	len += (size_t)snprintf(buf + len, cap - len, " %5s %5s", "class", "size");
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		len += (size_t)snprintf(buf + len, cap - len, " %9s", ratio_heads[c]);
	len += (size_t)snprintf(buf + len, cap - len, " %13s %10s %10s %16s %8s %15s\n",
				"obj_allocated", "obj_used", "pages_used", "pages_per_zspage",
				"freeable", "objs_per_zspage");
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++) {
		struct zs_class_stat st;

		if (!zs_class_stat(pool, i, &st))
			continue;
		format_row(buf + len, cap - len, &st);
		len += strlen(buf + len);
		for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
			t_ratio[c] += st.inuse_ratio[c];
		t_alloc += st.obj_allocated;
		t_used += st.obj_used;
		t_pages += st.pages_used;
		t_free += st.freeable;
	}
	len += (size_t)snprintf(buf + len, cap - len, "\n %5s %5s ", "Total", "");
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		len += (size_t)snprintf(buf + len, cap - len, "%9lu ", t_ratio[c]);
	len += (size_t)snprintf(buf + len, cap - len, "%13lu %10lu %10lu %16s %8lu\n", t_alloc,
				t_used, t_pages, "", t_free);
	len += (size_t)snprintf(buf + len, cap - len,
				"\nhuge class watermark: %zu bytes (objects of %zu bytes or more are stored one per page)\n",
				zs_huge_class_watermark(pool), zs_huge_class_size(pool));
	zs_destroy_pool(pool);
	return len;
}

/* Run a shell command; its stdout into buf, its exit status returned. */
static int run(const char *cmd, char *buf, size_t cap, size_t *len)
{
	FILE *f = popen(cmd, "r");
	int status;

	*len = 0;
	if (!f)
		return -1;
	*len = fread(buf, 1, cap - 1, f);
	buf[*len] = '\0';
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_zswapctl(const char *argv0)
{
	static char got[64 << 10], want[64 << 10], cmd[PATH_MAX + 128];
	char tool[PATH_MAX];
	const char *builddir = getenv("ZSWAP_BUILDDIR");
	size_t glen, wlen;
	int rc;

	if (builddir) {
		snprintf(tool, sizeof(tool), "%s/tools/zswapctl/zswapctl", builddir);
	} else {
		/* Run by hand: the tool sits beside tests/ in the build tree. */
		const char *slash = strrchr(argv0, '/');
		int dl = slash ? (int)(slash - argv0) : 1;

		snprintf(tool, sizeof(tool), "%.*s/../tools/zswapctl/zswapctl", dl, slash ? argv0 : ".");
	}
	if (access(tool, X_OK) != 0) {
		CHECK(0, "%s not built", tool);
		return;
	}

	for (unsigned int order = ZS_MIN_PAGE_ORDER; order <= ZS_MAX_PAGE_ORDER; order++) {
		wlen = expected_table(order, want, sizeof(want));
		snprintf(cmd, sizeof(cmd), "'%s' classes --order %u", tool, order);
		rc = run(cmd, got, sizeof(got), &glen);
		CHECK(rc == 0, "%s: exit %d", cmd, rc);
		CHECK(glen == wlen && memcmp(got, want, wlen) == 0,
		      "%s: output differs from zs_class_stat()\n--- got\n%s--- want\n%s", cmd, got, want);
	}
	/* The default order is ZS_DEFAULT_PAGE_ORDER, and --order=N works too. */
	wlen = expected_table(ZS_DEFAULT_PAGE_ORDER, want, sizeof(want));
	snprintf(cmd, sizeof(cmd), "'%s' classes", tool);
	rc = run(cmd, got, sizeof(got), &glen);
	CHECK(rc == 0 && glen == wlen && memcmp(got, want, wlen) == 0, "%s: exit %d", cmd, rc);
	wlen = expected_table(4, want, sizeof(want));
	snprintf(cmd, sizeof(cmd), "'%s' classes --order=4", tool);
	rc = run(cmd, got, sizeof(got), &glen);
	CHECK(rc == 0 && glen == wlen && memcmp(got, want, wlen) == 0, "%s: exit %d", cmd, rc);

	/* Bad orders: one line on stderr naming the value, exit status 2. */
	static const char *const bad[] = {
		"classes --order 1", "classes --order 5", "classes --order x", "classes --order ''",
		"classes --order 3x", "classes --order -2", "classes --order 99999999999999999999",
		"classes --order", "classes --bogus", "classes 3", "no-such-command", "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 >/dev/null", tool, bad[i]);
		rc = run(cmd, got, sizeof(got), &glen);
		CHECK(rc == 2, "zswapctl %s: exit %d, want 2", bad[i], rc);
		CHECK(glen > 0 && strncmp(got, "zswapctl: ", 10) == 0,
		      "zswapctl %s: stderr '%s'", bad[i], got);
	}
	snprintf(cmd, sizeof(cmd), "'%s' --help", tool);
	rc = run(cmd, got, sizeof(got), &glen);
	CHECK(rc == 0 && strstr(got, "classes"), "zswapctl --help: exit %d, '%s'", rc, got);
	snprintf(cmd, sizeof(cmd), "'%s' classes --help", tool);
	rc = run(cmd, got, sizeof(got), &glen);
	CHECK(rc == 0 && strstr(got, "--order"), "zswapctl classes --help: exit %d, '%s'", rc, got);
}

int main(int argc, char **argv)
{
	(void)argc;
	check_geometry();
	check_kernel_rows();
	check_zswapctl(argv[0]);
	if (failures) {
		fprintf(stderr, "test_zs_classes: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_zs_classes: ok\n");
	return 0;
}
