/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * backing.h - the second tier: whole pages in a private file on disk, each
 * sealed with an authenticated cipher.
 *
 * zswap writes the pages its pool cannot keep back to the swap device; zram
 * writes idle and incompressible ones to its backing device. This is that
 * device for one process: a file created unlinked (O_TMPFILE, else created
 * and unlinked at once), mode 0600, gone with the last descriptor, so with
 * the process even after SIGKILL. Pages are written whole, 4,096 bytes at a
 * 4,096-byte offset (a slot), with O_DIRECT so that nothing stays in the
 * page cache (where a memory cgroup would charge it and nothing would be
 * freed); a freed slot is punched out of the file (FALLOC_FL_PUNCH_HOLE) and
 * the lowest free slot is reused first, so the file holds what is live.
 *
 * Every page is sealed with AES-256-GCM where the CPU runs it (AES-NI and
 * PCLMUL), else XChaCha20-Poly1305 (both libsodium's), under a random
 * key that exists only in this process's memory: what is on disk is
 * ciphertext, and the 16-byte tag is the checksum, kept in memory with the
 * write's sequence number (24 bytes a slot) and never written. The slot
 * index is authenticated too, so a block copied to another slot does not
 * read back. With encryption off the page is written in the clear and a keyed
 * BLAKE2b digest is its checksum. A read that does not verify returns -EIO:
 * the caller poisons the page; it never hands out wrong bytes or zeros.
 *
 * Thread-safe; one lock for the slot allocator, taken for an instant, never
 * across I/O. After backing_open() nothing here allocates: pwrite, pread and
 * fallocate are its only system calls.
 */
#ifndef ZSWAP_BACKING_H
#define ZSWAP_BACKING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct backing_config {
	const char *dir;	/* where the file is made (never on tmpfs or ramfs) */
	uint64_t max_bytes;	/* cap on the file's live bytes; 0 = the default */
	bool encrypt;		/* seal pages (the default) or only checksum them */
	bool xchacha;		/* seal with XChaCha20-Poly1305 even where AES-256-GCM runs (tests) */
};

struct backing_stats {
	uint64_t bd_count;	/* pages in the file now (zram's bd_stat) */
	uint64_t bd_reads;	/* pages read back, since open */
	uint64_t bd_writes;	/* pages written, since open */
	uint64_t bd_read_fail;	/* reads that did not verify or failed */
	uint64_t bd_write_fail;	/* writes that failed (ENOSPC, EIO, short) */
	uint64_t file_bytes;	/* the file's size (its end: holes included) */
	uint64_t disk_bytes;	/* the file's blocks on disk (holes excluded) */
	uint64_t max_bytes;	/* the cap in force */
	uint64_t pinned_free;	/* slots freed here but kept for a forked process */
	uint64_t free_bytes;	/* freed slots whose blocks are still on disk */
};

/*
 * Disk bytes a tier shares with other processes' (a process group's,
 * src/reclaim/group.h): up to BACKING_SHARES counters each with its cap, a
 * group's and its ancestors'. A block of the file counts from the write
 * that allocates it to the punch that frees it (a freed slot not yet
 * punched still holds its block); an allocation that would take a counter
 * past its cap is refused as one past the file's own cap is (-ENOSPC), and
 * counted in events_max. mine is the file's part, kept where the others
 * can subtract it when this process is gone without saying so.
 */
#define BACKING_SHARES	4

struct backing_share {
	unsigned int n;
	struct {
		_Atomic uint64_t *total;	/* bytes on disk, every member's files */
		_Atomic uint64_t *mine;		/* this file's part of total */
		_Atomic uint64_t *events_max;	/* allocations refused at max */
		uint64_t max;			/* the cap on total */
	} g[BACKING_SHARES];
};

struct backing;

/* Whether dir is on a filesystem that keeps files on a disk (not tmpfs or
 * ramfs, where the tier would live in RAM). */
bool backing_dir_on_disk(const char *dir);

/* Whether dir can hold the tier, as backing_open checks it before it opens:
 * 0, or -1 with errno and a one-line reason in why: ENOENT (it does not
 * exist), ENOTDIR, EXDEV (tmpfs or ramfs), EROFS or EACCES. zswapctl run
 * asks it before the program starts. */
int backing_check_dir(const char *dir, char *why, size_t len);

/* The cap by the default rule: max_bytes, or when 0 half the free space
 * of dir's filesystem. 0 with a reason in why when it cannot be read. */
uint64_t backing_cap(const char *dir, uint64_t max_bytes, char *why, size_t whylen);

/* Load libsodium, which seals the tier's pages, if not yet tried (the
 * library's start-up calls it before its threads run, for a tier opened
 * then or turned on later). NULL if it is usable, else why not. */
const char *backing_load(void);

/* Open the tier. NULL on failure, with errno and a one-line reason in why:
 * ENOENT (no such directory), EROFS (read-only), EXDEV (tmpfs or ramfs: the
 * tier would live in RAM), ENOPKG (no libsodium), or the error of the
 * file's creation. The default
 * cap is half the filesystem's free space at open. Start-up only (it
 * allocates and seeds the key). */
