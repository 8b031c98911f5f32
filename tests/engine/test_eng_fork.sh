#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fork() from a program with evicted memory, followed with
# UFFD_FEATURE_EVENT_FORK (src/engine/fork.h): parent and child each see every byte
# and only their own writes, the child is managed (evicts and refaults with
# its own engine, forks grandchildren), and neither hangs nor loses data when
# the other exits first, is killed, or execs; 16 children at once; 8 threads
# forking under eviction load; worker threads changing the mappings of
# their evicted buffers (mremap, munmap + mmap, MADV_DONTNEED; through the
# interposed calls, and as raw system calls) while the main thread forks in a
# loop, every child checking each buffer exactly; MADV_WIPEONFORK and
# MADV_DONTFORK over evicted memory; forks while reclaim compacts the pool
# (tests/progs/prog_fork.c); glibc's _Fork and clone() without CLONE_VM, which
# run no atfork handler (the child gets every page, loaded back first). Each case runs with and without the library, with the
# same output.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_fork)
for c in basic childfirst parentfirst killparent exec grand many threads rawfork rawclone rawclone-files; do
	eng_compare_run "fork-$c" "$prog" "$c"
done
# 64 KiB buffers, managed from their mmap on; vmrace-raw makes the mremap
# and munmap calls the library does not see.
eng_compare_run fork-vmrace ZSWAP_MIN_REGION=64K "$prog" vmrace
eng_compare_run fork-vmrace-raw ZSWAP_MIN_REGION=64K "$prog" vmrace-raw
# madvise(MADV_WIPEONFORK / MADV_DONTFORK) over evicted memory: the child
# reads zeros, or maps new memory there, and is never given the parent's
# stored pages; the parent keeps every byte. dontfork-raw makes the madvise
# call the library does not see.
for c in wipeonfork dontfork dontfork-raw; do
	eng_compare_run "fork-$c" "$prog" "$c"
done
# Forks while reclaim compacts a pool full of holes (64 MiB under 24M).
# (The data compresses to ~21 MiB: the library may say the limit cannot
# hold, which is true and not what this run is about.)
ENG_ALLOW_LIBZSWAP='^libzswap: ZSWAP_MEMORY_LIMIT \(24 MiB\) cannot hold'
eng_compare_run fork-compact ZSWAP_MEMORY_LIMIT=24M "$prog" compact
ENG_ALLOW_LIBZSWAP=
eng_finish
