/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_syscalls.c - faults taken inside the kernel, signals, thread and
 * process exit with faults in flight.
 *
 * Cases (argv; none: all but the exit ones):
 *   read       read(2) from a file into an evicted buffer, at an unaligned
 *              offset so the first and last pages are only partly overwritten
 *   pread      the same with pread(2)
 *   recv       recv(2) on a socketpair into an evicted buffer, the peer
 *              sending from an evicted buffer; read(2) from a pipe likewise
 *   write      write(2) and send(2) FROM an evicted buffer
 *   futex      FUTEX_WAIT on a word inside an evicted page (private and
 *              shared), the page evicted again while the waiter sleeps, woken
 *              by another thread
 *   signal     SIGUSR1 (SA_RESTART) sent again and again to a thread that
 *              faults through evicted memory and reads a file into it; the
 *              handler itself reads another evicted page
 *   threadexit threads that exit (return, pthread_exit, asynchronous
 *              cancellation) while they and others fault
 *   altstack   SIGUSR2 (SA_ONSTACK) delivered onto an evicted sigaltstack in
 *              a managed mapping: the kernel writes the frame into evicted
 *              pages, the handler (running there) writes a buffer on it and
 *              reads a canary page; afterwards the buffer, the canaries below
 *              the frame and the rest of the mapping are checked
 *   threadstack a thread whose stack (pthread_attr_setstack) is a managed
 *              mapping, evicted while the thread sleeps in read(2) into a
 *              buffer on that stack (all but its top 16 KiB, which the
 *              library leaves alone: the thread descriptor); woken, it
 *              checks what it read and the data it kept on its stack
 *   stackexit  a thread on a given stack, its stack paged out whole while it
 *              sleeps in a raw read(2), woken to end with the raw exit
 *              system call: the top (its descriptor) must have stayed, and
 *              pthread_join must return (the kernel clears the thread ID at
 *              exit, and serves no userfaultfd fault then); the script runs
 *              it with glibc's rseq off (with it on, the kernel's rseq
 *              update would bring the page back anyway)
 *   stackexit-addr the same, the stack given with the deprecated
 *              pthread_attr_setstacksize + pthread_attr_setstackaddr
 *   iovec      readv, preadv and recvmsg scattering into evicted buffers,
 *              writev and sendmsg gathering from them, the iovec array (and
 *              the msghdr) evicted too; every byte of the mapping checked
 *   exit       exit(0) from main while 4 threads fault (the script checks the
 *              status and that the process ends)
 *   exitthread exit(5) from one thread while the others fault
 * Every syscall must succeed (never EFAULT) and every byte must be right.
 *
 * usage: prog_syscalls [--inactive-ok] [CASE...]
 */
#include "prog_common.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define NPAGES 2048UL		/* 8 MiB */
#define LEN (NPAGES * PC_PAGE)

static char tmpdir[256] = "/tmp";

/* A file of len bytes of text (seed), unlinked at once; returns its fd. */
static int make_file(size_t len, uint64_t seed, unsigned char **contents)
{
	char path[320];
	unsigned char *buf = malloc(len + PC_PAGE);
	int fd;

	if (!buf)
		pc_fail("malloc");
	for (size_t off = 0; off < len; off += PC_PAGE)
		pc_fill(buf + off, PC_TEXT, pc_page_seed(seed, off / PC_PAGE));
	snprintf(path, sizeof(path), "%s/prog_syscalls.XXXXXX", tmpdir);
	fd = mkstemp(path);
	if (fd < 0)
		pc_fail("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w <= 0)
			pc_fail("write file: %s", strerror(errno));
		off += (size_t)w;
	}
	*contents = buf;
	return fd;
}

/* Check a buffer after a syscall wrote n bytes at byte offset off: those bytes
 * equal src, every other byte is still the filled pattern. */
static void check_after_io(const char *what, const char *p, size_t off, size_t n, const unsigned char *src,
			   enum pc_kind kind, uint64_t seed)
{
	static unsigned char expect[PC_PAGE];

	if (memcmp(p + off, src, n) != 0) {
		size_t i = 0;
		while (p[off + i] == (char)src[i])
			i++;
		pc_fail("%s: byte %zu of %zu transferred bytes is wrong", what, i, n);
	}
	for (size_t pg = 0; pg < NPAGES; pg++) {
		size_t a = pg * PC_PAGE, b = a + PC_PAGE;
		pc_fill(expect, kind, pc_page_seed(seed, pg));
		for (size_t i = a; i < b; i++) {
			if (i >= off && i < off + n)
				continue;
			if ((unsigned char)p[i] != expect[i - a])
				pc_fail("%s: byte %zu (page %zu) outside the transfer changed%s", what, i, pg,
					pc_page_is_zero(p + a) ? " (page reads zeros)" : "");
		}
	}
}

static void case_read(bool use_pread)
{
	const char *what = use_pread ? "pread" : "read";
	size_t flen = 3 * PC_MIB + 123, off = 5 * PC_PAGE + 100, foff = use_pread ? PC_PAGE + 7 : 0;
	unsigned char *src;
	int fd = make_file(flen + foff, 7, &src);
	char *p = pc_map(LEN);

	pc_fill_range(p, NPAGES, PC_RANDOM, 8);
	pc_evict(what, p, NPAGES, false);
	size_t done = 0;
	while (done < flen) {
		ssize_t r = use_pread ? pread(fd, p + off + done, flen - done, (off_t)(foff + done))
				      : (lseek(fd, (off_t)done, SEEK_SET), read(fd, p + off + done, flen - done));
		if (r < 0)
			pc_fail("%s into an evicted buffer: %s", what, strerror(errno));
		if (r == 0)
			pc_fail("%s: unexpected end of file", what);
		done += (size_t)r;
	}
	check_after_io(what, p, off, flen, src + foff, PC_RANDOM, 8);
	pc_expect_stored(what, 0);
	munmap(p, LEN);
	free(src);
	close(fd);
	printf("%s ok\n", what);
}

