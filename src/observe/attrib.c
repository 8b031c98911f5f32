/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attrib.c - call sites of mappings and per-region counts (see attrib.h).
 *
 * The site table is a fixed array of (range, return address) records. A new
 * mapping replaces every record it overlaps (the old mappings are gone), an
 * unmapping drops the records it covers, and when the table is full the
 * oldest record goes: attribution is best effort and never costs memory
 * that grows with the program.
 */
#include "config.h"
#include "observe/attrib.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>

#include "engine/engine.h"
#include "base/fdtab.h"
#include "base/log.h"
#include "base/maps.h"
#include "base/prim.h"
#include "engine/region.h"

#ifdef HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define ATTRIB_SITES	4096
#define ATTRIB_MINCORE	32768		/* pages per mincore() call */
#define ATTRIB_MAPS_CAP	(4u << 20)	/* bytes of /proc/self/maps read */
#define ATTRIB_REGIONS	65536		/* regions examined per dump */
#define ARENA_ALIGN	(64ULL << 20)	/* glibc's HEAP_MAX_SIZE on 64-bit */

struct attrib_site {
	uintptr_t start, end, pc;
	uint64_t seq;			/* age, for replacement when full */
};

static struct attrib_site *attrib_sites;	/* prim, ATTRIB_SITES */
static size_t attrib_nsites;
static uint64_t attrib_seq;
static _Atomic int attrib_lock;

static unsigned char *attrib_vec;		/* mincore vector, ATTRIB_MINCORE */
static char *attrib_maps;			/* /proc/self/maps, ATTRIB_MAPS_CAP */
static struct attrib_row *attrib_all;		/* every region of one dump */

int attrib_init(void)
{
	attrib_sites = prim_alloc(ATTRIB_SITES * sizeof(*attrib_sites));
	attrib_vec = prim_alloc(ATTRIB_MINCORE);
	attrib_maps = prim_alloc(ATTRIB_MAPS_CAP);
	attrib_all = prim_alloc(ATTRIB_REGIONS * sizeof(*attrib_all));
	return attrib_sites && attrib_vec && attrib_maps && attrib_all ? 0 : -ENOMEM;
}

/* The table's spinlock, taken with every signal blocked: a handler that
 * calls mmap on the same thread must not find it held. Held for a scan of
 * at most ATTRIB_SITES records, never across a system call. */
static void attrib_lock_take(sigset_t *old)
{
	engine_sigblock(old);
	int expect = 0;
	while (!atomic_compare_exchange_weak_explicit(&attrib_lock, &expect, 1, memory_order_acquire,
						      memory_order_relaxed)) {
		expect = 0;
		sched_yield();
	}
}

static void attrib_lock_drop(const sigset_t *old)
{
	atomic_store_explicit(&attrib_lock, 0, memory_order_release);
	engine_sigrestore(old);
}

/* Drop the records overlapping [a, b) (lock held). */
static void attrib_drop(uintptr_t a, uintptr_t b)
{
	for (size_t i = 0; i < attrib_nsites;) {
		if (attrib_sites[i].start < b && attrib_sites[i].end > a)
			attrib_sites[i] = attrib_sites[--attrib_nsites];
		else
			i++;
	}
}

void attrib_mapped(uintptr_t addr, size_t len, void *caller)
{
	sigset_t old;

	if (!attrib_sites || !len)
		return;
	attrib_lock_take(&old);
	attrib_drop(addr, addr + len);
	size_t k = attrib_nsites;
	if (k == ATTRIB_SITES) {
		k = 0;
		for (size_t i = 1; i < attrib_nsites; i++)
			if (attrib_sites[i].seq < attrib_sites[k].seq)
				k = i;
	} else {
		attrib_nsites++;
	}
	attrib_sites[k].start = addr;
	attrib_sites[k].end = addr + len;
	attrib_sites[k].pc = (uintptr_t)caller;
	attrib_sites[k].seq = ++attrib_seq;
	attrib_lock_drop(&old);
}

void attrib_unmapped(uintptr_t addr, size_t len)
{
	sigset_t old;

	if (!attrib_sites || !len)
		return;
	attrib_lock_take(&old);
	attrib_drop(addr, addr + len);
	attrib_lock_drop(&old);
}

