/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * backing.c - the second tier's file (see backing.h).
 *
 * Why whole pages: the kernel writes 4,096 bytes a page to swap; packing
 * compressed objects would write fewer bytes but turns every free into a
 * hole inside a shared block, which needs a cleaner moving live objects
 * (and so a way back from each object to the page table entry naming it)
 * to keep the file near what is live. Whole pages make a free a punched
 * block and a read one aligned O_DIRECT request.
 *
 * Why libsodium's AEADs: their calls are pure functions (no allocation,
 * no lock, constant time), fit for a fault handler; OpenSSL's EVP calls go
 * through providers that may lock. AES-256-GCM where the CPU has AES-NI and
 * PCLMUL (libsodium's own implementation, its key schedule expanded once
 * into the secret page), XChaCha20-Poly1305 elsewhere: a page is read back
 * and sealed once a refault and an eviction from the tier, and GCM takes
 * about half of XChaCha20's time a page (docs/BENCHMARKS.md, bench_backing).
 * The nonce is the write's sequence number after a random prefix (16 bytes
 * of XChaCha20's 24, 4 of GCM's 12): it never repeats under one key.
 */
#include "config.h"
#include "core/backing.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Inlined: nothing to bind lazily, nothing shared with the program's copy. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/dynlib.h"
#include "base/fdtab.h"
#include "base/inject.h"
#include "base/log.h"
#include "base/prim.h"

/*
 * libsodium is loaded when a tier is first opened or at the library's
 * start (backing_load), not linked: a process that never starts the
 * library never loads it. No tier exists without it, so every call below
 * finds its pointer set.
 */
#define BACKING_SYM(fn, field) { #fn, (void **)&sodium.field }

static struct {
	__typeof__(sodium_init) *init;
	__typeof__(randombytes_buf) *random;
	__typeof__(crypto_generichash_init) *hash_init;
	__typeof__(crypto_generichash_update) *hash_update;
	__typeof__(crypto_generichash_final) *hash_final;
	__typeof__(crypto_aead_xchacha20poly1305_ietf_encrypt_detached) *seal;
	__typeof__(crypto_aead_xchacha20poly1305_ietf_decrypt_detached) *open;
	__typeof__(crypto_aead_aes256gcm_is_available) *gcm_available;
	__typeof__(crypto_aead_aes256gcm_beforenm) *gcm_expand;
	__typeof__(crypto_aead_aes256gcm_encrypt_detached_afternm) *gcm_seal;
	__typeof__(crypto_aead_aes256gcm_decrypt_detached_afternm) *gcm_open;
	__typeof__(sodium_memcmp) *memcmp;
} sodium;

static const struct dynlib_sym backing_sodium_syms[] = {
	BACKING_SYM(sodium_init, init),
	BACKING_SYM(randombytes_buf, random),
	BACKING_SYM(crypto_generichash_init, hash_init),
	BACKING_SYM(crypto_generichash_update, hash_update),
	BACKING_SYM(crypto_generichash_final, hash_final),
	BACKING_SYM(crypto_aead_xchacha20poly1305_ietf_encrypt_detached, seal),
	BACKING_SYM(crypto_aead_xchacha20poly1305_ietf_decrypt_detached, open),
	BACKING_SYM(crypto_aead_aes256gcm_is_available, gcm_available),
	BACKING_SYM(crypto_aead_aes256gcm_beforenm, gcm_expand),
	BACKING_SYM(crypto_aead_aes256gcm_encrypt_detached_afternm, gcm_seal),
	BACKING_SYM(crypto_aead_aes256gcm_decrypt_detached_afternm, gcm_open),
	BACKING_SYM(sodium_memcmp, memcmp),
};

static struct dynlib backing_sodium = {
	"libsodium.so.23", backing_sodium_syms, sizeof(backing_sodium_syms) / sizeof(backing_sodium_syms[0]),
	0, NULL, ""
};

const char *backing_load(void)
{
	return dynlib_load(&backing_sodium) ? NULL : dynlib_why(&backing_sodium);
}

#ifndef RAMFS_MAGIC
#define RAMFS_MAGIC 0x858458f6
#endif

#define BACKING_TAG	16
#define BACKING_PREFIX	16	/* random part of the 24-byte nonce (GCM's 12: 4) */
#define BACKING_KEY	32

/* The secret page: the key, and GCM's expanded key schedule. */
struct backing_secret {
	uint8_t key[BACKING_KEY];
	crypto_aead_aes256gcm_state gcm;
};