struct sender {
	int fd;
	const char *buf;
	size_t len;
	bool use_send;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	for (size_t off = 0; off < s->len;) {
		size_t chunk = s->len - off < 65536 ? s->len - off : 65536;
		ssize_t w = s->use_send ? send(s->fd, s->buf + off, chunk, 0) : write(s->fd, s->buf + off, chunk);
		if (w < 0)
			pc_fail("%s from an evicted buffer: %s", s->use_send ? "send" : "write", strerror(errno));
		off += (size_t)w;
	}
	return NULL;
}

static void case_recv(void)
{
	int sv[2], pfd[2];
	char *p = pc_map(LEN), *src = pc_map(LEN);
	size_t n = 6 * PC_MIB + 5, off = 3 * PC_PAGE + 1;
	pthread_t t;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(pfd) != 0)
		pc_fail("socketpair/pipe: %s", strerror(errno));
	pc_fill_range(p, NPAGES, PC_BINARY, 11);
	pc_fill_range(src, NPAGES, PC_TEXT, 12);
	pc_evict("recv: destination", p, NPAGES, false);
	pc_evict("recv: source", src, NPAGES, false);

	struct sender s = { sv[1], src + 9, n, true };
	if (pthread_create(&t, NULL, sender_main, &s) != 0)
		pc_fail("pthread_create");
	for (size_t done = 0; done < n;) {
		ssize_t r = recv(sv[0], p + off + done, n - done, MSG_WAITALL);
		if (r <= 0)
			pc_fail("recv into an evicted buffer: %s", r < 0 ? strerror(errno) : "EOF");
		done += (size_t)r;
	}
	pthread_join(t, NULL);
	pc_expect_range("recv: the source after sending", src, NPAGES, PC_TEXT, 12);
	check_after_io("recv", p, off, n, (unsigned char *)src + 9, PC_BINARY, 11);

	/* read(2) from a pipe into an evicted buffer, written from an evicted one. */
	pc_fill_range(p, NPAGES, PC_BINARY, 11);
	pc_evict("pipe: destination", p, NPAGES, false);
	pc_evict("pipe: source", src, NPAGES, false);
	s = (struct sender){ pfd[1], src + 9, n, false };
	if (pthread_create(&t, NULL, sender_main, &s) != 0)
		pc_fail("pthread_create");
	for (size_t done = 0; done < n;) {
		ssize_t r = read(pfd[0], p + off + done, n - done);
		if (r <= 0)
			pc_fail("read from a pipe into an evicted buffer: %s", r < 0 ? strerror(errno) : "EOF");
		done += (size_t)r;
	}
	pthread_join(t, NULL);
	check_after_io("pipe read", p, off, n, (unsigned char *)src + 9, PC_BINARY, 11);
	pc_expect_range("pipe: the source", src, NPAGES, PC_TEXT, 12);
	pc_expect_stored("recv", 0);
	close(sv[0]);
	close(sv[1]);
	close(pfd[0]);
	close(pfd[1]);
	munmap(p, LEN);
	munmap(src, LEN);
	printf("recv ok\n");
}

static void case_write(void)
{
	unsigned char *junk;
	int fd = make_file(PC_PAGE, 1, &junk);
	char *p = pc_map(LEN);
	size_t n = LEN - 3 * PC_PAGE - 11;
	unsigned char *back = malloc(LEN);

	free(junk);
	if (!back || ftruncate(fd, 0) != 0)
		pc_fail("setup: %s", strerror(errno));
	pc_fill_range(p, NPAGES, PC_TEXT, 21);
	pc_evict("write: source", p, NPAGES, false);
	for (size_t off = 0; off < n;) {
		ssize_t w = pwrite(fd, p + 3 * PC_PAGE + 11 + off, n - off, (off_t)off);
		if (w <= 0)
			pc_fail("write from an evicted buffer: %s", w < 0 ? strerror(errno) : "wrote 0");
		off += (size_t)w;
	}
	for (size_t off = 0; off < n;) {
		ssize_t r = pread(fd, back + off, n - off, (off_t)off);
		if (r <= 0)
			pc_fail("pread back: %s", r < 0 ? strerror(errno) : "EOF");
		off += (size_t)r;
	}
	PC_CHECK(memcmp(back, p + 3 * PC_PAGE + 11, n) == 0, "write: the file differs from the evicted buffer written");
	pc_expect_range("write: the source", p, NPAGES, PC_TEXT, 21);

	/* writev from evicted pieces, the kernel gathering from several pages. */
	pc_evict("writev: source", p, NPAGES, false);
	struct iovec iov[3] = {
		{ p + 100, PC_PAGE }, { p + 50 * PC_PAGE + 9, 3 * PC_PAGE }, { p + 2000 * PC_PAGE, 10 },
	};
	if (pwritev(fd, iov, 3, 0) != (ssize_t)(4 * PC_PAGE + 10))
		pc_fail("pwritev from evicted buffers: %s", strerror(errno));
	if (pread(fd, back, 4 * PC_PAGE + 10, 0) != (ssize_t)(4 * PC_PAGE + 10))
		pc_fail("pread back");
	PC_CHECK(memcmp(back, p + 100, PC_PAGE) == 0 && memcmp(back + PC_PAGE, p + 50 * PC_PAGE + 9, 3 * PC_PAGE) == 0 &&
		 memcmp(back + 4 * PC_PAGE, p + 2000 * PC_PAGE, 10) == 0, "pwritev: the file differs");
	pc_expect_range("writev: the source", p, NPAGES, PC_TEXT, 21);
	pc_expect_stored("write", 0);
	free(back);
	close(fd);
	munmap(p, LEN);
	printf("write ok\n");
}

/* ---- futex ---- */

struct waiter {
	pthread_t t;
	atomic_int *word;
	int op;
	pid_t tid;
	atomic_int started, done;
	int saw;
	int errors;
};

static long futex(atomic_int *addr, int op, int val)
{
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	atomic_store(&w->started, 1);
	/* The kernel reads the evicted word: the fault is taken inside futex(). */
	for (;;) {
		long rc = futex(w->word, w->op, 0);
		if (rc != 0 && errno != EAGAIN && errno != EINTR) {
			w->errors = errno;
			break;
		}
		if (atomic_load(w->word) != 0)
			break;
	}
	w->saw = atomic_load(w->word);
	atomic_store(&w->done, 1);
	return NULL;
}