void attrib_remapped(uintptr_t old_addr, size_t old_len, uintptr_t new_addr, size_t new_len)
{
	sigset_t old;

	if (!attrib_sites)
		return;
	attrib_lock_take(&old);
	uintptr_t pc = 0;
	for (size_t i = 0; i < attrib_nsites; i++)
		if (attrib_sites[i].start <= old_addr && old_addr < attrib_sites[i].end)
			pc = attrib_sites[i].pc;
	attrib_drop(old_addr, old_addr + old_len);
	attrib_drop(new_addr, new_addr + new_len);
	if (pc && attrib_nsites < ATTRIB_SITES) {
		struct attrib_site *s = &attrib_sites[attrib_nsites++];
		s->start = new_addr;
		s->end = new_addr + new_len;
		s->pc = pc;
		s->seq = ++attrib_seq;
	}
	attrib_lock_drop(&old);
}

static uintptr_t attrib_site_of(uintptr_t addr)
{
	uintptr_t pc = 0;
	sigset_t old;

	attrib_lock_take(&old);
	for (size_t i = 0; i < attrib_nsites; i++)
		if (attrib_sites[i].start <= addr && addr < attrib_sites[i].end)
			pc = attrib_sites[i].pc;
	attrib_lock_drop(&old);
	return pc;
}

/* ---- naming a code address ------------------------------------------- */

/* The mapping holding an address, from a maps text (maps_scan). */
struct attrib_hit {
	uintptr_t addr, start, end;
	char *path;
	size_t len;
	bool found;
};

static int attrib_hit_fn(const struct maps_vma *v, void *arg)
{
	struct attrib_hit *h = arg;

	if (h->addr < v->start || h->addr >= v->end)
		return 0;
	h->start = v->start;
	h->end = v->end;
	h->found = true;
	if (h->path && h->len) {
		size_t n = v->path_len < h->len - 1 ? v->path_len : h->len - 1;
		memcpy(h->path, v->path, n);
		h->path[n] = '\0';
	}
	return 1;
}

/* The path of the mapping holding pc, from a maps text; "-" when none. */
static void attrib_object(const char *maps, uintptr_t pc, char *out, size_t len)
{
	struct attrib_hit h = { .addr = pc, .path = out, .len = len };

	log_snprintf(out, len, "-");
	maps_scan(maps, attrib_hit_fn, &h);
}

bool attrib_mapping_of(uintptr_t addr, char *buf, size_t cap, uintptr_t *start, uintptr_t *end)
{
	struct attrib_hit h = { .addr = addr };

	if (!maps_read(buf, cap))
		return false;
	maps_scan(buf, attrib_hit_fn, &h);
	*start = h.start;
	*end = h.end;
	return h.found;
}

void attrib_name(uintptr_t pc, char *func, size_t func_len, char *object, size_t object_len,
		 char *maps_buf, size_t maps_cap)
{
#ifdef HAVE_LIBUNWIND
	unw_context_t ctx;
	unw_cursor_t c;
	unw_word_t off = 0;
	char name[80];

	log_snprintf(func, func_len, "?");
	/* A cursor at our own frame, moved to the address asked about: the
	 * lookup is the one an unwinder does for that frame. pc - 1: a return
	 * address may already be past the end of its function. */
	if (pc && unw_getcontext(&ctx) == 0 && unw_init_local(&c, &ctx) == 0 &&
	    unw_set_reg(&c, UNW_REG_IP, (unw_word_t)(pc - 1)) == 0 &&
	    unw_get_proc_name(&c, name, sizeof(name), &off) == 0)
		log_snprintf(func, func_len, "%s+0x%lx", name, (unsigned long)off + 1);
#else
	log_snprintf(func, func_len, "unavailable");
#endif
	if (maps_buf && maps_read(maps_buf, maps_cap))
		attrib_object(maps_buf, pc, object, object_len);
	else
		log_snprintf(object, object_len, "-");
}

/* ---- the dump's rows --------------------------------------------------- */

