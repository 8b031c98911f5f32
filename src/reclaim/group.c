/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * group.c - one limit for a process tree (group.h).
 *
 * The file. /dev/shm/libzswap-UID/g-TOKEN, TOKEN 128 random bits in hex:
 * the directory is made mode 0700 and used only if it is a real directory
 * (not a symbolic link), owned by the user, mode 0700; the file is made
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and joined only if it is a regular
 * file of the user's, one link, of the group's size, whose fixed fields
 * (magic, version, size, owner, slots, token, parent) pass their checksum
 * and whose counters are within range. Another user cannot open it (the
 * directory is not theirs), and a user's own corrupt file is refused.
 *
 * The member table. GROUP_MEMBERS_MAX slots of {pid, start time, charge,
 * cold bytes, heartbeat}, claimed by compare-and-swap on the pid. The start
 * time (/proc/PID/stat's 22nd field) tells a reused pid. A member leaves at
 * exit (a destructor); one killed, or gone through _exit or an exec without
 * the library, is reaped by any member that looks (at most once a second):
 * the pid is gone, a zombie, or started at another time. The group's charge
 * is kept as a sum (total) that every change of a slot's charge adds to, so
 * the throttle on the fault path reads one word; the reaping pass also
 * recomputes it from the slots, which bounds any drift of the sum.
 *
 * Nesting. zswapctl run --limit inside a group starts a child group: the
 * child's file records its parent's token, and its members publish into
 * both. The policy holds to the group whose headroom is smallest (the
 * reclaimer points the throttle at that group's sum).
 *
 * The second tier. The maker records its tier's directory and cap among
 * the fixed fields (writeback_place); members open their files there with
 * that cap and count their blocks in swap and their slot's disk
 * (writeback_group, backing_set_share). A slot cleared, by leaving or by
 * the reaper, takes its disk bytes out of swap: the member's file was
 * unlinked at its making and went with its descriptors.
 *
 * Coldest first. Each member publishes the bytes of its resident pages not
 * faulted in for GROUP_COLD_S seconds, and whether it faulted (filled,
 * loaded or was held) in the last second. A member that is busy leaves the
 * group's excess, while the idle members store pages and for at most
 * GROUP_DEFER_MS without their storing one, to an idle member holding
 * cold pages whose reclaimer runs (its heartbeat is recent): the idle
 * member's cold pages go before the busy member's warm ones. The busy
 * member asks them (a counter in each idle slot, then a wake-up): the
 * group's charge may sit below their own lines to wake reclaim, only the
 * busy member's fault needing the room, and unasked they would store
 * nothing. A stopped member's heartbeat goes stale, and the others stop
 * waiting for it.
 */
#include "config.h"
#include "reclaim/group.h"

#include <errno.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/fdtab.h"
#include "base/hist.h"
#include "base/layout.h"
#include "base/log.h"
#include "base/prim.h"
#include "core/parse.h"
#include "core/zsmalloc.h"
#include "engine/engine.h"
#include "engine/policy.h"
#include "engine/policy_reclaim.h"
#include "engine/writeback.h"

#define GROUP_MAGIC	0x5a53574750524f31ull	/* "ZSWGPRO1" */
#define GROUP_VERSION	5
#define GROUP_DEPTH	4		/* groups on a member's path: its own and its ancestors */
#define GROUP_COLD_S	2		/* a resident page not faulted in for this long is cold */
#define GROUP_DEFER_MS	300		/* the longest a busy member waits for idle ones without progress */
#define GROUP_EPISODE_NS 100000000ull	/* group_defer not called this long: the last episode over the line ended */
#define GROUP_BEAT_NS	1000000000ull	/* a reclaimer that has not turned for this long is not running (RECLAIM_POLL_IDLE_MS below it) */
#define GROUP_LOOK_NS	1000000000ull	/* reaping, the shared pages and the cold bytes: once a second */
#define GROUP_LOOK_FAST_NS 100000000ull	/* ten times as often while pages are shared after a fork */
#define GROUP_SHARED_FAST (256u << 10)	/* shared bytes that ask for the faster looks */
#define GROUP_LOOK_QUIET_NS 5000000000ull /* while neither the member nor the group moves */
#define GROUP_STALE_S	60		/* a group file untouched this long, no member alive: swept */

struct group_slot {
	_Atomic int32_t pid;			/* 0: free */
	_Atomic uint32_t busy;			/* faulted in the last second */
	_Atomic uint64_t start;			/* start time (clock ticks after boot), 0 while claimed */
	_Atomic uint64_t charge;		/* bytes: its share of the group's charge */
	_Atomic uint64_t cold;			/* bytes of resident pages idle GROUP_COLD_S */
	_Atomic uint64_t beat;			/* CLOCK_MONOTONIC ns of the reclaimer's last turn */
	_Atomic uint64_t refaults;		/* its refaults so far (memory.stat's pgmajfault) */
	_Atomic uint32_t kick;			/* its reclaimer sleeps on this word (pol.kick_word) */
	_Atomic uint32_t ask;			/* bumped by a busy member deferring to it (group_asked) */
	_Atomic uint64_t disk;			/* bytes its second tier's file holds on disk */
};
_Static_assert(sizeof(struct group_slot) == 64, "a slot is one cache line");

struct group_hdr {
	/* Fixed at creation, checked by check. */
	uint64_t magic;
	uint32_t version, size;
	uint32_t uid, nslots;
	char token[40];
	char parent[40];
	char tier_dir[OPT_STRING_MAX];		/* the second tier's directory, "" for each member's own */
	uint64_t tier_max;			/* memory.swap.max: the cap on swap (bytes) */
	uint64_t check;
	/* Shared counters. */
	_Atomic uint64_t max;			/* memory.max, bytes */
	_Atomic uint64_t total;			/* memory.current: the slots' charges summed */
	_Atomic uint64_t events_high, events_max;
	_Atomic uint64_t refaults_gone;		/* refaults of the members that left */
	_Atomic uint64_t reaped_ns;		/* the last reaping pass, by whichever member */
	_Atomic uint64_t swap;			/* memory.swap.current: the slots' disk bytes summed */
	_Atomic uint64_t swap_events_max;	/* tier writes refused at tier_max */
	_Atomic uint64_t peak;			/* memory.peak: the highest total */
	uint8_t pad[4096 - 184 - OPT_STRING_MAX - 8];
	struct group_slot slots[GROUP_MEMBERS_MAX];
};
_Static_assert(offsetof(struct group_hdr, slots) == 4096, "the header is one page");

#define GROUP_SIZE	sizeof(struct group_hdr)

/* This process's path: [0] its own group, then its ancestors. */
static struct {
	struct group_hdr *g[GROUP_DEPTH];
	struct group_slot *me[GROUP_DEPTH];
	unsigned int depth;
	int pid;
	uint64_t start;
	uint64_t look_ns;		/* the last once-a-second look */
	uint64_t over_ns;		/* when the group last went over with this member deferring, 0: not */
	uint64_t cold_seen;		/* the idle members' cold bytes at the last look (group_defer) */
	uint32_t asked;			/* this member's slot's ask at the last group_asked */
	uint64_t defer_ns;		/* the last group_defer: a later call after a pause starts an episode */
	uint64_t faults0;		/* fills, loads and holds at the last look */
	uint64_t shared;		/* shared anonymous bytes at the last look */
	uint64_t minflt;		/* minor faults at the last look */
	uint64_t shared_ns;		/* the last look at the shared part */
	uint64_t born_ns;		/* when this process joined: at start-up or fork */
	uint64_t refaults0;		/* refaults before it joined (a fork child's parent's) */
	uint64_t look_took;		/* ns that look took */
	uint64_t shared_total;		/* the group's charge then */
	int smaps_fd;
} grp = { .smaps_fd = -1 };

/* --- the file ----------------------------------------------------------- */

static uint64_t group_check(const struct group_hdr *h)
{
	const unsigned char *p = (const unsigned char *)h;
	uint64_t x = 0xcbf29ce484222325ull;	/* FNV-1a over the fixed fields */

	for (size_t i = 0; i < offsetof(struct group_hdr, check); i++)
		x = (x ^ p[i]) * 0x100000001b3ull;
	return x;
}

static bool group_token_ok(const char *t)
{
	size_t i;

	for (i = 0; i < GROUP_TOKEN_HEX; i++)
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
			return false;
	return t[i] == '\0';
}

/* The fixed fields and the counters' ranges; why names what is wrong. */
static bool group_valid(const struct group_hdr *h, const char *token, const char **why)
{
	*why = "bad magic, version or size";
	if (h->magic != GROUP_MAGIC || h->version != GROUP_VERSION || h->size != GROUP_SIZE ||
	    h->nslots != GROUP_MEMBERS_MAX)
		return false;
	*why = "bad checksum";
	if (h->check != group_check(h))
		return false;
	*why = "another user's group";
	if (h->uid != (uint32_t)syscall(SYS_geteuid))
		return false;
	*why = "bad token";
	if (memcmp(h->token, token, GROUP_TOKEN_HEX + 1) != 0 || (h->parent[0] && !group_token_ok(h->parent)))
		return false;
	*why = "bad second tier";
	if (memchr(h->tier_dir, 0, sizeof(h->tier_dir)) == NULL ||
	    (h->tier_dir[0] && (h->tier_dir[0] != '/' || h->tier_max < ZS_PAGE_SIZE)))
		return false;
	*why = "memory.max out of range";
	uint64_t max = atomic_load(&h->max);
	return max >= (1ull << 20) && max < (1ull << 56);
}

/* /dev/shm/libzswap-UID, made if missing, opened only if it is a real
 * directory of the user's with mode 0700. Returns a descriptor, or -1 with
 * *why set. */
static int group_dir(bool make, const char **why)
{
	char path[64];
	struct stat st;
	unsigned int uid = (unsigned int)syscall(SYS_geteuid);

	log_snprintf(path, sizeof(path), "/dev/shm/libzswap-%u", uid);
	if (make && syscall(SYS_mkdirat, AT_FDCWD, path, 0700) != 0 && errno != EEXIST) {
		*why = "cannot make /dev/shm/libzswap-UID";
		return -1;
	}
	int fd = fdtab_short((int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0) {
		*why = errno == ELOOP || errno == ENOTDIR ? "/dev/shm/libzswap-UID is not a directory (a symbolic link?)"
							  : "cannot open /dev/shm/libzswap-UID";
		return -1;
	}
	if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
	    (st.st_mode & 07777) != 0700) {
		*why = "/dev/shm/libzswap-UID is not a directory of the user's with mode 0700";
		fdtab_close_short(fd);
		return -1;
	}
	return fd;
}

static struct group_hdr *group_map(int fd)
{
	void *p = (void *)syscall(SYS_mmap, NULL, GROUP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Open the group TOKEN names; NULL with *why set. */
static struct group_hdr *group_open(const char *token, const char **why)
{
	char name[48];
	struct stat st;

	if (!group_token_ok(token)) {
		*why = "not a token";
		return NULL;
	}
	int dir = group_dir(false, why);
	if (dir < 0)
		return NULL;
	log_snprintf(name, sizeof(name), "g-%s", token);
	int fd = fdtab_short((int)syscall(SYS_openat, dir, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
	fdtab_close_short(dir);
	if (fd < 0) {
		*why = "no such group file";
		return NULL;
	}
	struct group_hdr *h = NULL;
	*why = "not a regular file of the user's with one link and the group's size";
	if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == (uid_t)syscall(SYS_geteuid) &&
	    st.st_nlink == 1 && st.st_size == (off_t)GROUP_SIZE && (h = group_map(fd)) && !group_valid(h, token, why)) {
		syscall(SYS_munmap, h, GROUP_SIZE);
		h = NULL;
	}
	fdtab_close_short(fd);
	return h;
}

/* The second tier of a new group: its parent's place, else where this
 * process's tier goes and its cap (writeback_place; "" when it cannot hold
 * one: each member's own). */
static void group_tier_place(struct group_hdr *h, const char *parent)
{
	const char *why;
	struct group_hdr *p = parent ? group_open(parent, &why) : NULL;

	if (p && p->tier_dir[0]) {
		memcpy(h->tier_dir, p->tier_dir, sizeof(h->tier_dir));
		h->tier_max = p->tier_max;
	} else if (!writeback_place(h->tier_dir, sizeof(h->tier_dir), &h->tier_max)) {
		memset(h->tier_dir, 0, sizeof(h->tier_dir));
		h->tier_max = 0;
	}
	if (p)
		syscall(SYS_munmap, p, GROUP_SIZE);
}

/* A new group of limit bytes under parent ("" for none). */
/* Whether a group file (dir's entry name) belongs to nobody now: its
 * user's regular file of the group's size, untouched for GROUP_STALE_S (a
 * group being made has no member yet), whose table holds no live pid. */
static bool group_file_dead(int dir, const char *name)
{
	struct stat st;
	struct timespec now;
	static struct group_slot slots[GROUP_MEMBERS_MAX];	/* the constructor's: one thread */
	bool dead = false;

	int fd = fdtab_short((int)syscall(SYS_openat, dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0)
		return false;
	clock_gettime(CLOCK_REALTIME, &now);
	if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == syscall(SYS_geteuid) &&
	    st.st_size == (off_t)GROUP_SIZE && now.tv_sec - st.st_mtim.tv_sec >= GROUP_STALE_S) {
		dead = syscall(SYS_pread64, fd, slots, sizeof(slots), (off_t)offsetof(struct group_hdr, slots)) ==
		       (long)sizeof(slots);
		for (unsigned int i = 0; i < GROUP_MEMBERS_MAX && dead; i++) {
			int32_t pid = atomic_load(&slots[i].pid);
			if (pid > 0 && (syscall(SYS_kill, pid, 0) == 0 || errno == EPERM))
				dead = false;	/* alive (a reused pid errs on the side of keeping) */
		}
	}
	fdtab_close_short(fd);
	return dead;
}

/* Remove the group files of groups whose members were all killed (nobody
 * left to remove them): a tree under a limit SIGKILLed whole leaves one
 * page and a table in /dev/shm, swept when the next group is made. */
static void group_sweep(int dir)
{
	char buf[4096];
	long n;

	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			off += d->reclen;
			if (strncmp(d->name, "g-", 2) != 0 || !group_token_ok(d->name + 2))
				continue;
			if (group_file_dead(dir, d->name))
				syscall(SYS_unlinkat, dir, d->name, 0);
		}
	}
}

static struct group_hdr *group_create(uint64_t limit, const char *parent, const char **why)
{
	unsigned char rnd[GROUP_TOKEN_HEX / 2];
	char token[GROUP_TOKEN_HEX + 1], name[48];
	static const char hex[] = "0123456789abcdef";

	if (syscall(SYS_getrandom, rnd, sizeof(rnd), 0) != (long)sizeof(rnd)) {
		*why = "no random token";
		return NULL;
	}
	for (size_t i = 0; i < sizeof(rnd); i++) {
		token[2 * i] = hex[rnd[i] >> 4];
		token[2 * i + 1] = hex[rnd[i] & 15];
	}
	token[GROUP_TOKEN_HEX] = '\0';
	int dir = group_dir(true, why);
	if (dir < 0)
		return NULL;
	group_sweep(dir);
	log_snprintf(name, sizeof(name), "g-%s", token);
	int fd = fdtab_short((int)syscall(SYS_openat, dir, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
	fdtab_close_short(dir);
	struct group_hdr *h = NULL;
	*why = "cannot make the group file";
	if (fd >= 0 && syscall(SYS_ftruncate, fd, (off_t)GROUP_SIZE) == 0 && (h = group_map(fd))) {
		h->magic = GROUP_MAGIC;
		h->version = GROUP_VERSION;
		h->size = GROUP_SIZE;
		h->uid = (uint32_t)syscall(SYS_geteuid);
		h->nslots = GROUP_MEMBERS_MAX;
		memcpy(h->token, token, sizeof(token));
		if (parent)
			memcpy(h->parent, parent, GROUP_TOKEN_HEX + 1);
		group_tier_place(h, parent);
		h->check = group_check(h);
		atomic_store(&h->max, limit);
	}
	fdtab_close_short(fd);
	return h;
}

/* --- members ------------------------------------------------------------- */

/* Fields of /proc/PID/stat after the command's closing parenthesis: the
 * state (field 3) and the start time (field 22). False if unreadable. */
static bool group_proc_stat(int pid, char *state, uint64_t *start)
{
	char path[32], buf[1024];

	log_snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	long n = fdtab_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	char *p = NULL;
	for (long i = n - 1; i >= 0 && !p; i--)
		if (buf[i] == ')')
			p = buf + i + 2;
	if (!p || p >= buf + n)
		return false;
	*state = *p;
	unsigned int field = 3;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*start = v;
	return field == 22;
}

/* Empty a slot this caller won: its charge leaves the group's. */
static void group_slot_clear(struct group_hdr *h, struct group_slot *s)
{
	uint64_t c = atomic_exchange(&s->charge, 0), d = atomic_exchange(&s->disk, 0);

	atomic_fetch_sub(&h->total, c);
	/* The tier's file was unlinked at its making: its blocks went with
	 * the member's descriptors. */
	atomic_fetch_sub(&h->swap, d);
	atomic_fetch_add(&h->refaults_gone, atomic_exchange(&s->refaults, 0));
	atomic_store(&s->cold, 0);
	atomic_store(&s->start, 0);
}

/* A slot for this process: its own already (an exec'd image of a member),
 * or a free one claimed. */
static struct group_slot *group_claim(struct group_hdr *h)
{
	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
		struct group_slot *s = &h->slots[i];
		if (atomic_load(&s->pid) == grp.pid && atomic_load(&s->start) == grp.start) {
			/* The image before the exec: its tier's file, close-on-exec,
			 * is gone. */
			atomic_fetch_sub(&h->swap, atomic_exchange(&s->disk, 0));
			return s;
		}
	}
	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
		struct group_slot *s = &h->slots[i];
		int32_t zero = 0;
		if (atomic_compare_exchange_strong(&s->pid, &zero, grp.pid)) {
			group_slot_clear(h, s);
			atomic_store(&s->beat, hist_now());
			atomic_store(&s->start, grp.start);
			return s;
		}
	}
	return NULL;
}

static void group_reap(struct group_hdr *h);

/* The last member to leave removes the file (one killed leaves it to the
 * next member that looks; a group whose members were all killed leaves
 * its file, one page and a table, in /dev/shm/libzswap-UID). */
static void group_release(struct group_hdr *h, struct group_slot *s)
{
	int32_t pid = grp.pid;
	const char *why;
	char name[48];

	if (!atomic_compare_exchange_strong(&s->pid, &pid, pid))
		return;
	group_slot_clear(h, s);
	atomic_store(&s->pid, 0);
	group_reap(h);	/* members gone through _exit or a signal since the last look */
	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++)
		if (atomic_load(&h->slots[i].pid))
			return;
	int dir = group_dir(false, &why);
	log_snprintf(name, sizeof(name), "g-%s", h->token);
	if (dir >= 0)
		syscall(SYS_unlinkat, dir, name, 0);
	fdtab_close_short(dir);
}

/* Slots of members gone without leaving; the sums recomputed. */
static void group_reap(struct group_hdr *h)
{
	uint64_t sum = 0, disk = 0, now = hist_now();

	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
		struct group_slot *s = &h->slots[i];
		int32_t pid = atomic_load(&s->pid);
		uint64_t start = atomic_load(&s->start);
		char state = 0;
		uint64_t now_start = 0;
		if (!pid)
			continue;
		/* A member whose reclaimer turned lately is not a zombie nor
		 * another process: only the others are looked up in /proc. */
		if (pid != grp.pid) {
			bool gone = syscall(SYS_kill, pid, 0) != 0 && errno == ESRCH;
			if (!gone && now - atomic_load(&s->beat) > GROUP_BEAT_NS &&
			    group_proc_stat(pid, &state, &now_start))
				gone = state == 'Z' || state == 'X' || (start && now_start != start);
			if (gone && atomic_compare_exchange_strong(&s->pid, &pid, pid)) {
				/* Won by whoever clears it: a second reaper finds
				 * the pid changed or the charge already gone. */
				if (atomic_load(&s->start) == start) {
					group_slot_clear(h, s);
					atomic_store(&s->pid, 0);
				}
				continue;
			}
		}
		sum += atomic_load(&s->charge);
		disk += atomic_load(&s->disk);
	}
	atomic_store(&h->total, sum);
	atomic_store(&h->swap, disk);
	policy_peak(&h->peak, sum);
}

/* --- joining ------------------------------------------------------------- */

extern char **environ;

ZSWAP_STARTUP static const char *group_env(const char *name)
{
	size_t len = strlen(name);

	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* ZSWAP_GROUP=TOKEN for the programs this one runs: a copy of environ with
 * it in place of any older value (prim memory, never freed: glibc's setenv
 * copies an environ it did not make before changing it). Constructor
 * only. */
static void group_env_set(const char *token)
{
	size_t n = 0, len = strlen(GROUP_ENV) + 1 + GROUP_TOKEN_HEX + 1;

	while (environ && environ[n])
		n++;
	char **e = prim_alloc((n + 2) * sizeof(char *) + len);
	if (!e)
		return;
	char *var = (char *)(e + n + 2);
	log_snprintf(var, len, "%s=%s", GROUP_ENV, token);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], GROUP_ENV "=", sizeof(GROUP_ENV)) != 0 &&
		    strncmp(environ[i], GROUP_PARENT_ENV "=", sizeof(GROUP_PARENT_ENV)) != 0)
			e[k++] = environ[i];
	e[k++] = var;
	e[k] = NULL;
	environ = e;
}

