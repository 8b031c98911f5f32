#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Mappings changing under a running evictor: mremap (move, grow-move,
# MREMAP_DONTUNMAP), munmap + a new mmap at the same address (also through
# raw system calls), MADV_DONTNEED racing eviction and refault of the same
# pages, and fork() while threads evict, fault and write. Every page carries a
# version stamp and is checked after every step; evictions and refaults are
# asserted from the counters (prog_vmarace.c). Bounded by iterations; a hang
# is caught by eng_run's timeout.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_vmarace)
# One run per case, so that one broken case does not hide the others.
for c in move growmove dontunmap remap dontneed fork; do
	eng_compare_run "vmarace-$c" "$prog" "$c"
done
eng_finish
