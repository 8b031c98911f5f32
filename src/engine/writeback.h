/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * writeback.h - stored pages written back to the second tier (zswap's
 * writeback, zram's backing device): what makes a memory limit hold for
 * data whose compressed size does not fit in it.
 *
 * Which pages (zswap's rules): incompressible ones first (stored whole, they
 * save nothing in the pool), then a CLOCK hand over the stored pages in
 * address order with a second chance: a page whose refault feedback gave it
 * a level (it came back quickly after an eviction) loses one level and is
 * passed over, as zswap keeps an entry with its referenced bit set once
 * more. The reclaimer calls it when the pool is what keeps the charge over
 * the limit, or when the pool reached its own limit.
 *
 * A page being written back is EVICTING: a fault on it waits (WAITER) and
 * is woken once it is STORED again, now in the tier; an UNMAP or REMOVE
 * meanwhile (DROPPED) discards it. The write happens under eng.evict_gate
 * and eng.ev_lock's read sides, so a fork never copies one half done.
 */
#ifndef ZSWAP_WRITEBACK_H
#define ZSWAP_WRITEBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backing.h"
#include "core/ctlreq.h"

/* Start-up: open the tier when ZSWAP_WRITEBACK asks for it (auto: under a
 * memory limit), or say in one line why it stays off. Returns whether it is
 * on. */
bool writeback_init(void);

/* Where this process's tier goes by its options (ZSWAP_BACKING_DIR, an
 * absolute path) and its cap (ZSWAP_BACKING_MAX, or half the free space
 * there): what the process that makes a group records for the group. False,
 * with the reason said in one line, when the directory cannot hold a tier. */
bool writeback_place(char *dir, size_t len, uint64_t *max);

/* A process group's second tier (src/reclaim/group.h): dir and max, the
 * group's (writeback_place of its first member), replace this process's own
 * for every file it opens from now on; share holds the group's counters of
 * disk bytes with this member's part, and the file open now moves into
 * them. Before writeback_init, and in a fork child once it has a slot
 * (dir NULL: keep the place; share NULL: count in none). */
void writeback_group(const char *dir, uint64_t max, const struct backing_share *share);

/* Whether pages can be written back (the tier is open, and this process
 * has a file of its own: a fork child opens one, and only reads the files
 * it inherited). */
bool writeback_on(void);

/* ZSWAP_WRITEBACK or the limit changed at run time (zswapctl set; the
 * reclaimer's thread): open the tier if it is now wanted and was not open,
 * or stop writing to it (what it holds is still read back). False if it is
 * wanted and could not be opened. */
bool writeback_follow(void);

/* A fork child that could not open a file of its own: it reads what it
 * inherited, and writes nothing. */
bool writeback_child(void);

/* Write back up to want stored pages; returns how many went. */
size_t writeback_run(size_t want);

/* Write back up to want poorly compressed pages only (zswap_entry_poor:
 * held as-is, or compressed to 3 KiB or more); returns how many went. */
size_t writeback_run_poor(size_t want);

/* Write back up to want pool entries stored at least min_age evictions ago
 * (policy_stored_age), the second chance kept: the pool's old entries, which
 * the program did not come back for while its resident pages turned over
 * (the reclaimer's balance, docs/DESIGN.md "The second tier"). Returns how
 * many went; none when every entry is younger. */
size_t writeback_run_old(size_t want, uint32_t min_age);

/* zswapctl writeback (zram's writeback; the reclaimer's thread): write
 * back the pool entries req picks (any of them with no second chance;
 * idle=SECONDS: those stored at least that long ago), all of them or
 * req's number of pages, within the budget. The tier is opened if it is
 * not yet (ZSWAP_WRITEBACK=auto without a limit). *written: the pages that
 * went. 0; -EPERM (ZSWAP_WRITEBACK=0, or a fork child without a file of
 * its own); -EIO (the tier could not be opened). */
int writeback_demand(const struct ctlreq_wb *req, uint64_t *written);

/* zswapctl recompress and ZSWAP_RECOMP_IDLE_AGE (zram's recompress; the
 * reclaimer's thread): compress the pool entries req picks again with
 * ZSWAP_RECOMP_ALGORITHM, in one pass of the writer's walk, keeping each
 * result only where it lands in a smaller size class; an entry is tried
 * once until its page changes. Counted in num_recompressed,
 * recompress_kept and recompress_failed. Returns the entries tried. */
size_t writeback_recompress(const struct ctlreq_rc *req);

/* The writeback budget (ZSWAP_WRITEBACK_LIMIT, zram's writeback_limit):
 * reset refills it from the option (start-up, zswapctl set); spent says
 * whether ZSWAP_WRITEBACK_LIMIT_ENABLE is on and nothing is left. Every
 * pass of the writer spends it, on demand or the reclaimer's. */
void writeback_budget_reset(void);
bool writeback_budget_spent(void);

/* Punch freed slots out of the file once enough have gathered (all of them
 * while a group's shared cap is near: other members' writes need the room);
 * and once
 * every child forked with pages in the tier is gone, free the slots kept
 * for them (the reclaimer's idle loop). */
void writeback_trim(void);

/* fork: the parent keeps the slots the child inherited; the child reads
 * them and never writes that file again (src/core/backing.h): it writes
 * back to a file of its own (zswap_store_fork_tier). prepare (before the fork)
 * makes a pipe when pages are in the tier: the child holds its write end
 * (close-on-exec), so that the parent's read end reports a hang-up once
 * the child and whatever it forked in turn have exited or exec'd; then
 * nothing can read the kept slots any more and they are freed. At most
 * WB_CHILDREN children are followed so at once; beyond that, the slots
 * stay kept until the parent exits. */
void writeback_fork_prepare(void);
void writeback_fork_parent(void);
void writeback_fork_child(void);

#endif
