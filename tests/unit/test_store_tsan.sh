#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_store_tsan.sh - the store stress (tests/unit/test_store_stress.c) built with
# -fsanitize=thread must report no race. Skips (77) when ThreadSanitizer
# cannot run here, saying why.
bin="${ZSWAP_BUILDDIR:-.}/tests/unit/test_store_tsan"
[ -x "$bin" ] || { echo "test_store_tsan: $bin not built (sanitized build?)" >&2; exit 77; }

out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 $TSAN_OPTIONS" \
	"$bin" >"$out" 2>&1
rc=$?
# The runtime refuses some address-space layouts before main() runs.
if grep -q -e 'ThreadSanitizer: unexpected memory mapping' \
	   -e 'FATAL: ThreadSanitizer' "$out"; then
	cat "$out" >&2
	echo "test_store_tsan: ThreadSanitizer cannot run on this system (see above)" >&2
	exit 77
fi
cat "$out" >&2
if grep -q 'WARNING: ThreadSanitizer' "$out"; then
	echo "test_store_tsan: data race reported" >&2
	exit 1
fi
exit $rc