/* True once the thread sleeps inside system call nr (bounded wait). */
static bool sleeping_in(pid_t tid, long nr_want)
{
	char path[64], buf[128];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (int i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		long nr = -1;
		if (f) {
			if (fgets(buf, sizeof(buf), f))
				nr = strtol(buf, NULL, 10);
			fclose(f);
		}
		if (nr == nr_want) {
			char st = 0;
			snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
			f = fopen(path, "r");
			if (f) {
				if (fgets(buf, sizeof(buf), f)) {
					char *rp = strrchr(buf, ')');
					if (rp && rp[1])
						st = rp[2];
				}
				fclose(f);
			}
			if (st == 'S')
				return true;
			snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
		}
		pc_sleep_ms(1);
	}
	return false;
}

static void case_futex(void)
{
	char *p = pc_map(LEN);
	const int ops[2] = { FUTEX_WAIT_PRIVATE, FUTEX_WAIT };
	const size_t pages[2] = { 100, 1500 };
	const size_t woff = 1000;	/* byte offset of the word in its page */

	pc_fill_range(p, NPAGES, PC_TEXT, 31);
	for (int k = 0; k < 2; k++)
		memset(p + pages[k] * PC_PAGE + woff, 0, sizeof(int));
	for (int k = 0; k < 2; k++) {
		struct waiter w = { 0 };
		char *pg = p + pages[k] * PC_PAGE;

		w.word = (atomic_int *)(void *)(pg + woff);
		w.op = ops[k];
		pc_evict("futex", p, NPAGES, false);
		if (pthread_create(&w.t, NULL, waiter_main, &w) != 0)
			pc_fail("pthread_create");
		while (!atomic_load(&w.started))
			sched_yield();
		bool slept = sleeping_in(w.tid, SYS_futex);
		if (!slept)
			pc_info("futex: the waiter was not seen asleep in futex(2) (coverage only)");
		/* Evict the page again while the waiter sleeps on it. First let
		 * the handlers finish with its fault: the waiter is seen asleep
		 * in futex(2) as soon as it blocks in that call, which may still
		 * be on the userfaultfd fault of the word futex reads first; a
		 * handler is then loading the page, and the eviction finds it
		 * absent, or in flight and skips it (ft2-syscalls failed so:
		 * 1 run in 60 of this case alone, none in 160 with the pause).
		 * The waiter sleeps on all the same. */
		if (slept && pc_managed()) {
			pc_sleep_ms(20);
			pc_evict("futex: the page under a sleeping waiter", pg, 1, false);
		}
		atomic_store(w.word, 1);	/* faults the page back */
		while (!atomic_load(&w.done)) {
			futex(w.word, k == 0 ? FUTEX_WAKE_PRIVATE : FUTEX_WAKE, 1);
			sched_yield();
		}
		pthread_join(w.t, NULL);
		PC_CHECK(w.errors == 0, "futex(%s) on an evicted word failed: %s", k ? "FUTEX_WAIT" : "FUTEX_WAIT_PRIVATE",
			 strerror(w.errors));
		PC_CHECK(w.saw == 1, "futex waiter saw %d, expected 1", w.saw);
		atomic_store(w.word, 0);
		pc_info("futex %s: waiter %s", k ? "shared" : "private", slept ? "slept and was woken" : "did not sleep");
	}
	for (int k = 0; k < 2; k++) {	/* put the text back where the words were */
		static unsigned char orig[PC_PAGE];
		pc_fill(orig, PC_TEXT, pc_page_seed(31, pages[k]));
		memcpy(p + pages[k] * PC_PAGE + woff, orig + woff, sizeof(int));
	}
	pc_expect_range("futex: the pages around the words", p, NPAGES, PC_TEXT, 31);
	pc_expect_stored("futex", 0);
	munmap(p, LEN);
	printf("futex ok\n");
}

/* ---- signals ---- */

static char *sig_area;			/* evicted again and again, read by the handler */
static atomic_int sig_count, sig_bad;
static unsigned char sig_expect[PC_PAGE];

static void on_usr1(int sig)
{
	int n = atomic_fetch_add(&sig_count, 1);
	size_t pg = ((size_t)n * 37) % NPAGES;

	(void)sig;
	/* Touch an evicted page from the handler (faulting inside the handler). */
	pc_fill(sig_expect, PC_BINARY, pc_page_seed(41, pg));
	if (memcmp(sig_area + pg * PC_PAGE, sig_expect, PC_PAGE) != 0)
		atomic_store(&sig_bad, n + 1);
}

static atomic_int sig_rounds, sig_stop;
static pthread_barrier_t sig_bar;

struct sig_worker {
	char *area;
	int fd;
	const unsigned char *file;
	size_t flen;
};

static void *sig_worker_main(void *arg)
{
	struct sig_worker *s = arg;

	for (;;) {
		pthread_barrier_wait(&sig_bar);		/* main evicted the area */
		if (atomic_load(&sig_stop))
			break;
		/* User-mode faults through the whole area... */
		pc_expect_range("signal: area read by the signalled thread", s->area, NPAGES, PC_TEXT, 42);
		/* ...and faults inside read(2) into evicted pages. */
		for (size_t done = 0; done < s->flen;) {
			ssize_t r = pread(s->fd, s->area + 7 + done, s->flen - done, (off_t)done);
			if (r < 0 && errno == EINTR)
				continue;	/* SA_RESTART should make this rare */
			if (r <= 0)
				pc_fail("signal: pread into an evicted buffer: %s", r < 0 ? strerror(errno) : "EOF");
			done += (size_t)r;
		}
		if (memcmp(s->area + 7, s->file, s->flen) != 0)
			pc_fail("signal: pread data wrong");
		pc_fill_range(s->area, NPAGES, PC_TEXT, 42);
		atomic_fetch_add(&sig_rounds, 1);
		pthread_barrier_wait(&sig_bar);
	}
	return NULL;
}

