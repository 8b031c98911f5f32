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
	}
}
