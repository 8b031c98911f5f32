/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_vmarace.c - the program changes its mappings while another thread
 * evicts the same memory over and over.
 *
 * An evictor thread pages a fixed address range out in a loop, for the whole
 * case (zswap_pageout(), the engine's own eviction: madvise(MADV_PAGEOUT)
 * would also hand what is left to the kernel, which swaps it out when the
 * machine has swap, and the counters would no longer say what the engine
 * did; without the library, madvise. Errors are ignored: parts of the range
 * may be unmapped or PROT_NONE at any moment). The main thread changes the mappings
 * under it; every page holds a version stamp (header: magic, page index,
 * version; body derived from them) and is checked after every step:
 *   move       mremap(MREMAP_FIXED) of a 512-page mapping back and forth
 *              between two places, a third of it resident, the rest evicted;
 *   growmove   the same, growing by 256 pages on the way out and shrinking
 *              back on the way home (the grown tail reads zeros, then holds
 *              its own stamps; the shrink unmaps it);
 *   dontunmap  mremap(MREMAP_DONTUNMAP): the data moves, the old range stays
 *              mapped and reads zeros; the next move lands on top of it;
 *   remap      munmap + mmap at the same address (interposed calls, MAP_FIXED
 *              straight over the old mapping, and raw system calls the
 *              library never sees): the new mapping reads zeros, never a page
 *              of the old one, and keeps what is written to it;
 *   dontneed   MADV_DONTNEED of a run of evicted pages while a reader thread
 *              faults the same pages back: the reader sees each page intact
 *              or zero, and once madvise returns the run reads zeros (an
 *              eviction that slipped in before the kernel's zap would bring
 *              the old contents back). In turn through the interposed
 *              madvise, the raw system call, and MADV_FREE (old contents or
 *              zeros); after each, once rewritten, the run is evicted again;
 *   fork       fork() again and again while writer threads rewrite pages, a
 *              reader faults evicted pages back and the evictor runs: every
 *              child sees intact data (the static mapping exactly, the
 *              written one with whole headers) and, managed, evicts and
 *              refaults its own copy; the parent loses nothing.
 * Each step that depends on eviction first waits for one whole eviction
 * round that started after it (bounded by progress, never by time). Under
 * the library the counters must show that evictions and refaults happened.
 *
 * stdout: one line per case, the same with and without the library.
 * usage: prog_vmarace [--inactive-ok] CASE...
 */
#include "prog_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define VR_MAGIC 0x7a7377766d617261ULL	/* "zswvmara" */

struct vr_hdr {
	uint64_t magic;
	uint64_t index;
	uint64_t version;
};

#define VR_BODY_OFF sizeof(struct vr_hdr)
#define VR_BODY_LEN (PC_PAGE - VR_BODY_OFF)

/* The body of (index, version): runs of repeated words, so it compresses. */
static void vr_body(unsigned char *body, uint64_t index, uint64_t version)
{
	uint64_t base = pc_mix(index << 24 ^ version);

	for (size_t off = 0, run = 0; off + 8 <= VR_BODY_LEN; off += 8, run++) {
		uint64_t w = base + (run / 16) * 0x1000193ULL;
		memcpy(body + off, &w, 8);
	}
}

/* Body first, header last. */
static void vr_stamp(char *p, uint64_t index, uint64_t version)
{
	unsigned char body[VR_BODY_LEN];
	struct vr_hdr h = { VR_MAGIC, index, version };

	vr_body(body, index, version);
	memcpy(p + VR_BODY_OFF, body, VR_BODY_LEN);
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(p, &h, sizeof(h));
}

/* NULL if p holds exactly (index, version), else why not. With header_only,
 * only the header is checked (a page caught mid-write by fork). */
static const char *vr_check(const char *p, uint64_t index, uint64_t version, bool header_only)
{
	static __thread char why[160];
	unsigned char body[VR_BODY_LEN];
	struct vr_hdr h;

	memcpy(&h, p, sizeof(h));
	if (h.magic != VR_MAGIC) {
		snprintf(why, sizeof(why), "bad magic %016" PRIx64 "%s", h.magic,
			 pc_page_is_zero(p) ? " (the page reads all zeros)" : "");
		return why;
	}
	if (h.index != index) {
		snprintf(why, sizeof(why), "holds page %" PRIu64 " (another page's data)", h.index);
		return why;
	}
	if (header_only)
		return NULL;
	if (h.version != version) {
		snprintf(why, sizeof(why), "version %" PRIu64 ", expected %" PRIu64 " (%s)", h.version, version,
			 h.version < version ? "stale: a write was lost or old data came back" : "from the future");
		return why;
	}
	vr_body(body, index, version);
	if (memcmp(p + VR_BODY_OFF, body, VR_BODY_LEN) != 0) {
		snprintf(why, sizeof(why), "header is version %" PRIu64 " but the body is not", version);
		return why;
	}
	return NULL;
}

