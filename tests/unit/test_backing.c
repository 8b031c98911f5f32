/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_backing.c - the second tier's file (src/core/backing.c).
 *
 * In a directory on disk (TMPDIR when it is on one, else /var/tmp): pages
 * written read back byte for byte, sealed or only checksummed; nothing of a
 * page's clear text is in the file when sealing is on (and it is there when
 * off, which proves the search can find it); a block changed on disk reads
 * back as -EIO for that slot only, as does a block copied to another slot,
 * also inside a run of slots read with one read;
 * the lowest free slot is reused first, a trim punches out what is free and
 * not what was reused; a batch goes to consecutive slots past holes too
 * small for it, and to scattered ones only when no run is left; the cap and
 * injected ENOSPC, EIO and short write fail the write without keeping a slot; tmpfs and
 * a missing directory are refused with their reasons. The key is in a page
 * of its own left out of core dumps (VmFlags "dd") and locked (VmFlags "lo")
 * when mlock works here, locked again after munlockall, and a tier still
 * opens where mlock is refused (RLIMIT_MEMLOCK 0, no CAP_IPC_LOCK).
 * Two tiers counting in one share (a group's) stay within its cap together:
 * the write past it is refused and counted, a freed block still on disk is
 * reused, a punched or closed file's blocks leave the counters, a fork
 * child's inherited tier leaves its parent's counters alone, and every
 * tier, a fork child's too, has a key of its own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/prim.h"
#include "core/backing.h"
#include "test_check.h"

#define NPAGES 96
#define MARK "libzswap-backing-test-marker-"

#define RUN 24	/* pages read by one backing_read_run */

static unsigned char *page_buf, *scratch, *run_buf;

static void fill(unsigned char *p, unsigned int i)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL * (i + 1);

	for (size_t k = 0; k < ZS_PAGE_SIZE; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[k] = (unsigned char)('a' + x % 26);
	}
	snprintf((char *)p + 100, 64, MARK "%04u", i);
}

static const char *disk_dir(void)
{
	const char *t = getenv("TMPDIR");
	struct statfs s;

	if (t && statfs(t, &s) == 0 && s.f_type != 0x01021994)
		return t;
	return "/var/tmp";
}

/* The file's bytes, through a descriptor of our own (no O_DIRECT). */
static ssize_t file_bytes(struct backing *b, unsigned char *dst, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", backing_fd(b));
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, dst, len, 0);
	close(fd);
	return n;
}

static bool file_has(struct backing *b, const char *needle)
{
	size_t len = (NPAGES + 8) * ZS_PAGE_SIZE;
	unsigned char *all = prim_alloc(len);
	ssize_t n = file_bytes(b, all, len);
	bool found = n > 0 && memmem(all, (size_t)n, needle, strlen(needle)) != NULL;

	prim_free(all, len);
	return found;
}

static void corrupt(struct backing *b, uint64_t slot, size_t off)
{
	char path[64];
	unsigned char c;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", backing_fd(b));
	int fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &c, 1, (off_t)(slot * ZS_PAGE_SIZE + off)) != 1)
		return;
	c ^= 0x40;
	if (pwrite(fd, &c, 1, (off_t)(slot * ZS_PAGE_SIZE + off)) != 1)
		CHECK(0, "cannot corrupt the file");
	fsync(fd);
	close(fd);
}

/* Copy slot from's block over slot to's, as an attacker or a bad disk might. */
static void copy_block(struct backing *b, uint64_t from, uint64_t to)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", backing_fd(b));
	int fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, scratch, ZS_PAGE_SIZE, (off_t)(from * ZS_PAGE_SIZE)) != (ssize_t)ZS_PAGE_SIZE ||
	    pwrite(fd, scratch, ZS_PAGE_SIZE, (off_t)(to * ZS_PAGE_SIZE)) != (ssize_t)ZS_PAGE_SIZE)
		CHECK(0, "cannot copy a block of the file");
	fsync(fd);
	if (fd >= 0)
		close(fd);
}

/* Each way of keeping pages: sealed with AES-256-GCM (where the CPU runs
 * it, as libsodium says), with XChaCha20-Poly1305, or in the clear with a
 * checksum. */
