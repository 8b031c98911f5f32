/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * emit.h - one writer for the statistics dump's two formats, text and JSON.
 *
 * The dump is written once, as a sequence of calls; the emitter makes text
 * for people or JSON for programs out of them (the shape of jemalloc's
 * emitter). A call that names both a text form and a JSON key writes the
 * emitter's format; emit_text() writes only in text and the emit_json_*()
 * calls only in JSON, for the places where the two formats differ (a table's
 * header, zram's one-line mm_stat). JSON's commas and nesting are the
 * emitter's: a caller never writes a separator.
 *
 * Output goes into one growing buffer in library memory (prim). When memory
 * runs out the output is cut short and the buffer marked failed; no call
 * fails otherwise. Not thread-safe: one emitter per buffer, the caller
 * serialises (stats_lock).
 */
#ifndef ZSWAP_EMIT_H
#define ZSWAP_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emit_buf {
	char *p;
	size_t len, cap;
	bool failed;		/* out of memory: the output is cut short */
};

/* Room for need more bytes and a NUL (the buffer starts at init_cap). */
bool emit_buf_reserve(struct emit_buf *b, size_t need, size_t init_cap);
/* Raw output, whatever the format (the "counters" request's lines). */
void emit_printf(struct emit_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum emit_fmt { EMIT_TEXT, EMIT_JSON };

#define EMIT_DEPTH_MAX 8

struct emitter {
	struct emit_buf *b;
	enum emit_fmt fmt;
	int depth;
	bool used[EMIT_DEPTH_MAX];	/* an item at this depth: the next one needs a comma */
};

/* Empties b and starts a document (JSON's opening brace). */
void emit_begin(struct emitter *e, struct emit_buf *b, enum emit_fmt fmt);
/* Ends it: JSON's closing brace and a newline; nothing in text. */
void emit_end(struct emitter *e);

/* A section: "== title" in text, "key":{ in JSON. */
void emit_section_begin(struct emitter *e, const char *key, const char *title);
void emit_section_end(struct emitter *e);

/* A counter: its name padded to a column and its value in text,
 * "name":value in JSON. */
void emit_kv_u64(struct emitter *e, const char *name, uint64_t v);
/* A setting: NAME=value in text, "NAME":"value" in JSON. */
void emit_kv_str(struct emitter *e, const char *name, const char *s);

/* Text only. */
void emit_text(struct emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* JSON only. key is NULL for an array's element. */
void emit_json_u64(struct emitter *e, const char *key, uint64_t v);
void emit_json_str(struct emitter *e, const char *key, const char *s);
/* A number with two decimals: v100 hundredths (a ratio). */
void emit_json_hundredths(struct emitter *e, const char *key, uint64_t v100);
void emit_json_object_begin(struct emitter *e, const char *key);
void emit_json_object_end(struct emitter *e);
void emit_json_array_begin(struct emitter *e, const char *key);
void emit_json_array_end(struct emitter *e);

/* A table of counters: each row is a line of right-aligned columns in text
 * (after a left-aligned label when the table has one) and an object of
 * "column":value in JSON (the label's member of the enclosing object, or an
 * element of the enclosing array when there is no label). */
struct emit_col {
	const char *name;
	int width;
};

struct emit_table {
	int label_width;		/* 0: rows have no label */
	const struct emit_col *cols;
	size_t ncols;
};

/* The header line (text only). */
void emit_table_header(struct emitter *e, const struct emit_table *t);
void emit_table_row(struct emitter *e, const struct emit_table *t, const char *label, const uint64_t *v);

#endif