static void vr_expect(const char *what, const char *base, size_t first, size_t n, const uint64_t *ver,
		      uint64_t index0)
{
	for (size_t i = first; i < first + n; i++) {
		const char *why = vr_check(base + i * PC_PAGE, index0 + i, ver[i], false);
		if (why)
			pc_fail("%s: page %zu (%p): %s", what, i, (const void *)(base + i * PC_PAGE), why);
	}
}

static void vr_expect_zero(const char *what, const char *base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!pc_page_is_zero(base + i * PC_PAGE)) {
			struct vr_hdr h;
			memcpy(&h, base + i * PC_PAGE, sizeof(h));
			if (h.magic == VR_MAGIC)
				pc_fail("%s: page %zu (%p) should read zeros but holds stamped data (page %" PRIu64
					", version %" PRIu64 ")", what, i, (const void *)(base + i * PC_PAGE), h.index, h.version);
			pc_fail("%s: page %zu (%p) should read zeros but holds data", what, i,
				(const void *)(base + i * PC_PAGE));
		}
}

/* Read one byte of every third page: a mix of resident and evicted pages. */
static void vr_touch_some(const char *base, size_t n)
{
	for (size_t i = 0; i < n; i += 3)
		(void)*(volatile const char *)(base + i * PC_PAGE + 9);
}

/* ---- the evictor --------------------------------------------------------- */

static struct {
	char *base[2];
	size_t len[2];
	atomic_ulong started, done;
	atomic_int stop;
	pthread_t tid;
} ev;

static void *vr_evictor(void *arg)
{
	(void)arg;
	while (!atomic_load(&ev.stop)) {
		unsigned long r = atomic_fetch_add(&ev.started, 1) + 1;
		for (int k = 0; k < 2; k++)
			if (ev.base[k])
				(void)pc_pageout_api(ev.base[k], ev.len[k]);
		atomic_store(&ev.done, r);
	}
	return NULL;
}

static void vr_evictor_start(char *base, size_t len, char *base2, size_t len2)
{
	ev.base[0] = base;
	ev.len[0] = len;
	ev.base[1] = base2;
	ev.len[1] = len2;
	atomic_store(&ev.stop, 0);
	atomic_store(&ev.started, 0);
	atomic_store(&ev.done, 0);
	if (pthread_create(&ev.tid, NULL, vr_evictor, NULL) != 0)
		pc_fail("pthread_create: %s", strerror(errno));
}

static unsigned long vr_evictor_stop(void)
{
	atomic_store(&ev.stop, 1);
	pthread_join(ev.tid, NULL);
	return atomic_load(&ev.done);
}

/* Wait until one whole eviction round that started after this call is done. */
static void vr_wait_round(void)
{
	unsigned long target = atomic_load(&ev.started) + 1;

	while (atomic_load(&ev.done) < target)
		sched_yield();
}

/* Under the library, after a whole eviction round in which the program
 * touched nothing of [base, n pages): nothing of it stays resident. A page
 * may come back once by itself: a fault message the handlers read late (its
 * thread already woken by the fill of a neighbour) is served after the
 * eviction and loads the page again. So up to three more whole rounds are
 * allowed before a page counts as one eviction never takes (ZAP left set, a
 * slot stuck in flight). Says what it saw if so. */
static void vr_expect_evicted(const char *what, const char *base, size_t n)
{
	if (!pc_managed())
		return;
	size_t left = pc_count_resident(base, n);
	for (int round = 0; left && round < 3; round++) {
		vr_wait_round();
		left = pc_count_resident(base, n);
	}
	if (!left)
		return;
	struct zswap_stats st;
	pc_stats(&st);
	pc_info("%s: %zu of %zu pages of %p still resident after a whole eviction round (evict_skipped_pages %" PRIu64
		"); the mappings around it:", what, left, n, (const void *)base, st.evict_skipped_pages);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f)) {
		uintptr_t a, b;
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &a, &b) == 2 && b + 64 * PC_MIB > (uintptr_t)base &&
		    a < (uintptr_t)base + n * PC_PAGE + 64 * PC_MIB)
			fprintf(stderr, "  %s", line);
	}
	if (f)
		fclose(f);
	pc_fail("%s: eviction left %zu pages resident", what, left);
}

