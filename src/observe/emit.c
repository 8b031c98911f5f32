/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * emit.c - one writer for text and JSON (see emit.h).
 *
 * Formatting is log_format's (no malloc, no stdio, no locale), into a
 * buffer that doubles in library memory. A counter's text form is its name
 * padded to EMIT_NAME_WIDTH columns, then its value; a setting's is
 * NAME=value, the form the environment takes.
 */
#include "config.h"
#include "observe/emit.h"

#include <stdarg.h>
#include <string.h>

#include "base/log.h"
#include "base/prim.h"

#define EMIT_BUF_INIT	4096
#define EMIT_NAME_WIDTH	28
#define EMIT_LINE_MAX	(1u << 20)	/* one call's output is cut beyond this */

bool emit_buf_reserve(struct emit_buf *b, size_t need, size_t init_cap)
{
	size_t cap = b->cap ? b->cap : (init_cap ? init_cap : EMIT_BUF_INIT);

	while (cap < b->len + need + 1)
		cap *= 2;
	if (cap == b->cap)
		return true;
	char *p = prim_alloc(cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	if (b->p) {
		memcpy(p, b->p, b->len);
		prim_free(b->p, b->cap);
	}
	b->p = p;
	b->cap = cap;
	return true;
}

static void emit_vprintf(struct emit_buf *b, const char *fmt, va_list ap)
{
	for (size_t want = 256;; want *= 2) {
		va_list aq;
		if (b->failed || !emit_buf_reserve(b, want, 0))
			return;
		size_t room = b->cap - b->len;
		va_copy(aq, ap);
		size_t n = log_format(b->p + b->len, room, fmt, aq);
		va_end(aq);
		/* log_format stops at room - 1: a shorter result was not cut. */
		if (n + 1 < room || want > EMIT_LINE_MAX) {
			b->len += n;
			return;
		}
	}
}

void emit_printf(struct emit_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit_vprintf(b, fmt, ap);
	va_end(ap);
}

/* s in width columns, right-aligned (left-aligned when left). */
static void emit_pad(struct emit_buf *b, const char *s, int width, bool left)
{
	size_t n = strlen(s), pad = width > (int)n ? (size_t)width - n : 0;

	if (b->failed || !emit_buf_reserve(b, n + pad, 0))
		return;
	if (!left) {
		memset(b->p + b->len, ' ', pad);
		b->len += pad;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	if (left) {
		memset(b->p + b->len, ' ', pad);
		b->len += pad;
	}
	b->p[b->len] = '\0';
}

/* ---- JSON ------------------------------------------------------------------ */

/* A string with quotes, backslash and control bytes escaped. */
static void emit_json_string(struct emit_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	emit_printf(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			emit_printf(b, "\\%c", c);
		else if (c < 0x20)
			emit_printf(b, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		else
			emit_printf(b, "%c", c);
	}
	emit_printf(b, "\"");
}

/* The comma before an item and its key, if it has one. */
static void emit_json_key(struct emitter *e, const char *key)
{
	if (e->used[e->depth])
		emit_printf(e->b, ",");
	e->used[e->depth] = true;
	if (key)
		emit_printf(e->b, "\"%s\":", key);
}

static void emit_json_open(struct emitter *e, const char *key, char brace)
{
	emit_json_key(e, key);
	emit_printf(e->b, "%c", brace);
	ZS_CHECK(e->depth + 1 < EMIT_DEPTH_MAX);
	e->used[++e->depth] = false;
}

static void emit_json_close(struct emitter *e, char brace)
{
	ZS_CHECK(e->depth > 0);
	e->depth--;
	emit_printf(e->b, "%c", brace);
}

void emit_json_u64(struct emitter *e, const char *key, uint64_t v)
{
	if (e->fmt != EMIT_JSON)
		return;
	emit_json_key(e, key);
	emit_printf(e->b, "%llu", (unsigned long long)v);
}

void emit_json_hundredths(struct emitter *e, const char *key, uint64_t v100)
{
	if (e->fmt != EMIT_JSON)
		return;
	emit_json_key(e, key);
	emit_printf(e->b, "%llu.%02llu", (unsigned long long)(v100 / 100), (unsigned long long)(v100 % 100));
}

void emit_json_str(struct emitter *e, const char *key, const char *s)
{
	if (e->fmt != EMIT_JSON)
		return;
	emit_json_key(e, key);
	emit_json_string(e->b, s);
}

void emit_json_object_begin(struct emitter *e, const char *key)
{
	if (e->fmt == EMIT_JSON)
		emit_json_open(e, key, '{');
}

void emit_json_object_end(struct emitter *e)
{
	if (e->fmt == EMIT_JSON)
		emit_json_close(e, '}');
}

void emit_json_array_begin(struct emitter *e, const char *key)
{
	if (e->fmt == EMIT_JSON)
		emit_json_open(e, key, '[');
}

void emit_json_array_end(struct emitter *e)
{
	if (e->fmt == EMIT_JSON)
		emit_json_close(e, ']');
}

/* ---- both formats -------------------------------------------------------------- */

void emit_begin(struct emitter *e, struct emit_buf *b, enum emit_fmt fmt)
{
	b->len = 0;
	b->failed = false;
	e->b = b;
	e->fmt = fmt;
	e->depth = 0;
	e->used[0] = false;
	if (fmt == EMIT_JSON) {
		emit_printf(b, "{");
		e->used[++e->depth] = false;
	}
}

void emit_end(struct emitter *e)
{
	if (e->fmt == EMIT_JSON) {
		ZS_CHECK(e->depth == 1);
		emit_json_close(e, '}');
		emit_printf(e->b, "\n");
	}
}

void emit_text(struct emitter *e, const char *fmt, ...)
{
	va_list ap;

	if (e->fmt != EMIT_TEXT)
		return;
	va_start(ap, fmt);
	emit_vprintf(e->b, fmt, ap);
	va_end(ap);
}

void emit_section_begin(struct emitter *e, const char *key, const char *title)
{
	emit_text(e, "== %s\n", title);
	emit_json_object_begin(e, key);
}

void emit_section_end(struct emitter *e)
{
	emit_json_object_end(e);
}

void emit_kv_u64(struct emitter *e, const char *name, uint64_t v)
{
	if (e->fmt == EMIT_JSON) {
		emit_json_u64(e, name, v);
		return;
	}
	emit_pad(e->b, name, EMIT_NAME_WIDTH, true);
	emit_printf(e->b, " %llu\n", (unsigned long long)v);
}

void emit_kv_str(struct emitter *e, const char *name, const char *s)
{
	if (e->fmt == EMIT_JSON)
		emit_json_str(e, name, s);
	else
		emit_printf(e->b, "%s=%s\n", name, s);
}

void emit_table_header(struct emitter *e, const struct emit_table *t)
{
	if (e->fmt != EMIT_TEXT)
		return;
	if (t->label_width)
		emit_pad(e->b, "", t->label_width, true);
	for (size_t i = 0; i < t->ncols; i++) {
		emit_printf(e->b, " ");
		emit_pad(e->b, t->cols[i].name, t->cols[i].width, false);
	}
	emit_printf(e->b, "\n");
}

void emit_table_row(struct emitter *e, const struct emit_table *t, const char *label, const uint64_t *v)
{
	if (e->fmt == EMIT_JSON) {
		emit_json_object_begin(e, t->label_width ? label : NULL);
		for (size_t i = 0; i < t->ncols; i++)
			emit_json_u64(e, t->cols[i].name, v[i]);
		emit_json_object_end(e);
		return;
	}
	if (t->label_width)
		emit_pad(e->b, label, t->label_width, true);
	for (size_t i = 0; i < t->ncols; i++) {
		char num[24];
		log_snprintf(num, sizeof(num), "%llu", (unsigned long long)v[i]);
		emit_printf(e->b, " ");
		emit_pad(e->b, num, t->cols[i].width, false);
	}
	emit_printf(e->b, "\n");
}
