#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A malloc-heavy program (several threads, so several glibc arenas, small and
# large allocations, calloc) whose heap is evicted three times between
# phases of verifying, freeing, trimming and allocating: identical checksums
# with and without the library; once more with every small mapping managed.
# python3 under a 40M limit with another allocator runs for tens of seconds,
# and a few times longer on a loaded two-CPU machine: the bound is there to
# catch a hang, not slowness.
ENG_TIMEOUT=${ENG_TIMEOUT:-240}
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
# Another allocator preloaded after libzswap (LD_PRELOAD="libzswap.so
# libmimalloc.so.2"), under a limit so that growth.c follows malloc: its
# blocks have no glibc chunk header to read. mimalloc also defines
# __libc_malloc as its own, which once made it pass for glibc's and crashed
# the program at its first allocation (src/reclaim/growth.c growth_resolve).
for a in libmimalloc.so.2 libjemalloc.so.2; do
	path=$(ldconfig -p 2>/dev/null | awk -v n="$a" '$1 == n { print $NF; exit }')
	if [ -z "$path" ]; then
		eng_say "$a is not installed: that allocator is not tried"
		continue
	fi
	if ! command -v python3 > /dev/null 2>&1; then
		eng_say "python3 is not installed: other allocators are not tried"
		break
	fi
	# python3 allocates through malloc and realloc all the time; ~60 MiB.
	work='import hashlib; d = {i: ("v%d " % i) * 20 for i in range(400000)}
h = hashlib.sha256()
for i in range(0, 400000, 3): h.update(d[(i * 7919) % 400000].encode())
print(h.hexdigest())'
	eng_run "alloc-$a-plain" plain LD_PRELOAD="$path" python3 -c "$work"
	eng_expect_rc 0 || continue
	cp "$ENG_OUT" "$ENG_TMP/alloc-$a.ref"
	eng_run "alloc-$a" plain LD_PRELOAD="$ENG_PRELOAD $path" ZSWAP_MEMORY_LIMIT=40M python3 -c "$work"
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/alloc-$a.ref"
done
eng_finish