/* The path from a group: it and its ancestors, as far as they open. */
static void group_path(struct group_hdr *h)
{
	const char *why;

	grp.depth = 0;
	while (h && grp.depth < GROUP_DEPTH) {
		grp.g[grp.depth++] = h;
		h = h->parent[0] ? group_open(h->parent, &why) : NULL;
	}
}

static bool group_take_slots(void)
{
	for (unsigned int i = 0; i < grp.depth; i++) {
		grp.me[i] = group_claim(grp.g[i]);
		if (!grp.me[i]) {
			while (i-- > 0)
				group_release(grp.g[i], grp.me[i]);
			return false;
		}
	}
	grp.asked = atomic_load(&grp.me[0]->ask);	/* a former holder's requests are not this one's */
	return true;
}

/* The policy's view: the first group's slot, and the sum of the group with
 * the least headroom (group_tick moves it). */
static void group_point(unsigned int i)
{
	pol.grp_mine = grp.depth ? &grp.me[0]->charge : NULL;
	pol.kick_word = grp.depth ? &grp.me[0]->kick : NULL;
	pol.grp_total = grp.depth ? &grp.g[i]->total : NULL;
	pol.grp_events_max = grp.depth ? &grp.g[i]->events_max : NULL;
	pol.grp_peak = grp.depth ? &grp.g[i]->peak : NULL;
}

