/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * writeback.c - stored pages written back to the second tier (see
 * writeback.h).
 */
#include "config.h"
#include "engine/writeback.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "base/fdtab.h"
#include "base/log.h"
#include "base/prim.h"
#include "core/backing.h"
#include "core/store.h"
#include "engine/engine.h"
#include "engine/policy.h"
#include "engine/region.h"
#include "engine/uffd.h"

#define WB_REGIONS	16		/* regions looked at per table lookup */
#define WB_TRIM_MIN	1024		/* freed slots (4 MiB) a trim punches at least */
#define WB_TRIM_KEEP	1		/* freed slots left on disk: 1/WB_TRIM_KEEP of those in use */
#define WB_BATCH	16		/* pages written in one go (and per hold of ev_lock) */
#define WB_RETRY_NS	1000000000ull	/* after a failed write, no other for this long */
#define WB_CHILDREN	8		/* fork children whose end is watched (writeback.h) */

static struct {
	struct backing *b;
	void *buf;		/* WB_BATCH pages: restored, then sealed, then written */
	struct { struct slot_array *arr; size_t idx; } batch[WB_BATCH];	/* claimed: EVICTING */
	size_t n;
	uintptr_t hand;		/* the clock hand: the next address to look at */
	uint64_t retry_ns;	/* no write before this (CLOCK_MONOTONIC): the last one failed */
	bool said_fail;
	bool child;		/* a fork child without a file of its own: it reads, writes nothing */
	bool off;		/* ZSWAP_WRITEBACK turned off at run time: the tier is only read */
	char dir[OPT_STRING_MAX];	/* where the files go (a fork child opens its own) */
	struct backing_config cfg;
	char group_dir[OPT_STRING_MAX];	/* a group's directory, "" for none (writeback_group) */
	uint64_t group_max;		/* a group's cap */
	struct backing_share share;	/* a group's counters; n == 0: none */
} wb;

/* The fork children that may read kept slots (writeback_fork_prepare). */
static struct {
	pthread_mutex_t lock;	/* the forking thread and the reclaimer */
	int fd[WB_CHILDREN];	/* read ends: a hang-up says that child is gone */
	int n;
	bool untracked;		/* a child beyond WB_CHILDREN: kept until exit */
	int pend_r, pend_w;	/* the pipe of the fork under way */
} wbc = { .lock = PTHREAD_MUTEX_INITIALIZER, .pend_r = -1, .pend_w = -1 };

static bool writeback_open(void);

/* ZSWAP_WRITEBACK as it reads now: 1, or auto under a limit or with the
 * shrinker. */
static bool writeback_wanted(const struct opt_values *o)
{
	return o->writeback == OPT_WB_ON ||
	       (o->writeback == OPT_WB_AUTO && (o->memory_limit || o->shrinker_enabled));
}

/* The tier's directory: ZSWAP_BACKING_DIR, or for auto $TMPDIR when it is
 * on a disk, else /var/tmp. Passing over a TMPDIR the user set is said, once
 * a tier is wanted: they may expect it there. */
static const char *writeback_dir(const struct opt_values *o)
{
	char why[320];

	if (strcmp(o->backing_dir, "auto") != 0)
		return o->backing_dir;
	if (!o->tmpdir[0])
		return "/var/tmp";
	if (backing_check_dir(o->tmpdir, why, sizeof(why)) == 0)
		return o->tmpdir;
	zlog("ZSWAP_BACKING_DIR=auto: TMPDIR: %s; the second tier goes to /var/tmp", why);
	return "/var/tmp";
}

bool writeback_place(char *dir, size_t len, uint64_t *max)
{
	char why[320];
	const char *d = writeback_dir(&eng.opt);
	size_t off = 0;

	if (d[0] != '/') {
		/* Relative: the members run in directories of their own. */
		if (syscall(SYS_getcwd, dir, len) <= 0)
			return false;
		off = strlen(dir);
	}
	if (log_snprintf(dir + off, len - off, "%s%s", off ? "/" : "", d) >= len - off - 1)
		return false;
	*max = backing_check_dir(dir, why, sizeof(why)) == 0 ? backing_cap(dir, eng.opt.backing_max, why, sizeof(why))
							      : 0;
	if (*max < ZS_PAGE_SIZE)
		zlog("ZSWAP_BACKING_DIR=%s: %s: each member of the group has a second tier of its own",
		     eng.opt.backing_dir, why);
	return *max >= ZS_PAGE_SIZE;
}