static void round_trip(bool encrypt, bool xchacha)
{
	struct backing_config cfg = { .dir = disk_dir(), .max_bytes = 0, .encrypt = encrypt, .xchacha = xchacha };
	char why[256] = "";
	int64_t slots[NPAGES];
	struct backing_stats st;

	struct backing *b = backing_open(&cfg, why, sizeof(why));
	CHECK(b != NULL, "backing_open(%s): %s", cfg.dir, why);
	if (!b)
		return;
	const char *want = !encrypt ? "in the clear with a checksum"
			   : !xchacha && crypto_aead_aes256gcm_is_available() ? "sealed (AES-256-GCM)"
									       : "sealed (XChaCha20-Poly1305)";
	CHECK(strcmp(backing_sealing(b), want) == 0, "pages kept %s, expected %s", backing_sealing(b), want);
	for (unsigned int i = 0; i < NPAGES; i++) {
		fill(page_buf, i);
		slots[i] = backing_write(b, page_buf, scratch);
		CHECK(slots[i] == (int64_t)i, "write %u: slot %lld, expected the lowest free, %u", i,
		      (long long)slots[i], i);
	}
	backing_stats(b, &st);
	CHECK(st.bd_count == NPAGES && st.bd_writes == NPAGES, "bd_count %llu bd_writes %llu",
	      (unsigned long long)st.bd_count, (unsigned long long)st.bd_writes);
	CHECK(st.disk_bytes >= NPAGES * ZS_PAGE_SIZE, "the file holds %llu bytes on disk for %d pages",
	      (unsigned long long)st.disk_bytes, NPAGES);

	/* Sealed: no clear text in the file. Checksummed only: it is there. */
	bool has = file_has(b, MARK "0007");
	CHECK(has == !encrypt, "a page's marker is %s the file with encryption %s", has ? "in" : "not in",
	      encrypt ? "on" : "off");

	for (unsigned int i = 0; i < NPAGES; i++) {
		memset(scratch, 0, ZS_PAGE_SIZE);
		int rc = backing_read(b, (uint64_t)slots[i], scratch);
		fill(page_buf, i);
		CHECK(rc == 0 && memcmp(scratch, page_buf, ZS_PAGE_SIZE) == 0, "page %u did not read back (rc %d)", i,
		      rc);
	}

	/* A changed byte, and a block moved to another slot: -EIO there only. */
	corrupt(b, 10, 2000);
	CHECK(backing_read(b, 10, scratch) == -EIO, "a corrupted block read back");
	copy_block(b, 20, 21);
	CHECK(backing_read(b, 21, scratch) == -EIO, "a block copied to another slot read back");
	fill(page_buf, 20);
	CHECK(backing_read(b, 20, scratch) == 0 && memcmp(scratch, page_buf, ZS_PAGE_SIZE) == 0,
	      "the block next to a bad one no longer reads back");
	fill(page_buf, 22);
	CHECK(backing_read(b, 22, scratch) == 0 && memcmp(scratch, page_buf, ZS_PAGE_SIZE) == 0,
	      "the block after a bad one no longer reads back");
	/* A run read with one read (readahead): the bad blocks, and only
	 * they, are reported; the others read back. */
	uint64_t bad = backing_read_run(b, 8, RUN, run_buf);
	CHECK(bad == (1ULL << 2 | 1ULL << 13), "a run of %d from slot 8 reported %#llx, expected slots 10 and 21",
	      RUN, (unsigned long long)bad);
	for (unsigned int k = 0; k < RUN; k++) {
		if (bad >> k & 1)
			continue;
		fill(page_buf, 8 + k);
		CHECK(memcmp(run_buf + k * ZS_PAGE_SIZE, page_buf, ZS_PAGE_SIZE) == 0,
		      "slot %u of a run did not read back", 8 + k);
	}
	CHECK(backing_read_run(b, NPAGES - 2, 4, run_buf) == 0xc,
	      "a run past the written end did not fail its last two pages only");

	/* After a fork a slot freed here is kept (a child may read it)
	 * until the children are gone; then it is free again. */
	backing_fork_pin(b);
	backing_free(b, 30);
	backing_stats(b, &st);
	CHECK(st.pinned_free == 1, "pinned_free %llu after freeing a pinned slot", (unsigned long long)st.pinned_free);
	fill(page_buf, 2000);
	int64_t got = backing_write(b, page_buf, scratch);
	CHECK(got == NPAGES, "a slot kept for a fork child was reused (%lld)", (long long)got);
	backing_free(b, (uint64_t)got);
	CHECK(backing_fork_release(b) == 1, "the release did not free the one kept slot");
	backing_stats(b, &st);
	CHECK(st.pinned_free == 0, "pinned_free %llu after the release", (unsigned long long)st.pinned_free);
	CHECK(backing_write(b, page_buf, scratch) == 30, "the released slot was not reused first");
	fill(page_buf, 30);
	memcpy(scratch, page_buf, ZS_PAGE_SIZE);
	backing_free(b, 30);
	CHECK(backing_write(b, page_buf, scratch) == 30, "slot 30 was not taken back");

	/* Freed slots are punched; the lowest is reused first. */
	backing_free(b, 5);
	backing_free(b, 3);
	fill(page_buf, 1000);
	CHECK(backing_write(b, page_buf, scratch) == 3, "the lowest free slot was not reused");
	CHECK(backing_write(b, page_buf, scratch) == 5, "the next free slot was not reused");
	CHECK(backing_write(b, page_buf, scratch) == NPAGES, "a new slot was not taken at the end");
	/* A trim punches what is free, not what was reused. */
	backing_free(b, 40);
	CHECK(backing_unpunched(b) == 1, "%llu slots wait for a punch, expected 1",
	      (unsigned long long)backing_unpunched(b));
	CHECK(backing_trim(b, 0) == 1, "the trim did not punch the one free slot");
	fill(page_buf, 1000);
	CHECK(backing_read(b, 3, scratch) == 0 && memcmp(scratch, page_buf, ZS_PAGE_SIZE) == 0,
	      "a reused slot lost its page to a trim");
	for (unsigned int i = 0; i <= NPAGES; i++)
		if (i != 40)
			backing_free(b, i);
	CHECK(backing_unpunched(b) == NPAGES, "%llu slots wait for a punch, expected %d",
	      (unsigned long long)backing_unpunched(b), NPAGES);
	CHECK(backing_trim(b, 0) == NPAGES, "the trim did not punch every free slot");
	CHECK(backing_unpunched(b) == 0, "slots still wait for a punch after a trim");
	backing_stats(b, &st);
	CHECK(st.bd_count == 0, "bd_count %llu after freeing everything", (unsigned long long)st.bd_count);
	CHECK(st.disk_bytes < 8 * ZS_PAGE_SIZE, "%llu bytes stay on disk once every slot is freed",
	      (unsigned long long)st.disk_bytes);
	backing_close(b);
}