/* The tier's counters: every group of the path, this member's slot in
 * each (writeback_group). A group with no place of its own counts without
 * a cap. */
static void group_share(const char *dir, uint64_t max)
{
	struct backing_share sh = { .n = grp.depth < BACKING_SHARES ? grp.depth : BACKING_SHARES };

	for (unsigned int i = 0; i < sh.n; i++) {
		sh.g[i].total = &grp.g[i]->swap;
		sh.g[i].mine = &grp.me[i]->disk;
		sh.g[i].events_max = &grp.g[i]->swap_events_max;
		sh.g[i].max = grp.g[i]->tier_dir[0] ? grp.g[i]->tier_max : UINT64_MAX;
	}
	writeback_group(dir, max, &sh);
}

static void group_leave_all(void)
{
	writeback_group(NULL, 0, NULL);	/* before the slots go: another member may take them */
	pol.grp_total = pol.grp_mine = pol.grp_events_max = pol.grp_peak = NULL;
	pol.kick_word = NULL;
	for (unsigned int i = 0; i < grp.depth; i++)
		if (grp.me[i])
			group_release(grp.g[i], grp.me[i]);
}

static void group_self(void)
{
	char state;

	grp.pid = (int)syscall(SYS_getpid);
	grp.start = 0;
	group_proc_stat(grp.pid, &state, &grp.start);
	fdtab_close(grp.smaps_fd);
	grp.smaps_fd = fdtab_open_ro("/proc/self/smaps_rollup", true);
	grp.look_ns = grp.shared_ns = grp.over_ns = grp.cold_seen = 0;
	grp.born_ns = hist_now();
	grp.refaults0 = atomic_load(&eng.cnt.refaults);
}