void writeback_group(const char *dir, uint64_t max, const struct backing_share *share)
{
	if (dir) {
		log_snprintf(wb.group_dir, sizeof(wb.group_dir), "%s", dir);
		wb.group_max = max;
	}
	if (share)
		wb.share = *share;
	else
		memset(&wb.share, 0, sizeof(wb.share));
	if (wb.b && !wb.child)
		backing_set_share(wb.b, &wb.share);
}

bool writeback_init(void)
{
	writeback_budget_reset();
	return writeback_wanted(&eng.opt) && writeback_open();
}

/* Open the tier now, or say in one line why not. */
static bool writeback_open(void)
{
	const struct opt_values *o = &eng.opt;
	char why[320];

	/* A group's: the directory and the cap its first member resolved. */
	const char *dir = wb.group_dir[0] ? wb.group_dir : writeback_dir(o);
	log_snprintf(wb.dir, sizeof(wb.dir), "%s", dir);
	wb.cfg = (struct backing_config){ .dir = wb.dir,
					  .max_bytes = wb.group_dir[0] ? wb.group_max : o->backing_max,
					  .encrypt = o->backing_encrypt };
	if (!wb.buf)	/* a second try, when turned on at run time, reuses it */
		wb.buf = prim_alloc(WB_BATCH * ZS_PAGE_SIZE);
	wb.b = wb.buf ? backing_open(&wb.cfg, why, sizeof(why)) : NULL;
	if (!wb.b) {
		if (!wb.buf)
			log_snprintf(why, sizeof(why), "no memory");
		zlog("ZSWAP_BACKING_DIR=%s: %s: the second tier is off, so a limit holds only while the"
		     " compressed data fits in it", o->backing_dir, why);
		return false;
	}
	zswap_store_set_backing(eng.store, wb.b);
	backing_set_share(wb.b, &wb.share);
	/* Test hook (ZSWAP_INJECT_WRITEBACK_FAIL): tests/engine/test_eng_writeback.sh. */
	if (o->inject_writeback_fail)
		backing_inject_write_fail(wb.b, o->inject_writeback_fail, BACKING_FAIL_CYCLE);
	if (o->verbose) {
		struct backing_stats st;
		backing_stats(wb.b, &st);
		zlog("writeback: a tier in %s of at most %llu MiB, %s", dir, (unsigned long long)(st.max_bytes >> 20),
		     backing_sealing(wb.b));
	}
	return true;
}

bool writeback_on(void)
{
	return wb.b && !wb.child && !__atomic_load_n(&wb.off, __ATOMIC_RELAXED);
}

bool writeback_follow(void)
{
	bool want = writeback_wanted(&eng.opt);

	if (want && !wb.b && !wb.child)
		writeback_open();	/* says in one line why not, if it cannot */
	__atomic_store_n(&wb.off, !want, __ATOMIC_RELAXED);
	return !want || wb.b;
}

bool writeback_child(void)
{
	return wb.b && wb.child;
}

static uint64_t writeback_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Stored again (in the tier, or still in the pool), unless an event
 * dropped the page meanwhile; a fault that waited is woken. */
static void writeback_publish(struct slot_array *arr, size_t idx)
{
	struct slot *s = &arr->slots[idx];
	uint32_t old = atomic_load(&s->state);

	while (!atomic_compare_exchange_weak(&s->state, &old,
					     (old & SLOT_DROPPED) ? SLOT_RESIDENT : SLOT_STORED | (old & SLOT_COLD)))
		;
	if (old & SLOT_DROPPED)
		zswap_invalidate(eng.store, &s->e);
	uintptr_t at;
	if ((old & SLOT_WAITER) && region_addr_of(arr, idx, &at))
		uf_wake(eng.uffd, at, ZS_PAGE_SIZE);
}

/* What one pass takes: any pool entry, poorly compressed ones only, those
 * held whole (huge), or those held whole that do not shrink at all
 * (incompressible); stored at least min_age evictions ago (0: any age).
 * An operator's pass (demand) gives no second chance. */
