/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prog_reclaim_stats.so - preloaded after libzswap into a program nobody
 * here wrote (tests/engine/test_eng_reclaim_interp.sh runs perl and python3 with
 * it): at exit, prints libzswap's reclaim counters on stderr as
 * "prog_reclaim_stats: NAME=VALUE", so the test can tell that reclaim and
 * refaults really happened, and the peak resident memory (VmHWM of
 * /proc/self/status, in kB) for the limit's bound. Reaches the API through
 * dlsym, like the programs (tests/progs/prog_common.h).
 */
#include "config.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "zswap.h"

/* VmHWM in kB, or 0 if /proc/self/status cannot be read. Read with
 * read(2) into a stack buffer: no stdio this late in the process. */
static unsigned long long prog_reclaim_stats_hwm(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strstr(buf, "VmHWM:");
	return p ? strtoull(p + 6, NULL, 10) : 0;
}

__attribute__((destructor)) static void prog_reclaim_stats_dump(void)
{
	int (*stats)(struct zswap_stats *, size_t) =
		(int (*)(struct zswap_stats *, size_t))dlsym(RTLD_DEFAULT, "zswap_stats");
	struct zswap_stats st;
	char buf[1024];

	memset(&st, 0, sizeof(st));
	if (!stats || stats(&st, sizeof(st)) != 0)
		return;
	/* One write: stdio may already be shut down for the program's streams. */
	int n = snprintf(buf, sizeof(buf),
			 "prog_reclaim_stats: pgsteal=%llu refaults=%llu stored_pages=%llu memory_max=%llu "
			 "allocstall=%llu memory_events_max=%llu workingset_activate=%llu vmhwm_kb=%llu\n",
			 (unsigned long long)st.pgsteal, (unsigned long long)st.refaults,
			 (unsigned long long)st.stored_pages, (unsigned long long)st.memory_max,
			 (unsigned long long)st.allocstall, (unsigned long long)st.memory_events_max,
			 (unsigned long long)st.workingset_activate, prog_reclaim_stats_hwm());
	if (n > 0)
		fwrite(buf, 1, (size_t)n, stderr);
}
