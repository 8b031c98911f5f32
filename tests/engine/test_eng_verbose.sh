#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ZSWAP_VERBOSE=1 says which options are in force: each one not at its
# default on a line of its own with where it came from (the environment,
# zswapctl run, zswapctl set), or one line saying all are at their
# defaults. Binding details (the lazy PLT slots bound) wait for
# ZSWAP_VERBOSE=2, and with no memory limit the reclaimer's line says so
# instead of giving a limit of 0 MiB.
. "${ZSWAP_SRCDIR:-$(dirname "$0")/../..}/tests/engine/eng_lib.sh"

command -v python3 >/dev/null 2>&1 || eng_skip "python3 is not installed"
ctl=$ENG_BUILDDIR/tools/zswapctl/zswapctl
[ -x "$ctl" ] || { eng_say "ERROR: $ctl is not built"; exit 99; }
[ -z "$ENG_SAN_PRELOAD" ] || eng_skip "the library is built with AddressSanitizer"
unset ZSWAPCTL_LIBRARY ZSWAPCTL_RUN
XDG=$ENG_TMP/xdg
mkdir -m 700 "$XDG"
export XDG_RUNTIME_DIR=$XDG

# has LABEL LINE / hasnt LABEL PATTERN: the last run's stderr.
has() {
	grep -qxF "$2" "$ENG_ERR" || eng_fail "$1: no line '$2' in: $(cat "$ENG_ERR")"
}
hasnt() {
	grep -q "$2" "$ENG_ERR" && eng_fail "$1: a line matches '$2': $(grep -m1 "$2" "$ENG_ERR")"
	return 0
}

eng_run defaults lib ZSWAP_VERBOSE=1 true
grep -q 'userfaultfd unavailable' "$ENG_ERR" && eng_skip "$(grep -m1 '^libzswap:' "$ENG_ERR")"
eng_expect_rc 0
has defaults "libzswap: option ZSWAP_VERBOSE=1 (from the environment)"
[ "$(grep -c '^libzswap: option' "$ENG_ERR")" = 1 ] ||
	eng_fail "defaults: options at their defaults are listed: $(grep '^libzswap: option' "$ENG_ERR")"
hasnt defaults 'lazy PLT'
hasnt defaults 'memory limit 0 MiB'
# true ends within ZSWAP_START_DELAY: the library never starts.
hasnt defaults 'libzswap: active:'
hasnt defaults 'libzswap: reclaim:'
eng_run defaults-now lib ZSWAP_VERBOSE=1 ZSWAP_START_DELAY=0 true
eng_expect_rc 0
has defaults-now "libzswap: reclaim: no memory limit, cold age 120 s"

eng_run level2 lib ZSWAP_VERBOSE=2 true
eng_expect_rc 0
has level2 "libzswap: no memory limit: starts at the first memory call after 1000 ms (ZSWAP_START_DELAY) once it holds ZSWAP_START_SIZE of anonymous memory"
eng_run level2-now lib ZSWAP_VERBOSE=2 ZSWAP_START_DELAY=0 true
eng_expect_rc 0
grep -q '^libzswap: bound [0-9]* lazy PLT slot' "$ENG_ERR" ||
	eng_fail "level2-now: ZSWAP_VERBOSE=2 gives no binding details: $(cat "$ENG_ERR")"

eng_run limit lib ZSWAP_VERBOSE=1 ZSWAP_MEMORY_LIMIT=64M ZSWAP_COLD_AGE=30 ZSWAP_BACKING_DIR="$ENG_BUILDDIR" true
eng_expect_rc 0
has limit "libzswap: option ZSWAP_MEMORY_LIMIT=64M (from the environment)"
has limit "libzswap: option ZSWAP_COLD_AGE=30 (from the environment)"
grep -q '^libzswap: reclaim: memory limit 64 MiB (reclaim from [0-9]* to [0-9]* MiB), cold age 30 s$' "$ENG_ERR" ||
	eng_fail "limit: no reclaimer line for the limit: $(cat "$ENG_ERR")"

# Set by zswapctl run, or by the environment the run inherits.
eng_run run plain env ZSWAP_READAHEAD=4 "$ctl" run --lib "$ENG_LIB" -o verbose=1 --limit 10% -o cold_age=10 -- true
eng_expect_rc 0
has run "libzswap: option ZSWAP_VERBOSE=1 (from zswapctl run)"
has run "libzswap: option ZSWAP_MEMORY_LIMIT=10% (from zswapctl run)"
has run "libzswap: option ZSWAP_COLD_AGE=10 (from zswapctl run)"
has run "libzswap: option ZSWAP_READAHEAD=4 (from the environment)"

# Set by zswapctl set in a running process.
eng_live ZSWAP_VERBOSE=1 || eng_finish
pid=$ENG_LIVE
eng_run set plain "$ctl" set "$pid" cold_age=45
eng_expect_rc 0
kill "$ENG_LIVE"
wait "$ENG_LIVE" 2>/dev/null
ENG_ERR=$ENG_TMP/live.err
has set "libzswap: option ZSWAP_COLD_AGE=45 (from zswapctl set; was 120)"

eng_finish
