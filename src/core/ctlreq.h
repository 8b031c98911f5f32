/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctlreq.h - the control requests zswapctl sends through the statistics
 * socket, parsed: "set NAME=VALUE ...", "reclaim BYTES", "compact",
 * "reset", "writeback MODE". Parsing needs only the option table, not a running engine, so
 * that what a peer sends can be checked (and fuzzed: tests/fuzz) apart from
 * what carrying it out needs (observe/control.c).
 */
#ifndef ZSWAP_CTLREQ_H
#define ZSWAP_CTLREQ_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "core/options.h"

enum ctlreq_kind {
	CTLREQ_NONE,		/* not a control request: the caller answers it */
	CTLREQ_SET,
	CTLREQ_RECLAIM,
	CTLREQ_COMPACT,
	CTLREQ_RESET,
	CTLREQ_WRITEBACK,
};

/* "writeback MODE" (zram's writeback): which pool entries go to the tier. */
enum ctlreq_wb_mode {
	CTLREQ_WB_IDLE,			/* stored at least arg seconds ago (0: every pool entry) */
	CTLREQ_WB_HUGE,			/* held whole, in the huge class */
	CTLREQ_WB_INCOMPRESSIBLE,	/* held whole and not shrinking at all when compressed */
	CTLREQ_WB_PAGES,		/* arg pages, the reclaimer's choice: poorly compressed first */
};

struct ctlreq_wb {
	enum ctlreq_wb_mode mode;
	uint64_t arg;
};

struct ctlreq {
	enum ctlreq_kind kind;
	struct opt_values nv;	/* SET: the values given, the others as base */
	uint64_t mask;		/* SET: bit i set: option i is given */
	uint64_t bytes;		/* RECLAIM: how much, above 0 */
	struct ctlreq_wb wb;	/* WRITEBACK */
	bool bad;		/* a request of its kind that is not valid */
	char why[1400];		/* then the answer's "error: ..." line: a request line fits */
};

/*
 * Parse one request line (up to its newline; req is modified) against the
 * options now in force (base). r->kind is CTLREQ_NONE when req is none of
 * these requests; else r->bad says whether it is valid and r->why holds the
 * error line (newline included) to send back when it is not.
 */
void ctlreq_parse(char *req, const struct opt_values *base, struct ctlreq *r);

/* writeback's MODE: idle, idle=SECONDS, huge, incompressible or a number
 * of pages above 0 (zswapctl checks its argument with it too). False when
 * s is none of these. */
bool ctlreq_parse_writeback(const char *s, struct ctlreq_wb *wb);

/* MODE as ctlreq_parse_writeback reads it, for a request or an answer. */
size_t ctlreq_format_writeback(const struct ctlreq_wb *wb, char *buf, size_t len);

#endif
