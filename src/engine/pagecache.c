/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pagecache.c - the file pages the charge leaves to others (pagecache.h).
 *
 * A small table of file mappings, each with the pages counted as others';
 * their sum is kept in one atomic the charge reads. The table is changed
 * under a library-private mutex that no program code runs under (the
 * callers block signals), reset in a forked child.
 */
#include "config.h"
#include "engine/pagecache.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include "base/layout.h"
#include "base/maps.h"
#include "base/prim.h"
#include "core/zsmalloc.h"

#define PC_MAPS		512	/* mappings tracked; more are charged whole */
#define PC_VEC		4096	/* pages mincore reports a call */

struct pc_map {
	uintptr_t start, end;
	uint64_t pages;		/* counted as others' */
	unsigned int gen;	/* the last pagecache_sync that found it */
};

static struct pc_map pc_maps[PC_MAPS];
static unsigned int pc_n, pc_gen;
static _Atomic uint64_t pc_pages;
static pthread_mutex_t pc_lock ZSWAP_STARTUP_DATA = PTHREAD_MUTEX_INITIALIZER;
static unsigned char pc_vec[PC_VEC];	/* under pc_lock */

/* Pages of [start, end) in the page cache now. Under pc_lock. */
static uint64_t pc_cached(uintptr_t start, uintptr_t end)
{
	uint64_t pages = 0;

	for (uintptr_t cur = start; cur < end;) {
		size_t len = end - cur;
		if (len > (size_t)PC_VEC << ZS_PAGE_SHIFT)
			len = (size_t)PC_VEC << ZS_PAGE_SHIFT;
		if (syscall(SYS_mincore, cur, len, pc_vec) != 0)
			break;
		for (size_t i = 0; i < len >> ZS_PAGE_SHIFT; i++)
			pages += pc_vec[i] & 1;
		cur += len;
	}
	return pages;
}

/* True if mincore shows the page cache of the file st describes to us: we
 * may write the file or own it (or are privileged), the kernel's
 * can_do_mincore. The file is fd, or else path (dirfd AT_FDCWD). */
static bool pc_visible(const struct stat *st, int fd, const char *path)
{
	uid_t euid = (uid_t)syscall(SYS_geteuid);

	if (euid == 0 || st->st_uid == euid)
		return true;
	return fd >= 0 ? syscall(SYS_faccessat2, fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) == 0
		       : syscall(SYS_faccessat2, AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* The pages of [start, end) counted as others': those in the page cache
 * now, or all of them when the cache is hidden from us. Only a regular
 * file with a name: shared memory (anonymous, SysV, memfd) and deleted
 * files hold what processes of this program wrote, charged to them. Under
 * pc_lock. */
static uint64_t pc_others(uintptr_t start, uintptr_t end, int fd, const char *path)
{
	struct stat st;

	if (fd >= 0 ? syscall(SYS_fstat, fd, &st) != 0 : syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0)
		return 0;
	if (!S_ISREG(st.st_mode) || st.st_nlink == 0)
		return 0;
	return pc_visible(&st, fd, path) ? pc_cached(start, end) : (end - start) >> ZS_PAGE_SHIFT;
}

/* Drop the records overlapping [start, end). Under pc_lock. */
static void pc_drop(uintptr_t start, uintptr_t end)
{
	for (unsigned int i = 0; i < pc_n;) {
		struct pc_map *m = &pc_maps[i];
		if (m->start < end && start < m->end) {
			atomic_fetch_sub_explicit(&pc_pages, m->pages, memory_order_relaxed);
			*m = pc_maps[--pc_n];
		} else {
			i++;
		}
	}
}

static void pc_add(uintptr_t start, uintptr_t end, uint64_t pages)
{
	if (pc_n == PC_MAPS)
		return;
	pc_maps[pc_n++] = (struct pc_map){ .start = start, .end = end, .pages = pages, .gen = pc_gen };
	atomic_fetch_add_explicit(&pc_pages, pages, memory_order_relaxed);
}

void pagecache_mapped(uintptr_t addr, size_t len, int fd)
{
	uintptr_t end = addr + ((len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK);

	if (fd < 0)
		return;
	pthread_mutex_lock(&pc_lock);
	pc_drop(addr, end);
	pc_add(addr, end, pc_others(addr, end, fd, NULL));
	pthread_mutex_unlock(&pc_lock);
}

void pagecache_unmapped(uintptr_t addr, size_t len)
{
	pthread_mutex_lock(&pc_lock);
	pc_drop(addr, addr + ((len + ZS_PAGE_SIZE - 1) & ZS_PAGE_MASK));
	pthread_mutex_unlock(&pc_lock);
}

static int pc_sync_vma(const struct maps_vma *v, void *arg)
{
	(void)arg;
	if (!v->file || v->special)
		return 0;
	for (unsigned int i = 0; i < pc_n; i++)
		if (pc_maps[i].start == v->start && pc_maps[i].end == v->end) {
			pc_maps[i].gen = pc_gen;
			return 0;
		}
	/* Not seen yet: the dynamic loader's, or made before the limit. */
	char path[256];
	if (!v->path_len || v->path_len >= sizeof(path) || v->path[0] != '/')
		return 0;
	memcpy(path, v->path, v->path_len);
	path[v->path_len] = '\0';
	pc_drop(v->start, v->end);
	pc_add(v->start, v->end, pc_others(v->start, v->end, -1, path));
	return 0;
}

/* Records the walk did not find are of mappings gone (or split, and found
 * anew as their parts). */
void pagecache_sync(void)
{
	pthread_mutex_lock(&pc_lock);
	pc_gen++;
	maps_for_each(pc_sync_vma, NULL);
	for (unsigned int i = pc_n; i-- > 0;)
		if (pc_maps[i].gen != pc_gen) {
			atomic_fetch_sub_explicit(&pc_pages, pc_maps[i].pages, memory_order_relaxed);
			pc_maps[i] = pc_maps[--pc_n];
		}
	pthread_mutex_unlock(&pc_lock);
}

uint64_t pagecache_others(void)
{
	return atomic_load_explicit(&pc_pages, memory_order_relaxed) << ZS_PAGE_SHIFT;
}

ZSWAP_STARTUP void pagecache_fork_child(void)
{
	const pthread_mutex_t init = PTHREAD_MUTEX_INITIALIZER;	/* on the stack (layout.h) */

	prim_reset(&pc_lock, &init, sizeof(init));
}
