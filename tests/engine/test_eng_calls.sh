#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's calls module (src/engine/calls.c), what the interposed calls
# do in the engine: the region table follows the program's mmap, munmap,
# mremap, madvise and mlock (read through zswap_stats: regions,
# managed_bytes), on mappings the program never had evicted, which raise no
# userfaultfd event and so are known to the table through these calls alone
# (tests/progs/prog_calls.c says each case). The data reads as in a run
# without the library.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_calls)
# One run per case, so that one broken case does not hide the others.
for c in map unmap remap madvise mlock; do
	eng_compare_run "calls-$c" "$prog" "$c"
done
eng_finish