static void case_signal(void)
{
	struct sigaction sa;
	pthread_t t;
	unsigned char *file;
	struct sig_worker s;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		pc_fail("sigaction: %s", strerror(errno));
	sig_area = pc_map(LEN);
	pc_fill_range(sig_area, NPAGES, PC_BINARY, 41);
	s.area = pc_map(LEN);
	s.flen = 2 * PC_MIB;
	s.fd = make_file(s.flen, 43, (unsigned char **)&file);
	s.file = file;
	pc_fill_range(s.area, NPAGES, PC_TEXT, 42);
	pthread_barrier_init(&sig_bar, NULL, 2);
	if (pthread_create(&t, NULL, sig_worker_main, &s) != 0)
		pc_fail("pthread_create");

	/* At least 3 rounds and 200 signals, whichever comes last. The
	 * handler's area is evicted while the handler may be reading it: no
	 * assertion on those evictions, only on what the handler reads. */
	int sent = 0;
	for (int round = 0;; round++) {
		if (round >= 3 && atomic_load(&sig_count) >= 200) {
			atomic_store(&sig_stop, 1);
			pthread_barrier_wait(&sig_bar);
			break;
		}
		pc_evict("signal: the worker's area", s.area, NPAGES, false);
		pc_pageout(sig_area, LEN);
		pthread_barrier_wait(&sig_bar);
		while (atomic_load(&sig_rounds) == round) {
			pthread_kill(t, SIGUSR1);
			sent++;
			if (sent % 8 == 0)
				pc_pageout(sig_area, LEN);
			usleep(100);
		}
		pthread_barrier_wait(&sig_bar);
	}
	pthread_join(t, NULL);
	signal(SIGUSR1, SIG_IGN);
	PC_CHECK(atomic_load(&sig_bad) == 0, "signal handler %d read a wrong evicted page", atomic_load(&sig_bad) - 1);
	pc_info("signal: %d signals sent, %d handled, %d rounds", sent, atomic_load(&sig_count), atomic_load(&sig_rounds));
	PC_CHECK(atomic_load(&sig_count) >= 200, "only %d signals handled", atomic_load(&sig_count));
	pc_expect_range("signal: the handler's area at the end", sig_area, NPAGES, PC_BINARY, 41);
	pc_expect_range("signal: the worker's area at the end", s.area, NPAGES, PC_TEXT, 42);
	pc_expect_stored("signal", 0);
	close(s.fd);
	free(file);
	munmap(s.area, LEN);
	munmap(sig_area, LEN);
	printf("signal ok\n");
}

/* ---- threads exiting ---- */

static char *te_area;

struct te_arg {
	size_t first, n;
	int how;		/* 0 return, 1 pthread_exit half way, 2 wait to be cancelled */
	atomic_int progress;
};

static void *te_main(void *arg)
{
	struct te_arg *a = arg;

	if (a->how == 2) {
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
		/* Fault through the area forever; main cancels us mid-way. */
		for (size_t i = 0;; i = (i + 1) % NPAGES) {
			volatile char c = te_area[i * PC_PAGE + 5];
			(void)c;
			atomic_fetch_add(&a->progress, 1);
		}
	}
	for (size_t i = a->first; i < a->first + a->n; i++) {
		volatile char c = te_area[i * PC_PAGE + 5];
		(void)c;
		if (a->how == 1 && i == a->first + a->n / 2)
			pthread_exit(NULL);
	}
	return NULL;
}

static void case_threadexit(void)
{
	enum { NT = 8 };
	te_area = pc_map(LEN);
	pc_fill_range(te_area, NPAGES, PC_TEXT, 51);
	for (int round = 0; round < 10; round++) {
		pthread_t t[NT + 1];
		struct te_arg a[NT + 1];

		pc_evict("threadexit", te_area, NPAGES, false);
		for (int i = 0; i <= NT; i++) {
			a[i] = (struct te_arg){ .first = (size_t)i * (NPAGES / NT) % NPAGES, .n = NPAGES / NT,
						.how = i == NT ? 2 : i % 2 };
			atomic_init(&a[i].progress, 0);
			if (pthread_create(&t[i], NULL, te_main, &a[i]) != 0)
				pc_fail("pthread_create");
		}
		while (atomic_load(&a[NT].progress) < 300)
			sched_yield();
		pthread_cancel(t[NT]);
		for (int i = 0; i <= NT; i++)
			pthread_join(t[i], NULL);
		pc_expect_range("threadexit: after the threads exited", te_area, NPAGES, PC_TEXT, 51);
	}
	pc_expect_stored("threadexit", 0);
	munmap(te_area, LEN);
	printf("threadexit ok\n");
}

/* ---- signals delivered onto an evicted alternate stack ---- */

#define AS_MAP 512UL		/* the managed mapping: 2 MiB */
#define AS_FIRST 128UL		/* the alternate stack: its pages [128, 192) */
#define AS_PAGES 64UL
#define AS_BUF 16384UL		/* the handler's local buffer, on the alternate stack */

static char *as_map;
static volatile uintptr_t as_local, as_buf;
static volatile sig_atomic_t as_handled, as_canary_bad;
static uint64_t as_seed;
static unsigned char as_expect[PC_PAGE];

/* Byte i of the pattern the handler writes in round seed. */
static unsigned char as_byte(uint64_t seed, size_t i)
{
	return (unsigned char)(pc_mix(seed * 1000003ULL + i / 8) >> (i % 8 * 8));
}

static void on_altstack(int sig)
{
	volatile unsigned char buf[AS_BUF];
	int here;

	(void)sig;
	as_local = (uintptr_t)&here;
	as_buf = (uintptr_t)buf;
	/* The frame the kernel wrote and this buffer are on evicted pages. */
	for (size_t i = 0; i < AS_BUF; i++)
		buf[i] = as_byte(as_seed, i);
	/* A page of the alternate stack far below the frame, evicted and still
	 * holding what was written before: a user-mode fault on the altstack. */
	pc_fill(as_expect, PC_TEXT, pc_page_seed(71, AS_FIRST));
	if (memcmp(as_map + AS_FIRST * PC_PAGE, as_expect, PC_PAGE) != 0)
		as_canary_bad = 1;
	as_handled++;
}