/* Under the library: evictions and refaults did happen during the case. */
static void vr_expect_activity(const char *what, const struct zswap_stats *a, uint64_t min_evicted,
			       uint64_t min_refaults)
{
	struct zswap_stats b;

	if (!pc_managed())
		return;
	pc_stats(&b);
	uint64_t evd = b.evicted_pages - a->evicted_pages, rf = b.refaults - a->refaults;
	pc_info("%s: evicted_pages +%" PRIu64 ", refaults +%" PRIu64 ", evict_skipped_pages +%" PRIu64
		", events unmap +%" PRIu64 " remap +%" PRIu64 " remove +%" PRIu64 ", %lu eviction rounds", what, evd, rf,
		b.evict_skipped_pages - a->evict_skipped_pages, b.events_unmap - a->events_unmap,
		b.events_remap - a->events_remap, b.events_remove - a->events_remove, atomic_load(&ev.done));
	PC_CHECK(evd >= min_evicted, "%s: evicted_pages grew by %" PRIu64 ", expected at least %" PRIu64, what, evd,
		 min_evicted);
	PC_CHECK(rf >= min_refaults, "%s: refaults grew by %" PRIu64 ", expected at least %" PRIu64, what, rf,
		 min_refaults);
}

static void *vr_map_at(void *addr, size_t len, int prot, int extra)
{
	void *p = mmap(addr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);

	if (p == MAP_FAILED)
		pc_fail("mmap %p %zu: %s", addr, len, strerror(errno));
	if (addr && (extra & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && p != addr)
		pc_fail("mmap at %p returned %p (the kernel ignored MAP_FIXED_NOREPLACE?)", addr, p);
	return p;
}

/* ---- mremap: move, grow-move, DONTUNMAP ---------------------------------- */

enum { VR_MOVE, VR_GROWMOVE, VR_DONTUNMAP };

static void case_mremap(int kind, const char *name)
{
	const size_t n = 512, tail = kind == VR_GROWMOVE ? 256 : 0, iters = 24;
	const size_t slot = n + tail + 16;	/* pages per place, with a gap */
	uint64_t *ver = calloc(n + tail, sizeof(*ver));
	struct zswap_stats a;
	char what[96];

	if (!ver)
		pc_fail("calloc");
	/* Two places inside one reservation, so nothing else lands there. */
	char *res = vr_map_at(NULL, 2 * slot * PC_PAGE, PROT_NONE, 0);
	char *place[2] = { res, res + slot * PC_PAGE };
	char *cur = vr_map_at(place[0], n * PC_PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);

	for (size_t i = 0; i < n; i++)
		vr_stamp(cur + i * PC_PAGE, i, ver[i] = 1);
	pc_stats(&a);
	vr_evictor_start(res, 2 * slot * PC_PAGE, NULL, 0);
	for (size_t it = 0; it < iters; it++) {
		char *to = place[(it + 1) % 2];
		bool grown = kind == VR_GROWMOVE && it % 2 == 1;	/* cur holds n + tail pages */
		size_t cur_n = grown ? n + tail : n, new_n = n;

		snprintf(what, sizeof(what), "%s %zu: before the move", name, it);
		vr_expect(what, cur, 0, cur_n, ver, 0);
		for (size_t i = it % 2; i < cur_n; i += 2)
			vr_stamp(cur + i * PC_PAGE, i, ++ver[i]);
		vr_wait_round();
		snprintf(what, sizeof(what), "%s %zu: before the move", name, it);
		vr_expect_evicted(what, cur, cur_n);
		vr_touch_some(cur, cur_n);

		char *r;
		if (kind == VR_MOVE) {
			r = mremap(cur, n * PC_PAGE, n * PC_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		} else if (kind == VR_GROWMOVE) {
			new_n = grown ? n : n + tail;
			r = mremap(cur, cur_n * PC_PAGE, new_n * PC_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		} else {
			r = mremap(cur, n * PC_PAGE, n * PC_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to);
		}
		if (r == MAP_FAILED)
			pc_fail("%s %zu: mremap %p -> %p: %s", name, it, (void *)cur, (void *)to, strerror(errno));
		PC_CHECK(r == to, "%s %zu: mremap returned %p, asked %p", name, it, (void *)r, (void *)to);
		if (kind == VR_DONTUNMAP) {
			snprintf(what, sizeof(what), "%s %zu: the old range after MREMAP_DONTUNMAP", name, it);
			vr_expect_zero(what, cur, n);
		} else {
			/* Keep the reservation whole: the old place becomes PROT_NONE again. */
			vr_map_at(cur, cur_n * PC_PAGE, PROT_NONE, MAP_FIXED_NOREPLACE);
		}
		snprintf(what, sizeof(what), "%s %zu: after the move", name, it);
		vr_expect(what, r, 0, n, ver, 0);
		if (new_n > n) {
			snprintf(what, sizeof(what), "%s %zu: the grown tail", name, it);
			vr_expect_zero(what, r + n * PC_PAGE, new_n - n);
			for (size_t i = n; i < new_n; i++)
				vr_stamp(r + i * PC_PAGE, i, ver[i] = 1000 + it);
		}
		cur = r;
	}
	vr_evictor_stop();
	snprintf(what, sizeof(what), "%s: at the end", name);
	vr_expect(what, cur, 0, n, ver, 0);
	vr_expect_activity(name, &a, iters * n / 2, iters * n / 4);
	if (munmap(res, 2 * slot * PC_PAGE) != 0)
		pc_fail("munmap: %s", strerror(errno));
	pc_expect_stored(name, 0);
	free(ver);
	printf("%s ok: %zu pages, %zu moves\n", name, n, iters);
}

/* ---- munmap + mmap at the same address ----------------------------------- */

static void case_remap(void)
{
	const size_t n = 512, iters = 36;
	uint64_t *ver = calloc(n, sizeof(*ver));
	struct zswap_stats a;
	char what[96];

	if (!ver)
		pc_fail("calloc");
	char *p = pc_map(n * PC_PAGE);
	for (size_t i = 0; i < n; i++)
		vr_stamp(p + i * PC_PAGE, i, ver[i] = 1);
	pc_stats(&a);
	vr_evictor_start(p, n * PC_PAGE, NULL, 0);
	for (size_t it = 0; it < iters; it++) {
		snprintf(what, sizeof(what), "remap %zu: before", it);
		vr_expect(what, p, 0, n, ver, 0);
		vr_wait_round();
		snprintf(what, sizeof(what), "remap %zu", it);
		vr_expect_evicted(what, p, n);
		vr_touch_some(p, n);
		switch (it % 3) {
		case 0:
			if (munmap(p, n * PC_PAGE) != 0)
				pc_fail("munmap: %s", strerror(errno));
			vr_map_at(p, n * PC_PAGE, PROT_READ | PROT_WRITE, MAP_FIXED_NOREPLACE);
			break;
		case 1:
			vr_map_at(p, n * PC_PAGE, PROT_READ | PROT_WRITE, MAP_FIXED);
			break;
		default: {
			/* Raw system calls: the library sees only their events. */
			long r = syscall(SYS_munmap, p, n * PC_PAGE);
			if (r != 0)
				pc_fail("SYS_munmap: %s", strerror(errno));
			r = syscall(SYS_mmap, p, n * PC_PAGE, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (r == -1 || (char *)r != p)
				pc_fail("SYS_mmap at %p: %s", (void *)p, r == -1 ? strerror(errno) : "another address");
			break;
		}
		}
		snprintf(what, sizeof(what), "remap %zu: the new mapping (%s)", it,
			 it % 3 == 0 ? "munmap + mmap" : it % 3 == 1 ? "MAP_FIXED over the old one" : "raw syscalls");
		vr_expect_zero(what, p, n);
		for (size_t i = 0; i < n; i++)
			vr_stamp(p + i * PC_PAGE, i, ver[i] = it + 2);
	}
	vr_wait_round();
	vr_evictor_stop();
	vr_expect("remap: at the end", p, 0, n, ver, 0);
	vr_expect_activity("remap", &a, iters * n / 2, iters * n / 4);
	munmap(p, n * PC_PAGE);
	pc_expect_stored("remap", 0);
	free(ver);
	printf("remap ok: %zu pages, %zu remaps\n", n, iters);
}

/* ---- MADV_DONTNEED racing eviction and refault --------------------------- */

static struct {
	char *base;
	const uint64_t *ver;
	atomic_size_t run_start, run_len;	/* run_len 0: stay out */
	atomic_int phase;			/* 1 read the run, 0 stop, -1 quit */
	atomic_ulong stop_req, stop_ack;	/* the reader is out of the run once ack == req */
	atomic_ulong reads;
	atomic_ulong zeros, intact;
} dn;

static void *dn_reader(void *arg)
{
	(void)arg;
	for (;;) {
		int ph = atomic_load(&dn.phase);
		if (ph < 0)
			break;
		if (ph == 0) {
			/* Out of any run: tell the worker it may write. */
			atomic_store(&dn.stop_ack, atomic_load(&dn.stop_req));
			sched_yield();
			continue;
		}
		size_t s = atomic_load(&dn.run_start), len = atomic_load(&dn.run_len);
		for (size_t i = s; i < s + len && atomic_load(&dn.phase) == 1; i++) {
			const char *pg = dn.base + i * PC_PAGE;
			/* The page is either intact (the version the worker last
			 * wrote: nothing writes during the phase) or discarded. */
			if (pc_page_is_zero(pg)) {
				atomic_fetch_add(&dn.zeros, 1);
			} else {
				const char *why = vr_check(pg, i, dn.ver[i], false);
				if (why) {
					/* The page may have been zeroed under us between the
					 * two reads: look once more. */
					if (!pc_page_is_zero(pg))
						pc_fail("dontneed: the reader found page %zu (%p): %s", i, (const void *)pg, why);
					atomic_fetch_add(&dn.zeros, 1);
				} else {
					atomic_fetch_add(&dn.intact, 1);
				}
			}
			atomic_fetch_add(&dn.reads, 1);
		}
	}
	return NULL;
}

static void case_dontneed(void)
{
	const size_t n = 512, run = 32, iters = 200;
	uint64_t *ver = calloc(n, sizeof(*ver)), rng = 99;
	struct zswap_stats a;
	pthread_t rd;
	char what[96];

	if (!ver)
		pc_fail("calloc");
	char *p = pc_map(n * PC_PAGE);
	for (size_t i = 0; i < n; i++)
		vr_stamp(p + i * PC_PAGE, i, ver[i] = 1);
	dn.base = p;
	dn.ver = ver;
	pc_stats(&a);
	vr_evictor_start(p, n * PC_PAGE, NULL, 0);
	if (pthread_create(&rd, NULL, dn_reader, NULL) != 0)
		pc_fail("pthread_create");
	for (size_t it = 0; it < iters; it++) {
		size_t s = (size_t)(pc_rand(&rng) % (n / run)) * run;

		/* Everything is evicted after a whole round (the reader is out):
		 * whatever an earlier madvise left marked was cleared. */
		vr_wait_round();
		snprintf(what, sizeof(what), "dontneed %zu: a whole round after the last rewrite", it);
		vr_expect_evicted(what, p, n);
		atomic_store(&dn.run_start, s);
		atomic_store(&dn.run_len, run);
		unsigned long r0 = atomic_load(&dn.reads);
		atomic_store(&dn.phase, 1);
		/* Let the reader fault a few pages of the run back first. */
		while (atomic_load(&dn.reads) < r0 + (it % 8))
			sched_yield();
		/* The interposed madvise, the raw system call (as glibc makes
		 * it: the library sees only its event), and MADV_FREE. */
		int variant = (int)(it % 3);
		long rc = variant == 1 ? syscall(SYS_madvise, p + s * PC_PAGE, run * PC_PAGE, MADV_DONTNEED)
				       : madvise(p + s * PC_PAGE, run * PC_PAGE, variant == 2 ? MADV_FREE : MADV_DONTNEED);
		if (rc != 0)
			pc_fail("madvise: %s", strerror(errno));
		snprintf(what, sizeof(what), "dontneed %zu: pages %zu-%zu after %s", it, s, s + run - 1,
			 variant == 0 ? "MADV_DONTNEED" : variant == 1 ? "a raw MADV_DONTNEED" : "MADV_FREE");
		if (variant < 2) {
			/* Once madvise returned, the run reads zeros (whatever the
			 * evictor and the reader did meanwhile). */
			vr_expect_zero(what, p + s * PC_PAGE, run);
		} else {
			/* MADV_FREE: each page is its old self or zeros. */
			for (size_t i = s; i < s + run; i++) {
				const char *why = vr_check(p + i * PC_PAGE, i, ver[i], false);
				if (why && !pc_page_is_zero(p + i * PC_PAGE))
					pc_fail("%s: page %zu: %s", what, i, why);
			}
		}
		atomic_store(&dn.phase, 0);
		unsigned long req = atomic_fetch_add(&dn.stop_req, 1) + 1;
		while (atomic_load(&dn.stop_ack) < req)
			sched_yield();
		for (size_t i = s; i < s + run; i++)
			vr_stamp(p + i * PC_PAGE, i, ++ver[i]);
		snprintf(what, sizeof(what), "dontneed %zu: the run rewritten", it);
		vr_expect(what, p, s, run, ver, 0);
	}
	atomic_store(&dn.phase, -1);
	pthread_join(rd, NULL);
	vr_wait_round();
	vr_evictor_stop();
	vr_expect("dontneed: at the end", p, 0, n, ver, 0);
	pc_info("dontneed: the reader saw %lu intact and %lu discarded pages", atomic_load(&dn.intact),
		atomic_load(&dn.zeros));
	vr_expect_activity("dontneed", &a, iters * run / 2, iters);
	munmap(p, n * PC_PAGE);
	pc_expect_stored("dontneed", 0);
	free(ver);
	printf("dontneed ok: %zu runs of %zu pages\n", iters, run);
}

/* ---- fork while threads evict and fault ---------------------------------- */

#define FK_N 1024UL
#define FK_WRITERS 2

static struct {
	char *stat, *wr;		/* static data; pages rewritten by the writers */
	uint64_t ver[FK_N];		/* the writers' last versions (page i: writer i % FK_WRITERS) */
	atomic_int stop;
	atomic_ulong passes, reads;
} fk;

static void *fk_writer(void *arg)
{
	size_t id = (size_t)(uintptr_t)arg;

	while (!atomic_load(&fk.stop)) {
		for (size_t i = id; i < FK_N && !atomic_load(&fk.stop); i += FK_WRITERS) {
			const char *why = vr_check(fk.wr + i * PC_PAGE, i, fk.ver[i], false);
			if (why)
				pc_fail("fork: writer %zu: page %zu: %s", id, i, why);
			vr_stamp(fk.wr + i * PC_PAGE, i, ++fk.ver[i]);
		}
		atomic_fetch_add(&fk.passes, 1);
	}
	return NULL;
}

static void *fk_reader(void *arg)
{
	uint64_t rng = 5;

	(void)arg;
	while (!atomic_load(&fk.stop)) {
		size_t i = (size_t)(pc_rand(&rng) % FK_N);
		const char *why = vr_check(fk.stat + i * PC_PAGE, i, 7, false);
		if (why)
			pc_fail("fork: the reader: static page %zu: %s", i, why);
		atomic_fetch_add(&fk.reads, 1);
	}
	return NULL;
}

/* Say what the child found (no stdio in a child of a threaded parent). */
static int fk_child_fail(int code, const char *what, size_t i, const char *why)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "prog_vmarace: fork: the child: %s page %zu: %s\n", what, i, why);
	pc_write_str(2, msg);
	return code;
}

/* In the child: no stdio, no exit handlers; the exit status says it all. */
static int fk_child(void)
{
	const char *why;

	if (pc_managed() && !pc.active())
		return 3;	/* the child keeps a libzswap of its own (src/engine/fork.h) */
	for (size_t i = 0; i < FK_N; i++) {
		if ((why = vr_check(fk.stat + i * PC_PAGE, i, 7, false)))
			return fk_child_fail(4, "static", i, why);
		/* A writer may have been caught between body and header: the
		 * header is whole, and it is this page's. */
		if ((why = vr_check(fk.wr + i * PC_PAGE, i, 0, true)))
			return fk_child_fail(5, "rewritten", i, why);
	}
	/* The child's own writes stick. */
	for (size_t i = 0; i < FK_N; i += 7)
		vr_stamp(fk.stat + i * PC_PAGE, i, 8);
	for (size_t i = 0; i < FK_N; i += 7)
		if (vr_check(fk.stat + i * PC_PAGE, i, 8, false))
			return 6;
	/* Its own engine evicts and refaults them. */
	if (pc_managed()) {
		pc_pageout(fk.stat, FK_N * PC_PAGE);
		for (size_t i = 0; i < FK_N; i++)
			if ((why = vr_check(fk.stat + i * PC_PAGE, i, i % 7 ? 7 : 8, false)))
				return fk_child_fail(7, "evicted in the child", i, why);
	}
	return 0;
}

static void case_fork(void)
{
	const int forks = 12;
	pthread_t w[FK_WRITERS], rd;
	struct zswap_stats a;

	fk.stat = pc_map(FK_N * PC_PAGE);
	fk.wr = pc_map(FK_N * PC_PAGE);
	for (size_t i = 0; i < FK_N; i++) {
		vr_stamp(fk.stat + i * PC_PAGE, i, 7);
		vr_stamp(fk.wr + i * PC_PAGE, i, fk.ver[i] = 1);
	}
	pc_stats(&a);
	vr_evictor_start(fk.stat, FK_N * PC_PAGE, fk.wr, FK_N * PC_PAGE);
	for (size_t k = 0; k < FK_WRITERS; k++)
		if (pthread_create(&w[k], NULL, fk_writer, (void *)(uintptr_t)k) != 0)
			pc_fail("pthread_create");
	if (pthread_create(&rd, NULL, fk_reader, NULL) != 0)
		pc_fail("pthread_create");
	fflush(stdout);
	fflush(stderr);
	for (int f = 0; f < forks; f++) {
		/* Something evicted and faulted since the last fork. */
		unsigned long p0 = atomic_load(&fk.passes), r0 = atomic_load(&fk.reads);
		vr_wait_round();
		while (atomic_load(&fk.passes) < p0 + 1 || atomic_load(&fk.reads) < r0 + 64)
			sched_yield();
		pid_t pid = fork();
		if (pid < 0)
			pc_fail("fork: %s", strerror(errno));
		if (pid == 0)
			_exit(fk_child());
		int status;
		if (waitpid(pid, &status, 0) != pid)
			pc_fail("waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			pc_fail("fork %d: the child %s %d (3: not managed, 4: a static page wrong, 5: a rewritten page's"
				" header wrong, 6: its own writes lost, 7: wrong after its own eviction)", f, WIFEXITED(status) ? "exited with" : "died of signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	atomic_store(&fk.stop, 1);
	for (size_t k = 0; k < FK_WRITERS; k++)
		pthread_join(w[k], NULL);
	pthread_join(rd, NULL);
	vr_wait_round();
	vr_evictor_stop();
	vr_expect("fork: the rewritten pages at the end", fk.wr, 0, FK_N, fk.ver, 0);
	for (size_t i = 0; i < FK_N; i++) {
		const char *why = vr_check(fk.stat + i * PC_PAGE, i, 7, false);
		if (why)
			pc_fail("fork: static page %zu at the end: %s", i, why);
	}
	/* The rounds between forks evict what the writers rewrote and the
	 * reader touched (fork no longer loads anything back). */
	vr_expect_activity("fork", &a, (uint64_t)forks * FK_N / 2, (uint64_t)forks * FK_N / 8);
	munmap(fk.stat, FK_N * PC_PAGE);
	munmap(fk.wr, FK_N * PC_PAGE);
	pc_expect_stored("fork", 0);
	printf("fork ok: %d forks\n", forks);
}

int main(int argc, char **argv)
{
	pc_init("prog_vmarace", &argc, argv);
	if (argc < 2)
		pc_fail("usage: prog_vmarace [--inactive-ok] move|growmove|dontunmap|remap|dontneed|fork...");
	pc_info("mode %s", pc_mode_name());
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "move") == 0)
			case_mremap(VR_MOVE, "move");
		else if (strcmp(argv[i], "growmove") == 0)
			case_mremap(VR_GROWMOVE, "growmove");
		else if (strcmp(argv[i], "dontunmap") == 0)
			case_mremap(VR_DONTUNMAP, "dontunmap");
		else if (strcmp(argv[i], "remap") == 0)
			case_remap();
		else if (strcmp(argv[i], "dontneed") == 0)
			case_dontneed();
		else if (strcmp(argv[i], "fork") == 0)
			case_fork();
		else
			pc_fail("unknown case %s", argv[i]);
	}
	return 0;
}
