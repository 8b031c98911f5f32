#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_wb_demand.sh - zswapctl writeback (zram's writeback) on a process
# with no memory limit, and its budget (ZSWAP_WRITEBACK_LIMIT with
# ZSWAP_WRITEBACK_LIMIT_ENABLE, zram's writeback_limit).
#
# prog_ondemand pages out text pages, pages held whole that shrink a little
# (huge) and pages that do not shrink at all (random), then waits. Each
# mode must write exactly the pages it names: incompressible the random
# ones, huge the rest of those held whole, idle=SECONDS none of pages
# younger, a page count that many; the budget stops idle at exactly what it
# allows, and the pool's compressed size falls by what went; the last
# request runs with a memory limit set. The program then reads every page
# back from the tier and checks it.

eng_name=test_eng_wb_demand
. "$(dirname "$0")/eng_lib.sh"
. "$(dirname "$0")/eng_ondemand.sh"
tierdir=${TMPDIR:-/var/tmp}

TEXT=600 HUGE=200 NRAND=100

# wb WANT_RC ARGS...: zswapctl writeback PID ARGS, its exit status checked.
wb() {
	want=$1; shift
	"$ctl" writeback "$PID" "$@" > "$ENG_TMP/wb.out" 2> "$ENG_TMP/wb.err"
	rc=$?
	[ "$rc" = "$want" ] ||
		eng_fail "writeback $*: exit $rc, want $want: $(cat "$ENG_TMP/wb.out" "$ENG_TMP/wb.err")"
}

od_start $TEXT $HUGE $NRAND ZSWAP_SWAP_CACHE=0 ZSWAP_BACKING_DIR="$tierdir"
ALL=$((TEXT + HUGE + NRAND))
snap
expect stored_pages $ALL "paged out"
expect huge_pages $((HUGE + NRAND)) "paged out"
expect bd_count 0 "before any request"
compr0=$(stat_of compr_data_size)

# Refused before anything is sent.
"$ctl" writeback "$PID" idle=x > /dev/null 2>&1
[ $? = 2 ] || eng_fail "writeback idle=x is not a usage error"
"$ctl" writeback "$PID" 0 > /dev/null 2>&1
[ $? = 2 ] || eng_fail "writeback 0 is not a usage error"

# Without a limit the tier opens for the request.
wb 0 incompressible
snap
expect bd_count $NRAND "incompressible"
expect written_back_pages $NRAND "incompressible"
expect compr_data_size $((compr0 - NRAND * 4096)) "incompressible"
wb 0 huge
snap
expect bd_count $((HUGE + NRAND)) "huge after incompressible"
expect compr_data_size $((compr0 - (HUGE + NRAND) * 4096)) "huge"

# idle=SECONDS: nothing was stored an hour ago.
wb 0 idle=3600
snap
expect bd_count $((HUGE + NRAND)) "idle=3600"

# The budget stops idle exactly; setting it refills it.
"$ctl" set "$PID" writeback_limit_enable=1 writeback_limit=100 > /dev/null ||
	eng_fail "set writeback_limit_enable=1 writeback_limit=100 failed"
wb 1 idle
grep -q "^wrote back 100 pages" "$ENG_TMP/wb.out" || eng_fail "idle within 100: $(cat "$ENG_TMP/wb.out")"
snap
expect bd_count $((HUGE + NRAND + 100)) "idle within a budget of 100"
expect writeback_limit 0 "idle within a budget of 100"
wb 1 idle
snap
expect bd_count $((HUGE + NRAND + 100)) "idle with the budget spent"
"$ctl" set "$PID" writeback_limit=50 > /dev/null || eng_fail "set writeback_limit=50 failed"
wb 0 20
snap
expect bd_count $((HUGE + NRAND + 120)) "20 pages"
expect writeback_limit 30 "20 pages of 50"

# The rest, once every page is at least a second old, with a memory limit
# set meanwhile (far above what the program uses: nothing is reclaimed for
# it): the tier opened for the requests is the one the limit uses.
"$ctl" set "$PID" writeback_limit_enable=0 > /dev/null || eng_fail "set writeback_limit_enable=0 failed"
"$ctl" set "$PID" memory_limit=1G > "$ENG_TMP/set.out" 2>&1 || eng_fail "set memory_limit=1G: $(cat "$ENG_TMP/set.out")"
grep -q "^note:" "$ENG_TMP/set.out" && eng_fail "set memory_limit=1G: $(cat "$ENG_TMP/set.out")"
sleep 3
wb 0 idle=1
snap
expect bd_count $ALL "idle=1"
expect written_back_pages $ALL "idle=1"
expect compr_data_size 0 "everything written back"
expect stored_pages 0 "everything written back"

od_finish
eng_finish