static void case_altstack(void)
{
	struct sigaction sa;
	stack_t ss = { 0 }, old;
	uintptr_t lo, hi;

	as_map = pc_map(AS_MAP * PC_PAGE);
	pc_fill_range(as_map, AS_MAP, PC_TEXT, 71);
	ss.ss_sp = as_map + AS_FIRST * PC_PAGE;
	ss.ss_size = AS_PAGES * PC_PAGE;
	lo = (uintptr_t)ss.ss_sp;
	hi = lo + ss.ss_size;
	if (sigaltstack(&ss, &old) != 0)
		pc_fail("sigaltstack: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_altstack;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		pc_fail("sigaction: %s", strerror(errno));

	for (int round = 0; round < 4; round++) {
		/* Everything evicted: the pages the kernel writes the signal
		 * frame into, the handler's buffer, the canaries. */
		pc_evict("altstack", as_map, AS_MAP, false);
		as_seed = 500 + (uint64_t)round;
		as_local = as_buf = 0;
		as_canary_bad = 0;
		int before = as_handled;
		if (raise(SIGUSR2) != 0)
			pc_fail("raise: %s", strerror(errno));
		PC_CHECK(as_handled == before + 1, "altstack round %d: the handler did not run", round);
		PC_CHECK(as_local >= lo && as_local < hi,
			 "altstack round %d: the handler ran at %#lx, not on the alternate stack [%#lx, %#lx)", round,
			 (unsigned long)as_local, (unsigned long)lo, (unsigned long)hi);
		PC_CHECK(as_buf >= lo && as_buf + AS_BUF <= hi, "altstack round %d: the handler's buffer is not on the"
			 " alternate stack", round);
		PC_CHECK(!as_canary_bad, "altstack round %d: the handler read a wrong canary page of the alternate"
			 " stack", round);
		/* What the handler wrote, read back after it returned. */
		const volatile unsigned char *b = (const volatile unsigned char *)as_buf;
		for (size_t i = 0; i < AS_BUF; i++)
			if (b[i] != as_byte(as_seed, i))
				pc_fail("altstack round %d: byte %zu of the handler's buffer is wrong", round, i);
		/* Every page of the mapping outside the alternate stack, and the
		 * alternate stack below the handler's frame (with a page of slack
		 * for what the handler called), holds what was written before
		 * the evictions. */
		size_t used = (as_buf - PC_PAGE) / PC_PAGE * PC_PAGE;	/* pages below it untouched */
		size_t intact = (used - lo) / PC_PAGE;
		PC_CHECK(intact >= AS_PAGES / 2, "altstack: the handler used %zu pages of %lu", AS_PAGES - intact, AS_PAGES);
		pc_expect_sub("altstack: below the alternate stack", as_map, 0, AS_FIRST, PC_TEXT, 71);
		pc_expect_sub("altstack: the alternate stack below the frame", as_map, AS_FIRST, intact, PC_TEXT, 71);
		pc_expect_sub("altstack: above the alternate stack", as_map, AS_FIRST + AS_PAGES,
			   AS_MAP - AS_FIRST - AS_PAGES, PC_TEXT, 71);
	}
	ss.ss_flags = SS_DISABLE;
	if (sigaltstack(&ss, NULL) != 0)
		pc_fail("sigaltstack SS_DISABLE: %s", strerror(errno));
	signal(SIGUSR2, SIG_DFL);
	pc_expect_stored("altstack", 0);
	munmap(as_map, AS_MAP * PC_PAGE);
	printf("altstack ok\n");
}

/* ---- a thread whose stack is a managed mapping, evicted while it blocks ---- */

#define TS_MAP 512UL		/* the stack: 2 MiB */
#define TS_KEEP (16 * PC_PAGE)	/* data the thread keeps on its stack */
#define TS_IN (3 * PC_PAGE + 100)	/* read(2) into its stack */
#define TS_ROUNDS 3
#define TS_TOP 4UL		/* pages at the top the library keeps (engine.c) */

struct ts_arg {
	int rfd;
	pid_t tid;
	atomic_int waiting;		/* rounds the thread started to wait for */
	atomic_int done;		/* rounds it checked */
	uintptr_t keep_addr, low;	/* its locals; the lowest of them */
	char err[200];
};

static unsigned char ts_byte(uint64_t seed, size_t i)
{
	return (unsigned char)(pc_mix(seed * 7919ULL + i / 8) >> (i % 8 * 8));
}

static void *ts_main(void *arg)
{
	struct ts_arg *a = arg;
	volatile unsigned char keep[TS_KEEP];
	unsigned char in[TS_IN];

	a->tid = (pid_t)syscall(SYS_gettid);
	a->keep_addr = (uintptr_t)keep;
	a->low = (uintptr_t)keep < (uintptr_t)in ? (uintptr_t)keep : (uintptr_t)in;
	for (size_t i = 0; i < TS_KEEP; i++)
		keep[i] = ts_byte(900, i);
	for (int round = 0; round < TS_ROUNDS; round++) {
		atomic_store(&a->waiting, round + 1);
		/* Main evicts this stack while read(2) sleeps; the kernel then
		 * writes into the evicted buffer, and every return to user
		 * space touches the evicted frame and thread descriptor. */
		for (size_t got = 0; got < TS_IN;) {
			ssize_t r = read(a->rfd, in + got, TS_IN - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				snprintf(a->err, sizeof(a->err), "read into its stack: %s", r < 0 ? strerror(errno) : "EOF");
				return NULL;
			}
			got += (size_t)r;
		}
		for (size_t i = 0; i < TS_IN; i++)
			if (in[i] != ts_byte(910 + (uint64_t)round, i)) {
				snprintf(a->err, sizeof(a->err), "round %d: byte %zu read into its stack is wrong", round, i);
				return NULL;
			}
		for (size_t i = 0; i < TS_KEEP; i++)
			if (keep[i] != ts_byte(900, i)) {
				snprintf(a->err, sizeof(a->err), "round %d: byte %zu of the data on its stack is wrong%s",
					 round, i, keep[i / PC_PAGE * PC_PAGE] == 0 ? " (zeros?)" : "");
				return NULL;
			}
		atomic_store(&a->done, round + 1);
	}
	return NULL;
}

/* A thread on a given stack that ends with the raw exit system call right
 * after a raw read: between its wake-up and its exit no C library code
 * touches the top of its stack, where glibc's thread descriptor (with the
 * thread ID the kernel clears at exit, which pthread_join waits for) sits.
 * The kernel serves no userfaultfd fault for an exiting thread: the clear
 * works only if that page is back by then (the kernel's own rseq update on
 * the return to user space brings it back). */
static int rx_rfd;
static atomic_int rx_tid;

static __attribute__((noinline)) void rx_deep(void)
{
	volatile char buf[64 * 1024];

	buf[sizeof(buf) - 1] = 1;
	buf[0] = 1;
	if (syscall(SYS_read, rx_rfd, (char *)buf, 1) != 1)
		_exit(3);
	syscall(SYS_exit, 0);
}

static void *rx_main(void *arg)
{
	(void)arg;
	atomic_store(&rx_tid, (int)syscall(SYS_gettid));
	rx_deep();
	return NULL;
}

/* Given with the deprecated pair (size first, then the top's address), as
 * older programs do. */
static void rx_setstack_addr(pthread_attr_t *attr, char *stk, size_t size)
{
	if (pthread_attr_setstacksize(attr, size) != 0)
		pc_fail("pthread_attr_setstacksize");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	if (pthread_attr_setstackaddr(attr, stk + size) != 0)
		pc_fail("pthread_attr_setstackaddr");
#pragma GCC diagnostic pop
}

static void case_stackexit(bool addr_api)
{
	char *stk = pc_map(TS_MAP * PC_PAGE);
	pthread_attr_t attr;
	pthread_t t;
	int pfd[2];

	if (pipe(pfd) != 0)
		pc_fail("pipe: %s", strerror(errno));
	rx_rfd = pfd[0];
	atomic_store(&rx_tid, 0);
	pc_fill_range(stk, TS_MAP, PC_BINARY, 82);
	pthread_attr_init(&attr);
	if (addr_api)
		rx_setstack_addr(&attr, stk, TS_MAP * PC_PAGE);
	else if (pthread_attr_setstack(&attr, stk, TS_MAP * PC_PAGE) != 0)
		pc_fail("pthread_attr_setstack");
	if (pthread_create(&t, &attr, rx_main, NULL) != 0)
		pc_fail("pthread_create");
	pthread_attr_destroy(&attr);
	while (!atomic_load(&rx_tid))
		sched_yield();
	if (!sleeping_in(atomic_load(&rx_tid), SYS_read))
		pc_info("stackexit: the thread was not seen asleep in read(2)");
	pc_evict("stackexit: the stack of a thread asleep in read(2), below its top", stk, TS_MAP - TS_TOP, false);
	/* Asked for the whole of it: the top must stay. */
	pc_pageout(stk, TS_MAP * PC_PAGE);
	if (pc_managed())
		PC_CHECK(pc_count_resident(stk + (TS_MAP - TS_TOP) * PC_PAGE, TS_TOP) == TS_TOP,
			 "stackexit: the top %lu pages of a given stack (the thread descriptor) were evicted", TS_TOP);
	if (write(pfd[1], "x", 1) != 1)
		pc_fail("write to the pipe: %s", strerror(errno));
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	int r = pthread_timedjoin_np(t, NULL, &ts);
	PC_CHECK(r == 0, "stackexit: pthread_join: %s (its exit did not clear its thread ID)", strerror(r));
	pc_expect_sub("stackexit: the unused bottom of the thread's stack", stk, 0, TS_MAP / 2, PC_BINARY, 82);
	close(pfd[0]);
	close(pfd[1]);
	munmap(stk, TS_MAP * PC_PAGE);
	printf("stackexit%s ok\n", addr_api ? "-addr" : "");
}

static void case_threadstack(void)
{
	char *stk = pc_map(TS_MAP * PC_PAGE);
	struct ts_arg a = { 0 };
	unsigned char in[TS_IN];
	pthread_attr_t attr;
	pthread_t t;
	int pfd[2];

	if (pipe(pfd) != 0)
		pc_fail("pipe: %s", strerror(errno));
	a.rfd = pfd[0];
	/* Canaries everywhere: glibc puts the thread descriptor and TLS at the
	 * top, the stack grows down from there; the bottom stays untouched. */
	pc_fill_range(stk, TS_MAP, PC_BINARY, 81);
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, stk, TS_MAP * PC_PAGE) != 0)
		pc_fail("pthread_attr_setstack");
	if (pthread_create(&t, &attr, ts_main, &a) != 0)
		pc_fail("pthread_create");
	pthread_attr_destroy(&attr);
	for (int round = 0; round < TS_ROUNDS; round++) {
		while (atomic_load(&a.waiting) < round + 1 && !a.err[0])
			sched_yield();
		PC_CHECK(!a.err[0], "threadstack: the thread: %s", a.err);
		PC_CHECK(a.keep_addr >= (uintptr_t)stk && a.keep_addr < (uintptr_t)stk + TS_MAP * PC_PAGE,
			 "threadstack: the thread's locals are not on the stack given to it");
		if (sleeping_in(a.tid, SYS_read)) {
			/* Asserted: every page of its stack below the top is
			 * gone. */
			pc_evict("threadstack: the stack of a thread asleep in read(2)", stk, TS_MAP - TS_TOP, false);
		} else {
			pc_info("threadstack round %d: the thread was not seen asleep in read(2) (evicting unasserted)",
				round);
			pc_pageout(stk, TS_MAP * PC_PAGE);
		}
		for (size_t i = 0; i < TS_IN; i++)
			in[i] = ts_byte(910 + (uint64_t)round, i);
		if (write(pfd[1], in, TS_IN) != (ssize_t)TS_IN)
			pc_fail("write to the pipe: %s", strerror(errno));
		while (atomic_load(&a.done) < round + 1 && !a.err[0])
			sched_yield();
		PC_CHECK(!a.err[0], "threadstack: the thread: %s", a.err);
	}
	if (pthread_join(t, NULL) != 0)
		pc_fail("pthread_join");
	PC_CHECK(!a.err[0], "threadstack: the thread: %s", a.err);
	/* The stack below the thread's deepest frame (its locals, with two
	 * pages of slack for the calls below them): as filled. The pages above
	 * are the thread's own; read them back. */
	size_t intact = (a.low - (uintptr_t)stk) / PC_PAGE - 2;
	PC_CHECK(intact >= TS_MAP / 2, "threadstack: the thread used %zu pages of its stack", TS_MAP - intact);
	pc_expect_sub("threadstack: the unused bottom of the thread's stack", stk, 0, intact, PC_BINARY, 81);
	for (size_t i = intact; i < TS_MAP; i++)
		(void)*(volatile char *)(stk + i * PC_PAGE);
	close(pfd[0]);
	close(pfd[1]);
	pc_expect_stored("threadstack", 0);
	munmap(stk, TS_MAP * PC_PAGE);
	printf("threadstack ok\n");
}

