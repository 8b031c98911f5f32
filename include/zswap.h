/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zswap.h - the public interface of libzswap.
 *
 * libzswap pages an unmodified program through a compressed in-memory pool
 * when preloaded (LD_PRELOAD=libzswap.so ./app). Programs that link with
 * -lzswap (pkg-config libzswap) can also drive it directly with the calls
 * below. Every call is safe when the library is disabled or when
 * userfaultfd is unavailable: it then fails with ENOSYS and changes nothing.
 *
 * Names follow the kernel's zswap (debugfs), vmstat and zram (mm_stat).
 */
#ifndef ZSWAP_H
#define ZSWAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ZSWAP_VERSION "0.1.0"

/*
 * A snapshot of the counters. Sizes are in bytes, counts in pages, unless the
 * name says otherwise. New fields are only ever appended: pass sizeof(st).
 */
struct zswap_stats {
	uint64_t size;				/* bytes filled in by the library */

	/* zswap debugfs (/sys/kernel/debug/zswap/) */
	uint64_t stored_pages;			/* pages held in the store now */
	uint64_t pool_total_size;		/* bytes the pool's zspages take now */
	uint64_t same_filled_pages;		/* stored as one repeated word, no pool space */
	uint64_t stored_incompressible_pages;	/* stored uncompressed (would not shrink) */
	uint64_t reject_compress_poor;		/* rejected: compressed form too large */
	uint64_t reject_compress_fail;		/* rejected: the compressor failed */
	uint64_t reject_alloc_fail;		/* rejected: the pool could not allocate */
	uint64_t pool_limit_hit;		/* rejected: the pool reached its limit */
	uint64_t decompress_fail;		/* loads whose data could not be restored */

	/* vmstat */
	uint64_t zswpout;			/* pages stored, since start */
	uint64_t zswpin;			/* pages loaded back, since start */

	/* zram mm_stat, in its order */
	uint64_t orig_data_size;		/* bytes: uncompressed size of what is stored */
	uint64_t compr_data_size;		/* bytes: compressed size of what is stored */
	uint64_t mem_used_total;		/* bytes: pool pages, as zram's (zs_get_total_pages) */
	uint64_t mem_limit;			/* bytes: limit on pool pages + metadata, 0 for none */
	uint64_t mem_used_max;			/* bytes: high-water mark of mem_used_total */
	uint64_t same_pages;			/* same-filled pages stored now */
	uint64_t pages_compacted;		/* pool pages freed by compaction, since start */
	uint64_t huge_pages;			/* pages stored whole (huge class) now */

	/* the engine */
	uint64_t regions;			/* managed mappings now */
	uint64_t managed_bytes;			/* bytes of address space managed now */
	uint64_t faults;			/* missing-page faults served */
	uint64_t refaults;			/* faults that loaded a stored page */
	uint64_t zero_fill_pages;		/* never-populated pages filled with zeros */
	uint64_t poisoned_pages;		/* addresses poisoned after a failed load */
	uint64_t evict_calls;			/* eviction requests (MADV_PAGEOUT, zswap_pageout) */
	uint64_t evicted_pages;			/* pages stored by eviction, since start */
	uint64_t evict_skipped_pages;		/* pages eviction left in place (busy, shared, raced) */
	uint64_t events_unmap;			/* userfaultfd UNMAP events */
	uint64_t events_remap;			/* userfaultfd REMAP events */
	uint64_t events_remove;			/* userfaultfd REMOVE events */

	/* the pool, beyond zram's columns */
	uint64_t pool_metadata_bytes;		/* bytes: handle tables, zspage descriptors (not in mem_used_total) */

	/* readahead on refault (ZSWAP_READAHEAD) */
	uint64_t readahead_hits;		/* pages read ahead that the reader then went through */
	uint64_t readahead_misses;		/* pages read ahead, then left or evicted again unused */

