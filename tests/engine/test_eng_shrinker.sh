#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ZSWAP_SHRINKER_ENABLED: memory pressure around the process makes the pool
# write its coldest pages back to the tier. In a cgroup v1 memory group of
# the test's own (no swap is needed: the kernel has nothing to reclaim there
# but what the library gives back), a program whose pool holds its cold text
# fills shared memory (never managed) until the group is within 1/32 of its
# limit: with the shrinker the pool writes back until the group is out of
# the pressure band (1/16 of the limit), every page right; without it,
# nothing is written back. Needs root and the v1 memory controller.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

prog=$(eng_prog prog_shrinker)
ENG_TIMEOUT=90
root=/sys/fs/cgroup/memory
[ "$(id -u)" = 0 ] || eng_skip "not root: no memory cgroup of our own"
[ -w "$root" ] || eng_skip "no cgroup v1 memory controller at $root"
cg=$root/libzswap-test-shrinker-$$
mkdir "$cg" || eng_skip "cannot make $cg"
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$ENG_TMP"' EXIT
echo 160M > "$cg/memory.limit_in_bytes" || eng_fail "cannot set the group's limit"
limit_kb=$((160 * 1024))

stat_of() { sed -n "s/^prog_shrinker: stat $1=//p" "$ENG_ERR"; }

# run LABEL SHRINKER: the program in the group (sh moves itself in, then
# becomes the program).
run() {
	eng_run "$1" plain sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
		env LD_PRELOAD="$ENG_PRELOAD" ZSWAP_COLD_AGE=1 ZSWAP_SHRINKER_ENABLED="$2" \
		ZSWAP_BACKING_DIR="${TMPDIR:-/var/tmp}" "$prog" 96 4
	eng_expect_rc 0 && eng_expect_stdout_has "24576 pages of text checked after the group filled up: ok" &&
		eng_expect_no_libzswap
}

if run shrinker-on 1; then
	wb=$(stat_of written_back_pages); u0=$(stat_of usage_before_kb); u1=$(stat_of usage_after_kb)
	p0=$(stat_of pool_before_kb); p1=$(stat_of pool_after_kb)
	eng_say "shrinker on: group at ${u0:-?} KiB of $limit_kb, then ${u1:-?} KiB; pool ${p0:-?} -> ${p1:-?} KiB; ${wb:-?} pages written back"
	[ "${wb:-0}" -gt 0 ] || eng_fail "shrinker on: nothing was written back under pressure"
	[ "${u1:-$limit_kb}" -lt $((limit_kb - limit_kb / 16)) ] ||
		eng_fail "shrinker on: the group stayed in the pressure band (${u1:-?} KiB)"
	[ "${p1:-0}" -lt "${p0:-0}" ] || eng_fail "shrinker on: the pool did not shrink (${p0:-?} -> ${p1:-?} KiB)"
fi
if run shrinker-off 0; then
	wb=$(stat_of written_back_pages)
	[ "${wb:-1}" = 0 ] || eng_fail "shrinker off: ${wb:-?} pages were written back"
fi
eng_finish
