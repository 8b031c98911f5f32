/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - the memory limit of the cgroup the process runs in (see
 * cgroup.h), for ZSWAP_MEMORY_LIMIT=auto and N%.
 *
 * Where the hierarchies are mounted comes from /proc/self/mountinfo (read
 * once: containers mount them at start); which group the process is in
 * from /proc/self/cgroup, read at every call, so that a process moved to
 * another group follows it. Paths in /proc/self/cgroup are relative to the
 * process's cgroup namespace root, which is the mount's root in a container
 * and "/" outside one; a mount of a subtree (its root field not "/") is
 * stripped of that prefix.
 *
 * cgroup v2: the group's limit is the smallest memory.max or memory.high of
 * it and its ancestors up to the mount (the kernel enforces every one).
 * cgroup v1: memory.stat's hierarchical_memory_limit (the same minimum,
 * computed by the kernel). A hybrid system has both: the smaller counts.
 * A value at or above physical memory is no limit (v1's unlimited is
 * 2^63 - 4096; a group limited above RAM cannot make the process short).
 *
 * Start-up and then only the reclaimer call this, once a second at most: a
 * few small reads through short-lived descriptors (fdtab_read_file), one
 * static buffer, no malloc, no stdio.
 */
#include "config.h"
#include "reclaim/cgroup.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fdtab.h"
#include "base/log.h"
#include "core/parse.h"

#define CG_PATH_MAX	512
#define CG_DEPTH_MAX	32	/* ancestors visited (v2) */

static struct {
	bool read;		/* mountinfo parsed */
	char v2_mnt[CG_PATH_MAX], v2_root[CG_PATH_MAX];
	char v1_mnt[CG_PATH_MAX], v1_root[CG_PATH_MAX];
} cg;

/* The buffer /proc files are read into, start-up's and then the
 * reclaimer's alone: mountinfo of a host with a few hundred mounts fits. */
static char cg_buf[65536];

/* Copy the next space-separated field of *p into out (octal escapes such as
 * \040 for a space kept as they are: such a mount point simply fails to
 * open). Returns false at the end of the line. */
static bool cg_field(const char **p, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ')
		s++;
	if (*s == '\n' || *s == '\0')
		return false;
	while (*s && *s != ' ' && *s != '\n') {
		if (n + 1 < cap)
			out[n++] = *s;
		s++;
	}
	out[n] = '\0';
	*p = s;
	return true;
}

/* Does the comma-separated list contain word? */
static bool cg_has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *s = list; *s;) {
		size_t n = strcspn(s, ",");
		if (n == wl && !memcmp(s, word, wl))
			return true;
		s += n;
		if (*s == ',')
			s++;
	}
	return false;
}

void cgroup_parse_mounts(const char *mountinfo)
{
	char root[CG_PATH_MAX], mnt[CG_PATH_MAX], f[CG_PATH_MAX];

	cg.read = true;
	cg.v2_mnt[0] = cg.v1_mnt[0] = '\0';
	for (const char *line = mountinfo; *line;) {
		const char *next = strchr(line, '\n');
		const char *p = line;
		/* id parent major:minor root mountpoint options [optional...] - type source superoptions */
		bool ok = cg_field(&p, f, sizeof(f)) && cg_field(&p, f, sizeof(f)) && cg_field(&p, f, sizeof(f)) &&
			  cg_field(&p, root, sizeof(root)) && cg_field(&p, mnt, sizeof(mnt));
		while (ok && (ok = cg_field(&p, f, sizeof(f))) && strcmp(f, "-") != 0)
			;
		char type[32], opts[CG_PATH_MAX];
		if (ok && cg_field(&p, type, sizeof(type)) && cg_field(&p, f, sizeof(f)) &&
		    cg_field(&p, opts, sizeof(opts))) {
			if (!strcmp(type, "cgroup2") && !cg.v2_mnt[0]) {
				memcpy(cg.v2_mnt, mnt, sizeof(mnt));
				memcpy(cg.v2_root, root, sizeof(root));
			} else if (!strcmp(type, "cgroup") && cg_has_word(opts, "memory") && !cg.v1_mnt[0]) {
				memcpy(cg.v1_mnt, mnt, sizeof(mnt));
				memcpy(cg.v1_root, root, sizeof(root));
			}
		}
		if (!next)
			break;
		line = next + 1;
	}
}

/* Find the cgroup2 mount and the v1 mount carrying the memory controller. */
static void cg_read_mounts(void)
{
	cg.read = true;
	if (fdtab_read_file("/proc/self/mountinfo", cg_buf, sizeof(cg_buf)) > 0)
		cgroup_parse_mounts(cg_buf);
}

uint64_t cgroup_u64(const char *s)
{
	bool overflow;
	uint64_t v;
	size_t n = parse_digits(s, &v, &overflow);

	/* A file's one line, or a line of memory.stat: the number ends it. */
	if (n == 0 || overflow || (s[n] != '\0' && s[n] != '\n'))
		return UINT64_MAX;
	return v;
}

/* A limit file's value: "max" (or v1's near-2^63) is none (UINT64_MAX). */
static uint64_t cg_read_value(const char *path)
{
	char b[64];

	return fdtab_read_file(path, b, sizeof(b)) > 0 ? cgroup_u64(b) : UINT64_MAX;
}

