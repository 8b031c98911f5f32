/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store_util.c - page contents for the comp/store tests, from real files
 * where the machine has them.
 */
#include "test_store_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

const char *const tp_kind_name[TP__COUNT] = { "zero", "same", "text", "binary", "random" };

uint64_t tp_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

uint64_t tp_sum(const void *page)
{
	const uint64_t *w = page;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < TP_PAGE / 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL + i;
	return h;
}

/* Append whole files of dir (not recursing) to buf until len bytes. */
static size_t tp_read_dir(const char *dir, uint8_t *buf, size_t off, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return off;
	while (off < len && (de = readdir(d))) {
		char path[512];
		int fd;
		ssize_t r;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (off < len && (r = read(fd, buf + off, len - off)) > 0)
			off += (size_t)r;
		close(fd);
	}
	closedir(d);
	return off;
}

static size_t tp_read_file(const char *path, uint8_t *buf, size_t off, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return off;
	while (off < len && (r = read(fd, buf + off, len - off)) > 0)
		off += (size_t)r;
	close(fd);
	return off;
}

static const char *const tp_words[] = {
	"the", "page", "is", "compressed", "into", "a", "pool", "of", "zspages", "and",
	"when", "program", "touches", "it", "again", "fault", "handler", "loads", "back",
	"memory", "kernel", "swap", "size", "class", "object", "handle", "free", "list",
};

/* English-ish words: roughly what LZ4 makes of real text. */
static void tp_synth_text(uint8_t *buf, size_t from, size_t len, uint64_t seed)
{
	uint64_t st = seed | 1;
	size_t off = from;

	while (off < len) {
		const char *w = tp_words[tp_rand(&st) % (sizeof(tp_words) / sizeof(tp_words[0]))];
		size_t n = strlen(w);

		for (size_t i = 0; i <= n && off < len; i++)
			buf[off++] = i < n ? (uint8_t)w[i] : (tp_rand(&st) % 9 ? ' ' : '\n');
	}
}

uint8_t *tp_pages(enum tp_kind kind, size_t n, uint64_t seed)
{
	size_t len = n * TP_PAGE, got = 0;
	uint8_t *buf = aligned_alloc(TP_PAGE, len);
	uint64_t st = seed | 1;

	TP_CHECK(buf);
	switch (kind) {
	case TP_ZERO:
		memset(buf, 0, len);
		break;
	case TP_SAME:
		for (size_t p = 0; p < n; p++) {
			/* A 4-byte pattern (what the store keeps), never zero. */
			uint64_t w = (tp_rand(&st) | 1) & 0xffffffffu;
			w |= w << 32;
			for (size_t i = 0; i < TP_PAGE / 8; i++)
				((uint64_t *)(buf + p * TP_PAGE))[i] = w;
		}
		break;
	case TP_TEXT:
		got = tp_read_dir("/usr/share/common-licenses", buf, 0, len);
		got = tp_read_dir("/usr/include/linux", buf, got, len);
		got = tp_read_dir("/usr/include", buf, got, len);
		if (got < len) {
			fprintf(stderr, "note: %zu of %zu text bytes from files, rest synthetic\n", got, len);
			tp_synth_text(buf, got, len, seed);
		}
		break;
	case TP_BINARY:
		got = tp_read_file("/usr/bin/bash", buf, 0, len);
		got = tp_read_file("/usr/bin/ls", buf, got, len);
		got = tp_read_file("/proc/self/exe", buf, got, len);
		for (size_t i = got; i < len; i++)	/* structured, not random */
			buf[i] = (uint8_t)(tp_rand(&st) % 7 == 0 ? tp_rand(&st) : i / 64);
		break;
	case TP_RANDOM:
		for (size_t i = 0; i < len / 8; i++)
			((uint64_t *)buf)[i] = tp_rand(&st);
		break;
	default:
		TP_CHECK(0);
	}
	return buf;
}

void tp_mixed_page(uint8_t *pg, uint64_t seed, const uint8_t *text, size_t text_pages)
{
	uint64_t st = seed | 1;
	unsigned int kind = (unsigned int)(tp_rand(&st) % 20);

	if (kind < 2) {
		memset(pg, 0, TP_PAGE);
	} else if (kind < 4) {
		uint64_t w = tp_rand(&st);
		for (size_t i = 0; i < TP_PAGE / 8; i++)
			((uint64_t *)pg)[i] = w;
	} else if (kind < 15) {
		size_t off = tp_rand(&st) % ((text_pages - 1) * TP_PAGE);
		memcpy(pg, text + off, TP_PAGE);
		for (int i = 0; i < 4; i++)
			pg[tp_rand(&st) % TP_PAGE] = (uint8_t)tp_rand(&st);
	} else {
		size_t rnd = kind < 17 ? TP_PAGE : TP_PAGE / 2 + tp_rand(&st) % (TP_PAGE / 2);
		for (size_t i = 0; i < TP_PAGE; i += 8) {
			uint64_t v = i < rnd ? tp_rand(&st) : 0;
			memcpy(pg + i, &v, 8);
		}
	}
}