enum wb_only { WB_ANY, WB_POOR, WB_HUGE, WB_INCOMPRESSIBLE };

struct wb_pick {
	enum wb_only only;
	uint32_t min_age;
	bool demand;
	bool recomp;		/* recompress (writeback_recompress), not write */
	size_t threshold;	/* recompression: entries of at least this many bytes */
};

static bool writeback_takes(const struct wb_pick *pick, const struct zswap_entry *e)
{
	enum zswap_entry_type t = zswap_entry_type(e);

	switch (pick->only) {
	case WB_POOR:
		return zswap_entry_poor(e);
	case WB_HUGE:
	case WB_INCOMPRESSIBLE:
		return t == ZE_RAW;
	case WB_ANY:
		break;
	}
	return t == ZE_RAW || t == ZE_COMPRESSED;
}

/* Recompress the entry of slot idx of arr, claimed (EVICTING): a fault on
 * it waits, and is woken once it is published again. Counted in the
 * engine's counters. */
static bool writeback_recomp_one(struct slot_array *arr, size_t idx, const struct wb_pick *pick)
{
	int rc = zswap_recompress_entry(eng.store, &arr->slots[idx].e, pick->threshold, pick->only == WB_HUGE);

	writeback_publish(arr, idx);
	if (rc == ZSWAP_RECOMP_DONE)
		atomic_fetch_add(&eng.cnt.num_recompressed, 1);
	else if (rc == ZSWAP_RECOMP_KEPT)
		atomic_fetch_add(&eng.cnt.recompress_kept, 1);
	else if (rc < 0)
		atomic_fetch_add(&eng.cnt.recompress_failed, 1);
	return rc != ZSWAP_RECOMP_SKIP;
}

/* Take slot idx of arr into the batch, its page restored into the batch's
 * buffer, if it is a pool entry this pass takes. */
static bool writeback_claim(struct slot_array *arr, size_t idx, const struct wb_pick *pick)
{
	struct slot *s = &arr->slots[idx];
	uint32_t old = atomic_load(&s->state);

	if ((old & (SLOT_STATE | SLOT_DROPPED)) != SLOT_STORED)
		return false;
	/* A hint until the slot is ours: re-read below. */
	struct zswap_entry e = s->e;
	if (!writeback_takes(pick, &e) || (pick->recomp && zswap_entry_tried(&e)))
		return false;
	if (pick->min_age && policy_stored_age(atomic_load_explicit(&s->aux, memory_order_relaxed)) < pick->min_age)
		return false;	/* young: the program may still come back for it */
	if (pick->only == WB_ANY && !pick->demand) {
		/* The second chance: a page that came back quickly before
		 * loses a level and stays this time. */
		uint32_t aux = atomic_load_explicit(&s->aux, memory_order_relaxed);
		if (!(aux & 1u) && ((aux >> 1) & 3u)) {
			atomic_compare_exchange_strong_explicit(&s->aux, &aux, aux - 2u, memory_order_relaxed,
								memory_order_relaxed);
			return false;
		}
	}
	if (!atomic_compare_exchange_strong(&s->state, &old, SLOT_EVICTING | (old & (SLOT_WAITER | SLOT_COLD))))
		return false;
	if (pick->recomp)
		return writeback_recomp_one(arr, idx, pick);
	void *page = (char *)wb.buf + wb.n * ZS_PAGE_SIZE;
	if (zswap_writeback_restore(eng.store, &s->e, page) != 0 ||
	    (pick->only == WB_INCOMPRESSIBLE && zswap_store_page_shrinks(eng.store, page))) {
		writeback_publish(arr, idx);
		return false;
	}
	region_arr_get(arr);
	wb.batch[wb.n].arr = arr;
	wb.batch[wb.n].idx = idx;
	wb.n++;
	return true;
}

/* Write the batch (one write a run of slots), commit and publish every
 * page. Returns the pages written, or -1 when a write failed. */