/* A sealed tier of cap pages with slots 0-15 written (one page each), or
 * NULL (a failed check). */
static struct backing *tier_of_16(size_t cap)
{
	struct backing_config cfg = { .dir = disk_dir(), .max_bytes = cap * ZS_PAGE_SIZE, .encrypt = true };
	char why[256] = "";
	struct backing *b = backing_open(&cfg, why, sizeof(why));

	CHECK(b != NULL, "backing_open: %s", why);
	if (!b)
		return NULL;
	fill(page_buf, 1);
	for (int i = 0; i < 16; i++)
		CHECK(backing_write(b, page_buf, scratch) == i, "write %d under the cap failed", i);
	return b;
}

static void limits(void)
{
	struct backing_stats st;
	struct backing *b = tier_of_16(16);

	if (!b)
		return;
	CHECK(backing_write(b, page_buf, scratch) == -ENOSPC, "a write past the cap did not fail with ENOSPC");
	backing_free(b, 7);
	backing_inject_write_fail(b, 1, BACKING_FAIL_ENOSPC);
	CHECK(backing_write(b, page_buf, scratch) == -ENOSPC, "an injected ENOSPC was not reported");
	backing_inject_write_fail(b, 1, BACKING_FAIL_EIO);
	CHECK(backing_write(b, page_buf, scratch) == -EIO, "an injected EIO was not reported");
	backing_inject_write_fail(b, 1, BACKING_FAIL_SHORT);
	CHECK(backing_write(b, page_buf, scratch) == -EIO, "an injected short write was not reported");
	CHECK(backing_write(b, page_buf, scratch) == 7, "a failed write kept its slot");
	backing_stats(b, &st);
	CHECK(st.bd_count == 16 && st.bd_write_fail == 4, "bd_count %llu, write failures %llu",
	      (unsigned long long)st.bd_count, (unsigned long long)st.bd_write_fail);
	backing_close(b);
}

