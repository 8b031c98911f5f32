/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_backing.c - what the second tier costs per page: sealing alone
 * (AES-256-GCM where the CPU runs it, XChaCha20-Poly1305, and the keyed
 * BLAKE2b checksum used with encryption off) beside LZ4 on the same text pages, then a page written to the file
 * (one a write, then 16 a write), read back in random order (O_DIRECT),
 * then freed and punched out
 * (every other slot of the first half: runs of one; the second half: runs
 * of 64), with
 * encryption on and off. Then the format not taken, for the record: the
 * pages' LZ4 objects packed back to back into 4 KiB blocks (an object never
 * straddles two), the blocks written 16 at a time, and a page read back as
 * its block plus a decompression: bytes written a page, and the costs
 * beside the whole-page figures (sealing, the same for a block, left out on
 * both sides of that comparison). Run in one process so the figures compare.
 *
 * usage: bench_backing [--dir DIR] [--pages N]
 * Output: one "RESULT bench=backing ..." line per measure (us per page).
 * Never judges.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <lz4.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/prim.h"
#include "bench_text.h"
#include "bench_util.h"
#include "core/backing.h"

static double per_page(uint64_t t0, size_t n)
{
	return (double)(bench_now_ns() - t0) / 1000.0 / (double)n;
}

/* Packed LZ4 objects in 4 KiB blocks, O_DIRECT: see the header. */
static void packed(const char *dir, const unsigned char *pages, size_t npages)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0)
		bench_die("O_TMPFILE|O_DIRECT in %s failed", dir);
	size_t cap = npages * ZS_PAGE_SIZE;
	unsigned char *blocks = prim_alloc(cap), *blk = prim_alloc(ZS_PAGE_SIZE), *out = prim_alloc(ZS_PAGE_SIZE);
	uint32_t *where = prim_alloc(npages * sizeof(*where)), *len = prim_alloc(npages * sizeof(*len));
	char *lz = prim_alloc((size_t)LZ4_compressBound(ZS_PAGE_SIZE));
	size_t nblocks = 0, fill = ZS_PAGE_SIZE, written = 0;
	if (!blocks || !blk || !out || !where || !len || !lz)
		bench_die("no memory");

	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++) {
		int n = LZ4_compress_default((const char *)pages + i * ZS_PAGE_SIZE, lz, ZS_PAGE_SIZE,
					     LZ4_compressBound(ZS_PAGE_SIZE));
		if (n <= 0 || n > (int)ZS_PAGE_SIZE)
			bench_die("page %zu does not compress", i);
		if (fill + (size_t)n > ZS_PAGE_SIZE) {
			nblocks++;
			fill = 0;
		}
		where[i] = (uint32_t)((nblocks - 1) * ZS_PAGE_SIZE + fill);
		len[i] = (uint32_t)n;
		memcpy(blocks + where[i], lz, (size_t)n);
		fill += (size_t)n;
		/* Every 16 blocks filled: one write, as writeback's batches. */
		if (nblocks - written == 17 || i + 1 == npages) {
			size_t upto = i + 1 == npages ? nblocks : nblocks - 1;
			size_t bytes = (upto - written) * ZS_PAGE_SIZE;
			if (pwrite(fd, blocks + written * ZS_PAGE_SIZE, bytes, (off_t)(written * ZS_PAGE_SIZE)) != (ssize_t)bytes)
				bench_die("packed write failed");
			written = upto;
		}
	}
	printf("RESULT bench=backing what=packed_compress_and_write_batch16 us_per_page=%.2f bytes_per_page=%.0f\n",
	       per_page(t0, npages), (double)nblocks * ZS_PAGE_SIZE / (double)npages);
	uint64_t rs = 1;
	t0 = bench_now_ns();
	for (size_t k = 0; k < npages; k++) {
		size_t i = (size_t)(bench_rand(&rs) % npages);
		off_t b = (off_t)(where[i] / ZS_PAGE_SIZE * ZS_PAGE_SIZE);
		if (pread(fd, blk, ZS_PAGE_SIZE, b) != (ssize_t)ZS_PAGE_SIZE ||
		    LZ4_decompress_safe((const char *)blk + (where[i] - (uint32_t)b), (char *)out, (int)len[i],
					ZS_PAGE_SIZE) != (int)ZS_PAGE_SIZE ||
		    memcmp(out, pages + i * ZS_PAGE_SIZE, ZS_PAGE_SIZE) != 0)
			bench_die("packed page %zu did not read back", i);
	}
	printf("RESULT bench=backing what=packed_read_random us_per_page=%.2f\n", per_page(t0, npages));
	close(fd);
}