static int writeback_flush(void)
{
	int64_t slots[WB_BATCH];
	int rc = wb.n ? backing_write_batch(wb.b, wb.buf, wb.n, slots) : 0;
	size_t ok = rc > 0 ? (size_t)rc : 0;

	for (size_t k = 0; k < wb.n; k++) {
		struct slot_array *arr = wb.batch[k].arr;
		zswap_writeback_commit(eng.store, &arr->slots[wb.batch[k].idx].e, k < ok ? slots[k] : -1);
		writeback_publish(arr, wb.batch[k].idx);
		region_arr_put(arr);
	}
	bool failed = ok < wb.n;
	wb.n = 0;
	if (!failed)
		return (int)ok;
	/* A full disk can take milliseconds a refusal (ext4 commits its
	 * journal before it says ENOSPC): no more tries for a while; the
	 * pages stay in the pool. */
	wb.retry_ns = writeback_now_ns() + WB_RETRY_NS;
	if (!wb.said_fail) {
		wb.said_fail = true;
		zlog("writeback: the tier's file could not take a page (%s): pages stay in the pool",
		     rc == -EIO ? "an I/O error" : "it is full, or the disk is");
	}
	return -1;
}

/* The writeback budget (zram's writeback_limit): eng.cnt.writeback_limit
 * holds what is left, so that the dump shows it; only the reclaimer's
 * thread writes back, sets it and spends it. */
void writeback_budget_reset(void)
{
	atomic_store(&eng.cnt.writeback_limit, eng.opt.writeback_limit);
}

bool writeback_budget_spent(void)
{
	return eng.opt.writeback_limit_enable && !atomic_load(&eng.cnt.writeback_limit);
}

static size_t writeback_budget_cap(size_t want)
{
	uint64_t left = atomic_load(&eng.cnt.writeback_limit);

	return eng.opt.writeback_limit_enable && left < want ? (size_t)left : want;
}

static void writeback_budget_spend(size_t done)
{
	if (eng.opt.writeback_limit_enable)
		atomic_fetch_sub(&eng.cnt.writeback_limit, done);
}

/* One pass of the hand over every region, from where it stopped round to
 * where it started. */
static size_t writeback_pass(size_t want, const struct wb_pick *pick)
{
	struct region_ref refs[WB_REGIONS];
	size_t done = 0, claimed = 0;
	const uintptr_t start = wb.hand;
	uintptr_t lo = start, hi = UINTPTR_MAX, cursor = 0;
	bool wrapped = false, failed = false;

	if (!pick->recomp)
		want = writeback_budget_cap(want);
	if (!want)
		return 0;
	pthread_rwlock_rdlock(&eng.evict_gate);
	pthread_rwlock_rdlock(&eng.ev_lock);
	while (claimed < want && !failed) {
		size_t n = region_collect(lo, hi, &cursor, refs, WB_REGIONS);
		for (size_t k = 0; k < n; k++) {
			struct region_ref *r = &refs[k];
			uintptr_t from = r->start > lo ? r->start : lo, to = r->end < hi ? r->end : hi;
			for (uintptr_t a = from; a < to && claimed < want && !failed; a += ZS_PAGE_SIZE) {
				wb.hand = a + ZS_PAGE_SIZE;
				if (!writeback_claim(r->arr, r->first + ((a - r->start) >> ZS_PAGE_SHIFT), pick))
					continue;
				claimed++;
				/* Recompression holds no batch: the lock is let
				 * go as often. */
				if (pick->recomp ? claimed % WB_BATCH : wb.n < WB_BATCH)
					continue;
				int w = writeback_flush();
				failed = w < 0;
				done += w > 0 ? (size_t)w : 0;
				/* Let a handler that needs the write side in. */
				pthread_rwlock_unlock(&eng.ev_lock);
				pthread_rwlock_rdlock(&eng.ev_lock);
			}
		}
		for (size_t k = 0; k < n; k++)
			region_arr_put(refs[k].arr);
		if (n == WB_REGIONS || failed)
			continue;
		/* This side of the hand is done (fewer than asked for: the
		 * table has no more; asking again would return the region that
		 * straddles hi once more). Then from the bottom to the start. */
		if (wrapped || !start)
			break;
		wrapped = true;
		lo = 0;
		hi = start;
		cursor = 0;
	}
	int w = writeback_flush();
	done += w > 0 ? (size_t)w : 0;
	pthread_rwlock_unlock(&eng.ev_lock);
	pthread_rwlock_unlock(&eng.evict_gate);
	if (!pick->recomp)
		writeback_budget_spend(done);
	return pick->recomp ? claimed : done;
}

