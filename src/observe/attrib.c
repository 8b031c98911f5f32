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
#include "observe/unwind.h"

#ifdef HAVE_LIBUNWIND
#include <elf.h>
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
	uint64_t offset;		/* of the file mapped at start */
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
	h->offset = v->offset;
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

#ifdef HAVE_LIBUNWIND
/* What an object file's symbol tables say of a code address. */
enum attrib_sym { ATTRIB_SYM_UNREAD, ATTRIB_SYM_NONE, ATTRIB_SYM_FOUND };

#define ATTRIB_SYM_CHUNK 32		/* symbols read per pread, on the stack */

static bool attrib_pread(int fd, void *buf, size_t len, uint64_t off)
{
	return syscall(SYS_pread64, fd, buf, len, (off_t)off) == (long)len;
}

/* The function symbol of the ELF file fd (header eh) whose extent
 * [st_value, st_value + st_size) holds the link-time address vaddr, from
 * .symtab or .dynsym: its name into name, its value into *value. */
static enum attrib_sym attrib_elf_sym(int fd, const Elf64_Ehdr *eh, uint64_t vaddr, char *name, size_t len,
				      uint64_t *value)
{
	Elf64_Sym syms[ATTRIB_SYM_CHUNK];

	for (unsigned i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr sh, str;
		if (!attrib_pread(fd, &sh, sizeof(sh), eh->e_shoff + (uint64_t)i * sizeof(sh)))
			return ATTRIB_SYM_UNREAD;
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize != sizeof(Elf64_Sym) ||
		    sh.sh_link >= eh->e_shnum)
			continue;
		if (!attrib_pread(fd, &str, sizeof(str), eh->e_shoff + (uint64_t)sh.sh_link * sizeof(str)))
			return ATTRIB_SYM_UNREAD;
		uint64_t n = sh.sh_size / sizeof(Elf64_Sym);
		for (uint64_t k = 0; k < n; k += ATTRIB_SYM_CHUNK) {
			size_t m = n - k < ATTRIB_SYM_CHUNK ? (size_t)(n - k) : ATTRIB_SYM_CHUNK;
			if (!attrib_pread(fd, syms, m * sizeof(*syms), sh.sh_offset + k * sizeof(*syms)))
				return ATTRIB_SYM_UNREAD;
			for (size_t j = 0; j < m; j++) {
				const Elf64_Sym *y = &syms[j];
				unsigned type = ELF64_ST_TYPE(y->st_info);
				/* Its size says whether it holds the address: a
				 * symbol merely below it (the nearest exported
				 * one in a stripped object) does not name it. */
				if ((type != STT_FUNC && type != STT_GNU_IFUNC) || y->st_shndx == SHN_UNDEF ||
				    vaddr < y->st_value || vaddr - y->st_value >= y->st_size || y->st_name >= str.sh_size)
					continue;
				uint64_t want = str.sh_size - y->st_name;
				if (want > len - 1)
					want = len - 1;
				long got = syscall(SYS_pread64, fd, name, (size_t)want, (off_t)(str.sh_offset + y->st_name));
				if (got <= 0)
					return ATTRIB_SYM_UNREAD;
				name[got] = '\0';
				*value = y->st_value;
				return ATTRIB_SYM_FOUND;
			}
		}
	}
	return ATTRIB_SYM_NONE;
}

/* Look up the code address at, in the object file path mapped at start from
 * file offset off: its link-time address into *vaddr (what addr2line
 * takes) and the symbol holding it, read with raw system calls (a crash
 * report calls this in a signal handler). */
static enum attrib_sym attrib_symbol(const char *path, uintptr_t start, uint64_t off, uintptr_t at, char *name,
				     size_t len, uint64_t *value, uint64_t *vaddr)
{
	enum attrib_sym r = ATTRIB_SYM_UNREAD;
	uint64_t foff = at - start + off;
	Elf64_Ehdr eh;
	int fd = fdtab_open_ro(path, false);

	if (fd < 0)
		return r;
	if (attrib_pread(fd, &eh, sizeof(eh), 0) && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
	    eh.e_shentsize == sizeof(Elf64_Shdr)) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (!attrib_pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
				break;
			if (ph.p_type == PT_LOAD && ph.p_offset <= foff && foff - ph.p_offset < ph.p_filesz) {
				*vaddr = foff - ph.p_offset + ph.p_vaddr;
				r = attrib_elf_sym(fd, &eh, *vaddr, name, len, value);
				break;
			}
		}
	}
	fdtab_close_short(fd);
	return r;
}

/* Name pc from the symbol tables of the object file holding it, as maps
 * (a maps_read text) says: "function+0x1a" when a symbol's extent holds it,
 * else "object+0x1234" (a stripped object's unexported code). False when
 * the file cannot be read (no file, deleted, not ELF). */
static bool attrib_name_elf(uintptr_t pc, const char *maps, char *func, size_t func_len)
{
	char path[256], name[96];
	struct attrib_hit h = { .addr = pc - 1, .path = path, .len = sizeof(path) };
	uint64_t value = 0, vaddr = 0;

	if (!pc || !maps)
		return false;
	maps_scan(maps, attrib_hit_fn, &h);
	if (!h.found || path[0] != '/')
		return false;
	/* pc - 1: a return address may already be past the end of its
	 * function. */
	switch (attrib_symbol(path, h.start, h.offset, pc - 1, name, sizeof(name), &value, &vaddr)) {
	case ATTRIB_SYM_FOUND:
		log_snprintf(func, func_len, "%s+0x%lx", name, (unsigned long)(vaddr + 1 - value));
		return true;
	case ATTRIB_SYM_NONE: {
		const char *base = path;
		for (const char *p = path; *p; p++)
			if (*p == '/')
				base = p + 1;
		log_snprintf(func, func_len, "%s+0x%lx", base, (unsigned long)(vaddr + 1));
		return true;
	}
	default:
		return false;
	}
}
#endif

/* attrib_name with maps, a maps_read text (or NULL), already read. */
static void attrib_name_in(uintptr_t pc, char *func, size_t func_len, char *object, size_t object_len,
			   const char *maps)
{
#ifdef HAVE_LIBUNWIND
	uintptr_t off = 0;
	char name[80];

	log_snprintf(func, func_len, "?");
	/* libunwind, for what the object file cannot tell (no file). */
	if (!attrib_name_elf(pc, maps, func, func_len) && unwind_proc_name(pc, name, sizeof(name), &off) == 0)
		log_snprintf(func, func_len, "%s+0x%lx", name, (unsigned long)off + 1);
#else
	log_snprintf(func, func_len, "unavailable");
#endif
	if (maps)
		attrib_object(maps, pc, object, object_len);
	else
		log_snprintf(object, object_len, "-");
}

void attrib_name(uintptr_t pc, char *func, size_t func_len, char *object, size_t object_len,
		 char *maps_buf, size_t maps_cap)
{
	bool have_maps = maps_buf && maps_read(maps_buf, maps_cap);

	attrib_name_in(pc, func, func_len, object, object_len, have_maps ? maps_buf : NULL);
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
		attrib_name_in(r->site, r->func, sizeof(r->func), r->object, sizeof(r->object),
			       have_maps ? attrib_maps : NULL);
	}
	return out;
}