	/* automatic reclaim (ZSWAP_MEMORY_LIMIT, ZSWAP_COLD_AGE), memcg's names */
	uint64_t memory_max;			/* bytes: ZSWAP_MEMORY_LIMIT, 0 for none (memory.max) */
	uint64_t memory_current;		/* bytes: the charge last read (the pool in it unless ZSWAP_MEMORY_CHARGE=v1) */
	uint64_t pgscan;			/* resident pages reclaim looked at */
	uint64_t pgsteal;			/* pages reclaim stored (limit and cold age) */
	uint64_t pgsteal_proactive;		/* of those, stored for ZSWAP_COLD_AGE below the limit */
	uint64_t workingset_activate;		/* refaults soon after eviction: brought back protected */
	uint64_t allocstall;			/* faults held at the limit until reclaim made room */
	uint64_t memory_events_max;		/* faults let through over the limit: nothing left to reclaim */
	uint64_t reclaim_backoff;		/* times reclaim paused: refaults outpaced it, or the pool was full */
	uint64_t pgactivate;			/* pages reclaim found written since its last look: kept */
	uint64_t watermark_boost;		/* bytes: how much earlier background reclaim starts now, after held faults */
	uint64_t memory_pressure_some_us;	/* time at least one fault was held at the limit (memory.pressure some total) */
	uint64_t thrashing_windows;		/* 10 s windows thrashing: 1,000+ workingset_activate a second, 1/4+ of the refaults */
	uint64_t file_mapped;			/* bytes: file pages in the charge (memory.stat's file_mapped); those the page cache held before the program mapped them are charged to others */

	/* the second tier (ZSWAP_WRITEBACK): zswap's and zram's names */
	uint64_t written_back_pages;		/* pages written to the tier, since start (zswap; vmstat zswpwb) */
	uint64_t writeback_failed;		/* write-backs that failed (disk full, the cap, I/O error): page kept */
	uint64_t bd_count;			/* pages in the tier now (zram's bd_stat) */
	uint64_t bd_reads;			/* pages read back from the tier, since start */
	uint64_t bd_writes;			/* pages written to the tier, since start */
	uint64_t bd_read_fail;			/* reads that failed or did not verify (the page is poisoned) */
	uint64_t backing_disk_bytes;		/* bytes: the tier's file on disk now */
	uint64_t backing_max_bytes;		/* bytes: the tier's cap (ZSWAP_BACKING_MAX) */
	uint64_t zswpwb;			/* vmstat's name for written_back_pages */
	uint64_t reject_reclaim_fail;		/* the pool full and writeback made no room: stores refused meanwhile */
	uint64_t swap_cached_pages;		/* pages read back from the tier that keep their slot while unchanged (meminfo SwapCached) */
	uint64_t swap_cached_reclaimed;		/* pages evicted again unchanged to the slot they kept: nothing compressed or written */
	uint64_t huge_pages_since;		/* pages stored whole (huge class), since start (zram's mm_stat) */
	uint64_t install_failed;		/* installs of a page read back refused (EAGAIN: retried; ENOMEM twice: stored again) */
	uint64_t fault_threads;			/* fault handler threads serving */
	uint64_t backing_free_bytes;		/* bytes: freed slots whose blocks the tier's file keeps for reuse */
	uint64_t memory_peak;			/* bytes: the highest charge read since start (memory.peak) */
};

/* Compress the managed pages of [addr, addr + len) into the pool and drop
 * them, before returning (what madvise(MADV_PAGEOUT) does under libzswap).
 * Unmanaged parts of the range are left alone. Returns 0, or -1 with errno
 * (EINVAL: bad range; ENOSYS: libzswap inactive). */
int zswap_pageout(void *addr, size_t len);

/* Fill *st (at most size bytes of it) with a snapshot. Returns 0, or -1 with
 * errno EINVAL when st is NULL or size is too small to hold the size field. */
int zswap_stats(struct zswap_stats *st, size_t size);

/* 1 if the engine is active in this process (userfaultfd works, not disabled). */
int zswap_active(void);

/* The library's version string, ZSWAP_VERSION at build time. */
const char *zswap_version(void);

#ifdef __cplusplus
}
#endif
#endif
