/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswapctl_classes.c - `zswapctl classes`: the size-class table of a pool.
 *
 * Prints what the kernel's /sys/kernel/debug/zsmalloc/<pool>/classes shows
 * (zs_stats_size_show(): the zspages of each class by inuse ratio, 10% ..
 * 100%, then objects, pages and freeable pages), with objs_per_zspage after
 * the kernel's columns, for a fresh pool of the given order, so the geometry
 * can be compared with a kernel's line by line.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/zsmalloc.h"
#include "zswapctl.h"

static void classes_print(struct zs_pool *pool)
{
	static const char *const ratio[ZS_INUSE_COLUMNS] = {
		"10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "99%", "100%",
	};
	unsigned long t_ratio[ZS_INUSE_COLUMNS] = { 0 };
	unsigned long t_alloc = 0, t_used = 0, t_pages = 0, t_free = 0;

	/* The kernel's seq_printf formats, column for column. */
	printf(" %5s %5s", "class", "size");
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		printf(" %9s", ratio[c]);
	printf(" %13s %10s %10s %16s %8s %15s\n", "obj_allocated", "obj_used", "pages_used",
	       "pages_per_zspage", "freeable", "objs_per_zspage");
	for (unsigned int i = 0; i < ZS_SIZE_CLASSES; i++) {
		struct zs_class_stat st;

		if (!zs_class_stat(pool, i, &st))
			continue;	/* merged into a larger class */
		printf(" %5u %5u ", st.index, st.size);
		for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++) {
			printf("%9lu ", st.inuse_ratio[c]);
			t_ratio[c] += st.inuse_ratio[c];
		}
		printf("%13lu %10lu %10lu %16d %8lu %15d\n", st.obj_allocated, st.obj_used,
		       st.pages_used, (int)st.pages_per_zspage, st.freeable, (int)st.objs_per_zspage);
		t_alloc += st.obj_allocated;
		t_used += st.obj_used;
		t_pages += st.pages_used;
		t_free += st.freeable;
	}
	printf("\n %5s %5s ", "Total", "");
	for (unsigned int c = 0; c < ZS_INUSE_COLUMNS; c++)
		printf("%9lu ", t_ratio[c]);
	printf("%13lu %10lu %10lu %16s %8lu\n", t_alloc, t_used, t_pages, "", t_free);
	printf("\nhuge class watermark: %zu bytes (objects of %zu bytes or more are stored one per page)\n",
	       zs_huge_class_watermark(pool), zs_huge_class_size(pool));
}

int zswapctl_classes(const struct zswapctl_cmd *cmd, int argc, char **argv)
{
	unsigned long order = ZS_DEFAULT_PAGE_ORDER;
	struct zs_pool *pool;

	for (int i = 1; i < argc;) {
		const char *val, *cause;

		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return zswapctl_cmd_help(cmd);
		if (zswapctl_option(argc, argv, &i, "--order", &val)) {
			if (!val)
				return zswapctl_usage_error(cmd, "--order needs a value, %d..%d",
							    ZS_MIN_PAGE_ORDER, ZS_MAX_PAGE_ORDER);
			if (!zswapctl_parse_uint(val, ZS_MIN_PAGE_ORDER, ZS_MAX_PAGE_ORDER,
						 &order, &cause))
				return zswapctl_usage_error(cmd, "--order '%s': %s, expected %d..%d",
							    val, cause, ZS_MIN_PAGE_ORDER,
							    ZS_MAX_PAGE_ORDER);
			continue;
		}
		return zswapctl_usage_error(cmd, argv[i][0] == '-' ? "unknown option '%s'"
								   : "unexpected argument '%s'",
					    argv[i]);
	}

	pool = zs_create_pool("zswapctl", (unsigned int)order, ZS_LOCK_CLASS);
	if (!pool) {
		fprintf(stderr, "zswapctl: classes: cannot create a pool of order %lu: %s\n", order,
			strerror(errno));
		return 1;
	}
	classes_print(pool);
	zs_destroy_pool(pool);
	return 0;
}