ZSWAP_STARTUP bool group_named(void)
{
	return eng.opt.memory_scope == OPT_SCOPE_TREE && group_env(GROUP_ENV) != NULL;
}

void group_init(uint64_t limit)
{
	const char *token = group_env(GROUP_ENV), *parent = group_env(GROUP_PARENT_ENV), *why = NULL;
	struct group_hdr *h = NULL;

	if (eng.opt.memory_scope != OPT_SCOPE_TREE || (!token && !limit))
		return;
	group_self();
	if (token && !parent) {
		h = group_open(token, &why);
		if (!h) {
			char shown[GROUP_TOKEN_HEX + 1];
			log_snprintf(shown, sizeof(shown), "%s", token);
			zlog("ZSWAP_GROUP=%s cannot be joined (%s): this process keeps a memory limit of its own", shown,
			     why);
			return;
		}
	} else {
		/* A group of its own, under the parent if one is named (and
		 * joins). */
		char ptok[GROUP_TOKEN_HEX + 1] = "";
		if (parent && group_token_ok(parent)) {
			memcpy(ptok, parent, sizeof(ptok));
			struct group_hdr *p = group_open(parent, &why);
			if (p) {
				syscall(SYS_munmap, p, GROUP_SIZE);
			} else {
				zlog("ZSWAP_GROUP_PARENT=%s cannot be joined (%s): the new group has no parent", ptok, why);
				ptok[0] = '\0';
			}
		}
		h = limit ? group_create(limit, ptok[0] ? ptok : NULL, &why) : NULL;
		if (!h) {
			if (limit)
				zlog("cannot make a process group for ZSWAP_MEMORY_LIMIT (%s): this process keeps a"
				     " memory limit of its own", why);
			return;
		}
	}
	group_path(h);
	if (!group_take_slots()) {
		zlog("the group's member table is full (%d members): this process keeps a memory limit of its own",
		     GROUP_MEMBERS_MAX);
		for (unsigned int i = 0; i < grp.depth; i++)
			syscall(SYS_munmap, grp.g[i], GROUP_SIZE);
		grp.depth = 0;
		return;
	}
	group_env_set(h->token);
	group_point(0);
	group_share(h->tier_dir[0] ? h->tier_dir : NULL, h->tier_max);
	if (eng.opt.verbose)
		zlog("group %s: member %d, memory.max %llu MiB%s", h->token, grp.pid,
		     (unsigned long long)(atomic_load(&h->max) >> 20), h->parent[0] ? " (nested)" : "");
}