/* Kept in memory for each slot in use: never written to the file. sum is
 * a fast 128-bit digest of the page's clear text (XXH3, under a random seed
 * of this file's): backing_same() tells a page read back and left unchanged
 * from one that was written to, in a fraction of what sealing costs. */
struct backing_meta {
	uint64_t seq;
	uint8_t tag[BACKING_TAG];
	XXH128_hash_t sum;
};

struct backing {
	int fd;
	bool direct;			/* O_DIRECT; else written through and dropped from the cache */
	bool encrypt;
	bool gcm;			/* sealed with AES-256-GCM (else XChaCha20-Poly1305) */
	uint64_t max_slots;
	struct backing_meta *meta;	/* max_slots entries, reserved, touched as used */
	_Atomic uint64_t *bitmap;	/* a set bit: slot in use */
	uint64_t *unpunched;		/* a set bit: freed, its block still on disk (under lock) */
	uint64_t *pinned;		/* a set bit: a forked process may read it (under lock) */
	uint64_t *pinned_freed;		/* pinned, and freed here since (under lock) */
	uint64_t nr_pinned_free;	/* pinned slots this process no longer uses */
	bool read_only;			/* a fork child's: the file is its parent's to write */
	size_t meta_bytes, bitmap_bytes;
	struct backing_secret *secret;	/* a page of its own (prim_alloc_secret) */
	uint8_t prefix[BACKING_PREFIX];
	uint64_t sum_seed;
	_Atomic uint64_t seq;

	pthread_mutex_t lock;		/* the allocator: lowest free first */
	uint64_t hint;			/* no free slot below this */
	uint64_t end;			/* slots [0, end) have been used: the file's size */
	uint64_t nr_unpunched;
	uint64_t nr_disk;		/* slots whose block is on disk: in use or not yet punched */
	struct backing_share share;	/* the counters those blocks count in (under lock) */

	_Atomic uint64_t count, reads, writes, read_fail, write_fail;
	_Atomic unsigned int inject, inject_kind;	/* test hook: writes to fail, how */
};

static __attribute__((format(printf, 4, 5))) int backing_reason(char *why, size_t len, int err,
								  const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		log_format(why, len, fmt, ap);
		va_end(ap);
	}
	errno = err;
	return -1;
}

bool backing_dir_on_disk(const char *dir)
{
	struct statfs sfs;

	return statfs(dir, &sfs) == 0 && sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC;
}

int backing_check_dir(const char *dir, char *why, size_t len)
{
	struct stat st;
	struct statvfs svfs;

	if (stat(dir, &st) != 0)
		return backing_reason(why, len, ENOENT, "%s does not exist", dir);
	if (!S_ISDIR(st.st_mode))
		return backing_reason(why, len, ENOTDIR, "%s is not a directory", dir);
	if (!backing_dir_on_disk(dir))
		return backing_reason(why, len, EXDEV, "%s is on tmpfs or ramfs: a tier there would live in RAM",
				      dir);
	if (statvfs(dir, &svfs) == 0 && (svfs.f_flag & ST_RDONLY))
		return backing_reason(why, len, EROFS, "%s is on a read-only filesystem", dir);
	if (access(dir, W_OK | X_OK) != 0)
		return backing_reason(why, len, EACCES, "%s is not writable", dir);
	return 0;
}