/* A batch's slots: consecutive when a run of free slots is left. */
static void runs(void)
{
	int64_t slots[8];
	struct backing *b = tier_of_16(24);

	if (!b)
		return;
	for (uint64_t s = 0; s < 16; s += 2)
		backing_free(b, s);	/* holes of one slot: 0, 2, ..., 14 */
	for (unsigned int k = 0; k < 4; k++)
		fill(run_buf + k * ZS_PAGE_SIZE, 100 + k);
	CHECK(backing_write_batch(b, run_buf, 4, slots) == 4, "a batch of 4 was not written");
	for (unsigned int k = 0; k < 4; k++)
		CHECK(slots[k] == 16 + (int64_t)k, "batch page %u in slot %lld, expected %u (past the holes)", k,
		      (long long)slots[k], 16 + k);
	CHECK(backing_read_run(b, 16, 4, run_buf) == 0, "the batch did not read back as one run");
	for (unsigned int k = 0; k < 4; k++) {
		fill(scratch, 100 + k);
		CHECK(memcmp(run_buf + k * ZS_PAGE_SIZE, scratch, ZS_PAGE_SIZE) == 0, "batch page %u differs", k);
	}
	CHECK(backing_write(b, page_buf, scratch) == 0, "a single page did not take the lowest hole");
	/* 20 of 24 slots taken, 2..14 every other one free: no run of 8 is
	 * left, and the batch takes the holes. */
	for (unsigned int k = 0; k < 8; k++)
		fill(run_buf + k * ZS_PAGE_SIZE, 200 + k);
	CHECK(backing_write_batch(b, run_buf, 8, slots) == 8, "a batch with no run left was not written");
	CHECK(slots[0] == 2 && slots[1] == 4, "no run left: slots %lld, %lld, expected the holes 2, 4",
	      (long long)slots[0], (long long)slots[1]);
	for (unsigned int k = 0; k < 8; k++) {
		/* The batch was sealed in place: compare with the page as made. */
		CHECK(backing_read(b, (uint64_t)slots[k], run_buf) == 0, "slot %lld did not read back",
		      (long long)slots[k]);
		fill(scratch, 200 + k);
		CHECK(memcmp(run_buf, scratch, ZS_PAGE_SIZE) == 0, "page %u differs", k);
	}
	backing_close(b);
}

/* A trim told to keep k freed slots punches the highest first and leaves
 * the lowest k on disk, where the allocator takes its next slots. */
static void trim_keeps(void)
{
	struct backing_stats st;
	struct backing *b = tier_of_16(256);

	if (!b)
		return;
	for (int i = 16; i < 128; i++)
		CHECK(backing_write(b, page_buf, scratch) == i, "write %d failed", i);
	for (uint64_t s = 8; s < 128; s++)
		backing_free(b, s);
	backing_stats(b, &st);
	uint64_t before = st.disk_bytes;
	CHECK(backing_trim(b, 200) == 0, "a trim punched with fewer freed slots than it keeps");
	/* Words are punched whole, from the highest: 64..127, then 8..63. */
	CHECK(backing_trim(b, 60) == 64, "the trim did not punch the highest word alone");
	CHECK(backing_unpunched(b) == 56, "%llu freed slots left on disk, expected 56",
	      (unsigned long long)backing_unpunched(b));
	backing_stats(b, &st);
	CHECK(before - st.disk_bytes >= 60 * ZS_PAGE_SIZE && before - st.disk_bytes <= 64 * ZS_PAGE_SIZE,
	      "the trim freed %llu bytes on disk, expected those of 64 slots",
	      (unsigned long long)(before - st.disk_bytes));
	fill(page_buf, 300);
	CHECK(backing_write(b, page_buf, scratch) == 8, "the lowest freed slot was not reused");
	CHECK(backing_read(b, 8, scratch) == 0 && memcmp(scratch, page_buf, ZS_PAGE_SIZE) == 0,
	      "a page written to an unpunched slot did not read back");
	CHECK(backing_trim(b, 0) == 55, "the last trim did not punch the 55 freed slots left");
	backing_close(b);
}

static void refusals(void)
{
	struct backing_config cfg = { .dir = "/dev/shm", .encrypt = true };
	char why[256] = "";
	struct statfs s;

	if (statfs("/dev/shm", &s) == 0 && s.f_type == 0x01021994) {
		errno = 0;
		CHECK(backing_open(&cfg, why, sizeof(why)) == NULL && errno == EXDEV, "tmpfs was not refused");
		CHECK(strstr(why, "tmpfs") != NULL, "the reason does not name tmpfs: %s", why);
	}
	cfg.dir = "/nonexistent/libzswap";
	errno = 0;
	CHECK(backing_open(&cfg, why, sizeof(why)) == NULL && errno == ENOENT, "a missing directory was not refused");
}