void group_fork_child(void)
{
	pol.grp_total = pol.grp_mine = pol.grp_events_max = pol.grp_peak = NULL;
	pol.kick_word = NULL;	/* the parent's slot's, until its own */
	if (!grp.depth)
		return;
	group_self();
	if (!group_take_slots()) {
		zlog("the group's member table is full (%d members): this process keeps a memory limit of its own",
		     GROUP_MEMBERS_MAX);
		grp.depth = 0;
		return;
	}
	group_point(0);
	group_share(NULL, 0);	/* the file it opened: its own slot's */
}

ZSWAP_STARTUP __attribute__((destructor)) static void group_fini(void)
{
	if (grp.depth && syscall(SYS_getpid) == grp.pid)
		group_leave_all();
}

/* --- the reclaimer's side ------------------------------------------------ */

/* What this member's charge holds beyond its proportional part of pages
 * other members map too, so that the group counts each such page once:
 * anonymous pages shared copy-on-write since a fork (Anonymous - Pss_Anon
 * from smaps_rollup) and shared memory, which every member's charge counts
 * whole (RssShmem, as the charge's last look at status read it, less
 * Pss_Shmem). File pages are left to the
 * charge's own rule (src/engine/pagecache.h: those others read in are not
 * charged at all). */
static uint64_t group_shared_bytes(void)
{
	char buf[2048];

	long n = grp.smaps_fd < 0 ? -1 : syscall(SYS_pread64, grp.smaps_fd, buf, sizeof(buf), 0);
	if (n <= 0)
		return 0;
	uint64_t anon = parse_proc_kb(buf, (size_t)n, "Anonymous:"), pss_anon = parse_proc_kb(buf, (size_t)n, "Pss_Anon:");
	uint64_t shmem = atomic_load_explicit(&pol.shmem, memory_order_relaxed);
	uint64_t pss_shmem = parse_proc_kb(buf, (size_t)n, "Pss_Shmem:");
	return (anon > pss_anon ? anon - pss_anon : 0) + (shmem > pss_shmem ? shmem - pss_shmem : 0);
}