/* Whether a pass may write now: the tier is this process's to write, and
 * the last write did not fail moments ago. */
static bool writeback_may(size_t want)
{
	return writeback_on() && want && writeback_now_ns() >= wb.retry_ns;
}

size_t writeback_run_poor(size_t want)
{
	const struct wb_pick pick = { .only = WB_POOR };

	return writeback_may(want) ? writeback_pass(want, &pick) : 0;
}

size_t writeback_run_old(size_t want, uint32_t min_age)
{
	const struct wb_pick pick = { .min_age = min_age ? min_age : 1 };

	return writeback_may(want) ? writeback_pass(want, &pick) : 0;
}

size_t writeback_run(size_t want)
{
	const struct wb_pick any = { 0 };
	size_t done = writeback_run_poor(want);

	if (done < want && writeback_may(want))
		done += writeback_pass(want - done, &any);
	/* Every page passed over had its second chance: take them now. */
	if (!done && writeback_may(want))
		done = writeback_pass(want, &any);
	return done;
}

int writeback_demand(const struct ctlreq_wb *req, uint64_t *written)
{
	struct wb_pick pick = { .demand = true };
	size_t want = SIZE_MAX;

	*written = 0;
	if (eng.opt.writeback == OPT_WB_OFF || wb.child)
		return -EPERM;
	/* Without a limit ZSWAP_WRITEBACK=auto leaves the tier closed until
	 * something is to be written to it: this. */
	if (!wb.b && !writeback_open())
		return -EIO;
	switch (req->mode) {
	case CTLREQ_WB_IDLE:
		if (req->arg && !policy_idle_min_age((uint32_t)req->arg, &pick.min_age))
			return 0;	/* nothing was stored that long ago */
		break;
	case CTLREQ_WB_HUGE:
		pick.only = WB_HUGE;
		break;
	case CTLREQ_WB_INCOMPRESSIBLE:
		pick.only = WB_INCOMPRESSIBLE;
		break;
	case CTLREQ_WB_PAGES:
		want = req->arg < SIZE_MAX ? (size_t)req->arg : SIZE_MAX;
		/* The reclaimer's order: what saves least in the pool first. */
		pick.only = WB_POOR;
		*written = writeback_pass(want, &pick);
		pick.only = WB_ANY;
		want -= *written;
		break;
	}
	if (want)
		*written += writeback_pass(want, &pick);
	return 0;
}

size_t writeback_recompress(const struct ctlreq_rc *req)
{
	struct wb_pick pick = { .demand = true, .recomp = true, .threshold = req->threshold };
	uintptr_t hand = wb.hand;

	if (req->huge)
		pick.only = WB_HUGE;
	if (req->idle && req->idle_s && !policy_idle_min_age((uint32_t)req->idle_s, &pick.min_age))
		return 0;	/* nothing was stored that long ago */
	size_t n = writeback_pass(SIZE_MAX, &pick);
	wb.hand = hand;	/* the writer's clock is not recompression's */
	return n;
}

/* Children gone (their pipe hung up): forget them; when none is left,
 * the kept slots are free. */
/* Returns how many slots kept for the children were freed. */
static uint64_t writeback_reap_children(void)
{
	uint64_t freed = 0;

	struct pollfd pf[WB_CHILDREN];
	int n = 0, left = 0;

	pthread_mutex_lock(&wbc.lock);
	for (int i = 0; i < wbc.n; i++)
		pf[n++] = (struct pollfd){ .fd = wbc.fd[i], .events = POLLIN };
	if (n && syscall(SYS_poll, pf, (unsigned long)n, 0) >= 0) {
		for (int i = 0; i < n; i++) {
			if (pf[i].revents & (POLLHUP | POLLERR | POLLNVAL | POLLIN))
				fdtab_close(pf[i].fd);
			else
				wbc.fd[left++] = pf[i].fd;
		}
		wbc.n = left;
		if (!left && !wbc.untracked) {
			freed = backing_fork_release(wb.b);
			if (eng.opt.verbose && freed)
				zlog("writeback: the forked processes are gone: %llu slots kept for them are free",
				     (unsigned long long)freed);
		}
	}
	pthread_mutex_unlock(&wbc.lock);
	return freed;
}

