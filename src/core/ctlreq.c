/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctlreq.c - the control requests, parsed (see ctlreq.h). A "set" is
 * checked whole: every NAME=VALUE must name an option that can change at
 * run time and hold a value its parser takes, or the request is refused
 * and nothing changes.
 */
#include "config.h"
#include "core/ctlreq.h"

#include <stdarg.h>
#include <string.h>

#include "base/log.h"
#include "core/parse.h"

static void ctlreq_bad(struct ctlreq *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ctlreq_bad(struct ctlreq *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_format(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->bad = true;
}

/* "set NAME=VALUE ...": every pair checked into r->nv. */
static void ctlreq_set(char *args, struct ctlreq *r)
{
	char msg[OPT_CHECK_MSG_MAX];

	for (char *tok = args, *end; *tok; tok = end) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			break;
		end = tok + strcspn(tok, " ");
		if (*end)
			*end++ = '\0';
		char *eq = strchr(tok, '=');
		if (!eq) {
			ctlreq_bad(r, "error: '%s': expected NAME=VALUE: nothing changed\n", tok);
			return;
		}
		const struct opt_def *d;
		if (opt_check(tok, (size_t)(eq - tok), eq + 1, OPT_CHECK_RUNTIME, &r->nv, &d, msg,
			      sizeof(msg)) != OPT_CHECK_OK) {
			ctlreq_bad(r, "error: %s: nothing changed\n", msg);
			return;
		}
		r->mask |= 1ull << d->id;
	}
	if (!r->mask)
		ctlreq_bad(r, "error: nothing to set (NAME=VALUE ...)\n");
}

_Static_assert(OPT__COUNT <= 64, "a set's mask has a bit per option");

#define CTLREQ_IDLE_MAX	(86400u * 365)	/* seconds: an age of a year at most */

bool ctlreq_parse_writeback(const char *s, struct ctlreq_wb *wb)
{
	memset(wb, 0, sizeof(*wb));
	if (!strcmp(s, "idle"))
		return true;
	if (!strncmp(s, "idle=", 5)) {
		wb->mode = CTLREQ_WB_IDLE;
		return parse_u64(s + 5, 1, CTLREQ_IDLE_MAX, &wb->arg) == PARSE_OK;
	}
	if (!strcmp(s, "huge")) {
		wb->mode = CTLREQ_WB_HUGE;
		return true;
	}
	if (!strcmp(s, "incompressible")) {
		wb->mode = CTLREQ_WB_INCOMPRESSIBLE;
		return true;
	}
	wb->mode = CTLREQ_WB_PAGES;
	return parse_u64(s, 1, UINT64_MAX, &wb->arg) == PARSE_OK;
}

size_t ctlreq_format_writeback(const struct ctlreq_wb *wb, char *buf, size_t len)
{
	switch (wb->mode) {
	case CTLREQ_WB_IDLE:
		return wb->arg ? log_snprintf(buf, len, "idle=%llu", (unsigned long long)wb->arg)
			       : log_snprintf(buf, len, "idle");
	case CTLREQ_WB_HUGE:
		return log_snprintf(buf, len, "huge");
	case CTLREQ_WB_INCOMPRESSIBLE:
		return log_snprintf(buf, len, "incompressible");
	case CTLREQ_WB_PAGES:
		break;
	}
	return log_snprintf(buf, len, "%llu", (unsigned long long)wb->arg);
}

bool ctlreq_parse_recompress(const char *s, struct ctlreq_rc *rc)
{
	if (!strcmp(s, "idle")) {
		rc->idle = true;
		return true;
	}
	if (!strncmp(s, "idle=", 5)) {
		rc->idle = true;
		return parse_u64(s + 5, 1, CTLREQ_IDLE_MAX, &rc->idle_s) == PARSE_OK;
	}
	if (!strcmp(s, "huge")) {
		rc->huge = true;
		return true;
	}
	if (!strncmp(s, "threshold=", 10))
		return parse_u64(s + 10, 1, 4096, &rc->threshold) == PARSE_OK;
	return false;
}

size_t ctlreq_format_recompress(const struct ctlreq_rc *rc, char *buf, size_t len)
{
	size_t pos = log_snprintf(buf, len, "%s", "");

	if (rc->idle && rc->idle_s)
		pos += log_snprintf(buf + pos, len - pos, " idle=%llu", (unsigned long long)rc->idle_s);
	else if (rc->idle)
		pos += log_snprintf(buf + pos, len - pos, " idle");
	if (rc->huge && pos < len)
		pos += log_snprintf(buf + pos, len - pos, " huge");
	if (rc->threshold && pos < len)
		pos += log_snprintf(buf + pos, len - pos, " threshold=%llu", (unsigned long long)rc->threshold);
	return pos;
}

/* "recompress ARG ...": every word checked into r->rc. */
static void ctlreq_recompress(char *args, struct ctlreq *r)
{
	for (char *tok = args, *end; *tok; tok = end) {
		end = tok + strcspn(tok, " ");
		if (*end)
			*end++ = '\0';
		if (!*tok || !ctlreq_parse_recompress(tok, &r->rc)) {
			ctlreq_bad(r, "error: recompress: expected idle, idle=SECONDS (1..%u), huge or"
				   " threshold=BYTES (1..4096)\n", CTLREQ_IDLE_MAX);
			return;
		}
	}
}

void ctlreq_parse(char *req, const struct opt_values *base, struct ctlreq *r)
{
	char *nl = strchr(req, '\n');

	if (nl)
		*nl = '\0';
	memset(r, 0, sizeof(*r));
	if (!strncmp(req, "set ", 4)) {
		r->kind = CTLREQ_SET;
		r->nv = *base;
		ctlreq_set(req + 4, r);
	} else if (!strncmp(req, "reclaim ", 8)) {
		r->kind = CTLREQ_RECLAIM;
		if (parse_u64(req + 8, 1, UINT64_MAX, &r->bytes) != PARSE_OK)
			ctlreq_bad(r, "error: reclaim: expected a number of bytes above 0\n");
	} else if (!strcmp(req, "compact")) {
		r->kind = CTLREQ_COMPACT;
	} else if (!strcmp(req, "reset")) {
		r->kind = CTLREQ_RESET;
	} else if (!strcmp(req, "recompress") || !strncmp(req, "recompress ", 11)) {
		r->kind = CTLREQ_RECOMPRESS;
		ctlreq_recompress(req + 10 + (req[10] == ' '), r);
	} else if (!strncmp(req, "writeback ", 10)) {
		r->kind = CTLREQ_WRITEBACK;
		if (!ctlreq_parse_writeback(req + 10, &r->wb))
			ctlreq_bad(r, "error: writeback: expected idle, idle=SECONDS (1..%u), huge, incompressible"
				   " or a number of pages above 0\n", CTLREQ_IDLE_MAX);
	}
}