struct group_cold {
	uint32_t now;
	uint64_t pages;
};

static void group_cold_region(const struct region_ref *r, void *arg)
{
	struct group_cold *c = arg;
	size_t np = (r->end - r->start) >> ZS_PAGE_SHIFT;

	for (size_t i = 0; r->arr && i < np; i++) {
		uint32_t a = atomic_load_explicit(&r->arr->slots[r->first + i].aux, memory_order_relaxed);
		if ((a & AUX_RESIDENT) && ((c->now - AUX_TIME(a)) & AUX_TIME_MASK) >= GROUP_COLD_S)
			c->pages++;
	}
}

/* Bytes of resident managed pages not faulted in for GROUP_COLD_S. */
static uint64_t group_cold_bytes(void)
{
	struct group_cold c = { policy_now(), 0 };

	region_for_each(group_cold_region, &c);
	return c.pages << ZS_PAGE_SHIFT;
}

/* Minor faults so far (getrusage): every copy-on-write break is one. */
static uint64_t group_minflt(void)
{
	struct rusage ru;

	return syscall(SYS_getrusage, RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

/*
 * The shared part between looks. A copy-on-write break adds a page to what
 * the group holds with no change in any member's resident set: the writer's
 * copy is new, the original stays with the others. smaps_rollup is read at
 * most every GROUP_LOOK_FAST_NS, and after a fork the children break
 * copy-on-write pages faster than that (an interpreter writes reference
 * counts all over its heap). So between looks every minor fault is taken as
 * one page no longer shared: the charge errs high (a first touch of a new
 * page counts twice until the next look), never low, and the writer's
 * whole page covers the half the parent still counts as shared.
 */
static void group_shared_now(void)
{
	uint64_t f = group_minflt() - grp.minflt, gone = f << ZS_PAGE_SHIFT;

	atomic_store(&pol.grp_shared, grp.shared > gone ? grp.shared - gone : 0);
}

/* Whether what this member shares may have changed since the last look:
 * it faulted (its own copy-on-write breaks), or the group's charge moved
 * (the others' breaks leave this member's pages its own). An idle tree
 * reads smaps_rollup once a second a member, not ten times. */
static bool group_sharing_moves(void)
{
	uint64_t t = atomic_load(&grp.g[0]->total);
	uint64_t moved = t > grp.shared_total ? t - grp.shared_total : grp.shared_total - t;

	return group_minflt() != grp.minflt || moved >= GROUP_SHARED_FAST;
}

/* The shared part, read from smaps_rollup. */
static void group_look_shared(uint64_t now)
{
	grp.shared_total = atomic_load(&grp.g[0]->total);
	grp.minflt = group_minflt();
	grp.shared = group_shared_bytes();
	atomic_store(&pol.grp_shared, grp.shared);
	grp.shared_ns = now;
	grp.look_took = hist_now() - now;
}

/* Once a second: busy or not, the cold bytes, the members gone. */
static void group_look(uint64_t now)
{
	uint64_t f = policy_faults();
	atomic_store(&grp.me[0]->busy, f != grp.faults0);
	grp.faults0 = f;
	uint64_t cold = group_cold_bytes();
	for (unsigned int i = 0; i < grp.depth; i++) {
		atomic_store(&grp.me[i]->cold, cold);
		/* One member a second reaps for all (each reading every
		 * member's /proc/PID/stat would cost the tree members^2). */
		uint64_t last = atomic_load(&grp.g[i]->reaped_ns);
		if (now - last >= GROUP_LOOK_NS && atomic_compare_exchange_strong(&grp.g[i]->reaped_ns, &last, now))
			group_reap(grp.g[i]);
	}
	grp.look_ns = now;
}

uint64_t group_tick(void)
{
	uint64_t now = hist_now(), best = UINT64_MAX, max = 0;
	unsigned int which = 0;

	if (!grp.depth)
		return 0;
	uint64_t refaults = atomic_load(&eng.cnt.refaults) - grp.refaults0;
	for (unsigned int i = 0; i < grp.depth; i++) {
		atomic_store(&grp.me[i]->beat, now);
		atomic_store(&grp.me[i]->refaults, refaults);
	}
	/* The faster looks cost at most ~1 % of a CPU: a large resident set
	 * makes smaps_rollup's walk longer, and the looks rarer. */
	bool moves = group_sharing_moves();
	uint64_t every = !moves ? GROUP_LOOK_QUIET_NS : grp.shared >= GROUP_SHARED_FAST ? GROUP_LOOK_FAST_NS : GROUP_LOOK_NS;
	if (every < grp.look_took * 100)
		every = grp.look_took * 100;
	if (now - grp.shared_ns >= every)
		group_look_shared(now);
	else if (grp.shared && now - grp.born_ns < GROUP_LOOK_NS)
		group_shared_now();
	if (now - grp.look_ns >= GROUP_LOOK_NS)
		group_look(now);
	/* The smallest headroom on the path holds. */
	for (unsigned int i = 0; i < grp.depth; i++) {
		uint64_t m = atomic_load(&grp.g[i]->max), t = atomic_load(&grp.g[i]->total);
		uint64_t room = m > t ? m - t : 0;
		if (room < best) {
			best = room;
			which = i;
			max = m;
		}
	}
	/* A member of a nested group publishes its charge into every group
	 * of the path: the ancestors' slots follow the first one's. */
	for (unsigned int i = 1; i < grp.depth; i++) {
		uint64_t c = atomic_load(&grp.me[0]->charge);
		uint64_t old = atomic_exchange(&grp.me[i]->charge, c);
		uint64_t t = atomic_fetch_add(&grp.g[i]->total, c - old) + (c - old);
		if (t < (UINT64_C(1) << 62))
			policy_peak(&grp.g[i]->peak, t);
	}
	if (pol.grp_total != &grp.g[which]->total)
		group_point(which);
	return max;
}

bool group_defer(uint64_t excess)
{
	uint64_t now = hist_now(), cold = 0;

	/* Busy: it faulted in the last second, or since the last look. */
	if (!grp.depth || (!atomic_load(&grp.me[0]->busy) && policy_faults() == grp.faults0)) {
		grp.over_ns = 0;
		return false;
	}
	struct group_hdr *h = grp.g[0];
	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
		struct group_slot *s = &h->slots[i];
		if (s == grp.me[0] || !atomic_load(&s->pid) || atomic_load(&s->busy))
			continue;
		if (now - atomic_load(&s->beat) > GROUP_BEAT_NS)
			continue;	/* stopped or blocked: it cannot reclaim */
		cold += atomic_load(&s->cold);
	}
	/* The idle members stored pages since the last look: they are making
	 * the room, so the wait goes on. GROUP_DEFER_MS bounds a wait without
	 * progress, not the episode: a busy member that took its own pages
	 * after 300 ms while the idle ones were still storing theirs thrashed
	 * (test_eng_group "cold": 81,767 refaults in 82,000 accesses). */
	if (grp.over_ns && cold < grp.cold_seen)
		grp.over_ns = now;
	/* The room made, the episode ended: the next one waits afresh. */
	if (now - grp.defer_ns > GROUP_EPISODE_NS)
		grp.over_ns = 0;
	grp.defer_ns = now;
	grp.cold_seen = cold;
	if (grp.over_ns && now - grp.over_ns >= GROUP_DEFER_MS * 1000000ull)
		return false;	/* waited long enough: reclaim all the same */
	/* Only when the idle members' cold pages can make the room: else each
	 * episode over the line would cost the busy members the whole wait. */
	if (cold < excess) {
		grp.over_ns = 0;
		return false;
	}
	if (!grp.over_ns) {
		grp.over_ns = now;
		/* Ask them, and wake their reclaimers from a quiet
		 * period's sleep (RECLAIM_POLL_IDLE_MS). */
		for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
			struct group_slot *s = &h->slots[i];
			if (s == grp.me[0] || !atomic_load(&s->pid) || atomic_load(&s->busy) || !atomic_load(&s->cold))
				continue;
			atomic_fetch_add(&s->ask, 1);
			atomic_fetch_add(&s->kick, 1);
			syscall(SYS_futex, &s->kick, FUTEX_WAKE, 1, NULL, NULL, 0);
		}
	}
	return true;
}

