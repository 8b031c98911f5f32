/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_emit.c - the statistics emitter: one sequence of calls, two formats.
 *
 * The same calls are made in text and in JSON and each output is compared
 * byte for byte with what the format says: JSON's commas and nesting,
 * escaped strings, a table's alignment, the calls that belong to one format
 * writing nothing in the other, and output far beyond the first buffer.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "observe/emit.h"
#include "base/prim.h"
#include "test_check.h"

static const struct emit_col cols[] = { { "count", 6 }, { "max", 4 } };
static const struct emit_table labelled = { 5, cols, 2 };
static const struct emit_table unlabelled = { 0, cols, 2 };

/* One small document with every kind of call. */
static void document(struct emitter *e, struct emit_buf *b, enum emit_fmt fmt)
{
	static const uint64_t r1[] = { 12, 7 }, r2[] = { 0, 12345 };

	emit_begin(e, b, fmt);
	emit_text(e, "title %d\n", 1);
	emit_json_str(e, "name", "a\"b\\c\n\x01");
	emit_json_u64(e, "n", 42);
	emit_section_begin(e, "config", "configuration");
	emit_kv_str(e, "ZSWAP_X", "on");
	emit_kv_str(e, "ZSWAP_Y", "2M");
	emit_section_end(e);
	emit_section_begin(e, "empty", "nothing");
	emit_section_end(e);
	emit_section_begin(e, "counts", "counters");
	emit_kv_u64(e, "stored_pages", 3);
	emit_kv_u64(e, "a_name_longer_than_the_column_is", 18446744073709551615ull);
	emit_section_end(e);
	emit_section_begin(e, "lat", "latency");
	emit_table_header(e, &labelled);
	emit_table_row(e, &labelled, "fault", r1);
	emit_table_row(e, &labelled, "evict", r2);
	emit_section_end(e);
	emit_section_begin(e, "rows", "rows");
	emit_table_header(e, &unlabelled);
	emit_json_array_begin(e, "list");
	emit_table_row(e, &unlabelled, NULL, r1);
	emit_table_row(e, &unlabelled, NULL, r2);
	emit_json_array_end(e);
	emit_json_array_begin(e, "none");
	emit_json_array_end(e);
	emit_json_object_begin(e, "total");
	emit_json_u64(e, "count", 12);
	emit_json_object_end(e);
	emit_section_end(e);
	emit_text(e, "== end\n");
	emit_end(e);
}

static void test_document(void)
{
	static const char text[] =
		"title 1\n"
		"== configuration\n"
		"ZSWAP_X=on\n"
		"ZSWAP_Y=2M\n"
		"== nothing\n"
		"== counters\n"
		"stored_pages                 3\n"
		"a_name_longer_than_the_column_is 18446744073709551615\n"
		"== latency\n"
		"       count  max\n"
		"fault     12    7\n"
		"evict      0 12345\n"
		"== rows\n"
		"  count  max\n"
		"     12    7\n"
		"      0 12345\n"
		"== end\n";
	static const char json[] =
		"{\"name\":\"a\\\"b\\\\c\\u000a\\u0001\",\"n\":42,"
		"\"config\":{\"ZSWAP_X\":\"on\",\"ZSWAP_Y\":\"2M\"},"
		"\"empty\":{},"
		"\"counts\":{\"stored_pages\":3,\"a_name_longer_than_the_column_is\":18446744073709551615},"
		"\"lat\":{\"fault\":{\"count\":12,\"max\":7},\"evict\":{\"count\":0,\"max\":12345}},"
		"\"rows\":{\"list\":[{\"count\":12,\"max\":7},{\"count\":0,\"max\":12345}],\"none\":[],"
		"\"total\":{\"count\":12}}}\n";
	struct emit_buf b = { 0 };
	struct emitter e;

	document(&e, &b, EMIT_TEXT);
	CHECK(!b.failed && b.len == strlen(text) && !memcmp(b.p, text, b.len),
	      "text:\n%.*s", (int)b.len, b.p);
	/* The same buffer again: emit_begin empties it. */
	document(&e, &b, EMIT_JSON);
	CHECK(!b.failed && b.len == strlen(json) && !memcmp(b.p, json, b.len),
	      "json:\n%.*s", (int)b.len, b.p);
	CHECK(e.depth == 0, "depth %d after the document", e.depth);
	prim_free(b.p, b.cap);
}

/* Far beyond the first buffer and one call's first try (256 bytes). */
static void test_growth(void)
{
	struct emit_buf b = { 0 };
	struct emitter e;
	char big[3000], key[32];
	size_t commas = 0;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	emit_begin(&e, &b, EMIT_JSON);
	emit_json_str(&e, "big", big);
	emit_json_array_begin(&e, "a");
	for (unsigned int i = 0; i < 20000; i++)
		emit_json_u64(&e, NULL, i);
	emit_json_array_end(&e);
	for (unsigned int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%u", i);
		emit_json_u64(&e, key, i);
	}
	emit_end(&e);
	CHECK(!b.failed, "out of memory");
	for (size_t i = 0; i < b.len; i++)
		commas += b.p[i] == ',';
	/* big, a, 1000 keys at the top: 1001 commas; 19999 in the array. */
	CHECK(commas == 1001 + 19999, "%zu commas", commas);
	CHECK(b.len > 3000 && b.p[0] == '{' && b.p[b.len - 2] == '}' && b.p[b.len - 1] == '\n',
	      "ends %.*s", 8, b.p + b.len - 8);
	CHECK(strstr(b.p, "\"a\":[0,1,2,") && strstr(b.p, ",19999],\"k0\":0,"), "array");
	CHECK(strstr(b.p, "\"k999\":999}\n") != NULL, "last key");
	/* A raw line longer than the first try of 256 bytes is written whole. */
	b.len = 0;
	emit_printf(&b, "%s|", big);
	CHECK(b.len == sizeof(big) && b.p[b.len - 1] == '|', "raw %zu", b.len);
	prim_free(b.p, b.cap);
}

int main(void)
{
	test_document();
	test_growth();
	if (failures) {
		fprintf(stderr, "test_emit: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_emit: ok\n");
	return 0;
}