/* ---- scatter/gather: readv, preadv, recvmsg, writev, sendmsg ---- */

#define IOV_N 7
static const struct { size_t page, off, len; } iov_seg[IOV_N] = {
	{ 10, PC_PAGE - 10, 20 },			/* across a page boundary */
	{ 30, 0, 3 * PC_PAGE },				/* whole pages */
	{ 100, 1, 0 },					/* empty */
	{ 200, 17, 1 },
	{ 300, 2000, 5 * PC_PAGE + 333 },
	{ 1500, PC_PAGE - 1, 2 },
	{ 2040, 100, 7 * PC_PAGE + 3900 },		/* to 96 bytes before the end */
};
#define IOV_ARRAY_AT (1000 * PC_PAGE + PC_PAGE - 40)	/* the iovec array, across a page boundary */
#define IOV_MSG_AT (1200 * PC_PAGE + PC_PAGE - 24)	/* the msghdr, likewise */

static size_t iov_total(void)
{
	size_t n = 0;

	for (int i = 0; i < IOV_N; i++)
		n += iov_seg[i].len;
	return n;
}

/* The mapping must hold exactly what the shadow copy says. */
static void iov_compare(const char *what, const char *p, const char *shadow)
{
	for (size_t pg = 0; pg < NPAGES; pg++)
		if (memcmp(p + pg * PC_PAGE, shadow + pg * PC_PAGE, PC_PAGE) != 0) {
			size_t i = pg * PC_PAGE;
			while (p[i] == shadow[i])
				i++;
			pc_fail("%s: byte %zu (page %zu, offset %zu) is wrong%s", what, i, pg, i % PC_PAGE,
				pc_page_is_zero(p + pg * PC_PAGE) ? " (the page reads zeros)" : "");
		}
}