void writeback_trim(void)
{
	if (!writeback_on())
		return;
	/* The forked processes gone, what they kept is a release, not churn:
	 * the file goes back to what it holds and WB_TRIM_MIN freed slots. */
	if (wbc.n && writeback_reap_children())
		backing_trim(wb.b, WB_TRIM_MIN);
	/* Freed slots are left on disk up to as many as those in use (the
	 * file at most twice what it holds): a slot reused where its block
	 * still is costs one write, where a punched one costs the punch (a
	 * discard on a filesystem mounted with it) and the block's allocation
	 * again. Never in a fork child: the parent may have reused those
	 * slots (backing_trim). */
	uint64_t keep = backing_in_use(wb.b) / WB_TRIM_KEEP, slack = backing_unpunched(wb.b);
	if (slack && backing_share_room(wb.b) < (keep + WB_TRIM_MIN) * ZS_PAGE_SIZE)
		backing_trim(wb.b, 0);	/* the group's cap is near: its room is for every member */
	else if (slack >= keep + WB_TRIM_MIN)
		backing_trim(wb.b, keep);
}

void writeback_fork_prepare(void)
{
	struct backing_stats st;
	int p[2];

	wbc.pend_r = wbc.pend_w = -1;
	if (!writeback_on())
		return;	/* a child never frees a slot for reuse: nothing to watch */
	backing_stats(wb.b, &st);
	if (!st.bd_count)
		return;	/* nothing in the tier: nothing kept */
	pthread_mutex_lock(&wbc.lock);
	if (wbc.n >= WB_CHILDREN || syscall(SYS_pipe2, p, O_CLOEXEC) != 0) {
		wbc.untracked = true;
	} else {
		wbc.pend_r = fdtab_keep(p[0]);
		wbc.pend_w = fdtab_keep(p[1]);
	}
	pthread_mutex_unlock(&wbc.lock);
}

void writeback_fork_parent(void)
{
	if (!wb.b)
		return;
	backing_fork_pin(wb.b);
	if (wbc.pend_w < 0)
		return;
	/* The child holds the write end now (a fork that failed: nobody
	 * does, and the next look frees what this one kept). */
	pthread_mutex_lock(&wbc.lock);
	fdtab_close(wbc.pend_w);
	wbc.fd[wbc.n++] = wbc.pend_r;
	wbc.pend_r = wbc.pend_w = -1;
	pthread_mutex_unlock(&wbc.lock);
}

void writeback_fork_child(void)
{
	char why[320];

	if (!wb.b)
		return;
	backing_fork_child(wb.b);	/* what it inherited: read, never written */
	memset(&wb.share, 0, sizeof(wb.share));	/* the parent's slot: its own comes with group_fork_child */
	wb.n = 0;	/* nothing was in a batch: fork waited for the pass to end */
	/* A file of its own for what it writes back from now on, so that its
	 * limit holds as its parent's does (a BGSAVE child reads back what
	 * its parent wrote out). */
	struct backing *own = backing_open(&wb.cfg, why, sizeof(why));
	if (own && zswap_store_fork_tier(eng.store, own)) {
		wb.b = own;
		wb.child = false;
		wb.hand = 0;
		wb.retry_ns = 0;
		wb.said_fail = false;
	} else {
		if (own)
			backing_close(own);
		wb.child = true;
		if (eng.opt.verbose)
			zlog("writeback: this fork child has no file of its own (%s): it writes nothing back",
			     own ? "too many generations of forks" : why);
	}
	/* The parent's watch is the parent's: its other children's read ends
	 * and this fork's are closed; the write end stays open, close-on-exec,
	 * until this process exits or execs (and in whatever it forks). */
	wbc.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;	/* held by a thread that is gone */
	for (int i = 0; i < wbc.n; i++)
		fdtab_close(wbc.fd[i]);
	fdtab_close(wbc.pend_r);
	wbc.n = 0;	/* its own children, if it forks, are its own to watch */
	wbc.untracked = false;
	wbc.pend_r = wbc.pend_w = -1;
}