/* An unlinked file of our own in dir: O_TMPFILE, else made and unlinked. */
static int backing_create(const char *dir, bool *direct)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);

	*direct = true;
	if (fd < 0 && errno == EINVAL) {
		*direct = false;	/* no O_DIRECT here (or no O_TMPFILE: tried below) */
		fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	}
	if (fd >= 0)
		return fd;
	char path[4096];
	if (log_snprintf(path, sizeof(path), "%s/.libzswap-XXXXXX", dir) >= sizeof(path) - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* mkostemp creates with O_CREAT|O_EXCL, mode 0600: a name another user
	 * planted (a link to a file of ours, a FIFO) fails and the next name is
	 * tried; O_NOFOLLOW says so once more. */
	fd = mkostemp(path, O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	unlink(path);
	fchmod(fd, 0600);
	int fl = fcntl(fd, F_GETFL);
	*direct = fl >= 0 && fcntl(fd, F_SETFL, fl | O_DIRECT) == 0;
	return fd;
}

uint64_t backing_cap(const char *dir, uint64_t max_bytes, char *why, size_t whylen)
{
	struct statvfs svfs;

	if (max_bytes)
		return max_bytes;
	if (statvfs(dir, &svfs) != 0) {
		backing_reason(why, whylen, errno, "cannot read the free space of %s", dir);
		return 0;
	}
	uint64_t max = (uint64_t)svfs.f_bavail * svfs.f_frsize / 2;
	if (max < ZS_PAGE_SIZE)
		backing_reason(why, whylen, ENOSPC, "no room for one page in %s", dir);
	return max;
}

struct backing *backing_open(const struct backing_config *cfg, char *why, size_t whylen)
{
	struct backing *b;
	bool direct;

	if (backing_check_dir(cfg->dir, why, whylen) < 0)
		return NULL;
	const char *missing = backing_load();
	if (missing) {
		backing_reason(why, whylen, ENOPKG, "%s", missing);
		return NULL;
	}
	if (sodium.init() < 0) {
		backing_reason(why, whylen, ENOSYS, "%s: libsodium could not start", cfg->dir);
		return NULL;
	}
	uint64_t max_slots = backing_cap(cfg->dir, cfg->max_bytes, why, whylen) / ZS_PAGE_SIZE;
	if (!max_slots) {
		if (cfg->max_bytes)
			backing_reason(why, whylen, ENOSPC, "no room for one page in %s", cfg->dir);
		return NULL;
	}
	int fd = backing_create(cfg->dir, &direct);
	if (fd < 0) {
		int e = errno;
		backing_reason(why, whylen, e, "cannot create a file in %s", cfg->dir);
		return NULL;
	}
	b = prim_alloc(sizeof(*b));
	size_t meta_bytes = max_slots * sizeof(struct backing_meta);
	size_t bitmap_bytes = ((max_slots + 63) / 64) * sizeof(uint64_t);
	void *meta = b ? prim_alloc(meta_bytes) : NULL;
	void *bitmap = meta ? prim_alloc(bitmap_bytes) : NULL;
	void *unpunched = bitmap ? prim_alloc(bitmap_bytes) : NULL;
	void *pinned = unpunched ? prim_alloc(bitmap_bytes) : NULL;
	void *pinned_freed = pinned ? prim_alloc(bitmap_bytes) : NULL;
	struct backing_secret *secret = pinned_freed ? prim_alloc_secret(sizeof(*secret)) : NULL;
	if (!secret) {
		if (pinned_freed)
			prim_free(pinned_freed, bitmap_bytes);
		if (pinned)
			prim_free(pinned, bitmap_bytes);
		if (unpunched)
			prim_free(unpunched, bitmap_bytes);
		if (bitmap)
			prim_free(bitmap, bitmap_bytes);
		if (meta)
			prim_free(meta, meta_bytes);
		if (b)
			prim_free(b, sizeof(*b));
		fdtab_close_short(fd);
		backing_reason(why, whylen, ENOMEM, "no memory for the index of a tier in %s", cfg->dir);
		return NULL;
	}
	b->fd = fdtab_keep(fd);
	b->direct = direct;
	b->encrypt = cfg->encrypt;
	b->max_slots = max_slots;
	b->meta = meta;
	b->bitmap = bitmap;
	b->unpunched = unpunched;
	b->pinned = pinned;
	b->pinned_freed = pinned_freed;
	b->meta_bytes = meta_bytes;
	b->bitmap_bytes = bitmap_bytes;
	b->secret = secret;
	sodium.random(secret->key, BACKING_KEY);
	b->gcm = cfg->encrypt && !cfg->xchacha && sodium.gcm_available() && sodium.gcm_expand(&secret->gcm, secret->key) == 0;
	sodium.random(b->prefix, sizeof(b->prefix));
	sodium.random(&b->sum_seed, sizeof(b->sum_seed));
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

void backing_close(struct backing *b)
{
	if (!b)
		return;
	backing_set_share(b, NULL);	/* its blocks go with the file */
	fdtab_close(b->fd);
	prim_free_secret(b->secret, sizeof(*b->secret));	/* wiped */
	prim_free(b->meta, b->meta_bytes);
	prim_free((void *)b->bitmap, b->bitmap_bytes);
	prim_free(b->unpunched, b->bitmap_bytes);
	prim_free(b->pinned, b->bitmap_bytes);
	prim_free(b->pinned_freed, b->bitmap_bytes);
	pthread_mutex_destroy(&b->lock);
	prim_free(b, sizeof(*b));
}

/* --- the allocator ---------------------------------------------------------- */

/* --- the shared counters (b->lock held) ------------------------------------- */

static void backing_uncharge(struct backing *b, uint64_t slots)
{
	uint64_t bytes = slots * ZS_PAGE_SIZE;

	for (unsigned int i = 0; i < b->share.n; i++) {
		atomic_fetch_sub(b->share.g[i].total, bytes);
		atomic_fetch_sub(b->share.g[i].mine, bytes);
	}
	b->nr_disk -= slots;
}

/* Blocks about to be written where none is on disk: counted, unless a
 * counter would pass its cap (force: counted all the same). A sum may be
 * recomputed from the parts at any time (the group's reaper): each part
 * goes up before its sum and down after it, so that a sum recomputed
 * between the two errs high, never below zero. */
static bool backing_charge(struct backing *b, uint64_t slots, bool force)
{
	uint64_t bytes = slots * ZS_PAGE_SIZE;
	unsigned int i;

	for (i = 0; i < b->share.n; i++)
		atomic_fetch_add(b->share.g[i].mine, bytes);
	for (i = 0; i < b->share.n; i++) {
		uint64_t old = atomic_fetch_add(b->share.g[i].total, bytes);
		if (!force && old + bytes > b->share.g[i].max)
			break;
	}
	if (i == b->share.n) {
		b->nr_disk += slots;
		return true;
	}
	for (unsigned int k = 0; k <= i; k++)
		atomic_fetch_sub(b->share.g[k].total, bytes);
	for (unsigned int k = 0; k < b->share.n; k++)
		atomic_fetch_sub(b->share.g[k].mine, bytes);
	return false;
}

static void backing_refused(struct backing *b)
{
	for (unsigned int i = 0; i < b->share.n; i++)
		if (atomic_load(b->share.g[i].total) + ZS_PAGE_SIZE > b->share.g[i].max)
			atomic_fetch_add(b->share.g[i].events_max, 1);
}

void backing_set_share(struct backing *b, const struct backing_share *share)
{
	pthread_mutex_lock(&b->lock);
	uint64_t disk = b->nr_disk;
	backing_uncharge(b, disk);
	if (share && share->n <= BACKING_SHARES)
		b->share = *share;
	else
		memset(&b->share, 0, sizeof(b->share));
	backing_charge(b, disk, true);
	pthread_mutex_unlock(&b->lock);
}

uint64_t backing_share_room(struct backing *b)
{
	uint64_t room = UINT64_MAX;

	pthread_mutex_lock(&b->lock);
	for (unsigned int i = 0; i < b->share.n; i++) {
		uint64_t t = atomic_load(b->share.g[i].total), m = b->share.g[i].max;
		if ((m > t ? m - t : 0) < room)
			room = m > t ? m - t : 0;
	}
	pthread_mutex_unlock(&b->lock);
	return room;
}

/* --- the allocator ---------------------------------------------------------- */

/* Mark [s, s + n) in use (b->lock held; within one bitmap word; its new
 * blocks charged already). */
static void backing_take(struct backing *b, uint64_t s, unsigned int n)
{
	uint64_t w = s / 64, mask = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << (s % 64);
	uint64_t bits = atomic_load_explicit(&b->bitmap[w], memory_order_relaxed);

	atomic_store_explicit(&b->bitmap[w], bits | mask, memory_order_relaxed);
	if (b->unpunched[w] & mask) {
		b->nr_unpunched -= (uint64_t)__builtin_popcountll(b->unpunched[w] & mask);
		b->unpunched[w] &= ~mask;	/* overwritten: no punch needed */
	}
	if (s + n > b->end)
		b->end = s + n;
}

/*
 * n (1-64) consecutive free slots inside one bitmap word, the lowest such
 * run from the hint on, into *first; false when there is none. A batch
 * written to consecutive slots is one write (one request to the disk, where
 * scattered slots were one each), and pages written back together, in
 * address order, are read back together by readahead. Words past the
 * file's end are free, so a run exists until the file nears its cap: the
 * file grows past holes too small for a batch, as the kernel's swap
 * allocator takes a free cluster rather than fill scattered slots.
 */
static bool backing_alloc_run(struct backing *b, unsigned int n, uint64_t *first, bool *refused)
{
	bool found = false, reuse = false;

	pthread_mutex_lock(&b->lock);
	for (uint64_t w = b->hint / 64; w * 64 + n <= b->max_slots; w++) {
		uint64_t free = ~atomic_load_explicit(&b->bitmap[w], memory_order_relaxed);
		if (reuse && w * 64 >= b->end)
			break;
		if (reuse)
			free &= b->unpunched[w];	/* only blocks still on disk */
		uint64_t m = free;
		for (unsigned int i = 1; i < n && m; i++)
			m &= free >> i;
		if (!m)
			continue;
		uint64_t s = w * 64 + (uint64_t)__builtin_ctzll(m);
		if (s + n > b->max_slots)
			break;
		uint64_t mask = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << (s % 64);
		uint64_t fresh = (uint64_t)__builtin_popcountll(mask & ~b->unpunched[w]);
		if (fresh && !backing_charge(b, fresh, false)) {
			/* The shared cap: only slots whose blocks are on
			 * disk still, from the hint on. */
			*refused = true;
			reuse = true;
			w = b->hint / 64 - 1;	/* the loop's w++ starts it at the hint's word */
			continue;
		}
		backing_take(b, s, n);
		if (n == 1 && !reuse)
			b->hint = s + 1;	/* the lowest free slot: none below it now */
		*first = s;
		found = true;
		break;
	}
	pthread_mutex_unlock(&b->lock);
	return found;
}

static void backing_release(struct backing *b, uint64_t slot, bool punch_later)
{
	pthread_mutex_lock(&b->lock);
	if (b->pinned[slot / 64] & 1ULL << (slot % 64)) {
		/* Another process of the fork may still read it: kept
		 * until backing_fork_release. */
		b->pinned_freed[slot / 64] |= 1ULL << (slot % 64);
		b->nr_pinned_free++;
		pthread_mutex_unlock(&b->lock);
		return;
	}
	if (punch_later) {
		b->unpunched[slot / 64] |= 1ULL << (slot % 64);
		b->nr_unpunched++;
	}
	atomic_store_explicit(&b->bitmap[slot / 64],
			      atomic_load_explicit(&b->bitmap[slot / 64], memory_order_relaxed) & ~(1ULL << (slot % 64)),
			      memory_order_relaxed);
	if (slot < b->hint)
		b->hint = slot;
	pthread_mutex_unlock(&b->lock);
}

/* --- sealing ------------------------------------------------------------------ */

static void backing_nonce(const struct backing *b, uint64_t seq, uint8_t nonce[24])
{
	memcpy(nonce, b->prefix, BACKING_PREFIX);
	memcpy(nonce + BACKING_PREFIX, &seq, sizeof(seq));
}

/* The clear-text checksum: keyed BLAKE2b over the page, its slot and seq. */
static void backing_digest(const struct backing *b, const void *page, uint64_t slot, uint64_t seq,
			   uint8_t tag[BACKING_TAG])
{
	crypto_generichash_state st;
	uint64_t id[2] = { slot, seq };

	sodium.hash_init(&st, b->secret->key, BACKING_KEY, BACKING_TAG);
	sodium.hash_update(&st, page, ZS_PAGE_SIZE);
	sodium.hash_update(&st, (const unsigned char *)id, sizeof(id));
	sodium.hash_final(&st, tag, BACKING_TAG);
}

static void backing_seal(struct backing *b, const void *src, void *buf, uint64_t slot)
{
	struct backing_meta *m = &b->meta[slot];
	uint8_t nonce[24];

	m->seq = atomic_fetch_add_explicit(&b->seq, 1, memory_order_relaxed);
	m->sum = XXH3_128bits_withSeed(src, ZS_PAGE_SIZE, b->sum_seed);
	if (!b->encrypt) {
		if (src != buf)
			memcpy(buf, src, ZS_PAGE_SIZE);
		backing_digest(b, buf, slot, m->seq, m->tag);
		return;
	}
	backing_nonce(b, m->seq, nonce);
	if (b->gcm)
		sodium.gcm_seal(buf, m->tag, NULL, src, ZS_PAGE_SIZE, (const unsigned char *)&slot, sizeof(slot), NULL,
				nonce + BACKING_PREFIX - 4, &b->secret->gcm);
	else
		sodium.seal(buf, m->tag, NULL, src, ZS_PAGE_SIZE, (const unsigned char *)&slot, sizeof(slot), NULL,
			    nonce, b->secret->key);
}

/* 0 when the page read into dst verifies (and is decrypted in place). */
static int backing_open_seal(struct backing *b, void *dst, uint64_t slot)
{
	const struct backing_meta *m = &b->meta[slot];
	uint8_t nonce[24], tag[BACKING_TAG];

	if (!b->encrypt) {
		backing_digest(b, dst, slot, m->seq, tag);
		return sodium.memcmp(tag, m->tag, BACKING_TAG) == 0 ? 0 : -1;
	}
	backing_nonce(b, m->seq, nonce);
	if (b->gcm)
		return sodium.gcm_open(dst, NULL, dst, ZS_PAGE_SIZE, m->tag, (const unsigned char *)&slot, sizeof(slot),
				       nonce + BACKING_PREFIX - 4, &b->secret->gcm);
	return sodium.open(dst, NULL, dst, ZS_PAGE_SIZE, m->tag, (const unsigned char *)&slot, sizeof(slot),
			   nonce, b->secret->key);
}

const char *backing_sealing(const struct backing *b)
{
	return !b->encrypt ? "in the clear with a checksum"
	       : b->gcm	   ? "sealed (AES-256-GCM)" : "sealed (XChaCha20-Poly1305)";
}

/* --- I/O ---------------------------------------------------------------------- */

int backing_write_batch(struct backing *b, void *buf, size_t n, int64_t *slots)
{
	size_t got = 0, written = 0;
	int err = -ENOSPC;

	if (b->read_only)
		return -EROFS;
	uint64_t first;
	bool refused = false;
	if (n <= 64 && backing_alloc_run(b, (unsigned int)n, &first, &refused)) {
		for (; got < n; got++)
			slots[got] = (int64_t)(first + got);
	}
	for (; got < n && backing_alloc_run(b, 1, &first, &refused); got++)
		slots[got] = (int64_t)first;
	if (got < n && refused) {
		pthread_mutex_lock(&b->lock);
		backing_refused(b);
		pthread_mutex_unlock(&b->lock);
	}
	for (size_t k = 0; k < got; k++) {
		char *page = (char *)buf + k * ZS_PAGE_SIZE;
		backing_seal(b, page, page, (uint64_t)slots[k]);
	}
	/* One write a run of consecutive slots (the lowest free first makes
	 * most batches one run). */
	while (written < got) {
		size_t run = 1;
		while (written + run < got && slots[written + run] == slots[written] + (int64_t)run)
			run++;
		off_t off = (off_t)((uint64_t)slots[written] * ZS_PAGE_SIZE);
		size_t len = run * ZS_PAGE_SIZE;
		ssize_t w;
		unsigned int inj = inject_take(&b->inject);
		if (inj) {
			unsigned int kind = atomic_load(&b->inject_kind);
			if (kind == BACKING_FAIL_CYCLE)
				kind = inj % 3;	/* ENOSPC, EIO, short, in turn */
			if (kind == BACKING_FAIL_SHORT) {
				/* Half of the first page really written: the
				 * slot holds a torn page until it is punched. */
				w = pwrite(b->fd, (char *)buf + written * ZS_PAGE_SIZE, ZS_PAGE_SIZE / 2, off);
			} else {
				errno = kind == BACKING_FAIL_EIO ? EIO : ENOSPC;
				w = -1;
			}
		} else {
			w = pwrite(b->fd, (char *)buf + written * ZS_PAGE_SIZE, len, off);
		}
		if (w != (ssize_t)len) {
			err = w < 0 && (errno == ENOSPC || errno == EDQUOT) ? -ENOSPC : -EIO;
			break;
		}
		if (!b->direct) {
			/* Written through and dropped: the page cache must not keep it. */
			sync_file_range(b->fd, off, (off_t)len,
					SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
			posix_fadvise(b->fd, off, (off_t)len, POSIX_FADV_DONTNEED);
		}
		written += run;
	}
	/* A short write may have filled part of a run: punched with the rest. */
	for (size_t k = written; k < got; k++)
		backing_release(b, (uint64_t)slots[k], true);
	if (written < n)
		atomic_fetch_add_explicit(&b->write_fail, n - written, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->count, written, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->writes, written, memory_order_relaxed);
	return written ? (int)written : err;
}

int64_t backing_write(struct backing *b, const void *src, void *buf)
{
	int64_t slot;

	if (src != buf)
		memcpy(buf, src, ZS_PAGE_SIZE);
	int rc = backing_write_batch(b, buf, 1, &slot);
	return rc == 1 ? slot : rc;
}

uint64_t backing_read_run(struct backing *b, uint64_t slot, size_t n, void *dst)
{
	size_t len = n * ZS_PAGE_SIZE;
	uint64_t bad = 0;
	ssize_t got;

	if (!n || n > 64)
		return n ? ~0ULL : 0;
	if (slot >= b->max_slots || n > b->max_slots - slot)
		return n == 64 ? ~0ULL : (1ULL << n) - 1;	/* no such slot: nothing read */
	do
		got = pread(b->fd, dst, len, (off_t)(slot * ZS_PAGE_SIZE));
	while (got < 0 && errno == EINTR);
	for (size_t k = 0; k < n; k++) {
		char *page = (char *)dst + k * ZS_PAGE_SIZE;
		/* A short read fails the pages it did not reach, no more. */
		if (got < (ssize_t)((k + 1) * ZS_PAGE_SIZE) || backing_open_seal(b, page, slot + k) != 0)
			bad |= 1ULL << k;
	}
	if (!b->direct)
		posix_fadvise(b->fd, (off_t)(slot * ZS_PAGE_SIZE), (off_t)len, POSIX_FADV_DONTNEED);
	unsigned int nbad = (unsigned int)__builtin_popcountll(bad);
	if (nbad)
		atomic_fetch_add_explicit(&b->read_fail, nbad, memory_order_relaxed);
	atomic_fetch_add_explicit(&b->reads, n - nbad, memory_order_relaxed);
	return bad;
}

int backing_read(struct backing *b, uint64_t slot, void *dst)
{
	return backing_read_run(b, slot, 1, dst) ? -EIO : 0;
}

bool backing_same(const struct backing *b, uint64_t slot, const void *page)
{
	if (slot >= b->max_slots || !(atomic_load_explicit(&b->bitmap[slot / 64], memory_order_relaxed) &
				      1ULL << (slot % 64)))
		return false;
	return XXH128_isEqual(XXH3_128bits_withSeed(page, ZS_PAGE_SIZE, b->sum_seed), b->meta[slot].sum);
}

bool backing_room_to_keep(const struct backing *b)
{
	return atomic_load_explicit(&b->count, memory_order_relaxed) * 2 < b->max_slots;
}

void backing_free(struct backing *b, uint64_t slot)
{
	if (slot >= b->max_slots)
		return;
	backing_release(b, slot, true);
	atomic_fetch_sub_explicit(&b->count, 1, memory_order_relaxed);
}

uint64_t backing_in_use(const struct backing *b)
{
	return atomic_load_explicit(&b->count, memory_order_relaxed);
}

uint64_t backing_unpunched(struct backing *b)
{
	pthread_mutex_lock(&b->lock);
	uint64_t n = b->nr_unpunched;
	pthread_mutex_unlock(&b->lock);
	return n;
}

/* Punch the freed slots of word w the caller took out of b->unpunched (bits),
 * runs of slots in one call each. */
static void backing_punch_word(struct backing *b, uint64_t w, uint64_t bits)
{
	for (uint64_t left = bits; left;) {
		unsigned int lo = (unsigned int)__builtin_ctzll(left);
		uint64_t run = left >> lo;
		unsigned int len = run == ~0ULL >> lo ? 64 - lo : (unsigned int)__builtin_ctzll(~run);
		fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  (off_t)((w * 64 + lo) * ZS_PAGE_SIZE), (off_t)((uint64_t)len * ZS_PAGE_SIZE));
		left = lo + len >= 64 ? 0 : left & ~((~0ULL >> (64 - lo - len)));
	}
}

uint64_t backing_trim(struct backing *b, uint64_t keep)
{
	uint64_t punched = 0;

	if (b->read_only)
		return 0;	/* a fork child's: the parent's to punch */
	/* From the file's end down: the allocator takes the lowest free slots,
	 * so the highest are the last it would have reused. */
	for (uint64_t w = (b->end + 63) / 64; w-- > 0;) {
		/* Taken: marked in use while punched, so no writer gets one of
		 * them and has its page punched away after writing it. */
		pthread_mutex_lock(&b->lock);
		if (b->nr_unpunched <= keep) {
			pthread_mutex_unlock(&b->lock);
			break;
		}
		uint64_t bits = b->unpunched[w];
		b->unpunched[w] = 0;
		b->nr_unpunched -= (uint64_t)__builtin_popcountll(bits);
		atomic_store_explicit(&b->bitmap[w], atomic_load_explicit(&b->bitmap[w], memory_order_relaxed) | bits,
				      memory_order_relaxed);
		pthread_mutex_unlock(&b->lock);
		if (!bits)
			continue;
		backing_punch_word(b, w, bits);
		punched += (uint64_t)__builtin_popcountll(bits);
		pthread_mutex_lock(&b->lock);
		atomic_store_explicit(&b->bitmap[w], atomic_load_explicit(&b->bitmap[w], memory_order_relaxed) & ~bits,
				      memory_order_relaxed);
		backing_uncharge(b, (uint64_t)__builtin_popcountll(bits));
		uint64_t first = w * 64 + (uint64_t)__builtin_ctzll(bits);
		if (first < b->hint)
			b->hint = first;
		pthread_mutex_unlock(&b->lock);
	}
	return punched;
}

void backing_stats(struct backing *b, struct backing_stats *st)
{
	struct stat fst;

	st->bd_count = atomic_load_explicit(&b->count, memory_order_relaxed);
	st->bd_reads = atomic_load_explicit(&b->reads, memory_order_relaxed);
	st->bd_writes = atomic_load_explicit(&b->writes, memory_order_relaxed);
	st->bd_read_fail = atomic_load_explicit(&b->read_fail, memory_order_relaxed);
	st->bd_write_fail = atomic_load_explicit(&b->write_fail, memory_order_relaxed);
	bool ok = fstat(b->fd, &fst) == 0;
	st->file_bytes = ok ? (uint64_t)fst.st_size : 0;
	st->disk_bytes = ok ? (uint64_t)fst.st_blocks * 512 : 0;
	st->max_bytes = b->max_slots * ZS_PAGE_SIZE;
	pthread_mutex_lock(&b->lock);
	st->pinned_free = b->nr_pinned_free;
	st->free_bytes = b->nr_unpunched * ZS_PAGE_SIZE;
	pthread_mutex_unlock(&b->lock);
}

void backing_fork_pin(struct backing *b)
{
	pthread_mutex_lock(&b->lock);
	for (uint64_t w = 0; w < (b->end + 63) / 64; w++)
		b->pinned[w] |= atomic_load_explicit(&b->bitmap[w], memory_order_relaxed);
	pthread_mutex_unlock(&b->lock);
}

uint64_t backing_fork_release(struct backing *b)
{
	uint64_t n = 0;

	pthread_mutex_lock(&b->lock);
	for (uint64_t w = 0; w < (b->end + 63) / 64; w++) {
		uint64_t freed = b->pinned_freed[w];
		b->pinned[w] = 0;
		b->pinned_freed[w] = 0;
		if (!freed)
			continue;
		/* Free now, punched by the next trim (a read-only tier's never
		 * are: the parent's to punch). */
		if (!b->read_only) {
			b->unpunched[w] |= freed;
			b->nr_unpunched += (uint64_t)__builtin_popcountll(freed);
		}
		atomic_store_explicit(&b->bitmap[w], atomic_load_explicit(&b->bitmap[w], memory_order_relaxed) & ~freed,
				      memory_order_relaxed);
		if (w * 64 + (uint64_t)__builtin_ctzll(freed) < b->hint)
			b->hint = w * 64 + (uint64_t)__builtin_ctzll(freed);
		n += (uint64_t)__builtin_popcountll(freed);
	}
	b->nr_pinned_free = 0;
	pthread_mutex_unlock(&b->lock);
	return n;
}

void backing_fork_child(struct backing *b)
{
	/* Whoever held the lock at fork stayed in the parent. */
	pthread_mutex_init(&b->lock, NULL);
	memset(&b->share, 0, sizeof(b->share));	/* the parent's counters, the parent's blocks */
	backing_fork_pin(b);
	/* The parent punches what it freed before the fork; the child must
	 * never punch a block: the parent may have written it again. */
	memset(b->unpunched, 0, (b->end + 63) / 64 * sizeof(uint64_t));
	b->nr_unpunched = 0;
	b->read_only = true;
}

const void *backing_key_addr(const struct backing *b)
{
	return b->secret->key;
}

int backing_fd(const struct backing *b)
{
	return b->fd;
}

void backing_inject_write_fail(struct backing *b, unsigned int n, enum backing_fail kind)
{
	atomic_store(&b->inject_kind, kind);
	atomic_store(&b->inject, n);
}
