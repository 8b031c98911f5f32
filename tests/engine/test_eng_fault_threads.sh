#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ZSWAP_FAULT_THREADS=2 and 4: the same correctness with several handler
# threads (page-out over every kind, writers racing eviction, threads faulting
# on one page, faults inside system calls and under signals).
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

pageout=$(eng_prog prog_pageout)
race=$(eng_prog prog_evict)
samepage=$(eng_prog prog_samepage)
syscalls=$(eng_prog prog_syscalls)
for n in 2 4; do
	eng_compare_run "ft$n-pageout" ZSWAP_FAULT_THREADS=$n "$pageout"
	eng_compare_run "ft$n-race" ZSWAP_FAULT_THREADS=$n "$race" 4 2048 16
	eng_compare_run "ft$n-samepage" ZSWAP_FAULT_THREADS=$n "$samepage" 8 30
	eng_compare_run "ft$n-syscalls" ZSWAP_FAULT_THREADS=$n "$syscalls" read recv futex signal
done
eng_finish