/* Count one region: slots for what is stored, mincore for what is present. */
static void attrib_count(const struct region_ref *ref, struct attrib_row *row)
{
	memset(row, 0, sizeof(*row));
	row->start = ref->start;
	row->end = ref->end;
	if (ref->arr) {
		size_t n = (ref->end - ref->start) >> ZS_PAGE_SHIFT;
		for (size_t i = 0; i < n; i++) {
			const struct slot *s = &ref->arr->slots[ref->first + i];
			uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
			if ((st & SLOT_STATE) == SLOT_STORED) {
				row->evicted_bytes += ZS_PAGE_SIZE;
				row->compressed_bytes += zswap_entry_length(&s->e);
			}
		}
		row->refaults = atomic_load_explicit(&ref->arr->refaults, memory_order_relaxed);
		row->evictions = atomic_load_explicit(&ref->arr->evicted, memory_order_relaxed);
	}
	for (uintptr_t a = ref->start; a < ref->end;) {
		size_t pages = (ref->end - a) >> ZS_PAGE_SHIFT;
		if (pages > ATTRIB_MINCORE)
			pages = ATTRIB_MINCORE;
		if (syscall(SYS_mincore, a, pages << ZS_PAGE_SHIFT, attrib_vec) != 0)
			break;
		for (size_t i = 0; i < pages; i++)
			row->resident_bytes += (attrib_vec[i] & 1) ? ZS_PAGE_SIZE : 0;
		a += pages << ZS_PAGE_SHIFT;
	}
}

static void attrib_kind(const struct region_ref *ref, struct attrib_row *row)
{
	struct maps_vma v = { 0 };

	if (!(ref->flags & (REGION_ADOPTED | REGION_LIBC))) {
		log_snprintf(row->kind, sizeof(row->kind), "mmap");
		return;
	}
	/* Adopted: memory the C library mapped for itself. */
	if (maps_find(ref->start, &v) == 0 && v.heap)
		log_snprintf(row->kind, sizeof(row->kind), "heap");
	else if ((v.start & (ARENA_ALIGN - 1)) == 0 || (ref->start & (ARENA_ALIGN - 1)) == 0)
		log_snprintf(row->kind, sizeof(row->kind), "malloc arena");
	else
		log_snprintf(row->kind, sizeof(row->kind), "libc mapping");
}

size_t attrib_collect(struct attrib_row *rows, size_t max, size_t *total)
{
	struct region_ref refs[32];
	uintptr_t cursor = 0;
	size_t n = 0;

	if (!attrib_all) {
		*total = 0;
		return 0;
	}
	/* Counted with array references held, no lock: slot states are
	 * atomics, and a snapshot that is a moment old is what a dump is. */
	while (cursor < UINTPTR_MAX && n < ATTRIB_REGIONS) {
		size_t k = region_collect_all(0, UINTPTR_MAX, &cursor, refs, 32);
		for (size_t i = 0; i < k; i++) {
			if (n < ATTRIB_REGIONS && !(refs[i].flags & REGION_UNMANAGEABLE)) {
				attrib_count(&refs[i], &attrib_all[n]);
				attrib_kind(&refs[i], &attrib_all[n]);
				n++;
			}
			if (refs[i].arr)
				region_arr_put(refs[i].arr);
		}
		if (k == 0)
			break;
	}
	*total = n;
	/* The top max by evicted bytes (then resident), by selection. */
	size_t out = 0;
	for (; out < max && out < n; out++) {
		size_t best = out;
		for (size_t i = out + 1; i < n; i++)
			if (attrib_all[i].evicted_bytes > attrib_all[best].evicted_bytes ||
			    (attrib_all[i].evicted_bytes == attrib_all[best].evicted_bytes &&
			     attrib_all[i].resident_bytes > attrib_all[best].resident_bytes))
				best = i;
		struct attrib_row tmp = attrib_all[out];
		attrib_all[out] = attrib_all[best];
		attrib_all[best] = tmp;
		rows[out] = attrib_all[out];
	}
	/* Name the listed ones' call sites, after every lock is dropped:
	 * libunwind reads object files and may allocate. */
	bool have_maps = false;
	for (size_t i = 0; i < out; i++) {
		struct attrib_row *r = &rows[i];
		r->site = attrib_site_of(r->start);
		if (!r->site) {
			log_snprintf(r->func, sizeof(r->func), "-");
			log_snprintf(r->object, sizeof(r->object), "-");
			continue;
		}
		if (!have_maps)
			have_maps = maps_read(attrib_maps, ATTRIB_MAPS_CAP) > 0;
		attrib_name(r->site, r->func, sizeof(r->func), r->object, sizeof(r->object), NULL, 0);
		if (have_maps)
			attrib_object(attrib_maps, r->site, r->object, sizeof(r->object));
	}
	return out;
}
