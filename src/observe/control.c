/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * control.c - zswapctl's requests that act on a running process (see
 * control.h): set, reclaim, compact, reset, writeback, recompress.
 *
 * They come through the statistics socket (stats.c accepts the connection
 * and checks the peer: the process's own user or root). Each is validated
 * on the statistics thread by ctlreq_parse (core/ctlreq.c, with the option
 * table that reads the environment at start-up) and carried out by the
 * reclaimer between two of its steps (reclaim_order): nothing a step reads changes under it. A
 * request either changes everything it names or nothing: every NAME=VALUE
 * is checked before any is applied.
 *
 * Every change is recorded (at most CONTROL_LOG entries, the oldest
 * dropped) and shown in the dump's configuration section, with who asked
 * and when, so that a dump never shows settings without their history.
 */
#include "config.h"
#include "observe/control.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <string.h>

#include "base/hist.h"
#include "base/log.h"
#include "core/ctlreq.h"
#include "core/options.h"
#include "core/zsmalloc.h"
#include "engine/engine.h"
#include "engine/snapshot.h"
#include "observe/sock.h"
#include "reclaim/reclaim.h"

#define CONTROL_LOG		32	/* changes kept for the dump */
#define CONTROL_WAIT_MS		30000	/* a reclaim of gigabytes takes seconds */
#define CONTROL_ANSWER_MAX	2048

struct control_change {
	uint64_t at_ns;		/* hist_now() */
	unsigned long uid;
	char what[200];
};

static struct {
	pthread_mutex_t lock;	/* the statistics thread writes, a dump at exit reads */
	struct control_change log[CONTROL_LOG];
	unsigned int n;		/* changes ever made; the last CONTROL_LOG are kept */
	uint64_t t0;		/* start-up */
} ctl = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct reclaim_order ctl_order;	/* the statistics thread's */
static struct ctlreq ctl_req;		/* the statistics thread's */

void control_init(uint64_t t0_ns)
{
	ctl.t0 = t0_ns;
}

void control_fork_child(void)
{
	ctl.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	ctl.n = 0;	/* the child's own history starts */
}

static void control_record(unsigned long uid, const char *what)
{
	pthread_mutex_lock(&ctl.lock);
	struct control_change *c = &ctl.log[ctl.n % CONTROL_LOG];
	c->at_ns = hist_now();
	c->uid = uid;
	log_snprintf(c->what, sizeof(c->what), "%s", what);
	ctl.n++;
	pthread_mutex_unlock(&ctl.lock);
}

void control_emit(struct emitter *e)
{
	pthread_mutex_lock(&ctl.lock);
	unsigned int first = ctl.n > CONTROL_LOG ? ctl.n - CONTROL_LOG : 0;
	emit_json_array_begin(e, "changes");
	for (unsigned int i = first; i < ctl.n; i++) {
		const struct control_change *c = &ctl.log[i % CONTROL_LOG];
		uint64_t ms = c->at_ns > ctl.t0 ? (c->at_ns - ctl.t0) / 1000000 : 0;
		char line[280];
		log_snprintf(line, sizeof(line), "+%llu.%03llu s uid %lu: %s", (unsigned long long)(ms / 1000),
			     (unsigned long long)(ms % 1000), c->uid, c->what);
		emit_text(e, "changed %s\n", line);
		emit_json_str(e, NULL, line);
	}
	emit_json_array_end(e);
	pthread_mutex_unlock(&ctl.lock);
}

static void control_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void control_say(int fd, const char *fmt, ...)
{
	char buf[CONTROL_ANSWER_MAX];
	va_list ap;

	va_start(ap, fmt);
	size_t n = log_format(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sock_send(fd, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

/* The reclaimer's answer to an order, or an error line. */
static bool control_run(int fd, struct reclaim_order *o)
{
	int rc = reclaim_order(o, CONTROL_WAIT_MS);

	if (rc == -ESRCH)
		control_say(fd, "error: this process runs no reclaimer (it could not be started): nothing changed\n");
	else if (rc == -ETIMEDOUT)
		control_say(fd, "error: the reclaimer did not finish within %d s; it will go on with the request\n",
			    CONTROL_WAIT_MS / 1000);
	return rc == 0;
}

/* "set NAME=VALUE ...": the values ctlreq_parse checked, all applied at once. */
static void control_set(int fd, const struct ctlreq *r, unsigned long uid)
{
	struct reclaim_order *o = &ctl_order;

	memset(o, 0, sizeof(*o));
	o->kind = RECLAIM_ORDER_SET;
	o->nv = r->nv;
	o->mask = r->mask;
	struct opt_values before = eng.opt;
	if (!control_run(fd, o))
		return;
	char answer[CONTROL_ANSWER_MAX];
	size_t pos = log_snprintf(answer, sizeof(answer), o->err ? "error: %s\n" : "ok\n", o->why);
	for (int i = 0; i < OPT__COUNT; i++) {
		if (!(o->mask & (1ull << i)))
			continue;
		char was[OPT_STRING_MAX], now[OPT_STRING_MAX], what[200];
		opt_format((enum opt_id)i, &before, was, sizeof(was));
		opt_format((enum opt_id)i, &eng.opt, now, sizeof(now));
		log_snprintf(what, sizeof(what), "%s=%s (was %s)", opt_table[i].name, now, was);
		control_record(uid, what);
		if (eng.opt.verbose)
			zlog("option %s=%s (from zswapctl set; was %s)", opt_table[i].name, now, was);
		if (pos < sizeof(answer))
			pos += log_snprintf(answer + pos, sizeof(answer) - pos, "%s\n", what);
	}
	if (!o->err && o->why[0] && pos < sizeof(answer))
		pos += log_snprintf(answer + pos, sizeof(answer) - pos, "note: %s\n", o->why);
	sock_send(fd, answer, pos < sizeof(answer) ? pos : sizeof(answer) - 1);
}

/* "reclaim BYTES": memory.reclaim, whose figure is the charge freed; what
 * was stored for it (more, the pool holding it) is said beside. */
static void control_reclaim(int fd, uint64_t bytes, unsigned long uid)
{
	struct reclaim_order *o = &ctl_order;

	memset(o, 0, sizeof(*o));
	o->kind = RECLAIM_ORDER_RECLAIM;
	o->bytes = bytes;
	if (!control_run(fd, o))
		return;
	uint64_t freed = o->charge_before > o->charge_after ? o->charge_before - o->charge_after : 0;
	char what[200];
	log_snprintf(what, sizeof(what), "reclaim %llu bytes: %llu freed, %llu pages stored",
		     (unsigned long long)bytes, (unsigned long long)freed, (unsigned long long)o->pages);
	control_record(uid, what);
	control_say(fd, "%s\nreclaimed %llu bytes of the charge, of %llu asked\n"
		    "stored %llu bytes (%llu pages)\npool %llu -> %llu bytes\ncharge %llu -> %llu bytes\n",
		    freed >= bytes ? "ok" : "partial", (unsigned long long)freed, (unsigned long long)bytes,
		    (unsigned long long)(o->pages << ZS_PAGE_SHIFT), (unsigned long long)o->pages,
		    (unsigned long long)o->pool_before, (unsigned long long)o->pool_after,
		    (unsigned long long)o->charge_before, (unsigned long long)o->charge_after);
}

/* "compact": zram's compact. */
static void control_compact(int fd, unsigned long uid)
{
	struct reclaim_order *o = &ctl_order;

	memset(o, 0, sizeof(*o));
	o->kind = RECLAIM_ORDER_COMPACT;
	if (!control_run(fd, o))
		return;
	char what[200];
	log_snprintf(what, sizeof(what), "compact: %llu pool pages freed", (unsigned long long)o->pages);
	control_record(uid, what);
	control_say(fd, "ok\ncompacted %llu pages\npool %llu -> %llu bytes\n%s%s%s", (unsigned long long)o->pages,
		    (unsigned long long)o->pool_before, (unsigned long long)o->pool_after, o->why[0] ? "note: " : "",
		    o->why, o->why[0] ? "\n" : "");
}

/* "writeback MODE": zram's writeback. The answer is "partial" when the
 * budget ran out (zram's writeback returns an error then). */
static void control_writeback(int fd, const struct ctlreq_wb *wb, unsigned long uid)
{
	struct reclaim_order *o = &ctl_order;
	char mode[48], what[200];

	memset(o, 0, sizeof(*o));
	o->kind = RECLAIM_ORDER_WRITEBACK;
	o->wb = *wb;
	if (!control_run(fd, o))
		return;
	ctlreq_format_writeback(wb, mode, sizeof(mode));
	if (o->err) {
		control_say(fd, "error: writeback %s: %s: nothing written\n", mode,
			    o->err == -EPERM ? "this process writes nothing back (ZSWAP_WRITEBACK=0, or a fork child"
					       " without a file of its own)"
					     : "the second tier could not be opened (see the log)");
		return;
	}
	log_snprintf(what, sizeof(what), "writeback %s: %llu pages written", mode, (unsigned long long)o->pages);
	control_record(uid, what);
	char left[64] = "";
	if (eng.opt.writeback_limit_enable)
		log_snprintf(left, sizeof(left), "writeback_limit %llu pages left\n",
			     (unsigned long long)atomic_load(&eng.cnt.writeback_limit));
	control_say(fd, "%s\nwrote back %llu pages (%s)\npool %llu -> %llu bytes\n%s",
		    o->budget_spent ? "partial" : "ok", (unsigned long long)o->pages, mode,
		    (unsigned long long)o->pool_before, (unsigned long long)o->pool_after, left);
}

/* "recompress [idle[=SECONDS]] [huge] [threshold=BYTES]": zram's recompress. */
static void control_recompress(int fd, const struct ctlreq_rc *rc, unsigned long uid)
{
	struct reclaim_order *o = &ctl_order;
	uint64_t done = atomic_load(&eng.cnt.num_recompressed), kept = atomic_load(&eng.cnt.recompress_kept);
	uint64_t failed = atomic_load(&eng.cnt.recompress_failed);
	char args[96], what[200];

	memset(o, 0, sizeof(*o));
	o->kind = RECLAIM_ORDER_RECOMPRESS;
	o->rc = *rc;
	if (!control_run(fd, o))
		return;
	ctlreq_format_recompress(rc, args, sizeof(args));
	done = atomic_load(&eng.cnt.num_recompressed) - done;
	log_snprintf(what, sizeof(what), "recompress%s: %llu pages recompressed", args, (unsigned long long)done);
	control_record(uid, what);
	control_say(fd, "ok\nrecompressed %llu pages of %llu tried (%s:%d)\nkept as they were %llu\nfailed %llu\n"
		    "pool %llu -> %llu bytes\n", (unsigned long long)done, (unsigned long long)o->pages,
		    comp_name(eng.opt.recomp), comp_effective_level(eng.opt.recomp, eng.opt.recomp_level),
		    (unsigned long long)(atomic_load(&eng.cnt.recompress_kept) - kept),
		    (unsigned long long)(atomic_load(&eng.cnt.recompress_failed) - failed),
		    (unsigned long long)o->pool_before, (unsigned long long)o->pool_after);
}

/* "reset": the counters since start and mem_used_max start again. */
static void control_reset(int fd, unsigned long uid)
{
	snapshot_reset();
	control_record(uid, "reset: counters and mem_used_max");
	control_say(fd, "ok\ncounters and mem_used_max reset\n");
}

bool control_serve(int fd, char *req, unsigned long uid)
{
	struct ctlreq *r = &ctl_req;

	ctlreq_parse(req, &eng.opt, r);
	if (r->kind == CTLREQ_NONE)
		return false;
	if (r->bad)
		control_say(fd, "%s", r->why);
	else if (r->kind == CTLREQ_SET)
		control_set(fd, r, uid);
	else if (r->kind == CTLREQ_RECLAIM)
		control_reclaim(fd, r->bytes, uid);
	else if (r->kind == CTLREQ_COMPACT)
		control_compact(fd, uid);
	else if (r->kind == CTLREQ_WRITEBACK)
		control_writeback(fd, &r->wb, uid);
	else if (r->kind == CTLREQ_RECOMPRESS)
		control_recompress(fd, &r->rc, uid);
	else
		control_reset(fd, uid);
	return true;
}
