/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ctlreq.c - the control requests as the library parses them
 * (src/core/ctlreq.c): "reclaim BYTES" takes one number above 0 and
 * nothing after it, "set" checks every NAME=VALUE against the option
 * table, "writeback" takes one of zram's modes or a page count, and a
 * refusal is one "error: ..." line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/ctlreq.h"
#include "test_check.h"

static struct ctlreq r;

static void parse(const char *line)
{
	char req[256];
	struct opt_values base;

	opt_defaults(&base);
	snprintf(req, sizeof(req), "%s", line);
	ctlreq_parse(req, &base, &r);
}

static void check_reclaim(void)
{
	static const char *const bad[] = {
		"reclaim ", "reclaim 0", "reclaim -1", "reclaim 64M", "reclaim 1 ", "reclaim 1 2",
		"reclaim 4096 junk", "reclaim  4096", "reclaim 18446744073709551616",
	};

	parse("reclaim 67108864\n");
	CHECK(r.kind == CTLREQ_RECLAIM && !r.bad && r.bytes == 67108864, "reclaim 67108864: %s", r.why);
	parse("reclaim 18446744073709551615");
	CHECK(r.kind == CTLREQ_RECLAIM && !r.bad && r.bytes == UINT64_MAX, "reclaim 2^64 - 1: %s", r.why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(bad[i]);
		CHECK(r.kind == CTLREQ_RECLAIM && r.bad &&
		      !strcmp(r.why, "error: reclaim: expected a number of bytes above 0\n"),
		      "'%s' taken (%llu bytes)", bad[i], (unsigned long long)r.bytes);
	}
}

static void check_set(void)
{
	parse("set ZSWAP_MEMORY_LIMIT=64MiB ZSWAP_COLD_AGE=5\n");
	CHECK(r.kind == CTLREQ_SET && !r.bad && r.nv.memory_limit == 64ull << 20 && r.nv.cold_age == 5 &&
	      r.mask == ((1ull << OPT_MEMORY_LIMIT) | (1ull << OPT_COLD_AGE)), "set: %s", r.why);
	parse("set ZSWAP_COLD_AGE=5x");
	CHECK(r.kind == CTLREQ_SET && r.bad && strstr(r.why, "ZSWAP_COLD_AGE=\"5x\": expected an integer"),
	      "set 5x: %s", r.why);
	parse("compact");
	CHECK(r.kind == CTLREQ_COMPACT && !r.bad, "compact");
	parse("stats");
	CHECK(r.kind == CTLREQ_NONE, "not a control request");
}

static void check_writeback(void)
{
	static const struct {
		const char *req;
		enum ctlreq_wb_mode mode;
		uint64_t arg;
	} good[] = {
		{ "writeback idle", CTLREQ_WB_IDLE, 0 },
		{ "writeback idle=30\n", CTLREQ_WB_IDLE, 30 },
		{ "writeback huge", CTLREQ_WB_HUGE, 0 },
		{ "writeback incompressible", CTLREQ_WB_INCOMPRESSIBLE, 0 },
		{ "writeback 256", CTLREQ_WB_PAGES, 256 },
	};
	static const char *const bad[] = {
		"writeback ", "writeback 0", "writeback idle=", "writeback idle=0", "writeback idle=5x",
		"writeback idle=31536001", "writeback Huge", "writeback huge_idle", "writeback 12 ",
	};
	char back[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		parse(good[i].req);
		CHECK(r.kind == CTLREQ_WRITEBACK && !r.bad && r.wb.mode == good[i].mode && r.wb.arg == good[i].arg,
		      "'%s': %s", good[i].req, r.why);
		/* What zswapctl sends is what the library reads. */
		ctlreq_format_writeback(&r.wb, back, sizeof(back));
		CHECK(!strncmp(good[i].req + 10, back, strlen(back)), "'%s' formats as '%s'", good[i].req, back);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(bad[i]);
		CHECK(r.kind == CTLREQ_WRITEBACK && r.bad && !strncmp(r.why, "error: writeback: expected idle", 31) &&
		      strchr(r.why, '\n') == r.why + strlen(r.why) - 1, "'%s' taken: %s", bad[i], r.why);
	}
}

static void check_recompress(void)
{
	static const char *const bad[] = {
		"recompress idle=0", "recompress threshold=0", "recompress threshold=4097", "recompress Huge",
		"recompress  idle", "recompress type=idle", "recompress idle=3x",
	};
	char back[96];

	parse("recompress");
	CHECK(r.kind == CTLREQ_RECOMPRESS && !r.bad && !r.rc.idle && !r.rc.huge && !r.rc.threshold, "%s", r.why);
	parse("recompress idle=60 huge threshold=1024\n");
	CHECK(r.kind == CTLREQ_RECOMPRESS && !r.bad && r.rc.idle && r.rc.idle_s == 60 && r.rc.huge &&
	      r.rc.threshold == 1024, "%s", r.why);
	ctlreq_format_recompress(&r.rc, back, sizeof(back));
	CHECK(!strcmp(back, " idle=60 huge threshold=1024"), "formats as '%s'", back);
	parse("recompress idle");
	CHECK(r.kind == CTLREQ_RECOMPRESS && !r.bad && r.rc.idle && !r.rc.idle_s, "%s", r.why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(bad[i]);
		CHECK(r.kind == CTLREQ_RECOMPRESS && r.bad && !strncmp(r.why, "error: recompress: expected", 27),
		      "'%s' taken: %s", bad[i], r.why);
	}
}

int main(void)
{
	check_reclaim();
	check_set();
	check_writeback();
	check_recompress();
	printf("test_ctlreq: %d failures\n", failures);
	return failures ? 1 : 0;
}