/* The VmFlags of the mapping holding addr, from /proc/self/smaps, with a
 * space on each side of every flag; "" if not found. */
static void vm_flags(const void *addr, char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && strncmp(line, "VmFlags:", 8) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, cap, "%s ", line + 8);
			break;
		}
	}
	fclose(f);
}

static bool has_flag(const char *flags, const char *flag)
{
	char want[8];

	snprintf(want, sizeof(want), " %s ", flag);
	return strstr(flags, want) != NULL;
}

/* Whether this process may lock a page now. */
static bool can_mlock(void)
{
	void *p = prim_alloc(ZS_PAGE_SIZE);
	bool ok = p && mlock(p, ZS_PAGE_SIZE) == 0;

	prim_free(p, ZS_PAGE_SIZE);
	return ok;
}

/* A tier opened, and the VmFlags of its key's page in flags; NULL if it
 * could not be opened (a failed check). */
static struct backing *key_tier(char *flags, size_t cap)
{
	struct backing_config cfg = { .dir = disk_dir(), .max_bytes = 16 * ZS_PAGE_SIZE, .encrypt = true };
	char why[256] = "";
	struct backing *b = backing_open(&cfg, why, sizeof(why));

	CHECK(b != NULL, "backing_open: %s", why);
	if (b) {
		vm_flags(backing_key_addr(b), flags, cap);
		CHECK(flags[0], "the key's mapping is not in /proc/self/smaps");
	}
	return b;
}

static void key_page(void)
{
	char flags[256];
	struct backing *b = key_tier(flags, sizeof(flags));

	if (!b)
		return;
	CHECK(has_flag(flags, "dd"), "the key's page is not left out of core dumps (VmFlags%s)", flags);
	if (can_mlock()) {
		CHECK(has_flag(flags, "lo"), "the key's page is not locked (VmFlags%s)", flags);
		munlockall();
		prim_relock_secrets();
		vm_flags(backing_key_addr(b), flags, sizeof(flags));
		CHECK(has_flag(flags, "lo") && has_flag(flags, "dd"),
		      "the key's page is not locked again after munlockall (VmFlags%s)", flags);
	}
	backing_close(b);
}

static void key_page_child(void)
{
	char flags[256];
	struct backing *b = key_tier(flags, sizeof(flags));

	if (!b)
		return;
	CHECK(has_flag(flags, "dd") && !has_flag(flags, "lo"),
	      "with mlock refused the key's page is not just left out of core dumps (VmFlags%s)", flags);
	backing_close(b);
}

/* Where mlock is refused (no CAP_IPC_LOCK, RLIMIT_MEMLOCK 0) a tier still
 * opens, its key out of core dumps. In a child: the limits stay there. */
static void key_page_unlocked(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2];
		struct rlimit rl = { 0, 0 };
		if (syscall(SYS_capget, &h, d) == 0) {
			d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
			syscall(SYS_capset, &h, d);
		}
		setrlimit(RLIMIT_MEMLOCK, &rl);
		if (can_mlock()) {
			fprintf(stderr, "test_backing: mlock still works without CAP_IPC_LOCK: case not run\n");
			_exit(0);
		}
		key_page_child();
		_exit(failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a tier with mlock refused failed (see above)");
}

/* The share's counters, where a fork child's changes would show. */
struct share_mem {
	_Atomic uint64_t total, mine[2], events;
};

static struct backing *share_tier(struct share_mem *m, unsigned int i, uint64_t cap)
{
	struct backing_config cfg = { .dir = disk_dir(), .max_bytes = 16 * ZS_PAGE_SIZE, .encrypt = true };
	struct backing_share sh = { .n = 1, .g = { { &m->total, &m->mine[i], &m->events, cap } } };
	char why[256] = "";
	struct backing *b = backing_open(&cfg, why, sizeof(why));

	CHECK(b != NULL, "backing_open: %s", why);
	if (b)
		backing_set_share(b, &sh);
	return b;
}