bool group_asked(void)
{
	if (!grp.depth)
		return false;
	uint32_t a = atomic_load(&grp.me[0]->ask);
	bool asked = a != grp.asked;
	grp.asked = a;
	return asked;
}

void group_stored(size_t pages)
{
	if (!grp.depth)
		return;
	uint64_t b = (uint64_t)pages << ZS_PAGE_SHIFT, c = atomic_load(&grp.me[0]->cold);
	atomic_store(&grp.me[0]->cold, c > b ? c - b : 0);
}

void group_event_high(void)
{
	for (unsigned int i = 0; i < grp.depth; i++)
		atomic_fetch_add(&grp.g[i]->events_high, 1);
}

bool group_snapshot(struct group_view *v)
{
	memset(v, 0, sizeof(*v));
	if (!grp.depth)
		return false;
	struct group_hdr *h = grp.g[0];
	memcpy(v->token, h->token, sizeof(v->token));
	memcpy(v->parent, h->parent, sizeof(v->parent));
	v->current = atomic_load(&h->total);
	v->peak = atomic_load(&h->peak);
	v->max = atomic_load(&h->max);
	v->events_high = atomic_load(&h->events_high);
	v->events_max = atomic_load(&h->events_max);
	v->swap_current = atomic_load(&h->swap);
	v->swap_max = h->tier_dir[0] ? h->tier_max : 0;
	v->swap_events_max = atomic_load(&h->swap_events_max);
	v->refaults = atomic_load(&h->refaults_gone);
	for (unsigned int i = 0; i < GROUP_MEMBERS_MAX; i++) {
		int32_t pid = atomic_load(&h->slots[i].pid);
		if (pid) {
			v->pids[v->nmembers++] = pid;
			v->refaults += atomic_load(&h->slots[i].refaults);
		}
	}
	return true;
}

void group_set_max(uint64_t max)
{
	if (grp.depth && max)
		atomic_store(&grp.g[0]->max, max);
}
