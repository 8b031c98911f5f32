/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.h - the memory limit of the cgroup the process runs in, for
 * ZSWAP_MEMORY_LIMIT=auto and N% (src/reclaim/reclaim.c follows it).
 */
#ifndef ZSWAP_CGROUP_H
#define ZSWAP_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* The limit, in bytes, of the memory cgroup this process is in: cgroup v2's
 * smallest memory.max or memory.high over the group and its ancestors,
 * cgroup v1's hierarchical memory.limit_in_bytes, the smaller of the two
 * on a hybrid system. 0 when there is none, or none below phys (physical
 * memory). Start-up's and the reclaimer's only (it keeps one buffer). */
uint64_t cgroup_memory_limit(uint64_t phys);

/* A cgroup file's number at s: decimal digits ending the text or its line
 * (core/parse.h's numbers); "max", anything else after the digits or an
 * overflow is UINT64_MAX (no limit). */
uint64_t cgroup_u64(const char *s);

/* The directories of this process's memory cgroup: v2's group (under the
 * cgroup2 mount) and v1's (under the mount with the memory controller),
 * each "" when there is none. cap bytes each. */
void cgroup_dirs(char *v2, char *v1, size_t cap);

/* The parts, for tests (tests/unit/test_cgroup.c builds a hierarchy of
 * its own): take the mounts from a /proc/PID/mountinfo text, then the limit
 * of the groups a /proc/PID/cgroup text names (the text is modified) on a
 * machine of phys bytes. */
void cgroup_parse_mounts(const char *mountinfo);
uint64_t cgroup_limit_of(char *proc_cgroup, uint64_t phys);

#endif
