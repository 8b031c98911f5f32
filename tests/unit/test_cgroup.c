/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_cgroup.c - the memory cgroup's limit (src/reclaim/cgroup.c) read from
 * a hierarchy of files this test makes, described by mountinfo and
 * /proc/PID/cgroup texts of its own: cgroup v2 with limits on the group and
 * its ancestors (memory.max and memory.high), a container whose cgroup
 * namespace makes its own group the mount's root, a mount of a subtree,
 * cgroup v1's hierarchical_memory_limit, a hybrid system, and limits that
 * are none (max, v1's 2^63 - 4096, one above physical memory); and the
 * numbers of those files (cgroup_u64).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reclaim/cgroup.h"
#include "test_check.h"

#define MiB (1ull << 20)
#define PHYS (64ull << 30)

static char top[256];

static void put(const char *rel, const char *text)
{
	char path[512], dir[512];

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = dir + strlen(top) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(dir, 0700);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

/* The limit for this mountinfo (every @ is top: the mount points are under
 * it) and cgroup text. */
static uint64_t limit(const char *mounts, const char *proc_cgroup, uint64_t phys)
{
	char mi[2048], pc[512];
	size_t n = 0;

	for (const char *m = mounts; *m && n + strlen(top) + 1 < sizeof(mi); m++) {
		if (*m == '@') {
			memcpy(mi + n, top, strlen(top));
			n += strlen(top);
		} else {
			mi[n++] = *m;
		}
	}
	mi[n] = '\0';
	cgroup_parse_mounts(mi);
	snprintf(pc, sizeof(pc), "%s", proc_cgroup);
	return cgroup_limit_of(pc, phys);
}

#define NOISE "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n" \
	      "25 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw,size=4096k\n"
#define V2_HOST NOISE "30 25 0:26 / @/v2 rw,nosuid,nodev shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
#define V1_HOST NOISE "35 25 0:32 / @/v1 rw,relatime shared:15 - cgroup cgroup rw,memory\n"
#define HYBRID NOISE "30 25 0:26 / @/v2 rw shared:9 - cgroup2 cgroup2 rw\n" \
	       "34 25 0:31 / @/cpu rw shared:14 - cgroup cgroup rw,cpu,cpuacct\n" \
	       "35 25 0:32 / @/v1 rw shared:15 - cgroup cgroup rw,memory\n"

int main(void)
{
	char tmpl[] = "/tmp/test_cgroup.XXXXXX";

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 99;
	}
	snprintf(top, sizeof(top), "%s", tmpl);

	/* cgroup v2: a/ unlimited, a/b/ 512M, a/b/c/ memory.high 384M. */
	put("v2/a/memory.max", "max\n");
	put("v2/a/memory.high", "max\n");
	put("v2/a/b/memory.max", "536870912\n");
	put("v2/a/b/memory.high", "max\n");
	put("v2/a/b/c/memory.max", "max\n");
	put("v2/a/b/c/memory.high", "402653184\n");
	put("v2/a/d/memory.max", "max\n");
	uint64_t v = limit(V2_HOST, "0::/a/b/c\n", PHYS);
	CHECK(v == 384 * MiB, "v2, the smallest over the group and its ancestors: %llu", (unsigned long long)v);
	v = limit(V2_HOST, "0::/a/b\n", PHYS);
	CHECK(v == 512 * MiB, "v2, the group's own memory.max: %llu", (unsigned long long)v);
	v = limit(V2_HOST, "0::/a/d\n", PHYS);
	CHECK(v == 0, "v2, max all the way up: no limit, got %llu", (unsigned long long)v);
	v = limit(V2_HOST, "0::/\n", PHYS);
	CHECK(v == 0, "v2, the root group: no limit, got %llu", (unsigned long long)v);
	v = limit(V2_HOST, "0::/a/b/c\n", 256 * MiB);
	CHECK(v == 0, "v2, a limit above physical memory is none: %llu", (unsigned long long)v);

	/* A container: its cgroup namespace makes a/b/ the mount's root and
	 * the process's group "/". */
	v = limit(NOISE "30 25 0:26 / @/v2/a/b rw - cgroup2 cgroup2 rw\n", "0::/\n", PHYS);
	CHECK(v == 512 * MiB, "container, the group at the mount's root: %llu", (unsigned long long)v);
	v = limit(NOISE "30 25 0:26 / @/v2/a/b rw - cgroup2 cgroup2 rw\n", "0::/c\n", PHYS);
	CHECK(v == 384 * MiB, "container, a group below the mount's root: %llu", (unsigned long long)v);
	/* A subtree mounted (its root field /a): the path loses that prefix. */
	v = limit(NOISE "30 25 0:26 /a @/v2/a rw - cgroup2 cgroup2 rw\n", "0::/a/b/c\n", PHYS);
	CHECK(v == 384 * MiB, "a mounted subtree: %llu", (unsigned long long)v);
	v = limit(NOISE "30 25 0:26 /a @/v2/a rw - cgroup2 cgroup2 rw\n", "0::/elsewhere\n", PHYS);
	CHECK(v == 0, "a group outside the mounted subtree: no limit, got %llu", (unsigned long long)v);

	/* cgroup v1: memory.stat's hierarchical_memory_limit. */
	put("v1/g/memory.stat", "cache 4096\nrss 8192\nhierarchical_memory_limit 268435456\n"
				"hierarchical_memsw_limit 9223372036854771712\n");
	put("v1/h/memory.stat", "cache 0\nhierarchical_memory_limit 9223372036854771712\n");
	v = limit(V1_HOST, "9:pids:/x\n4:memory:/g\n0::/\n", PHYS);
	CHECK(v == 256 * MiB, "v1: %llu", (unsigned long long)v);
	v = limit(V1_HOST, "4:memory:/h\n0::/\n", PHYS);
	CHECK(v == 0, "v1 unlimited (2^63 - 4096): none, got %llu", (unsigned long long)v);
	/* Hybrid: v2 mounted without the memory controller, v1 with it. */
	v = limit(HYBRID, "4:memory:/g\n3:cpu,cpuacct:/\n0::/\n", PHYS);
	CHECK(v == 256 * MiB, "hybrid, v1's memory group: %llu", (unsigned long long)v);
	v = limit(HYBRID, "4:memory:/g\n0::/a/b/c\n", PHYS);
	CHECK(v == 256 * MiB, "hybrid, the smaller of the two: %llu", (unsigned long long)v);
	/* No cgroup mount at all. */
	v = limit(NOISE, "0::/a/b/c\n", PHYS);
	CHECK(v == 0, "no cgroup mounted: none, got %llu", (unsigned long long)v);

	/* A file's number: the text or its line ends with it; "max", anything
	 * else after the digits and an overflow are no limit. */
	CHECK(cgroup_u64("536870912\n") == 512 * MiB, "a line's number");
	CHECK(cgroup_u64("536870912") == 512 * MiB, "a number without its newline");
	CHECK(cgroup_u64("268435456\nhierarchical_memsw_limit 1\n") == 256 * MiB, "memory.stat's line");
	CHECK(cgroup_u64("18446744073709551615\n") == UINT64_MAX, "2^64 - 1");
	CHECK(cgroup_u64("max\n") == UINT64_MAX, "max");
	CHECK(cgroup_u64("") == UINT64_MAX, "empty");
	CHECK(cgroup_u64("-1\n") == UINT64_MAX, "a sign");
	CHECK(cgroup_u64("12x\n") == UINT64_MAX, "12x: %llu", (unsigned long long)cgroup_u64("12x\n"));
	CHECK(cgroup_u64("12 34\n") == UINT64_MAX, "two numbers");
	CHECK(cgroup_u64("99999999999999999999\n") == UINT64_MAX, "an overflow");

	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "test_cgroup: could not remove %s\n", top);
	printf("test_cgroup: %d failures\n", failures);
	return failures ? 1 : 0;
}