int main(int argc, char **argv)
{
	const char *dir = "/var/tmp";
	size_t npages = 16384;
	struct bench_text text;
	int c;

	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'n')
			npages = (size_t)bench_parse_long("-n", optarg, 16, 1 << 22);
		else
			bench_die("usage: bench_backing [-d DIR] [-n PAGES]");
	}
	if (sodium_init() < 0)
		bench_die("libsodium does not start");
	unsigned char *pages = prim_alloc(npages * ZS_PAGE_SIZE);
	unsigned char *buf = prim_alloc(ZS_PAGE_SIZE);
	char *lz = prim_alloc(LZ4_compressBound(ZS_PAGE_SIZE));
	if (!pages || !buf || !lz)
		bench_die("no memory");
	bench_text_load(&text, BENCH_TEXT_DIRS, BENCH_TEXT_CAP);
	bench_text_fill(&text, pages, npages, 1);

	unsigned char key[32], nonce[24] = { 0 }, tag[16];
	randombytes_buf(key, sizeof(key));
	uint64_t t0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++) {
		memcpy(nonce, &i, sizeof(i));
		crypto_aead_xchacha20poly1305_ietf_encrypt_detached(buf, tag, NULL, pages + i * ZS_PAGE_SIZE,
								    ZS_PAGE_SIZE, NULL, 0, NULL, nonce, key);
	}
	printf("RESULT bench=backing what=seal_xchacha20poly1305 us_per_page=%.2f\n", per_page(t0, npages));
	if (crypto_aead_aes256gcm_is_available()) {
		crypto_aead_aes256gcm_state gcm;
		crypto_aead_aes256gcm_beforenm(&gcm, key);
		t0 = bench_now_ns();
		for (size_t i = 0; i < npages; i++) {
			memcpy(nonce, &i, sizeof(i));
			crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag, NULL, pages + i * ZS_PAGE_SIZE,
								       ZS_PAGE_SIZE, NULL, 0, NULL, nonce, &gcm);
		}
		printf("RESULT bench=backing what=seal_aes256gcm us_per_page=%.2f\n", per_page(t0, npages));
	}
	t0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++)
		crypto_generichash(tag, sizeof(tag), pages + i * ZS_PAGE_SIZE, ZS_PAGE_SIZE, key, sizeof(key));
	printf("RESULT bench=backing what=checksum_blake2b us_per_page=%.2f\n", per_page(t0, npages));
	t0 = bench_now_ns();
	for (size_t i = 0; i < npages; i++)
		LZ4_compress_default((const char *)pages + i * ZS_PAGE_SIZE, lz, ZS_PAGE_SIZE,
				     LZ4_compressBound(ZS_PAGE_SIZE));
	printf("RESULT bench=backing what=lz4_compress us_per_page=%.2f\n", per_page(t0, npages));

	for (int enc = 1; enc >= 0; enc--) {
		struct backing_config cfg = { .dir = dir, .max_bytes = (uint64_t)npages * ZS_PAGE_SIZE * 2,
					      .encrypt = enc };
		char why[256];
		struct backing *b = backing_open(&cfg, why, sizeof(why));
		if (!b)
			bench_die("backing_open: %s", why);
		int64_t *slot = prim_alloc(npages * sizeof(*slot));
		t0 = bench_now_ns();
		for (size_t i = 0; i < npages; i++)
			if ((slot[i] = backing_write(b, pages + i * ZS_PAGE_SIZE, buf)) < 0)
				bench_die("write %zu failed (%lld)", i, (long long)slot[i]);
		printf("RESULT bench=backing what=write encrypt=%d us_per_page=%.2f\n", enc, per_page(t0, npages));
		/* The same pages again, 16 to a write (writeback's batches). */
		unsigned char *batch = prim_alloc(16 * ZS_PAGE_SIZE);
		int64_t *slot2 = prim_alloc(npages * sizeof(*slot2));
		t0 = bench_now_ns();
		for (size_t i = 0; i + 16 <= npages; i += 16) {
			memcpy(batch, pages + i * ZS_PAGE_SIZE, 16 * ZS_PAGE_SIZE);
			if (backing_write_batch(b, batch, 16, slot2 + i) != 16)
				bench_die("batch write at %zu failed", i);
		}
		printf("RESULT bench=backing what=write_batch16 encrypt=%d us_per_page=%.2f\n", enc,
		       per_page(t0, npages / 16 * 16));
		for (size_t i = 0; i < npages / 16 * 16; i++)
			backing_free(b, (uint64_t)slot2[i]);
		prim_free(slot2, npages * sizeof(*slot2));
		prim_free(batch, 16 * ZS_PAGE_SIZE);
		uint64_t rs = 1;
		t0 = bench_now_ns();
		for (size_t k = 0; k < npages; k++) {
			size_t i = (size_t)(bench_rand(&rs) % npages);
			if (backing_read(b, (uint64_t)slot[i], buf) != 0 || memcmp(buf, pages + i * ZS_PAGE_SIZE, ZS_PAGE_SIZE))
				bench_die("page %zu did not read back", i);
		}
		printf("RESULT bench=backing what=read_random encrypt=%d us_per_page=%.2f\n", enc, per_page(t0, npages));
		t0 = bench_now_ns();
		size_t half = npages / 2;
		for (size_t i = 0; i < half; i += 2)
			backing_free(b, (uint64_t)slot[i]);
		printf("RESULT bench=backing what=free encrypt=%d us_per_page=%.2f\n", enc, per_page(t0, half / 2));
		t0 = bench_now_ns();
		backing_trim(b, 0);
		printf("RESULT bench=backing what=trim_runs_of_1 encrypt=%d us_per_page=%.2f\n", enc,
		       per_page(t0, half / 2));
		for (size_t i = half; i < npages; i++)
			backing_free(b, (uint64_t)slot[i]);
		t0 = bench_now_ns();
		backing_trim(b, 0);
		printf("RESULT bench=backing what=trim_runs_of_64 encrypt=%d us_per_page=%.2f\n", enc,
		       per_page(t0, npages - half));
		for (size_t i = 1; i < half; i += 2)
			backing_free(b, (uint64_t)slot[i]);
		prim_free(slot, npages * sizeof(*slot));
		backing_close(b);
	}
	packed(dir, pages, npages);
	return 0;
}