static void shared_fork_child(struct share_mem *m, struct backing *b, int fd)
{
	struct backing_config cfg = { .dir = disk_dir(), .max_bytes = 16 * ZS_PAGE_SIZE, .encrypt = true };
	char why[256];

	backing_fork_child(b);
	backing_close(b);	/* the parent's blocks: not the child's to uncount */
	struct backing *own = backing_open(&cfg, why, sizeof(why));
	if (own && write(fd, backing_key_addr(own), 32) != 32)
		_exit(2);
	_exit(own ? 0 : 1);
}

static void shared_cap(void)
{
	struct share_mem *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const uint64_t P = ZS_PAGE_SIZE;
	int64_t rc;

	CHECK(m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	struct backing *a = share_tier(m, 0, 10 * P), *b = share_tier(m, 1, 10 * P);
	if (!a || !b)
		return;
	fill(page_buf, 1);
	for (int k = 0; k < 6; k++)
		CHECK(backing_write(a, page_buf, scratch) == k, "write %d to the first tier", k);
	for (int k = 0; k < 4; k++)
		CHECK(backing_write(b, page_buf, scratch) == k, "write %d to the second tier", k);
	rc = backing_write(b, page_buf, scratch);
	CHECK(rc == -ENOSPC, "the write past the shared cap returned %lld, not -ENOSPC", (long long)rc);
	CHECK(m->events == 1 && m->total == 10 * P && m->mine[0] == 6 * P && m->mine[1] == 4 * P,
	      "after 6 + 4 pages and a refusal: events %llu, total %llu, mine %llu + %llu",
	      (unsigned long long)m->events, (unsigned long long)m->total, (unsigned long long)m->mine[0],
	      (unsigned long long)m->mine[1]);
	CHECK(backing_share_room(b) == 0, "the share has room at its cap");
	/* A freed slot whose block is on disk still: reused, nothing new. */
	backing_free(a, 0);
	CHECK(backing_write(a, page_buf, scratch) == 0 && m->total == 10 * P,
	      "a freed block still on disk was not reused at the cap (total %llu)", (unsigned long long)m->total);
	/* Punched: the other tier's room. */
	backing_free(a, 1);
	backing_free(a, 2);
	CHECK(backing_trim(a, 0) == 2 && m->total == 8 * P && m->mine[0] == 4 * P,
	      "two punched blocks did not leave the counters (total %llu)", (unsigned long long)m->total);
	CHECK(backing_write(b, page_buf, scratch) == 4 && m->total == 9 * P, "the room punched was not the other's");
	CHECK(memcmp(backing_key_addr(a), backing_key_addr(b), 32) != 0, "two tiers share a key");

	/* A fork child: its inherited tier counts in nothing of the parent's,
	 * and the tier it opens has a key of its own. */
	int p[2];
	unsigned char key[32];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	if (pid == 0)
		shared_fork_child(m, a, p[1]);
	close(p[1]);
	int st;
	CHECK(read(p[0], key, sizeof(key)) == (ssize_t)sizeof(key) && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "the fork child could not open a tier of its own");
	close(p[0]);
	CHECK(memcmp(key, backing_key_addr(a), 32) != 0, "a fork child's tier has its parent's key");
	CHECK(m->total == 9 * P && m->mine[0] == 4 * P,
	      "the child's close of its inherited tier changed the parent's counters (total %llu, mine %llu)",
	      (unsigned long long)m->total, (unsigned long long)m->mine[0]);
	/* Closed: its blocks leave the counters. */
	backing_close(b);
	CHECK(m->total == 4 * P && m->mine[1] == 0, "a closed tier's blocks stayed counted (total %llu)",
	      (unsigned long long)m->total);
	backing_close(a);
	CHECK(m->total == 0 && m->mine[0] == 0, "the last tier closed left %llu bytes counted",
	      (unsigned long long)m->total);
	munmap(m, sizeof(*m));
}

int main(void)
{
	page_buf = prim_alloc(ZS_PAGE_SIZE);
	scratch = prim_alloc(ZS_PAGE_SIZE);
	run_buf = prim_alloc(RUN * ZS_PAGE_SIZE);
	if (sodium_init() < 0)
		CHECK(0, "libsodium could not start");
	round_trip(true, false);
	round_trip(true, true);
	round_trip(false, false);
	limits();
	runs();
	trim_keeps();
	refusals();
	key_page();
	key_page_unlocked();
	shared_cap();
	if (failures) {
		fprintf(stderr, "test_backing: %d check(s) failed\n", failures);
		return 1;
	}
	printf("test_backing: ok\n");
	return 0;
}
