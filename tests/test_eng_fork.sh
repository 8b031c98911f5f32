#!/bin/sh
# fork() from a program with evicted memory, followed with
# UFFD_FEATURE_EVENT_FORK (src/fork.h): parent and child each see every byte
# and only their own writes, the child is managed (evicts and refaults with
# its own engine, forks grandchildren), and neither hangs nor loses data when
# the other exits first, is killed, or execs; 16 children at once; 8 threads
# forking under eviction load (tests/prog_fork.c). Each case runs with and
# without the library, with the same output.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/..}/tests/eng_lib.sh"

prog=$(eng_prog prog_fork)
for c in basic childfirst parentfirst killparent exec grand many threads; do
	eng_compare_run "fork-$c" "$prog" "$c"
done
eng_finish
