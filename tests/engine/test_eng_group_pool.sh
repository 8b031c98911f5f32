#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One limit for a process tree (ZSWAP_MEMORY_SCOPE=tree, the default):
# Python's multiprocessing Pool, four workers each building and checking
# ~30 MiB of records, the tree's data about three times the limit, with
# the fork and the forkserver start methods. The output must be the plain
# run's, and the tree's memory, sampled every 0.2 s (group_tree.py: the sum
# of its processes' Pss, each page counted once), must stay within
# limit x 1.10 + 8 MiB, the rule test_eng_reclaim_interp.sh holds one
# process's VmHWM to. Each process with a limit of its own would hold five
# times the limit.
ENG_TIMEOUT=${ENG_TIMEOUT:-600}	# a generous bound: a hang fails, slowness does not
# Seven interpreters (forkserver's main, server, resource tracker and four
# workers) hold ~30 MiB of their own before any data, so the tree's working
# set may not fit in 48 MiB at times: the notice that says so is the truth,
# any other libzswap: line a failure.
ENG_ALLOW_LIBZSWAP='is thrashing under ZSWAP_MEMORY_LIMIT'
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

[ -x /usr/bin/python3 ] || eng_skip "python3 is not installed"
tree="$ENG_SRCDIR/tests/engine/group_tree.py"

pool="$ENG_SRCDIR/tests/engine/group_pool.py"

limit_mb=48
max_kb=$((limit_mb * 1024 * 110 / 100 + 8192))
records=16000

for method in fork forkserver; do
	eng_run "$method-plain" plain /usr/bin/python3 "$pool" $method $records
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/$method.ref"
	plain=$(sed -n 's/^group_tree: //p' "$ENG_ERR")
	eng_run "$method" plain /usr/bin/python3 "$tree" env LD_PRELOAD="$ENG_PRELOAD" \
		ZSWAP_MEMORY_LIMIT=${limit_mb}M ZSWAP_STATS_AT_EXIT=1 ZSWAP_STATS_FILE="$ENG_TMP/$method.st.%p" \
		/usr/bin/python3 "$pool" $method $records
	eng_expect_rc 0 || continue
	eng_expect_no_libzswap || continue
	eng_expect_same_stdout "$ENG_TMP/$method.ref" || continue
	line=$(sed -n 's/^group_tree: //p' "$ENG_ERR")
	eng_say "$method: $line (at most $max_kb)"
	peak=$(echo "$line" | sed -n 's/.*peak_kb=\([0-9]*\).*/\1/p')
	[ -n "$peak" ] && [ "$peak" -le "$max_kb" ] ||
		eng_fail "$method: the tree's peak ${peak:-?} kB is over ${limit_mb} MiB x 1.10 + 8 MiB = $max_kb kB"
	# The workers leave through _exit (no dump of their own); the group's
	# memory.stat.pgmajfault keeps their refaults: it is more than the
	# refaults of every dump at exit together.
	own=0 grp=0
	for f in "$ENG_TMP/$method".st.*; do
		own=$((own + $(eng_dump_stat "$f" refaults)))
		g=$(eng_dump_stat "$f" memory.stat.pgmajfault)
		[ "${g:-0}" -gt $grp ] && grp=$g
	done
	eng_say "$method: refaults in the dumps at exit $own, the group's $grp"
	[ "$grp" -gt "$own" ] ||
		eng_fail "$method: the group's memory.stat.pgmajfault ($grp) leaves out the workers' refaults"
done
eng_finish
