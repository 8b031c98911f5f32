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
	CTLREQ_RECOMPRESS,
};

/* "recompress [idle[=SECONDS]] [huge] [threshold=BYTES]" (zram's
 * recompress): which pool entries are compressed again; every condition
 * given must hold. */
struct ctlreq_rc {
	bool idle;		/* stored at least idle_s seconds ago (0: any) */
	uint64_t idle_s;
	bool huge;		/* held whole */
	uint64_t threshold;	/* at least this many bytes in the pool */
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
	struct ctlreq_rc rc;	/* RECOMPRESS */
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

/* One word of recompress's arguments into rc: idle, idle=SECONDS, huge,
 * threshold=BYTES (1..4096). False when it is none of these. */
bool ctlreq_parse_recompress(const char *s, struct ctlreq_rc *rc);
size_t ctlreq_format_recompress(const struct ctlreq_rc *rc, char *buf, size_t len);

/* MODE as ctlreq_parse_writeback reads it, for a request or an answer. */
size_t ctlreq_format_writeback(const struct ctlreq_wb *wb, char *buf, size_t len);

#endif
