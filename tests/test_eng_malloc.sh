#!/bin/sh
# A malloc-heavy program (several threads, so several glibc arenas, small and
# large allocations, calloc) whose heap is evicted three times between
# phases of verifying, freeing, trimming and allocating: identical checksums
# with and without the library.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/..}/tests/eng_lib.sh"

prog=$(eng_prog prog_malloc)
eng_compare_run malloc-4 "$prog" 4
eng_compare_run malloc-8 "$prog" 8
eng_finish
