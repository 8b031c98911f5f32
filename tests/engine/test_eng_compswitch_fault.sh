#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_eng_compswitch_fault.sh - refaults are served while the compressor
# changes and while the pool is compacted: neither takes a lock the fault
# path needs.
#
# A handler takes eng.ev_lock's write side to read each fault, so a change
# of compressor that held its read side while it made the new compressor's
# pools, or a compaction round that held it while it freed zspages, would
# hold every refault with it. ZSWAP_INJECT_POOL_HOLD=2 keeps the next two
# such orders inside the change (where a fork waits for them) until a fault
# is served. The test sets the compressor, waits until the library says the
# change waits, and only then lets prog_ondemand read its pages back; then
# the same with zswapctl compact and the program's second reading. Neither
# order may end with its note that no fault was served, and every page
# must read back as written.

eng_name=test_eng_compswitch_fault
. "$(dirname "$0")/eng_lib.sh"
. "$(dirname "$0")/eng_ondemand.sh"

# held ORDER WHAT FILE ARGS...: zswapctl ORDER PID ARGS in the background;
# once the library says WHAT waits, FILE is created for the program, and
# the order must end without a note.
held() {
	order=$1 what=$2 file=$3
	shift 3
	"$ctl" "$order" "$PID" "$@" > "$ENG_TMP/order.out" 2>&1 &
	ORDER=$!
	waits=
	for _ in $(seq 600); do
		grep -q "ZSWAP_INJECT_POOL_HOLD: $what waits for a fault" "$OD_DIR/err" && { waits=1; break; }
		sleep 0.1
	done
	[ -n "$waits" ] || eng_fail "$order: $what did not begin: $(cat "$OD_DIR/err")"
	touch "$OD_DIR/$file"
	wait "$ORDER" || eng_fail "$order $*: $(cat "$ENG_TMP/order.out")"
	grep -q "^note:" "$ENG_TMP/order.out" &&
		eng_fail "refaults waited for $what: $(cat "$ENG_TMP/order.out")"
}

od_start 256 0 0 ZSWAP_COMPRESSOR=lz4 ZSWAP_READAHEAD=0 ZSWAP_INJECT_POOL_HOLD=2
held set "the change of compressor" go compressor=zstd
od_wait ready2 || eng_fail "the program did not read its pages back: $(cat "$OD_DIR/err")"
snap
expect refaults 256 "every page read back once"
held compact "compaction" go2
od_finish
eng_finish