/* Scatter src over the segments of the shadow, as the kernel should have. */
static void iov_scatter(char *shadow, const unsigned char *src)
{
	for (int i = 0; i < IOV_N; i++) {
		memcpy(shadow + iov_seg[i].page * PC_PAGE + iov_seg[i].off, src, iov_seg[i].len);
		src += iov_seg[i].len;
	}
}

static void iov_gather(const char *shadow, unsigned char *dst)
{
	for (int i = 0; i < IOV_N; i++) {
		memcpy(dst, shadow + iov_seg[i].page * PC_PAGE + iov_seg[i].off, iov_seg[i].len);
		dst += iov_seg[i].len;
	}
}

struct receiver {
	int fd;
	unsigned char *buf;
	size_t len;
};

static void *receiver_main(void *arg)
{
	struct receiver *r = arg;

	for (size_t done = 0; done < r->len;) {
		ssize_t n = recv(r->fd, r->buf + done, r->len - done, MSG_WAITALL);
		if (n <= 0)
			pc_fail("recv: %s", n < 0 ? strerror(errno) : "EOF");
		done += (size_t)n;
	}
	return NULL;
}

static void case_iovec(void)
{
	char *p = pc_map(LEN);
	char *shadow = malloc(LEN);
	size_t total = iov_total();
	unsigned char *src, *src2, *back = malloc(total), *want = malloc(total);
	int fd = make_file(total + PC_PAGE, 91, &src), fd2, sv[2];
	struct iovec iov[IOV_N];
	struct msghdr mh;
	pthread_t t;

	if (!shadow || !back || !want)
		pc_fail("malloc");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		pc_fail("socketpair: %s", strerror(errno));
	pc_fill_range(p, NPAGES, PC_RANDOM, 92);
	for (int i = 0; i < IOV_N; i++) {
		iov[i].iov_base = p + iov_seg[i].page * PC_PAGE + iov_seg[i].off;
		iov[i].iov_len = iov_seg[i].len;
	}
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = (struct iovec *)(void *)(p + IOV_ARRAY_AT);
	mh.msg_iovlen = IOV_N;
	memcpy(p + IOV_ARRAY_AT, iov, sizeof(iov));
	memcpy(p + IOV_MSG_AT, &mh, sizeof(mh));
	memcpy(shadow, p, LEN);
	const struct iovec *viov = (const struct iovec *)(const void *)(p + IOV_ARRAY_AT);
	struct msghdr *vmh = (struct msghdr *)(void *)(p + IOV_MSG_AT);

	/* readv: the kernel reads the iovec array and scatters into evicted pages. */
	pc_evict("readv", p, NPAGES, false);
	if (lseek(fd, 0, SEEK_SET) != 0)
		pc_fail("lseek: %s", strerror(errno));
	ssize_t r = readv(fd, viov, IOV_N);
	PC_CHECK(r == (ssize_t)total, "readv into evicted buffers (evicted iovec array): %zd of %zu: %s", r, total,
		 r < 0 ? strerror(errno) : "short");
	iov_scatter(shadow, src);
	iov_compare("readv", p, shadow);

	/* preadv from an unaligned file offset. */
	pc_evict("preadv", p, NPAGES, false);
	r = preadv(fd, viov, IOV_N, PC_PAGE - 3);
	PC_CHECK(r == (ssize_t)total, "preadv into evicted buffers (evicted iovec array): %zd of %zu: %s", r, total,
		 r < 0 ? strerror(errno) : "short");
	iov_scatter(shadow, src + PC_PAGE - 3);
	iov_compare("preadv", p, shadow);

	/* recvmsg: the msghdr and the iovec array evicted too. */
	src2 = malloc(total);
	if (!src2)
		pc_fail("malloc");
	for (size_t i = 0; i < total; i++)
		src2[i] = ts_byte(93, i);
	pc_evict("recvmsg", p, NPAGES, false);
	struct sender s = { sv[1], (const char *)src2, total, true };
	if (pthread_create(&t, NULL, sender_main, &s) != 0)
		pc_fail("pthread_create");
	r = recvmsg(sv[0], vmh, MSG_WAITALL);
	pthread_join(t, NULL);
	PC_CHECK(r == (ssize_t)total, "recvmsg into evicted buffers (evicted msghdr and iovec array): %zd of %zu: %s",
		 r, total, r < 0 ? strerror(errno) : "short");
	PC_CHECK(vmh->msg_flags == 0, "recvmsg: msg_flags %#x", (unsigned)vmh->msg_flags);
	iov_scatter(shadow, src2);
	iov_compare("recvmsg", p, shadow);

	/* writev: gathered from evicted pages, through an evicted iovec array. */
	free(src2);
	fd2 = make_file(PC_PAGE, 94, &src2);
	free(src2);
	if (ftruncate(fd2, 0) != 0 || lseek(fd2, 0, SEEK_SET) != 0)
		pc_fail("ftruncate/lseek: %s", strerror(errno));
	iov_gather(shadow, want);
	pc_evict("writev", p, NPAGES, false);
	r = writev(fd2, viov, IOV_N);
	PC_CHECK(r == (ssize_t)total, "writev from evicted buffers (evicted iovec array): %zd of %zu: %s", r, total,
		 r < 0 ? strerror(errno) : "short");
	PC_CHECK(pread(fd2, back, total, 0) == (ssize_t)total, "pread back: %s", strerror(errno));
	PC_CHECK(memcmp(back, want, total) == 0, "writev: the file differs from the evicted segments");
	iov_compare("writev: the sources afterwards", p, shadow);

	/* sendmsg from evicted buffers, through an evicted msghdr and array. */
	pc_evict("sendmsg", p, NPAGES, false);
	memset(back, 0, total);
	struct receiver rv = { sv[0], back, total };
	if (pthread_create(&t, NULL, receiver_main, &rv) != 0)
		pc_fail("pthread_create");
	r = sendmsg(sv[1], vmh, 0);
	pthread_join(t, NULL);
	PC_CHECK(r == (ssize_t)total, "sendmsg from evicted buffers (evicted msghdr and iovec array): %zd of %zu: %s",
		 r, total, r < 0 ? strerror(errno) : "short");
	PC_CHECK(memcmp(back, want, total) == 0, "sendmsg: the bytes received differ from the evicted segments");
	iov_compare("sendmsg: the sources afterwards", p, shadow);

	pc_expect_stored("iovec", 0);
	close(fd);
	close(fd2);
	close(sv[0]);
	close(sv[1]);
	free(src);
	free(back);
	free(want);
	free(shadow);
	munmap(p, LEN);
	printf("iovec ok\n");
}

