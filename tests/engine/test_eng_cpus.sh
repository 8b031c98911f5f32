#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Handler threads and CPUs: ZSWAP_FAULT_THREADS=0 starts one handler pinned to
# each CPU the process may use (src/engine/engine.c engine_handler_cpus), and only
# to those. Checked: the handler threads' affinity (/proc/PID/task/*/status)
# unrestricted and under taskset; correctness (page-out, writers racing
# eviction, threads faulting on one page, faults inside system calls) with
# 0, 1, 2 and 4 threads and under `taskset -c CPU`.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

command -v taskset >/dev/null 2>&1 || eng_skip "taskset(1) is missing (util-linux)"
pageout=$(eng_prog prog_pageout)
race=$(eng_prog prog_evict)
samepage=$(eng_prog prog_samepage)
syscalls=$(eng_prog prog_syscalls)

# The CPUs this test may use, as taskset prints them ("0-1", "0,2").
allowed=$(taskset -cp $$ | sed 's/.*: *//')
first=$(printf '%s\n' "$allowed" | sed 's/[-,].*//')

# handler_affinity MASK: start a program under the library with
# ZSWAP_FAULT_THREADS=0 (under taskset MASK when not empty) and print the
# Cpus_allowed_list of each zswap-fault thread, one a line, sorted.
# sleep(1) makes no memory call: the library starts at once (ZSWAP_START_DELAY=0).
handler_affinity() {
	if [ -n "$1" ]; then
		env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_FAULT_THREADS=0 ZSWAP_START_DELAY=0 taskset -c "$1" sleep 60 &
	else
		env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_FAULT_THREADS=0 ZSWAP_START_DELAY=0 sleep 60 &
	fi
	ha_pid=$!
	# The threads name and pin themselves as they start: wait (bounded)
	# until as many as expected show single-CPU lists. Only once the
	# process is sleep(1): before that it is env or taskset, preloaded
	# too, whose handlers were pinned before taskset narrowed the set.
	ha_i=0
	while [ $ha_i -lt 300 ]; do
		ha_out=
		[ "$(cat /proc/$ha_pid/comm 2>/dev/null)" = sleep ] &&
		ha_out=$(for t in /proc/$ha_pid/task/*; do
			if grep -q '^Name:.zswap-fault$' "$t/status" 2>/dev/null; then
				sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status"
			fi
		done | sort)
		[ -n "$ha_out" ] && [ "$(printf '%s\n' "$ha_out" | grep -c '^[0-9]*$')" = "$2" ] && break
		sleep 0.1
		ha_i=$((ha_i + 1))
	done
	kill "$ha_pid" 2>/dev/null
	wait "$ha_pid" 2>/dev/null
	printf '%s\n' "$ha_out"
}

# Unrestricted: one handler per allowed CPU, each on its own CPU.
want=$(nproc)
if [ "$want" -le 16 ]; then
	got=$(handler_affinity "" "$want")
	n=$(printf '%s\n' "$got" | grep -c '^[0-9]*$')
	distinct=$(printf '%s\n' "$got" | sort -u | grep -c '^[0-9]*$')
	if [ "$n" != "$want" ] || [ "$distinct" != "$want" ]; then
		eng_fail "ZSWAP_FAULT_THREADS=0 on $want CPUs ($allowed): handler CPUs '$(echo $got)', expected one on each"
	fi
fi

# Restricted to one CPU: one handler, on that CPU only.
got=$(handler_affinity "$first" 1)
if [ "$got" != "$first" ]; then
	eng_fail "ZSWAP_FAULT_THREADS=0 under taskset -c $first: handler CPUs '$(echo $got)', expected '$first'"
fi

for n in 0 1 2 4; do
	eng_compare_run "ft$n-pageout" ZSWAP_FAULT_THREADS=$n "$pageout"
	eng_compare_run "ft$n-race" ZSWAP_FAULT_THREADS=$n "$race" 4 2048 16
done
for n in 0 2; do
	eng_compare_run "ft$n-samepage" ZSWAP_FAULT_THREADS=$n "$samepage" 8 30
	eng_compare_run "ft$n-syscalls" ZSWAP_FAULT_THREADS=$n "$syscalls" read recv futex signal
done

# Everything on one CPU: the program's threads and the one handler share it.
eng_compare_run "cpu$first-pageout" ZSWAP_FAULT_THREADS=0 taskset -c "$first" "$pageout"
eng_compare_run "cpu$first-race" ZSWAP_FAULT_THREADS=0 taskset -c "$first" "$race" 4 2048 16
eng_compare_run "cpu$first-syscalls" ZSWAP_FAULT_THREADS=0 taskset -c "$first" "$syscalls" read recv futex signal

eng_finish
