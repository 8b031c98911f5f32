#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared memory is charged to every process that maps it (which wrote it
# first is not known) and never compressed: a process that maps more of it than its limit (a database
# backend touching the server's buffer cache) runs over the limit, says so
# once, and keeps its private pages, rather than evicting them to make room
# that evicting them cannot make: each pass over them would refault every
# page, without end. prog_reclaim writes 32 MiB of MAP_SHARED memory under
# ZSWAP_MEMORY_LIMIT=24M, then passes 8 times over 8 MiB of its own.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
eng_run shared-plain plain "$prog" shared 8 32
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/shared.ref"

ENG_ALLOW_LIBZSWAP='cannot hold: the file pages and shared memory charged to it'
eng_ok_run shared lib env ZSWAP_MEMORY_LIMIT=24M "$prog" shared 8 32 &&
	eng_expect_same_stdout "$ENG_TMP/shared.ref"
refaults=$(eng_stat prog_reclaim shared_refaults)
# The 2,048 pages' first pass may find some of them evicted before the
# reclaimer knew; no later pass may.
[ -n "$refaults" ] && [ "$refaults" -lt 2048 ] ||
	eng_fail "shared: ${refaults:-no} refaults in 8 passes over 2,048 private pages: they were evicted for the shared memory's sake"
grep -q "$ENG_ALLOW_LIBZSWAP" "$ENG_ERR" ||
	eng_fail "shared: the library did not say that the limit cannot hold, and why"
eng_finish