/* ---- the process exiting with faults in flight ---- */

static atomic_int ex_loops;

static void *ex_main(void *arg)
{
	long id = (long)arg;
	static unsigned char expect[5][PC_PAGE];	/* one per caller: 4 threads and main */

	for (size_t i = (size_t)id * 97;; i = (i + 1) % NPAGES) {
		pc_fill(expect[id], PC_TEXT, pc_page_seed(61, i));
		if (memcmp(te_area + i * PC_PAGE, expect[id], PC_PAGE) != 0) {
			pc_write_str(2, "prog_syscalls: FAIL: exit: a faulting thread read a wrong page\n");
			_exit(1);
		}
		atomic_fetch_add(&ex_loops, 1);
	}
	return NULL;
}

static void *exit_thread(void *arg)
{
	exit((int)(long)arg);
}

static void case_exit(bool from_thread)
{
	pthread_t t[4];

	te_area = pc_map(LEN);
	pc_fill_range(te_area, NPAGES, PC_TEXT, 61);
	pc_evict("exit", te_area, NPAGES, false);
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, ex_main, (void *)i) != 0)
			pc_fail("pthread_create");
	for (int round = 0; round < 5; round++) {
		int target = atomic_load(&ex_loops) + 200;
		while (atomic_load(&ex_loops) < target)
			sched_yield();
		pc_pageout(te_area, LEN);
	}
	printf(from_thread ? "exitthread: exiting with 5\n" : "exit: exiting with 0\n");
	fflush(stdout);
	if (from_thread) {
		/* exit() from a thread other than main while the others fault;
		 * main itself faults until the process ends. */
		pthread_t ex;
		if (pthread_create(&ex, NULL, exit_thread, (void *)5L) != 0)
			pc_fail("pthread_create");
		ex_main((void *)4L);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "read", "pread", "recv", "write", "futex", "signal", "threadexit",
					   "altstack", "threadstack", "stackexit", "stackexit-addr", "iovec" };
	const char *env = getenv("TMPDIR");

	pc_init("prog_syscalls", &argc, argv);
	if (env && strlen(env) < sizeof(tmpdir))
		snprintf(tmpdir, sizeof(tmpdir), "%s", env);
	pc_info("mode %s", pc_mode_name());
	const char *const *list = (const char *const *)argv + 1;
	int n = argc - 1;
	if (n == 0) {
		list = all;
		n = (int)(sizeof(all) / sizeof(all[0]));
	}
	for (int i = 0; i < n; i++) {
		const char *c = list[i];
		if (strcmp(c, "read") == 0)
			case_read(false);
		else if (strcmp(c, "pread") == 0)
			case_read(true);
		else if (strcmp(c, "recv") == 0)
			case_recv();
		else if (strcmp(c, "write") == 0)
			case_write();
		else if (strcmp(c, "futex") == 0)
			case_futex();
		else if (strcmp(c, "signal") == 0)
			case_signal();
		else if (strcmp(c, "threadexit") == 0)
			case_threadexit();
		else if (strcmp(c, "altstack") == 0)
			case_altstack();
		else if (strcmp(c, "threadstack") == 0)
			case_threadstack();
		else if (strcmp(c, "stackexit") == 0)
			case_stackexit(false);
		else if (strcmp(c, "stackexit-addr") == 0)
			case_stackexit(true);
		else if (strcmp(c, "iovec") == 0)
			case_iovec();
		else if (strcmp(c, "exit") == 0)
			case_exit(false);
		else if (strcmp(c, "exitthread") == 0)
			case_exit(true);
		else
			pc_fail("unknown case %s", c);
	}
	return 0;
}
