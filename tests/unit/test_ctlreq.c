/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ctlreq.c - the control requests as the library parses them
 * (src/core/ctlreq.c): "reclaim BYTES" takes one number above 0 and
 * nothing after it, "set" checks every NAME=VALUE against the option
 * table, and a refusal is one "error: ..." line.
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

int main(void)
{
	check_reclaim();
	check_set();
	printf("test_ctlreq: %d failures\n", failures);
	return failures ? 1 : 0;
}
