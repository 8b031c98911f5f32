#!/bin/sh
# A malloc-heavy program (several threads, so several glibc arenas, small and
# large allocations, calloc) whose heap is evicted three times between
# phases of verifying, freeing, trimming and allocating: identical checksums
# with and without the library; once more with every small mapping managed.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/..}/tests/eng_lib.sh"

prog=$(eng_prog prog_malloc)
eng_compare_run malloc-4 "$prog" 4
eng_compare_run malloc-8 "$prog" 8
# Every anonymous mapping, however small, is adopted: among them the bss of
# libc, of the loader and of libzswap itself, and the main thread's TCB and
# static TLS, which the evicting thread and the handlers touch while they
# run. They must be left alone (src/evict.c evict_foreign, evict_is_own).
eng_compare_run malloc-4-small ZSWAP_MIN_REGION=4K "$prog" 4
eng_finish
