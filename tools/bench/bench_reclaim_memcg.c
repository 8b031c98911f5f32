/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_reclaim_memcg.c - cgroup v2's charging of zswap's pool, emulated on
 * a cgroup v1 memory controller, for the kernel side of tools/bench/bench_reclaim.sh
 * (docs/BENCHMARKS.md, "Emulating cgroup v2").
 *
 * Why: ZSWAP_MEMORY_LIMIT=L holds the program's resident memory plus its
 * pool under L, as cgroup v2's memory.max does (zswap charges each stored
 * page's compressed bytes to the page's memcg: mm/zswap.c
 * obj_cgroup_charge_zswap(), a no-op on v1). This machine's memory controller
 * is v1: its memory.limit_in_bytes holds only the resident part, and zswap's
 * pool sits beside it uncharged. No v1 file reports a charged pool either
 * (memory.kmem.usage_in_bytes stays ~1 MiB with 80 MiB in the pool;
 * memory.stat has no zswap lines on v1).
 *
 * What it does, every INTERVAL (default 1 ms) until SIGTERM:
 *   pool_cg = the group's share of zswap's pool. debugfs pool_total_size and
 *             stored_pages are global; the group's pages out on swap are
 *             memory.memsw.usage_in_bytes - memory.usage_in_bytes (all in
 *             zswap while pswpout stays 0). While zswap holds no more pages
 *             than that, the whole pool is the group's (and its bytes a page
 *             are learnt); when others' pages are in zswap too (other
 *             people's tests use MADV_PAGEOUT while swap is on), the group's
 *             pages at those bytes a page.
 *   sum     = memory.usage_in_bytes + pool_cg     (what v2 would charge)
 *   --mode v2: memory.limit_in_bytes follows the lower of
 *               L - pool_cg - MARGIN                      (v2's charge now)
 *               M with M + (F - M) x b / 4096 = L - MARGIN (its equilibrium)
 *             page-aligned, where F is the group's footprint (memsw usage:
 *             resident plus swapped, at least --footprint, the working set
 *             the workload will touch) and b the pool's bytes a page (learnt;
 *             ratio --ratio, default 2, until then). The equilibrium is what
 *             v2 reaches once the footprint is all touched (after the fill):
 *             resident M, the rest in the pool, usage + pool = L - MARGIN.
 *             Held from the start, the limit need not come down as the pool
 *             grows, which on v1 it can only do as fast as something
 *             reclaims (below). Only during the fill does it differ from v2,
 *             which would let the group be more resident while the pool is
 *             still small: the fill is not the compared phase.
 *             v2 charges the compressed bytes of each entry; pool_total_size
 *             is the pool's pages, a few per cent more (zsmalloc's class
 *             rounding): slightly stricter than v2, and what
 *             ZSWAP_MEMORY_LIMIT counts (libzswap's pool pages).
 *             Lowering a v1 limit under the group's usage makes the WRITE
 *             reclaim (mm/memcontrol-v1.c mem_cgroup_resize_max(): reclaim in
 *             the writer's context until usage fits; -EINTR on a pending
 *             signal, -EBUSY when reclaim makes no progress, the old limit
 *             kept either way): a write never OOM-kills, but one far below
 *             the usage races the workload refilling what it reclaims (1.3 s
 *             measured in one write), and reclaim done by this program is
 *             CPU the workload does not pay. So, by default (--reclaim
 *             workload), the limit is never set below the group's usage: it
 *             ratchets down to the usage (plus 8 pages) every tick, and the
 *             workload's next charge reclaims, in its own context, as after
 *             v2's pool charge; each write is bounded by a 1 ms timer all the
 *             same. --reclaim bounded pushes 64 pages under the usage a tick
 *             (this program reclaims them), writer sets the target at once.
 *             The time spent in writes is reported (write_ms), with this
 *             program's CPU time. MARGIN (default 4M) covers the pool's
 *             fluctuation between ticks.
 *   --mode v1: only samples (the reference column: v1 as it is).
 * With BENCH_ZRAM=/sys/block/zramN in the environment (scripts/kernel-zswap.sh
 * --backend zram exports it) the pool is that zram device's instead:
 * mem_used_total and orig_data_size / 4 KiB of its mm_stat for
 * pool_total_size and stored_pages (zram's memory is charged to no group,
 * on v1 or v2: the emulation charges it as v2 charges zswap's).
 * It runs at SCHED_FIFO when it can (a late sample on a loaded machine is a
 * late limit), locked in memory, outside the group.
 *
 * Output on stdout: "READY" after the first sample (the caller waits for it
 * before starting the workload), then at exit one line
 *   MEMCG mode=... samples=... peak_sum_mb=... over_limit_samples=... ...
 * read by tools/bench/bench_reclaim.sh. Never judges a figure.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define DBG_ZSWAP "/sys/kernel/debug/zswap"
/* Pages zswap may hold beyond the group's swapped ones and still be taken
 * as all the group's: pages on their way in or out (per-CPU charge batches
 * make memsw - usage move by up to 64 pages a CPU). */
#define FOREIGN_SLACK 256
#define MIB (1024.0 * 1024.0)

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Read a number from an open cgroup file from its start (kernfs
 * regenerates the text on a read at offset 0). -1 on error. */
static long long read_fd(int fd)
{
	char buf[64];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/* The pool's bytes and its pages: zswap's debugfs counters, or the zram
 * device's mm_stat (orig_data_size compr_data_size mem_used_total ...).
 * false on error. */
static const char *zram_dir;

static long long read_path(const char *path);

static bool read_pool(long long *pool, long long *stored)
{
	if (!zram_dir) {
		*pool = read_path(DBG_ZSWAP "/pool_total_size");
		*stored = read_path(DBG_ZSWAP "/stored_pages");
		return *pool >= 0 && *stored >= 0;
	}
	return bench_zram_pool(zram_dir, pool, stored) == 0;
}

/* debugfs attribute files refuse pread (ESPIPE): open, read, close. */
static long long read_path(const char *path)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static int open_in(const char *dir, const char *file, int flags)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return open(path, flags | O_CLOEXEC);
}

/* "key value" from a multi-line cgroup file (memory.oom_control). */
static long long read_key(const char *dir, const char *file, const char *key)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return bench_read_key(path, key);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* How the group is brought under a lower limit when its usage is above it. */
enum policy {
	RECLAIM_BOUNDED,	/* this write reclaims up to PUSH_PAGES (WRITE_BUDGET_US at
				 * most), then as WORKLOAD */
	RECLAIM_WORKLOAD,	/* never below usage: the workload's next charge reclaims */
	RECLAIM_WRITER,		/* this write reclaims until the group fits (unbounded) */
};
static const char *const policy_names[] = { "bounded", "workload", "writer", NULL };

#define WRITE_BUDGET_US 1000
#define PUSH_PAGES 64
/* Above the usage: fewer than this many pages charged between reading the
 * usage and writing the limit cost the writer no reclaim. A charge at the
 * limit reclaims 32 pages (SWAP_CLUSTER_MAX), so the ratchet still lowers
 * the limit by 32 - 8 pages a tick while the group is above its target. */
#define RATCHET_SLACK_PAGES 8

struct limit_writer {
	int fd, fd_usage;
	enum policy policy;
	long long cur, min;
	long long writes, below_usage, ebusy, eintr;
	uint64_t ns, max_ns;
};

/* One write of memory.limit_in_bytes; timer_us > 0 bounds the reclaim the
 * kernel does in it (mem_cgroup_resize_max() stops at a pending signal with
 * EINTR, the old limit kept). Returns 0 or errno. */
static int write_limit(struct limit_writer *lw, long long bytes, long timer_us)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%lld", bytes), err = 0;
	struct itimerval it = { .it_value = { .tv_usec = timer_us } };

	if (timer_us)
		setitimer(ITIMER_REAL, &it, NULL);
	uint64_t w0 = bench_now_ns();
	if (pwrite(lw->fd, buf, (size_t)len, 0) != len)
		err = errno ? errno : EIO;
	uint64_t w1 = bench_now_ns();
	if (timer_us) {
		it.it_value.tv_usec = 0;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	lw->writes++;
	lw->ns += w1 - w0;
	if (w1 - w0 > lw->max_ns)
		lw->max_ns = w1 - w0;
	if (!err) {
		lw->cur = bytes;
		if (bytes < lw->min)
			lw->min = bytes;
	} else if (err == EINTR) {
		lw->eintr++;
	} else if (err == EBUSY) {
		lw->ebusy++;	/* reclaim made no progress: the old limit stays */
	} else {
		bench_die("bench_reclaim_memcg: write %s to the limit: %s", buf, strerror(err));
	}
	return err;
}

/* Bring the limit to want; usage is the group's, read just before. A limit
 * under the usage makes the write itself reclaim (outside the workload);
 * the ratchet (the limit set to the usage, not below) leaves that to the
 * workload's next charge, as v2 leaves its pool's charge to be reclaimed by
 * the workload's next charge. The ratchet alone falls behind a fast fill
 * (it lowers the limit by at most one reclaim batch, 32 pages, a tick); a
 * write far below the usage races the workload refilling what it reclaims
 * (measured: 1.3 s in one write). Default: the ratchet alone
 * (RECLAIM_WORKLOAD); RECLAIM_BOUNDED adds at most PUSH_PAGES below the usage
 * a tick, reclaimed by this program within a timer. */
static void set_limit(struct limit_writer *lw, long long want, long long usage)
{
	const long long page = (long long)BENCH_PAGE;
	long long ratchet;

	if (want >= usage || lw->policy == RECLAIM_WRITER) {
		/* A few pages charged since usage was read make even this
		 * write reclaim: bounded too, except in writer mode. */
		if (want < usage)
			lw->below_usage++;
		if (write_limit(lw, want, lw->policy == RECLAIM_WRITER ? 0 : WRITE_BUDGET_US) != EINTR)
			return;
	} else if (lw->policy == RECLAIM_BOUNDED) {
		long long push = usage - PUSH_PAGES * page;
		lw->below_usage++;
		if (write_limit(lw, want > push ? want : push, WRITE_BUDGET_US) != EINTR)
			return;
	}
	/* The usage read again just before the write, plus a few pages: a
	 * write under what the group charged meanwhile would reclaim. */
	ratchet = read_fd(lw->fd_usage);
	if (ratchet < 0)
		return;
	ratchet = (ratchet + page - 1) / page * page + RATCHET_SLACK_PAGES * page;
	if (ratchet < lw->cur)
		write_limit(lw, ratchet, WRITE_BUDGET_US);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_reclaim_memcg --memcg DIR --limit L [--mode v2|v1]\n"
		"                           [--interval-us N] [--margin SIZE]\n"
		"                           [--reclaim bounded|workload|writer]\n"
		"                           [--footprint SIZE] [--ratio R]\n"
		"  v2 (default): keep DIR/memory.limit_in_bytes at L minus the group's\n"
		"  share of zswap's pool minus MARGIN (default 4M); v1: only sample.\n"
		"  Samples every N us (default 1000) until SIGTERM, then prints MEMCG ...\n"
		"  A limit below the group's usage: --reclaim workload (default): the\n"
		"  limit goes down to the usage only, the workload's next charge\n"
		"  reclaims; bounded: this program's write reclaims up to 64 pages a\n"
		"  tick (1 ms at most); writer: the write reclaims until the group fits.\n"
		"  The limit is also held at the equilibrium of the group's footprint\n"
		"  (memsw usage, at least --footprint): resident M, the rest compressed\n"
		"  at the pool's bytes a page (until learnt, at ratio R, default 2;\n"
		"  --ratio 0: none), M + rest = L - MARGIN.\n");
	exit(2);
}

/* --ratio R: the pool's bytes a page guessed until learnt; below 1, none
 * (the pool alone until learnt). */
static void parse_ratio(const char *arg, void *var)
{
	double r = strtod(arg, NULL);

	*(double *)var = r < 1.0 ? 0 : r;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "v1", "v2", NULL };	/* index: v2 */
	const char *dir = NULL;
	long long limit = 0, margin = 4 << 20, footprint = 0;
	double ratio_guess = 2.0;
	long interval_us = 1000;
	bool v2 = true;
	enum policy policy = RECLAIM_WORKLOAD;
	const struct bench_arg args[] = {
		BENCH_TEXT("memcg", dir),
		BENCH_SIZE("limit", limit, 1),
		BENCH_CHOICE("mode", v2, modes),
		BENCH_UINT("interval-us", interval_us, 100, 1000000),
		BENCH_SIZE("margin", margin, 1),
		BENCH_CHOICE("reclaim", policy, policy_names),
		BENCH_SIZE("footprint", footprint, 1),
		BENCH_CALL("ratio", parse_ratio, &ratio_guess),
		BENCH_ARGS_END,
	};

	bench_args(argc, argv, 1, args, usage);
	if (!dir || !limit)
		usage();

	int fd_usage = open_in(dir, "memory.usage_in_bytes", O_RDONLY);
	int fd_memsw = open_in(dir, "memory.memsw.usage_in_bytes", O_RDONLY);
	int fd_limit = open_in(dir, "memory.limit_in_bytes", O_RDWR);
	if (fd_usage < 0 || fd_limit < 0)
		bench_die("bench_reclaim_memcg: %s is not a cgroup v1 memory group: %s", dir, strerror(errno));
	zram_dir = getenv("BENCH_ZRAM");
	if (zram_dir && !*zram_dir)
		zram_dir = NULL;
	{
		long long p0, s0;
		if (!read_pool(&p0, &s0))
			bench_die("bench_reclaim_memcg: no pool counters (%s): %s", zram_dir ? zram_dir : DBG_ZSWAP,
				  zram_dir ? "not a zram device" : "mount debugfs");
	}
	/* Without swap accounting (memsw) the whole pool is taken as the
	 * group's: right only when nothing else swaps. */

	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct sigaction sa_alarm = { .sa_handler = on_alarm };	/* no SA_RESTART: EINTR */
	sigaction(SIGALRM, &sa_alarm, NULL);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	struct sched_param sp = { .sched_priority = 1 };
	bool fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;

	const long long page = (long long)BENCH_PAGE;
	const long long floor = limit / 8;	/* never squeeze the group below this */
	struct limit_writer lw = { .fd = fd_limit, .fd_usage = fd_usage, .policy = policy };
	lw.cur = lw.min = read_fd(fd_limit);
	long long samples = 0, over = 0;
	long long peak_sum = 0, peak_usage = 0, peak_pool = 0;
	long long at_peak_usage = 0, at_peak_pool = 0, foreign_max = 0;
	long long max_over = 0, read_errors = 0, behind = 0;
	double bytes_a_page = 0;
	double guess_bytes_a_page = ratio_guess >= 1.0 ? (double)BENCH_PAGE / ratio_guess : 0;
	long long min_eq = -1, stored_max = 0;
	long long swap_free_min = -1;
	uint64_t gap_max_ns = 0, prev = 0;
	uint64_t t_start = bench_now_ns();
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop) {
		long long usage = read_fd(fd_usage);
		long long memsw = read_fd(fd_memsw);
		long long pool = -1, stored = -1;
		bool pool_ok = read_pool(&pool, &stored);
		uint64_t now = bench_now_ns();

		if (usage < 0 || !pool_ok) {
			if (access(dir, F_OK) != 0)
				break;	/* the group is gone */
			read_errors++;
			usleep((useconds_t)interval_us);
			continue;
		}
		/* The group's share of the global pool: all of it while zswap
		 * holds no more pages than the group has out on swap (then
		 * its bytes a page are learnt), else its pages at those bytes
		 * a page (others' pages may compress differently). */
		long long pool_cg = pool;
		if (memsw >= 0 && stored > 0) {
			long long cg_pages = (memsw - usage) / page;
			if (cg_pages < 0)
				cg_pages = 0;
			if (cg_pages + FOREIGN_SLACK >= stored) {
				/* Not from a pool emptying as the group exits
				 * (zsmalloc gives pages back after the entries
				 * go): only near the most pages zswap held; nor
				 * from its first zspages, partly empty (32 MiB of
				 * pages at least). */
				double b = (double)pool / (double)stored;
				if (stored > stored_max)
					stored_max = stored;
				if (stored >= 8192 && cg_pages >= 8192 && stored >= stored_max - stored_max / 8 &&
				    b >= 64 && b < 0.9 * (double)page)
					bytes_a_page = b;
			} else {
				pool_cg = bytes_a_page > 0 ? (long long)(bytes_a_page * (double)cg_pages)
					  : (long long)((double)pool * (double)cg_pages / (double)stored);
				if (pool_cg > pool)
					pool_cg = pool;
			}
			if (stored - cg_pages > foreign_max)
				foreign_max = stored - cg_pages;
		}
		long long sum = usage + pool_cg;
		/* Free swap, all devices: at 0 no memcg can reclaim anon pages
		 * (mm/vmscan.c can_reclaim_anon_pages()), and a group at its
		 * limit with nothing else to reclaim is OOM-killed. */
		struct sysinfo si;
		if (sysinfo(&si) == 0) {
			long long fs = (long long)si.freeswap * si.mem_unit;
			if (swap_free_min < 0 || fs < swap_free_min)
				swap_free_min = fs;
		}

		samples++;
		if (prev && now - prev > gap_max_ns)
			gap_max_ns = now - prev;
		prev = now;
		if (sum > peak_sum) {
			peak_sum = sum;
			at_peak_usage = usage;
			at_peak_pool = pool_cg;
		}
		if (sum > limit) {
			over++;
			if (sum - limit > max_over)
				max_over = sum - limit;
		}
		if (usage > peak_usage)
			peak_usage = usage;
		if (pool_cg > peak_pool)
			peak_pool = pool_cg;

		if (v2) {
			long long want = limit - pool_cg - margin;
			/* The equilibrium of the group's whole footprint (or the
			 * one expected, --footprint, while the fill is on):
			 * resident M and the rest compressed, M + (F - M) x
			 * b / 4096 = L - MARGIN. Held from the start, the limit
			 * need not come down as the pool grows (it can only
			 * come down as fast as something reclaims). */
			long long foot = memsw >= 0 ? memsw : usage;	/* no memsw: --footprint */
			if (foot < footprint)
				foot = footprint;
			double b = bytes_a_page > 0 ? bytes_a_page : guess_bytes_a_page;
			if (foot > 0 && b > 0 && b < (double)page) {
				double q = b / (double)page;
				long long eq = (long long)(((double)(limit - margin) - (double)foot * q) / (1.0 - q));
				if (eq < want)
					want = eq;
				if (eq < min_eq || min_eq < 0)
					min_eq = eq;
			}
			want = want / page * page;
			if (want < floor)
				want = floor;
			if (want < usage)
				behind++;
			if (want != lw.cur)
				set_limit(&lw, want, usage);
		}
		if (samples == 1) {
			printf("READY\n");
			fflush(stdout);
		}

		next.tv_nsec += interval_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		/* After a long stall, resume from now rather than catch up. */
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec > next.tv_sec + 1)
			next = ts;
	}

	int fd_max = open_in(dir, "memory.max_usage_in_bytes", O_RDONLY);
	int fd_failcnt = open_in(dir, "memory.failcnt", O_RDONLY);
	long long max_usage = read_fd(fd_max), failcnt = read_fd(fd_failcnt);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	printf("MEMCG mode=%s fifo=%d interval_us=%ld margin_mb=%.2f limit_mb=%.1f samples=%lld"
	       " run_ms=%.0f gap_max_ms=%.2f peak_sum_mb=%.2f peak_sum_usage_mb=%.2f peak_sum_pool_mb=%.2f"
	       " over_limit_samples=%lld over_limit_max_kb=%.0f peak_usage_mb=%.2f peak_pool_mb=%.2f"
	       " min_limit_mb=%.2f limit_writes=%lld below_usage_writes=%lld ebusy=%lld write_ms=%.1f"
	       " write_max_ms=%.2f ctl_cpu_ms=%.1f foreign_pages_max=%lld max_usage_mb=%.2f"
	       " failcnt=%lld oom_kill=%lld read_errors=%lld reclaim_by=%s behind_samples=%lld eintr=%lld swap_free_min_mb=%.1f"
	       " footprint_mb=%.1f eq_min_mb=%.2f bytes_a_page=%.0f\n",
	       v2 ? "v2" : "v1", fifo, interval_us, margin / MIB, limit / MIB, samples,
	       (bench_now_ns() - t_start) / 1e6, gap_max_ns / 1e6, peak_sum / MIB,
	       at_peak_usage / MIB, at_peak_pool / MIB, over, max_over / 1024.0,
	       peak_usage / MIB, peak_pool / MIB, lw.min / MIB, lw.writes, lw.below_usage, lw.ebusy,
	       lw.ns / 1e6, lw.max_ns / 1e6, cpu_ms, foreign_max,
	       max_usage / MIB, failcnt, read_key(dir, "memory.oom_control", "oom_kill"), read_errors,
	       policy_names[policy], behind, lw.eintr, swap_free_min / MIB,
	       footprint / MIB, min_eq / MIB, bytes_a_page);
	fflush(stdout);
	return 0;
}