struct backing *backing_open(const struct backing_config *cfg, char *why, size_t whylen);
void backing_close(struct backing *b);

/* Write one page (PAGE_SIZE bytes at src) through buf, a page-aligned
 * PAGE_SIZE scratch buffer of the caller's (O_DIRECT needs one; src may be
 * buf). Returns the slot (>= 0), or -ENOSPC (the cap or the disk is full),
 * -EIO (a failed or short write: nothing stays allocated), -EROFS (a fork
 * child's tier: backing_fork_child). */
int64_t backing_write(struct backing *b, const void *src, void *buf);

/* Write n pages (n * PAGE_SIZE bytes at buf, page-aligned, sealed in
 * place) to n slots, filled into slots[]: one write a run of consecutive
 * slots. Returns how many were written (the first ones; the others failed
 * and hold nothing), or -ENOSPC / -EIO / -EROFS when none was. */
int backing_write_batch(struct backing *b, void *buf, size_t n, int64_t *slots);

/* Read slot into dst (page-aligned, PAGE_SIZE) and verify it. 0, or -EIO
 * (a failed or short read, or a page that does not verify: dst holds
 * nothing usable). The slot stays allocated. */
int backing_read(struct backing *b, uint64_t slot, void *dst);

/* Read n (at most 64) consecutive slots from slot on into dst (n pages,
 * page-aligned) with one read, and verify each: readahead from the file.
 * Returns the pages that failed (bit k: slot + k; dst's page k holds
 * nothing usable), 0 when all verify. The slots stay allocated. */
uint64_t backing_read_run(struct backing *b, uint64_t slot, size_t n, void *dst);

/* Whether page (PAGE_SIZE bytes of clear text) is what slot holds, by the
 * 128-bit digest kept in memory for it (no read). For a page read back
 * from the slot and kept in memory with it (the swap cache's clean page):
 * unchanged, it can be dropped again without a write. */
bool backing_same(const struct backing *b, uint64_t slot, const void *page);

/* Whether the file is less than half full (of its cap): the kernel's
 * vm_swap_full() in reverse. Only then is a slot kept for a page read back. */
bool backing_room_to_keep(const struct backing *b);

/* Free a slot: reusable at once; its block stays on disk until
 * backing_trim() punches it out (a punch costs more than a read: never on
 * the fault path). */
void backing_free(struct backing *b, uint64_t slot);

/* Slots holding a page now (bd_stat's bd_count). */
uint64_t backing_in_use(const struct backing *b);

/* Slots freed and not yet punched out: the file's slack. */
uint64_t backing_unpunched(struct backing *b);

/* Punch freed blocks out of the file (FALLOC_FL_PUNCH_HOLE, runs of slots in
 * one call each), the highest first, until at most keep freed slots are left
 * on disk; returns the slots punched. For a background thread: it takes the
 * allocator's lock for an instant per 64 slots. */
uint64_t backing_trim(struct backing *b, uint64_t keep);

void backing_stats(struct backing *b, struct backing_stats *st);

/* Count the file's blocks in share from now on (NULL or n == 0: in none):
 * those on disk move from the counters it had to the new ones. */
void backing_set_share(struct backing *b, const struct backing_share *share);

/* Bytes the shared counters still take before the first refuses:
 * UINT64_MAX when the file counts in none. */
uint64_t backing_share_room(struct backing *b);

/* fork. Parent and child share the file (one open file description) and
 * inherit the same slots. backing_fork_pin (the parent, after a fork): the
 * slots in use now are never reused or punched by this process, since the
 * child may read them; freed here, they are kept (counted in pinned_free)
 * until backing_fork_release, when no process forked since can read them
 * any more: then they are free, and punched by the next trim; returns how
 * many. backing_fork_child (the child): pinned the same, the file counts in
 * no shared counter any more (its blocks are the parent's), and the child
 * writes nothing more to it, which the parent keeps allocating in
 * (backing_write returns -EROFS); the child reads what it inherited. */
void backing_fork_pin(struct backing *b);
uint64_t backing_fork_release(struct backing *b);
void backing_fork_child(struct backing *b);

/* The file's descriptor (tests read the file's bytes through it). */
int backing_fd(const struct backing *b);

/* Where the key lives (tests read its page's VmFlags in /proc/self/smaps). */
const void *backing_key_addr(const struct backing *b);

/* How pages are kept on disk, for a log line: "sealed (AES-256-GCM)",
 * "sealed (XChaCha20-Poly1305)" or "in the clear with a checksum". */
const char *backing_sealing(const struct backing *b);

/* Test hook: fail the next n writes as if the disk were full (ENOSPC), with
 * an I/O error, with a short write (half a page written), or each of the
 * three in turn. */
enum backing_fail { BACKING_FAIL_ENOSPC, BACKING_FAIL_EIO, BACKING_FAIL_SHORT, BACKING_FAIL_CYCLE };
void backing_inject_write_fail(struct backing *b, unsigned int n, enum backing_fail kind);

#endif
