#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_options_calls.sh - src/core/options.c calls nothing that could allocate,
# lock, or depend on stdio or the locale, and src/core/parse.c, whose numbers
# and sizes it reads, calls nothing at all.
#
# opt_load() runs in libzswap's constructor inside someone else's process,
# possibly before stdio is set up and while the program's malloc must not be
# touched. This reads the undefined symbols of the object file built from
# src/core/options.c and allows only the raw string/memory helpers, syscall(),
# environ, our own log.c and parse.c: a getenv, malloc, snprintf or strtoul
# added later fails here.

builddir=${ZSWAP_BUILDDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
obj=$builddir/src/core/tests_unit_test_options-options.o
parse_obj=$builddir/src/core/tests_unit_test_options-parse.o

command -v nm > /dev/null 2>&1 || { echo "test_options_calls: nm (binutils) is not installed" >&2; exit 77; }
for o in "$obj" "$parse_obj"; do
	[ -r "$o" ] || { echo "test_options_calls: $o is not built (make check builds it)" >&2; exit 99; }
done

syms=$(nm -u "$obj" | awk '{ print $NF }')
[ -n "$syms" ] || { echo "test_options_calls: nm found no undefined symbols in $obj" >&2; exit 99; }
fail=0
for s in $syms; do
	case $s in
	strdup|strndup|strcoll|strerror*|strto*|strftime|strptime|strsignal)
		echo "FAIL: src/core/options.c calls $s" >&2; fail=1 ;;
	mem*|str*|syscall|environ|zlog|log_*|parse_*) ;;
	# compiler and sanitizer support, not libc behaviour
	__stack_chk_fail|_GLOBAL_OFFSET_TABLE_|__asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__gcov_*) ;;
	*) echo "FAIL: src/core/options.c calls $s (not allowed in start-up code: no malloc, getenv, stdio or locale)" >&2; fail=1 ;;
	esac
done
for s in $(nm -u "$parse_obj" | awk '{ print $NF }'); do
	case $s in
	__stack_chk_fail|_GLOBAL_OFFSET_TABLE_|__asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__gcov_*) ;;
	*) echo "FAIL: src/core/parse.c calls $s (it reads text only)" >&2; fail=1 ;;
	esac
done
[ "$fail" = 0 ] && echo "test_options_calls: $(echo $syms | wc -w) symbols, all allowed"
exit $fail
