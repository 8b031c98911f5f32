/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * group.h - one memory limit for a whole process tree, as a memory cgroup
 * gives (ZSWAP_MEMORY_SCOPE=tree, the default): the first process with a
 * limit makes a group, a small file in /dev/shm/libzswap-UID/ mapped shared
 * by every member, and names it in its environment (ZSWAP_GROUP=TOKEN) for
 * the programs it runs; fork children inherit the mapping and take a slot
 * of their own. Each member publishes its charge there; the policy compares
 * the group's (memory.current) with the group's limit (memory.max) where it
 * compared its own with its own, so every member's reclaimer works while
 * the group is over its line and holds that member's faults while the group
 * is over the hold line (never forever: the stuck logic of reclaim.c).
 * The group has one second tier as a cgroup has one memory.swap.max: the
 * directory and cap its first member resolved, in the file, and a sum of
 * the members' disk bytes every member's tier counts its blocks in
 * (src/core/backing.h); each member writes a file of its own under a key
 * only it holds.
 *
 * A member that cannot join (the file missing, another user's, corrupt; the
 * table full) runs with a limit of its own and says so in one line.
 */
#ifndef ZSWAP_GROUP_H
#define ZSWAP_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/options.h"

#define GROUP_ENV	OPT_GROUP_VAR		/* the group's token, for exec'd programs */
#define GROUP_PARENT_ENV OPT_GROUP_PARENT_VAR	/* zswapctl run --limit inside a group: the parent's */
#define GROUP_TOKEN_HEX	32			/* 128 random bits */
#define GROUP_MEMBERS_MAX 128			/* slots of the member table */

/* What the dump and zswapctl see of the group (group_snapshot). */
struct group_view {
	char token[GROUP_TOKEN_HEX + 1];	/* "" when not in a group */
	char parent[GROUP_TOKEN_HEX + 1];	/* "" for a group of its own */
	uint64_t current, max;		/* memory.current, memory.max (bytes) */
	uint64_t peak;			/* memory.peak: the highest memory.current (bytes) */
	uint64_t events_high, events_max;	/* memory.events */
	uint64_t swap_current, swap_max;	/* memory.swap.current, .max: the second tier (bytes; max 0: none) */
	uint64_t swap_events_max;		/* memory.swap.events max: tier writes refused at the cap */
	uint64_t refaults;		/* every member's refaults, those gone included */
	unsigned int nmembers;
	int pids[GROUP_MEMBERS_MAX];
};

/* Start-up (the constructor, single-threaded; after the options are read,
 * before the second tier opens and the reclaimer starts): join the group ZSWAP_GROUP names, or make
 * one when a limit is set and the scope is tree. */
void group_init(uint64_t limit);

/* True when ZSWAP_GROUP names a group for this process to join (its
 * limit then holds from the start: no deferred start). */
bool group_named(void);

/* A followed fork child, before its reclaimer starts: a slot of its own in
 * the group it inherited. */
void group_fork_child(void);

/* The reclaimer, at every turn: publish what this member holds (its charge
 * is published by policy_read_charge) and, at most once a second, reap the
 * slots of members gone without leaving and read the shared anonymous pages
 * (smaps_rollup). Returns the group's limit now (memory.max, the smallest
 * on the path), or 0 when not in a group. */
uint64_t group_tick(void);

/* The reclaimer, excess bytes over its line: true when this member, busy,
 * should leave the room to idle members whose cold pages can make it
 * (bounded in time). */
bool group_defer(uint64_t excess);

/* The reclaimer, at every turn: true once after a busy member asked this
 * one (group_defer) to make the group's room from its cold pages. */
bool group_asked(void);

/* Pages this member's reclaimer just stored: its cold share goes down. */
void group_stored(size_t pages);

/* memory.events: reclaim started over high; a fault let through over max. */
void group_event_high(void);

/* The group as the dump shows it. False when not in a group. */
bool group_snapshot(struct group_view *v);

/* zswapctl set on a member: the group's memory.max for every member. */
void group_set_max(uint64_t max);

#endif
