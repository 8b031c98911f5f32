#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Injected failures, each leaving the program correct and counted: the pool
# without memory for an object (ZSWAP_INJECT_ALLOC_FAIL: reject_alloc_fail),
# the compressor failing (ZSWAP_INJECT_COMPRESS_FAIL: reject_compress_fail),
# installs of pages read back refused with EAGAIN and ENOMEM
# (ZSWAP_INJECT_COPY_FAIL: install_failed; ENOMEM twice sends the page back
# to the store), a fault handler thread that cannot be created (the other
# serves: fault_threads 1 of 2) and none that can (perl runs without the
# library, its output as without it). Each under a 32M limit over 64 MiB of text pages written,
# read back and partly rewritten (prog_writeback fill: every byte checked),
# with real reclaim shown by the refaults; then a fork with refused installs
# on both sides.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_writeback)
dir=${TMPDIR:-/var/tmp}
ENG_TIMEOUT=180

eng_run plain plain "$prog" fill 64 text
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/fill.ref"
eng_run fork-plain plain "$prog" fork 32
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/fork.ref"

# inject NAME COUNTER MIN VAR=N...: a run under the limit with the
# injection, its output the plain run's, COUNTER at least MIN in the dump at
# exit, and reclaim at work (refaults).
inject() {
	n=$1 counter=$2 min=$3
	shift 3
	eng_run "$n" lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" ZSWAP_STATS_AT_EXIT=1 "$@" \
		"$prog" fill 64 text
	eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/fill.ref" || return 1
	eng_expect_no_libzswap || return 1
	v=$(eng_dump_stat "$ENG_ERR" "$counter"); r=$(eng_dump_stat "$ENG_ERR" refaults)
	eng_say "$n: $counter ${v:-?}, refaults ${r:-?}"
	[ "${v:-0}" -ge "$min" ] || eng_fail "$n: $counter ${v:-?}, expected at least $min"
	[ "${r:-0}" -gt 1000 ] || eng_fail "$n: ${r:-?} refaults: reclaim did not work"
}

inject alloc reject_alloc_fail 200 ZSWAP_INJECT_ALLOC_FAIL=200
inject compress reject_compress_fail 200 ZSWAP_INJECT_COMPRESS_FAIL=200
inject copy install_failed 300 ZSWAP_INJECT_COPY_FAIL=300

# One handler of two cannot be created: the other serves, said once.
ENG_ALLOW_LIBZSWAP='^libzswap: started 1 of 2 fault handler threads \(EAGAIN\)'
if inject thread-one fault_threads 1 ZSWAP_FAULT_THREADS=2 ZSWAP_INJECT_THREAD_FAIL=1; then
	[ "$(eng_dump_stat "$ENG_ERR" fault_threads)" = 1 ] || eng_fail "thread-one: fault_threads is not 1"
	[ "$(grep -c '^libzswap: started 1 of 2' "$ENG_ERR")" = 1 ] ||
		eng_fail "thread-one: the missing handler was not said exactly once"
fi

# No handler can be created: the program runs as without the library.
ENG_ALLOW_LIBZSWAP='^libzswap: cannot start the fault handler threads \(EAGAIN\); running without libzswap'
# (perl: the test programs skip when the library they expect is inactive.)
script='my %h; $h{$_} = "x" x 50 for 1..200000; print scalar(keys %h), " ", length(join("", values %h)), "\n"'
eng_run perl-plain plain perl -e "$script"
eng_expect_rc 0 && cp "$ENG_OUT" "$ENG_TMP/perl.ref"
eng_run thread-none lib ZSWAP_MEMORY_LIMIT=16M ZSWAP_FAULT_THREADS=2 ZSWAP_INJECT_THREAD_FAIL=2 \
	perl -e "$script"
if eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/perl.ref" && eng_expect_no_libzswap; then
	grep -q '^libzswap: cannot start the fault handler threads' "$ENG_ERR" ||
		eng_fail "thread-none: running without the library was not said"
fi

# fork with refused installs: both sides check everything they read back.
ENG_ALLOW_LIBZSWAP=
eng_run fork-copy lib ZSWAP_MEMORY_LIMIT=32M ZSWAP_BACKING_DIR="$dir" ZSWAP_INJECT_COPY_FAIL=500 \
	"$prog" fork 32
eng_expect_rc 0 && eng_expect_same_stdout "$ENG_TMP/fork.ref" && eng_expect_no_libzswap

eng_finish