/* mnt + (path less the mount's root), into out. False if it does not fit
 * or the path is outside the mount. */
static bool cg_join(char *out, size_t cap, const char *mnt, const char *root, const char *path)
{
	size_t rl = strlen(root);

	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
			return false;
		path += rl;
	}
	return (size_t)log_snprintf(out, cap, "%s%s", mnt, path) + 1 < cap;
}

/* The group paths of a /proc/PID/cgroup text (modified): v2's ("0::PATH")
 * and v1 memory's. */
static void cg_groups(char *text, char *v2, char *v1, size_t cap)
{
	v2[0] = v1[0] = '\0';
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c1 = *c2 = '\0';	/* hierarchy ID, controllers, path */
			const char *ctrls = c1 + 1, *path = c2 + 1;
			if (!strcmp(line, "0") && !ctrls[0])
				log_snprintf(v2, cap, "%s", path);
			else if (cg_has_word(ctrls, "memory"))
				log_snprintf(v1, cap, "%s", path);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
}

/* The group's directory: mount + group, no trailing slash; "" if none. */
static void cg_dir(char *out, size_t cap, const char *mnt, const char *root, const char *group)
{
	if (!mnt[0] || !group[0] || !cg_join(out, cap, mnt, root, group)) {
		out[0] = '\0';
		return;
	}
	size_t l = strlen(out);
	while (l > 1 && out[l - 1] == '/')
		out[--l] = '\0';
}

/* The directories of the groups a /proc/PID/cgroup text names. */
static void cg_dirs_of(char *text, char *v2, char *v1, size_t cap)
{
	char g2[CG_PATH_MAX], g1[CG_PATH_MAX];

	cg_groups(text, g2, g1, sizeof(g2));
	cg_dir(v2, cap, cg.v2_mnt, cg.v2_root, g2);
	cg_dir(v1, cap, cg.v1_mnt, cg.v1_root, g1);
}

void cgroup_dirs(char *v2, char *v1, size_t cap)
{
	if (!cg.read)
		cg_read_mounts();
	v2[0] = v1[0] = '\0';
	if (fdtab_read_file("/proc/self/cgroup", cg_buf, sizeof(cg_buf)) > 0)
		cg_dirs_of(cg_buf, v2, v1, cap);
}

static uint64_t cg_v2_limit(const char *dir0)
{
	char dir[CG_PATH_MAX], file[CG_PATH_MAX + 16];
	uint64_t best = UINT64_MAX;
	size_t ml = strlen(cg.v2_mnt);

	if (!dir0[0])
		return UINT64_MAX;
	log_snprintf(dir, sizeof(dir), "%s", dir0);
	/* Up to the mount itself: in a container (a cgroup namespace) the
	 * mount's root is the container's own group, whose memory.max is the
	 * limit that matters; the host's root group has no such files. */
	for (int depth = 0; depth < CG_DEPTH_MAX; depth++) {
		size_t dl = strlen(dir);
		while (dl > 1 && dir[dl - 1] == '/')
			dir[--dl] = '\0';
		log_snprintf(file, sizeof(file), "%s/memory.max", dir);
		uint64_t v = cg_read_value(file);
		if (v < best)
			best = v;
		log_snprintf(file, sizeof(file), "%s/memory.high", dir);
		v = cg_read_value(file);
		if (v < best)
			best = v;
		char *slash = strrchr(dir, '/');
		if (dl <= ml || !slash)
			break;
		*slash = '\0';
	}
	return best;
}

static uint64_t cg_v1_limit(const char *dir)
{
	char file[CG_PATH_MAX + 16];
	static const char key[] = "hierarchical_memory_limit ";

	if (!dir[0])
		return UINT64_MAX;
	log_snprintf(file, sizeof(file), "%s/memory.stat", dir);
	if (fdtab_read_file(file, cg_buf, sizeof(cg_buf)) <= 0)
		return UINT64_MAX;
	const char *s = cg_buf;
	while (strncmp(s, key, sizeof(key) - 1) != 0) {	/* at a line's start */
		s = strchr(s, '\n');
		if (!s)
			return UINT64_MAX;
		s++;
	}
	return cgroup_u64(s + sizeof(key) - 1);
}

/* The limit of the groups in dirs v2 and v1, physical memory phys. */
static uint64_t cg_limit_in(const char *v2, const char *v1, uint64_t phys)
{
	uint64_t a = cg_v2_limit(v2), b = cg_v1_limit(v1), lim = a < b ? a : b;

	if (lim == UINT64_MAX || (phys && lim >= phys))
		return 0;
	return lim;
}

uint64_t cgroup_limit_of(char *proc_cgroup, uint64_t phys)
{
	char v2[CG_PATH_MAX], v1[CG_PATH_MAX];

	cg_dirs_of(proc_cgroup, v2, v1, sizeof(v2));
	return cg_limit_in(v2, v1, phys);
}

uint64_t cgroup_memory_limit(uint64_t phys)
{
	char v2[CG_PATH_MAX], v1[CG_PATH_MAX];

	cgroup_dirs(v2, v1, sizeof(v2));
	return cg_limit_in(v2, v1, phys);
}
