#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_compswitch_fault.sh - refaults are served while the compressor
# changes: the change takes no lock the fault path needs.
#
# A handler takes eng.ev_lock's write side to read each fault, so a change
# that held its read side while it made the new compressor's pools would
# hold every refault with it. ZSWAP_INJECT_SWITCH_HOLD=1 keeps the change
# of compressor inside the change (where a fork waits for it) until a
# fault is served; the test sets the compressor, waits until the library
# says the change waits, and only then lets prog_ondemand read its pages
# back. The change must end without its note that no fault was served,
# and every page must read back as written.

eng_name=test_eng_compswitch_fault
. "$(dirname "$0")/eng_lib.sh"
. "$(dirname "$0")/eng_ondemand.sh"

od_start 256 0 0 ZSWAP_COMPRESSOR=lz4 ZSWAP_READAHEAD=0 ZSWAP_INJECT_SWITCH_HOLD=1
"$ctl" set "$PID" compressor=zstd > "$ENG_TMP/set.out" 2>&1 &
SET=$!
held=
for _ in $(seq 600); do
	grep -q "ZSWAP_INJECT_SWITCH_HOLD: the change to zstd waits" "$OD_DIR/err" && { held=1; break; }
	sleep 0.1
done
[ -n "$held" ] || eng_fail "the change did not begin: $(cat "$OD_DIR/err")"
touch "$OD_DIR/go"
wait "$SET" || eng_fail "set compressor=zstd: $(cat "$ENG_TMP/set.out")"
grep -q "^note:" "$ENG_TMP/set.out" && eng_fail "refaults waited for the change: $(cat "$ENG_TMP/set.out")"
od_wait ready2 || eng_fail "the program did not read its pages back: $(cat "$OD_DIR/err")"
snap
expect refaults 256 "every page read back once"
od_finish
eng_finish
