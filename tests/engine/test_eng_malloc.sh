#!/bin/sh
# A malloc-heavy program (several threads, so several glibc arenas, small and
# large allocations, calloc) whose heap is evicted three times between
# phases of verifying, freeing, trimming and allocating: identical checksums
# with and without the library; once more with every small mapping managed.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_malloc)
eng_compare_run malloc-4 "$prog" 4
eng_compare_run malloc-8 "$prog" 8
# Every anonymous mapping, however small, is adopted: among them the bss of
# libc, of the loader and of libzswap itself, and the main thread's TCB and
# static TLS, which the evicting thread and the handlers touch while they
# run. They must be left alone (src/engine/evict.c evict_foreign, evict_is_own).
eng_compare_run malloc-4-small ZSWAP_MIN_REGION=4K "$prog" 4
# A worker thread forks with every arena evicted; the child mallocs, frees,
# reallocs and checks every byte. The child's atfork handler starts its
# threads with pthread_create, whose calloc of the new thread's TLS touched
# an evicted page of the forking thread's arena after the parent had
# stopped serving the child's faults and before any handler of the child's
# ran: the child hung (fork.h, fork_child_take).
eng_compare_run malloc-fork "$prog" fork 3
eng_finish
