#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Eviction reads each batch of staged pages out with one process_vm_readv
# and compresses the copy (evict_copied_pages); under a seccomp filter that
# refuses the call it reads them where they are staged. Either way every
# page comes back as written: the same stdout as without the library, every
# byte checked by the program.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_reclaim)
args="random 48 20000"

eng_run plain plain "$prog" $args
eng_expect_rc 0 || eng_finish
cp "$ENG_OUT" "$ENG_TMP/ref"

# case LABEL ENV...: the run under a 16M limit; sets copied and evicted.
case_run() {
	label=$1
	shift
	eng_run "$label" lib ZSWAP_MEMORY_LIMIT=16M ZSWAP_STATS_AT_EXIT=1 \
		ZSWAP_STATS_FILE="$ENG_TMP/$label.st" "$@" "$prog" $args
	eng_expect_rc 0 || return 1
	eng_expect_no_libzswap || return 1
	eng_expect_same_stdout "$ENG_TMP/ref" || return 1
	copied=$(eng_dump_stat "$ENG_TMP/$label.st" evict_copied_pages)
	evicted=$(eng_dump_stat "$ENG_TMP/$label.st" pgsteal)
	eng_say "$label: pgsteal ${evicted:-?}, evict_copied_pages ${copied:-?}"
	if [ -z "$copied" ] || [ -z "$evicted" ] || [ "$evicted" -eq 0 ]; then
		eng_fail "$label: no eviction counted (pgsteal ${evicted:-?}, evict_copied_pages ${copied:-?})"
		return 1
	fi
	return 0
}

if case_run copy; then
	[ "$copied" -gt 0 ] ||
		eng_fail "copy: evict_copied_pages is 0: staged pages were read in place"
fi
if case_run denied PROG_DENY_VM_READV=1; then
	[ "$copied" -eq 0 ] ||
		eng_fail "denied: evict_copied_pages $copied under a filter that refuses process_vm_readv"
fi
eng_finish
