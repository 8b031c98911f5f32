#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The engine's events module (src/engine/events.c): the UNMAP, REMAP and
# REMOVE events userfaultfd raises for munmap, mremap and madvise, applied to
# the region table, seen from the program. munmap, mremap (grow in place,
# move, MREMAP_DONTUNMAP, shrink), madvise DONTNEED / FREE / REMOVE and
# mprotect (read-only, PROT_NONE, splitting the mapping) over partly evicted
# ranges: moved data comes along, discarded or unmapped memory reads zeros
# (never stale data), a new mapping at the same address reads zeros, the
# store empties when the data is gone, and every call answers what it
# answers without the library.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_events)
# One run per case, so that one broken case does not hide the others.
for c in munmap reuse grow move movegrow dontunmap shrink dontneed free remove mprotect mprotectguard \
	churn thp many; do
	eng_compare_run "events-$c" "$prog" "$c"
done
eng_finish
